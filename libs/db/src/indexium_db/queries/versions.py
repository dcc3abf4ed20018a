"""Versions and their files, written by the indexer in one transaction per release; and the
Minecraft version table those versions' game versions are expanded against and sorted by."""

from __future__ import annotations

import dataclasses
import uuid
from dataclasses import dataclass, field
from datetime import datetime

import asyncpg


@dataclass(frozen=True)
class FileRow:
    github_asset_id: int
    filename: str
    url: str
    size: int
    content_type: str | None
    github_digest: str | None
    sidecar_url: str | None
    loaders: list[str]
    game_versions: list[str]
    manifests: list[dict]
    is_primary: bool
    download_count: int
    # GitHub's created_at of the asset: orders who published the bytes first (``ownership``)
    asset_created_at: datetime | None = None
    # 0023: the file's project type (indexium_jar.formats), a pack's record (None for a jar),
    # game versions read from the release's name rather than the file, a modpack's files.
    project_type: str | None = None
    pack: dict | None = None
    game_versions_inferred: bool = False
    pack_files: list[PackFileRow] = field(default_factory=list)


@dataclass(frozen=True)
class PackFileRow:
    """One entry of a modpack's modrinth.index.json ``files`` (``pack_files``)."""

    path: str
    sha1: str
    sha512: str
    downloads: list[str]
    file_size: int | None = None
    env_client: str | None = None
    env_server: str | None = None


async def upsert_version(conn: asyncpg.Connection, **fields) -> uuid.UUID:
    """Idempotent: the same release indexed twice updates one row (the owner's ON CONFLICT rule).

    Re-indexing un-hides a version (the release was published again) but never
    downgrades a scan decision: a quarantined or rejected version stays so. The fields are
    :func:`save_version`'s; this is its id alone.
    """
    version_id, _created, _visible = await save_version(conn, **fields)
    return version_id


async def save_version(
    conn: asyncpg.Connection,
    *,
    mod_id: uuid.UUID,
    version_number: str,
    github_release_id: int,
    tag_name: str,
    name: str,
    changelog: str,
    version_type: str,
    published_at: datetime | None,
    status: str,
    game_versions: list[str],
    loaders: list[str],
    suspicious: bool = False,
    game_versions_inferred: bool = False,
) -> tuple[uuid.UUID, bool, bool]:
    """:func:`upsert_version` -> ``(id, created, visible)``: whether the row was created by
    this statement (``xmax = 0``: no earlier row version was updated or locked by it), and
    whether it is now public and not hidden (:func:`is_visible`, as this statement left it).
    A version created now has no files, holds or decisions yet, so its writer may skip
    looking for them."""
    row = await conn.fetchrow(
        """INSERT INTO mod_versions (mod_id, version_number, github_release_id, tag_name, name,
               changelog, version_type, published_at, status, game_versions, loaders, suspicious,
               game_versions_inferred)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)
           ON CONFLICT (mod_id, version_number) DO UPDATE SET
               github_release_id = EXCLUDED.github_release_id,
               tag_name = EXCLUDED.tag_name,
               name = EXCLUDED.name,
               changelog = EXCLUDED.changelog,
               version_type = EXCLUDED.version_type,
               published_at = EXCLUDED.published_at,
               game_versions = EXCLUDED.game_versions,
               loaders = EXCLUDED.loaders,
               game_versions_inferred = EXCLUDED.game_versions_inferred,
               -- An operator's or the scan's hold stays, and so does a public version: a
               -- release sent again must not take it off the site until a scan re-runs
               -- (hold_for_scan sends it back only when its files carry bytes not scanned).
               status = CASE WHEN mod_versions.status IN ('quarantined', 'rejected', 'public')
                             THEN mod_versions.status ELSE EXCLUDED.status END,
               suspicious = mod_versions.suspicious OR EXCLUDED.suspicious,
               hidden = false,
               hidden_reason = NULL,
               updated_at = now()
           RETURNING id, xmax = 0 AS created, status = 'public' AND NOT hidden AS visible""",
        mod_id, version_number, github_release_id, tag_name, name, changelog, version_type,
        published_at, status, game_versions, loaders, suspicious, game_versions_inferred,
    )
    return row["id"], row["created"], row["visible"]


