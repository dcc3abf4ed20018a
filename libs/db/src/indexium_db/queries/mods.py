"""Mods (projects): identity by GitHub repository and identity key, slug assignment, card updates
and the public roll-up.

A project is (``github_repo_id``, ``identity``): a repository may publish several
(``indexium_jar.identity`` makes the key of a release's files; migration 0025). What the
repository owns (its name, page, branch, topics, owner, fork flag, visibility) is written to
every project of the repository at once.

Every writer of a mod passes the repository's GitHub topics as ``categories``; they are
stored here, and only here, as the vocabulary's categories and plain tags
(``indexium_content.categories.classify``), so no writer can store a topic as a category.
"""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass

import asyncpg

from indexium_content import categories as vocabulary
from indexium_jar import formats
from indexium_jar.identity import mod_key

_SLUG_BAD = re.compile(r"[^a-z0-9_-]+")


def slug_base(manifest_id: str) -> str:
    """Lowercase, URL-safe, 2..64 chars; the manifest id is already close to this."""
    base = _SLUG_BAD.sub("-", manifest_id.lower()).strip("-_")[:64]
    if len(base) < 2:
        base = (base + "-mod")[:64]
    return base


# Past id-<repo id>: a repository's projects whose ids make the same slug ("mono.alpha" and
# "mono-alpha", a mod and a pack of one name) take id-<repo id>-2, -3, ... (bounded: a
# repository has few projects; 0025's UNIQUE (github_repo_id, identity) bounds them too).
SAME_REPO_SLUGS = 50


def slug_candidates(manifest_id: str, owner_login: str, repo_id: int, *, same_repo: bool = False) -> list[str]:
    """Deterministic order: the id, then id-owner, then id-<repo id> (unique among repositories);
    ``same_repo``: then id-<repo id>-<n> for another project of the same repository."""
    base = slug_base(manifest_id)
    owner = _SLUG_BAD.sub("-", owner_login.lower()).strip("-_")
    out = [base]
    if owner:
        out.append(f"{base[: 63 - len(owner)]}-{owner}"[:64])
    tail = f"-{repo_id}"
    out.append(base[: 64 - len(tail)] + tail)
    if same_repo:
        for n in range(2, SAME_REPO_SLUGS + 2):
            tail = f"-{repo_id}-{n}"
            out.append(base[: 64 - len(tail)] + tail)
    return out


@dataclass(frozen=True)
class Card:
    """What a mod page shows; refreshed from the newest release's primary manifest."""

    name: str
    summary: str
    description: str
    authors: list[str]
    licenses: list[str]
    links: dict[str, str]
    environment: str


async def upsert_author(conn: asyncpg.Connection, github_id: int, login: str) -> None:
    await conn.execute(
        """INSERT INTO authors (github_id, login) VALUES ($1, $2)
           ON CONFLICT (github_id) DO UPDATE SET login = EXCLUDED.login, updated_at = now()
           WHERE authors.login IS DISTINCT FROM EXCLUDED.login""",
        github_id, login,
    )


async def get_by_identity(conn: asyncpg.Connection, github_repo_id: int, identity: str) -> asyncpg.Record | None:
    """The repository's project of this identity key (locked for the caller's transaction)."""
    return await conn.fetchrow(
        "SELECT id, slug, last_published_at FROM mods WHERE github_repo_id = $1 AND identity = $2 FOR UPDATE",
        github_repo_id, identity,
    )


async def sole_project(conn: asyncpg.Connection, github_repo_id: int) -> asyncpg.Record | None:
    """The repository's project when it has exactly one (locked), else None."""
    rows = await conn.fetch(
        """SELECT id, slug, last_published_at, name, identity FROM mods WHERE github_repo_id = $1
           ORDER BY id LIMIT 2 FOR UPDATE""",
        github_repo_id,
    )
    return rows[0] if len(rows) == 1 else None


async def lock(conn: asyncpg.Connection, mod_id: uuid.UUID) -> asyncpg.Record | None:
    """A project by id, locked for the caller's transaction (as :func:`get_by_identity` returns it)."""
    return await conn.fetchrow("SELECT id, slug, last_published_at FROM mods WHERE id = $1 FOR UPDATE", mod_id)


async def pack_projects(conn: asyncpg.Connection, github_repo_id: int, project_type: str) -> list[asyncpg.Record]:
    """The repository's projects made from packs of this type (identity ``<type>:<name>``), locked."""
    return await conn.fetch(
        """SELECT id, slug, last_published_at FROM mods
           WHERE github_repo_id = $1 AND project_type = $2 AND starts_with(identity, $2 || ':')
           ORDER BY id FOR UPDATE""",
        github_repo_id, project_type,
    )


async def set_identity(conn: asyncpg.Connection, mod_id: uuid.UUID, identity: str) -> None:
    """A project's new identity key (its manifest id changed, its name did not: the release job)."""
    await conn.execute("UPDATE mods SET identity = $2, updated_at = now() WHERE id = $1", mod_id, identity)


