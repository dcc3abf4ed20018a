"""Database rows -> the /api/v1 answers (the Structs of shapes.py, which openapi/v1.py describes)."""

from __future__ import annotations

from indexium_content import categories as vocabulary, urls
from indexium_jar import formats

from ..core import markup
from ..core.paths import V1
from .shapes import File, FileHashes, GameVersionTag, LoaderTag, Mod, SearchHit, SearchResult, Version

BASE = V1


def _icon_url(row) -> str | None:
    return f"{BASE}/mods/{row['slug']}/icon" if row["has_icon"] else None


def _project_type(row) -> str:
    return row["project_type"] or formats.DEFAULT_PROJECT_TYPE


def hit(row) -> SearchHit:
    return SearchHit(
        slug=row["slug"], name=row["name"], summary=row["summary"], authors=list(row["authors"]),
        categories=vocabulary.only_categories(row["categories"]), environment=row["environment"],
        loaders=list(row["loaders"]), project_type=_project_type(row),
        game_versions=list(row["game_versions"]), latest_version=row["latest_version"],
        downloads=row["downloads"], active_servers=row["active_servers"], icon_url=_icon_url(row),
        created_at=row["created_at"], updated_at=row["updated_at"],
    )


def search(rows, total: int, limit: int, offset: int) -> SearchResult:
    return SearchResult(hits=[hit(r) for r in rows], total=total, limit=limit, offset=offset)


def mod(row) -> Mod:
    return Mod(
        slug=row["slug"], name=row["name"], summary=row["summary"], description=row["description"],
        description_html=markup.readme_html(row), authors=list(row["authors"]), owner=row["owner"], licenses=list(row["licenses"]),
        # Stored rows pass the one URL policy and the vocabulary again: rows written before them are safe too.
        links=urls.safe_links(row["links"]), categories=vocabulary.only_categories(row["categories"]),
        tags=vocabulary.only_tags(row["tags"]), environment=row["environment"], loaders=list(row["loaders"]),
        project_type=_project_type(row),
        game_versions=list(row["game_versions"]), latest_version=row["latest_version"],
        latest_mod_version=row["latest_mod_version"], downloads=row["downloads"],
        active_servers=row["active_servers"], repository=row["repo_full_name"], fork=row["fork"],
        icon_url=_icon_url(row),
        created_at=row["created_at"], updated_at=row["updated_at"],
    )


def version(row) -> Version:
    return Version(
        mod=row["mod_slug"], version_number=row["version_number"], version_type=row["version_type"],
        name=row["name"], changelog=markup.changelog(row["changelog"] or ""), loaders=list(row["loaders"]),
        game_versions=list(row["game_versions"]), game_versions_inferred=bool(row["game_versions_inferred"]),
        published_at=row["published_at"], downloads=row["downloads"],
        files=[_file(f) for f in row["files"]],
    )


def _hash(value: str | None) -> str | None:
    return value.strip() if value else None  # char(n) columns: strip any padding


def _file(f: dict) -> File:
    h = f["hashes"]
    return File(
        # (stored only from INDEXIUM_DOWNLOAD_HOSTS; "" if the URL policy refuses it, which GitHub never gives)
        filename=f["filename"], url=urls.allowed(f["url"]) or "", size=f["size"], primary=f["primary"], loaders=f["loaders"],
        game_versions=f["game_versions"], game_versions_inferred=bool(f.get("game_versions_inferred")),
        # The mod's own id and version as the file's manifest declares them (the release tag is the
        # version's version_number; a jar tagged v1.0.0 may declare 0.9.1).
        mod_id=f.get("mod_id"), mod_version=f.get("mod_version"),
        hashes=FileHashes(sha1=_hash(h["sha1"]), sha256=_hash(h["sha256"]), sha512=_hash(h["sha512"])),
    )


def loader_tag(name: str) -> LoaderTag:
    return LoaderTag(name=name, project_types=formats.project_types_of_loader(name))


def game_version(v) -> GameVersionTag:
    return GameVersionTag(version=v.id, version_type=v.type, date=v.release_time)