async def replace_files(conn: asyncpg.Connection, version_id: uuid.UUID, files: list[FileRow], *,
                        new_version: bool = False) -> list[uuid.UUID]:
    """Upsert the release's jar files and drop files whose assets left the release
    (``new_version``: the version row was created in this transaction, so it has no other
    files to drop and the DELETE is not sent)."""
    ids = []
    for f in files:
        ids.append(await conn.fetchval(
            """INSERT INTO version_files (version_id, github_asset_id, filename, url, size, content_type,
                   github_digest, sidecar_url, loaders, game_versions, manifests, is_primary, download_count,
                   asset_created_at, project_type, pack, game_versions_inferred)
               VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17)
               ON CONFLICT (version_id, github_asset_id) DO UPDATE SET
                   filename = EXCLUDED.filename, url = EXCLUDED.url, size = EXCLUDED.size,
                   content_type = EXCLUDED.content_type, github_digest = EXCLUDED.github_digest,
                   sidecar_url = EXCLUDED.sidecar_url, loaders = EXCLUDED.loaders,
                   game_versions = EXCLUDED.game_versions, manifests = EXCLUDED.manifests,
                   is_primary = EXCLUDED.is_primary, download_count = EXCLUDED.download_count,
                   asset_created_at = COALESCE(EXCLUDED.asset_created_at, version_files.asset_created_at),
                   project_type = EXCLUDED.project_type, pack = EXCLUDED.pack,
                   game_versions_inferred = EXCLUDED.game_versions_inferred,
                   updated_at = now()
               RETURNING id""",
            version_id, f.github_asset_id, f.filename, f.url, f.size, f.content_type, f.github_digest,
            f.sidecar_url, f.loaders, f.game_versions, f.manifests, f.is_primary, f.download_count,
            f.asset_created_at, f.project_type, f.pack, f.game_versions_inferred,
        ))
        if f.pack is not None:  # (an asset id is one upload's: a jar's never becomes a pack's)
            await _replace_pack_files(conn, ids[-1], f.pack_files)
    if not new_version:
        await conn.execute(
            "DELETE FROM version_files WHERE version_id = $1 AND NOT (github_asset_id = ANY($2::bigint[]))",
            version_id, [f.github_asset_id for f in files],
        )
    return ids


async def _replace_pack_files(conn: asyncpg.Connection, file_id: uuid.UUID, rows: list[PackFileRow]) -> None:
    """A modpack file's ``files`` list, replaced whole (one statement each way)."""
    await conn.execute("DELETE FROM pack_files WHERE file_id = $1", file_id)
    if not rows:
        return
    await conn.execute(
        """INSERT INTO pack_files (file_id, path, sha1, sha512, file_size, downloads, env_client, env_server)
           SELECT $1, r.path, r.sha1, r.sha512, r.file_size, ARRAY(SELECT jsonb_array_elements_text(r.downloads)),
                  r.env_client, r.env_server
           FROM jsonb_to_recordset($2::jsonb) AS r(path text, sha1 text, sha512 text, file_size bigint,
                                                    downloads jsonb, env_client text, env_server text)
           ON CONFLICT (file_id, path) DO NOTHING""",
        file_id, [dataclasses.asdict(r) for r in rows],
    )


async def pack_files(conn: asyncpg.Connection, file_id: uuid.UUID) -> list[asyncpg.Record]:
    return await conn.fetch("SELECT * FROM pack_files WHERE file_id = $1 ORDER BY path", file_id)


async def hold_for_scan(conn: asyncpg.Connection, version_id: uuid.UUID) -> bool:
    """A public version one of whose files carries bytes the scan has not seen (a new asset, or
    one whose size or GitHub digest differs from what the scan read) waits for the scan again
    (``pending_scan``), as a new version does; whether it did. A file the scan could not read
    and an operator approved anyway is not new bytes: a release sent again leaves it public."""
    status = await conn.execute(
        """UPDATE mod_versions v SET status = 'pending_scan', updated_at = now()
           WHERE v.id = $1 AND v.status = 'public' AND EXISTS (
               SELECT 1 FROM version_files f WHERE f.version_id = v.id AND (
                   f.scan_status = 'pending'
                   OR f.scanned_size <> f.size
                   OR lower(f.github_digest) <> 'sha256:' || f.sha256))""",
        version_id,
    )
    return status.endswith(" 1")


async def awaits_scan(conn: asyncpg.Connection, version_id: uuid.UUID) -> bool:
    """Whether the scan stage still has work on the version: it waits for its scan, or one of
    its files was never scanned (``VersionIndexed`` is what asks for it)."""
    return await conn.fetchval(
        """SELECT v.status = 'pending_scan' OR EXISTS (
                  SELECT 1 FROM version_files f WHERE f.version_id = v.id AND f.scan_status = 'pending')
           FROM mod_versions v WHERE v.id = $1""",
        version_id,
    ) or False


async def served_state(conn: asyncpg.Connection, mod_id: uuid.UUID, version_number: str) -> str:
    """A fingerprint of what the API serves from the mod and this version of it (the mod's row
    and owner, the version, its files, the icon): equal before and after a write means the write
    changed nothing anyone reads, so it is announced to no one. Left out: the bookkeeping
    ``updated_at`` columns, and download counts, which GitHub's payloads carry as they are at
    the time (an `edited` repeating a release has moved on) and which reconciliation refreshes
    without an announcement too (cached answers catch up by TTL)."""
    return await conn.fetchval(
        """SELECT md5(concat_ws('|',
               (SELECT (to_jsonb(m) - 'updated_at' - 'search_vector' - 'downloads')::text
                       || coalesce(a.login, '')
                  FROM mods m LEFT JOIN authors a ON a.github_id = m.author_github_id WHERE m.id = $1),
               (SELECT (to_jsonb(v) - 'updated_at')::text
                  FROM mod_versions v WHERE v.mod_id = $1 AND v.version_number = $2),
               (SELECT jsonb_agg(to_jsonb(f) - 'updated_at' - 'download_count' ORDER BY f.github_asset_id)::text
                  FROM version_files f JOIN mod_versions v ON v.id = f.version_id
                  WHERE v.mod_id = $1 AND v.version_number = $2),
               (SELECT etag FROM mod_icons WHERE mod_id = $1)))""",
        mod_id, version_number,
    )


