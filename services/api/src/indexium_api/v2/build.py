"""Catalogue rows -> the v2 Structs (shapes.py): the field mapping of docs/api.md ("API v2")."""

from __future__ import annotations

from datetime import datetime

from indexium_content import categories as vocabulary, urls
from indexium_jar import formats, gameversions

from ..core import markup
from ..core.paths import V1
from . import licenses
from .shapes import Dependency, GameVersionTag, Hashes, Project, SearchHit, Version, VersionFile

_BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
# Our manifest environments -> Modrinth's environment and its deprecated client/server sides.
ENVIRONMENT = {"client": "client_only", "server": "server_only", "both": "client_and_server"}
SIDES = {"client": ("required", "unsupported"), "server": ("unsupported", "required"),
         "both": ("required", "required")}
_EPOCH = "1970-01-01T00:00:00Z"


def base62(n: int) -> str:
    """A GitHub account id as a base62 string: the stable id v2 gives a repository owner."""
    out = ""
    while True:
        n, r = divmod(n, 62)
        out = _BASE62[r] + out
        if n == 0:
            return out


def iso(value: datetime | None) -> str:
    return value.isoformat().replace("+00:00", "Z") if value else _EPOCH


def icon_url(origin: str, row) -> str | None:
    return f"{origin}{V1}/mods/{row['slug']}/icon" if row["has_icon"] else None


def _author_id(row) -> str | None:
    return base62(row["author_github_id"]) if row["author_github_id"] is not None else None


def _project_type(row) -> str | None:
    """The stored project type (None for rows read without it: a mod)."""
    return row["project_type"] if "project_type" in row.keys() else None


def _project_types(row) -> list[str]:
    return formats.all_project_types(_project_type(row), row["loaders"])


def hit(origin: str, row, extra) -> SearchHit:
    env = row["environment"]
    client, server = SIDES[env]
    # Loaders are categories in search hits, as on Modrinth (launchers filter by categories:fabric);
    # the stored categories are the vocabulary's only (rows stored before 0020 may hold topics).
    categories = [*vocabulary.only_categories(row["categories"]), *dict.fromkeys(row["loaders"])]
    return SearchHit(
        project_id=extra["public_id"], project_type=formats.v2_project_type(_project_type(row)),
        all_project_types=_project_types(row),
        slug=row["slug"], author=extra["owner"] or "", author_id=_author_id(extra), organization=None,
        organization_id=None, title=row["name"], description=row["summary"], categories=categories,
        display_categories=categories, versions=list(row["game_versions"]), downloads=row["downloads"],
        follows=0, icon_url=icon_url(origin, row) or "", date_created=iso(row["created_at"]),
        date_modified=iso(row["updated_at"] or row["created_at"]),
        latest_version=extra["latest_version_id"] or "", license=licenses.of(extra["licenses"]).id,
        client_side=client, server_side=server, environment=[ENVIRONMENT[env]], disclosure_types=[],
        gallery=[], featured_gallery=None, color=None,
    )


def project(origin: str, row) -> Project:
    env = row["environment"]
    client, server = SIDES[env]
    links = urls.safe_links(row["links"])  # the one URL policy again, for rows stored before it
    # The repository's page as GitHub named it (catalog.REPO_URL), as on the site, through the policy too.
    repo = urls.allowed(row["repo_url"]) or f"https://github.com/{row['repo_full_name']}"
    icon = icon_url(origin, row)
    published = iso(row["created_at"])
    return Project(
        id=row["public_id"], slug=row["slug"], project_type=formats.v2_project_type(_project_type(row)),
        team=row["team_id"], title=row["name"],
        # body: the README as sanitized HTML (Markdown admits HTML, so a client that renders
        # body as Markdown shows it as is: it must be safe as HTML; docs/api.md), else the
        # manifest's description as before.
        description=row["summary"], body=markup.readme_html(row) or row["description"], body_url=None,
        status="approved",
        moderator_message=None, published=published,
        updated=iso(row["updated_at"] or row["created_at"]), approved=published, queued=None,
        client_side=client, server_side=server, environment=[ENVIRONMENT[env]], downloads=row["downloads"],
        followers=0, categories=vocabulary.only_categories(row["categories"]), additional_categories=[],
        game_versions=list(row["game_versions"]), loaders=list(row["loaders"]), versions=list(row["version_ids"]),
        icon_url=icon, raw_icon_url=icon, color=None, issues_url=f"{repo}/issues", source_url=repo,
        wiki_url=links.get("wiki"), discord_url=links.get("discord"), donation_urls=[], gallery=[],
        license=licenses.of(row["licenses"]), thread_id=row["team_id"], monetization_status="demonetized",
        organization=None,
    )


def _hashes(h: dict) -> Hashes:
    # char(n) columns: strip any padding
    return Hashes(sha1=h["sha1"].strip() if h.get("sha1") else None,
                  sha512=h["sha512"].strip() if h.get("sha512") else None)


def version(row, *, changelog: bool = True) -> Version:
    deps = [Dependency(version_id=d.get("version_id"), project_id=d["project_id"], file_name=d["file_name"],
                       dependency_type=d["kind"] if d["kind"] in ("required", "optional", "incompatible",
                                                                  "embedded") else "optional")
            for d in row["dependencies"]]
    files = [VersionFile(hashes=_hashes(f["hashes"]), url=urls.allowed(f["url"]) or "", filename=f["filename"],
                         primary=f["primary"], size=f["size"]) for f in row["files"]]
    return Version(
        id=row["public_id"], project_id=row["project_public_id"], author_id=_author_id(row) or "",
        name=row["name"] or row["version_number"], version_number=row["version_number"],
        changelog=markup.changelog(row["changelog"] or None) if changelog else None, changelog_url=None,
        date_published=iso(row["date_published"]), downloads=row["downloads"], version_type=row["version_type"],
        status="listed", featured=False, environment=ENVIRONMENT[row["environment"]],
        game_versions=list(row["game_versions"]), loaders=list(row["loaders"]), dependencies=deps, files=files,
    )


_GAME_VERSION_TYPES = {"release": "release", "snapshot": "snapshot", "old_beta": "beta", "old_alpha": "alpha"}


def game_version_tags() -> list[GameVersionTag]:
    """The shipped Minecraft version table, newest first; a release "x.y" (no patch) is major."""
    out = []
    for v in gameversions.default_table().versions:
        kind = _GAME_VERSION_TYPES.get(v.type, "snapshot")
        date = v.release_time if isinstance(v.release_time, str) else iso(v.release_time)
        out.append(GameVersionTag(version=v.id, version_type=kind, date=date,
                                  major=kind == "release" and v.id.count(".") == 1))
    return out