async def latest_of_repo(conn: asyncpg.Connection, github_repo_id: int) -> asyncpg.Record | None:
    """The repository's most recently published project (where a release none of whose files
    could be read is recorded: nothing in it says which project it is)."""
    return await conn.fetchrow(
        """SELECT id, slug, last_published_at FROM mods WHERE github_repo_id = $1
           ORDER BY last_published_at DESC NULLS LAST, created_at DESC, id LIMIT 1 FOR UPDATE""",
        github_repo_id,
    )


async def create(
    conn: asyncpg.Connection,
    *,
    github_repo_id: int,
    repo_full_name: str,
    owner_id: int,
    owner_login: str,
    manifest_id: str,
    default_branch: str,
    identity: str | None = None,
    categories: list[str],
    card: Card,
    repo_url: str | None = None,
    fork: bool = False,
    project_type: str = formats.DEFAULT_PROJECT_TYPE,
) -> asyncpg.Record:
    """Insert a new project with the first free slug candidate (slugs never change afterwards).
    ``identity``: its key in the repository (``indexium_jar.identity``; default: the manifest
    id's); ``categories``: the repository's topics (module docstring); ``repo_url``: the
    repository's page (``github.Repository.page_url``)."""
    identity = identity or mod_key(manifest_id)
    topics = vocabulary.classify(categories)
    same_repo = bool(await conn.fetchval("SELECT EXISTS (SELECT 1 FROM mods WHERE github_repo_id = $1)",
                                         github_repo_id))
    for slug in slug_candidates(manifest_id, owner_login, github_repo_id, same_repo=same_repo):
        row = await conn.fetchrow(
            """INSERT INTO mods (github_repo_id, repo_full_name, slug, manifest_id, name, summary,
                   description, author_github_id, authors, licenses, links, environment,
                   default_branch, categories, tags, repo_url, fork, project_type, identity)
               VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19)
               ON CONFLICT DO NOTHING
               RETURNING id, slug, last_published_at""",
            github_repo_id, repo_full_name, slug, manifest_id, card.name[:128], card.summary,
            card.description, owner_id, card.authors, card.licenses, card.links, card.environment,
            default_branch, topics.categories, topics.tags, repo_url, fork, project_type, identity,
        )
        if row is not None:
            return row
        existing = await get_by_identity(conn, github_repo_id, identity)
        if existing is not None:  # a concurrent writer created it first
            return existing
    raise RuntimeError(f"no free slug for repository {github_repo_id}")  # a repository of 50+ same-slug projects


async def set_project_type(conn: asyncpg.Connection, mod_id, project_type: str) -> None:
    """The project's type (indexium_jar.formats.PROJECT_TYPES), from its newest release's primary file."""
    await conn.execute("UPDATE mods SET project_type = $2 WHERE id = $1 AND project_type <> $2", mod_id, project_type)


async def update_repository(
    conn: asyncpg.Connection, github_repo_id: int, *, full_name: str, default_branch: str | None,
    categories: list[str] | None = None, owner_id: int | None = None, owner_login: str | None = None,
    repo_url: str | None = None, fork: bool | None = None,
) -> bool:
    """What the mod's repository is now (rename, transfer, default branch, its topics as
    categories and tags, its page: ``github.Repository.page_url``, GitHub's fork flag); the slug
    never changes. None keeps the stored value, but a new name without a page drops a page that
    named the old one. Every project of the repository. False when the repository has none."""
    if owner_id is not None and owner_login:
        await upsert_author(conn, owner_id, owner_login)
    topics = vocabulary.classify(categories) if categories is not None else None
    status = await conn.execute(
        """UPDATE mods SET repo_full_name = $2, default_branch = COALESCE($3, default_branch),
               categories = COALESCE($4::text[], categories), tags = COALESCE($7::text[], tags),
               author_github_id = COALESCE($5, author_github_id),
               repo_url = CASE WHEN $6::text IS NOT NULL THEN $6
                               WHEN repo_full_name = $2 THEN repo_url END,
               fork = COALESCE($8, fork), updated_at = now()
           WHERE github_repo_id = $1""",
        github_repo_id, full_name, default_branch, topics and topics.categories, owner_id, repo_url,
        topics and topics.tags, fork,
    )
    return status != "UPDATE 0"