async def hide_release(
    conn: asyncpg.Connection, github_repo_id: int, github_release_id: int, reason: str,
    *, except_versions: list[uuid.UUID] = (),
) -> list[asyncpg.Record]:
    """Hide (never delete) every version made from a release, in every project of the
    repository, but ``except_versions`` (the release job: the versions it just wrote, so a
    project none of whose files is in the release any more loses its version of it); returns
    what was hidden."""
    return await conn.fetch(
        """UPDATE mod_versions v SET hidden = true, hidden_reason = $3, updated_at = now()
           FROM mods m
           WHERE v.mod_id = m.id AND m.github_repo_id = $1 AND v.github_release_id = $2 AND NOT v.hidden
             AND NOT (v.id = ANY($4::uuid[]))
           RETURNING v.id, v.mod_id, v.version_number, m.slug""",
        github_repo_id, github_release_id, reason, list(except_versions),
    )


async def release_asset_projects(conn: asyncpg.Connection, github_repo_id: int,
                                 github_release_id: int) -> dict[int, uuid.UUID]:
    """Asset id -> the project whose version of this release holds its file (a release indexed
    before: where each of its files went)."""
    rows = await conn.fetch(
        """SELECT f.github_asset_id, v.mod_id FROM version_files f
           JOIN mod_versions v ON v.id = f.version_id JOIN mods m ON m.id = v.mod_id
           WHERE m.github_repo_id = $1 AND v.github_release_id = $2""",
        github_repo_id, github_release_id,
    )
    return {r["github_asset_id"]: r["mod_id"] for r in rows}


async def detach_files(conn: asyncpg.Connection, github_repo_id: int, github_release_id: int,
                       asset_ids: list[int]) -> int:
    """Drop these assets' files from the repository's versions of the release, before the
    release job writes them to another project's version: the bytes' claim (content_owners) is
    left without a file, which the project of the same repository writing them next takes over
    (the claim trigger of 0025). Returns how many were dropped."""
    if not asset_ids:
        return 0
    status = await conn.execute(
        """DELETE FROM version_files f USING mod_versions v, mods m
           WHERE f.version_id = v.id AND v.mod_id = m.id AND m.github_repo_id = $1
             AND v.github_release_id = $2 AND f.github_asset_id = ANY($3::bigint[])""",
        github_repo_id, github_release_id, asset_ids,
    )
    return int(status.split()[-1])


async def hold(conn: asyncpg.Connection, version_id: uuid.UUID) -> None:
    """Quarantine the version as suspicious, unless an operator rejected it."""
    await conn.execute(
        """UPDATE mod_versions SET status = 'quarantined', suspicious = true, updated_at = now()
           WHERE id = $1 AND status <> 'rejected'""",
        version_id,
    )


async def lift_hold(conn: asyncpg.Connection, version_id: uuid.UUID, status: str) -> None:
    """A quarantined version goes back to ``status`` and is no longer suspicious."""
    await conn.execute(
        """UPDATE mod_versions SET status = $2, suspicious = false, updated_at = now()
           WHERE id = $1 AND status = 'quarantined'""",
        version_id, status,
    )


async def is_visible(conn: asyncpg.Connection, version_id: uuid.UUID) -> bool:
    """Public and not hidden: what launchers see."""
    return bool(await conn.fetchval(
        "SELECT status = 'public' AND NOT hidden FROM mod_versions WHERE id = $1", version_id
    ))


# --- the Minecraft version table ----------------------------------------------------------


@dataclass(frozen=True)
class MinecraftVersion:
    id: str
    type: str  # release | snapshot | old_beta | old_alpha
    release_time: datetime
    release_target: str | None = None


async def minecraft_versions(conn: asyncpg.Connection) -> list[asyncpg.Record]:
    """The stored table, newest first (the order of Mojang's manifest)."""
    return await conn.fetch(
        "SELECT id, type, release_time, release_target FROM minecraft_versions ORDER BY position"
    )


async def replace_minecraft_versions(conn: asyncpg.Connection, rows: list[MinecraftVersion]) -> int:
    """Replace the whole table with ``rows`` (newest first) in the caller's transaction."""
    await conn.execute("DELETE FROM minecraft_versions")
    await conn.executemany(
        """INSERT INTO minecraft_versions (id, type, release_time, position, release_target)
           VALUES ($1, $2, $3, $4, $5)""",
        [(r.id, r.type, r.release_time, i, r.release_target) for i, r in enumerate(rows)],
    )
    return len(rows)