async def update_card(
    conn: asyncpg.Connection, mod_id: uuid.UUID, *, name: str | None = None, summary: str | None = None,
    description: str | None = None, authors: list[str] | None = None, licenses: list[str] | None = None,
    links: dict[str, str] | None = None, environment: str | None = None, categories: list[str] | None = None,
) -> bool:
    """Write the card fields given (None keeps the stored one): the release indexer writes the
    whole card from the newest release, the GitHub role the fields the repository owns
    (``categories``: its topics, module docstring). False when nothing changed (the row is
    left as it was)."""
    topics = vocabulary.classify(categories) if categories is not None else None
    status = await conn.execute(
        """UPDATE mods SET name = COALESCE($2::text, name), summary = COALESCE($3::text, summary),
               description = COALESCE($4::text, description), authors = COALESCE($5::text[], authors),
               licenses = COALESCE($6::text[], licenses), links = COALESCE($7::jsonb, links),
               environment = COALESCE($8::text, environment), categories = COALESCE($9::text[], categories),
               tags = COALESCE($10::text[], tags), updated_at = now()
           WHERE id = $1
             AND (name, summary, description, authors, licenses, links, environment, categories, tags)
                 IS DISTINCT FROM
                 (COALESCE($2::text, name), COALESCE($3::text, summary), COALESCE($4::text, description),
                  COALESCE($5::text[], authors), COALESCE($6::text[], licenses), COALESCE($7::jsonb, links),
                  COALESCE($8::text, environment), COALESCE($9::text[], categories),
                  COALESCE($10::text[], tags))""",
        mod_id, name[:128] if name else None, summary, description, authors, licenses, links,
        environment, topics and topics.categories, topics and topics.tags,
    )
    return status.endswith(" 1")


# The README text search reads (mods.readme_text, migration 0022): a long README's plain text
# is ~5-15,000 characters; past this it is cut (the rest rarely holds words the first part does
# not, and each replica's search index holds every README's lexemes: docs/api.md, "Search").
README_MAX_CHARS = 16_000


def readme_search_text(text: str) -> str:
    """The README's plain text as search stores it: NUL characters (which PostgreSQL's text
    cannot hold) dropped, at most README_MAX_CHARS characters."""
    return text.replace("\x00", "")[:README_MAX_CHARS]


async def set_readme(conn: asyncpg.Connection, mod_id: uuid.UUID, text: str) -> bool:
    """Store the README's plain text for search directly (tests and tools; the README fetch
    writes ``repository_readmes``, whose trigger copies its text here). Search matches its words
    (mods.readme_vector, derived by PostgreSQL) below the name, summary and authors. Writes
    updated_at, so an API replica's search index re-reads the mod within its catch-up even
    without the version event the caller publishes after commit. False when unchanged."""
    status = await conn.execute(
        """UPDATE mods SET readme_text = $2, updated_at = now()
           WHERE id = $1 AND readme_text IS DISTINCT FROM $2""",
        mod_id, readme_search_text(text),
    )
    return status.endswith(" 1")


async def refresh_rollup(conn: asyncpg.Connection, mod_id: uuid.UUID) -> None:
    """Recompute what listings read from the mod's public versions (same transaction as the change)."""
    await conn.execute(
        """
        WITH pub AS (
            SELECT v.* FROM mod_versions v
            WHERE v.mod_id = $1 AND v.status = 'public' AND NOT v.hidden
        ), latest AS (
            SELECT version_number, published_at FROM pub
            ORDER BY published_at DESC NULLS LAST, created_at DESC LIMIT 1
        )
        UPDATE mods m SET
            listed = (SELECT count(*) > 0 FROM pub) AND NOT m.hidden,
            latest_version = (SELECT version_number FROM latest),
            last_published_at = (SELECT published_at FROM latest),
            loaders = COALESCE((SELECT array_agg(DISTINCT l ORDER BY l) FROM pub, unnest(pub.loaders) l), '{}'),
            -- Newest first by the Minecraft version table ("1.21.10" before "1.21.2"); versions
            -- the table does not know go last, by name.
            game_versions = COALESCE((
                SELECT array_agg(d.g ORDER BY mv.position NULLS LAST, d.g)
                FROM (SELECT DISTINCT g FROM pub, unnest(pub.game_versions) g) d
                LEFT JOIN minecraft_versions mv ON mv.id = d.g
            ), '{}'),
            downloads = COALESCE((SELECT sum(f.download_count) FROM pub JOIN version_files f ON f.version_id = pub.id), 0),
            updated_at = now()
        WHERE m.id = $1
        """,
        mod_id,
    )


async def upsert_icon(
    conn: asyncpg.Connection, mod_id: uuid.UUID, content_type: str, data: bytes, etag: str
) -> None:
    """The project's icon; a new or changed one also moves ``mods.updated_at``: the hit's
    ``has_icon`` is the mod row's as search holds it, and replicas and the search snapshot's
    writer re-read only the mods written after a position (``indexed.changed_after``)."""
    await conn.execute(
        """WITH up AS (
               INSERT INTO mod_icons (mod_id, content_type, data, etag) VALUES ($1, $2, $3, $4)
               ON CONFLICT (mod_id) DO UPDATE SET content_type = EXCLUDED.content_type,
                   data = EXCLUDED.data, etag = EXCLUDED.etag, updated_at = now()
               WHERE mod_icons.etag IS DISTINCT FROM EXCLUDED.etag
               RETURNING mod_id)
           UPDATE mods SET updated_at = now() WHERE id IN (SELECT mod_id FROM up)""",
        mod_id, content_type, data, etag,
    )
