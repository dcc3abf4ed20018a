"""The scan stage's results, findings and the quarantine: what the stage writes and operators read.

A version is public only when every file is ``clean`` (or an operator approved the
exact bytes: ``quarantine_decisions.file_sha256``). Status changes happen here, in
the caller's transaction, together with ``mods.refresh_rollup``.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

import asyncpg


@dataclass(frozen=True)
class FindingRow:
    rule: str
    severity: int
    location: str
    entry_path: str
    class_name: str | None
    method: str | None
    detail: str


@dataclass(frozen=True)
class FileResult:
    file_id: uuid.UUID
    status: str  # clean | suspicious | failed
    reason: str | None
    sha1: str | None
    sha256: str | None
    sha512: str | None
    scanned_size: int | None
    scan_version: int
    findings: list[FindingRow]


async def lock_version(conn: asyncpg.Connection, version_id: uuid.UUID) -> asyncpg.Record | None:
    return await conn.fetchrow(
        """SELECT v.id, v.mod_id, v.status, v.hidden, v.version_number, m.slug
           FROM mod_versions v JOIN mods m ON m.id = v.mod_id
           WHERE v.id = $1 FOR UPDATE OF v""",
        version_id,
    )


async def version_files(conn: asyncpg.Connection, version_id: uuid.UUID) -> list[asyncpg.Record]:
    """Each file of a version with what a scan needs and what the last scan found."""
    return await conn.fetch(
        """SELECT id, filename, url, size, github_digest, sidecar_url, sha1, sha256, sha512,
                  scan_status, scan_reason, scan_version, scanned_size
           FROM version_files WHERE version_id = $1 ORDER BY is_primary DESC, filename""",
        version_id,
    )


async def version_state(conn: asyncpg.Connection, version_id: uuid.UUID) -> asyncpg.Record | None:
    return await conn.fetchrow(
        """SELECT v.id, v.mod_id, v.status, v.hidden, v.version_number, m.slug
           FROM mod_versions v JOIN mods m ON m.id = v.mod_id WHERE v.id = $1""",
        version_id,
    )


async def record_file(conn: asyncpg.Connection, version_id: uuid.UUID, r: FileResult) -> bool:
    """Store one file's result and replace its findings; False if the file left the version."""
    status = await conn.execute(
        """UPDATE version_files SET sha1 = $3, sha256 = $4, sha512 = $5, scan_status = $6,
               scan_reason = $7, scanned_at = now(), scanned_size = $8, scan_version = $9, updated_at = now()
           WHERE id = $1 AND version_id = $2""",
        r.file_id, version_id, r.sha1, r.sha256, r.sha512, r.status, r.reason, r.scanned_size, r.scan_version,
    )
    if status.split()[-1] == "0":
        return False
    await conn.execute("DELETE FROM scan_findings WHERE file_id = $1", r.file_id)
    if r.findings:
        await conn.executemany(
            """INSERT INTO scan_findings (file_id, version_id, rule, severity, location, entry_path,
                   class_name, method, detail)
               VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)""",
            [(r.file_id, version_id, f.rule, f.severity, f.location, f.entry_path, f.class_name, f.method,
              f.detail) for f in r.findings],
        )
    return True


async def approved_sha256(conn: asyncpg.Connection, version_id: uuid.UUID) -> set[str]:
    """sha256 of every file an operator approved for this version (approvals bind to bytes)."""
    rows = await conn.fetch(
        """SELECT DISTINCT unnest(file_sha256) AS h FROM quarantine_decisions
           WHERE version_id = $1 AND action = 'approved'""",
        version_id,
    )
    return {r["h"] for r in rows}


async def set_status(conn: asyncpg.Connection, version_id: uuid.UUID, status: str, *, suspicious: bool) -> None:
    await conn.execute(
        """UPDATE mod_versions SET status = $2, suspicious = suspicious OR $3, updated_at = now()
           WHERE id = $1""",
        version_id, status, suspicious,
    )


async def add_decision(conn: asyncpg.Connection, version_id: uuid.UUID, action: str, actor: str,
                       reason: str, file_sha256: list[str]) -> None:
    await conn.execute(
        """INSERT INTO quarantine_decisions (version_id, action, actor, reason, file_sha256)
           VALUES ($1, $2, $3, $4, $5)""",
        version_id, action, actor, reason[:1000], file_sha256,
    )


async def quarantined_count(conn: asyncpg.Connection) -> int:
    return await conn.fetchval("SELECT count(*) FROM mod_versions WHERE status = 'quarantined'")


# ---- operators ----------------------------------------------------------------------------------

async def resolve_version(conn: asyncpg.Connection, ref: str) -> uuid.UUID | None:
    """A version id from a full id or a unique prefix of one (as ``quarantine list`` prints)."""
    try:
        return uuid.UUID(ref)
    except ValueError:
        pass
    rows = await conn.fetch(
        "SELECT id FROM mod_versions WHERE id::text LIKE $1 || '%' LIMIT 2", ref.lower().replace("%", "")
    )
    return rows[0]["id"] if len(rows) == 1 else None


async def list_quarantined(conn: asyncpg.Connection, *, limit: int = 100,
                           include_rejected: bool = False) -> list[asyncpg.Record]:
    return await conn.fetch(
        """SELECT v.id, m.slug, v.version_number, v.status, v.updated_at,
                  (SELECT count(*) FROM scan_findings s WHERE s.version_id = v.id) AS findings,
                  (SELECT max(s.severity) FROM scan_findings s WHERE s.version_id = v.id) AS max_severity,
                  (SELECT d.reason FROM quarantine_decisions d WHERE d.version_id = v.id
                   ORDER BY d.created_at DESC, d.id DESC LIMIT 1) AS reason
           FROM mod_versions v JOIN mods m ON m.id = v.mod_id
           WHERE v.status = 'quarantined' OR ($2 AND v.status = 'rejected')
           ORDER BY v.updated_at LIMIT $1""",
        limit, include_rejected,
    )


async def version_findings(conn: asyncpg.Connection, version_id: uuid.UUID) -> list[asyncpg.Record]:
    return await conn.fetch(
        """SELECT f.filename, s.rule, s.severity, s.location, s.entry_path, s.class_name, s.method, s.detail
           FROM scan_findings s JOIN version_files f ON f.id = s.file_id
           WHERE s.version_id = $1 ORDER BY s.severity DESC, f.filename, s.id""",
        version_id,
    )


async def decisions(conn: asyncpg.Connection, version_id: uuid.UUID) -> list[asyncpg.Record]:
    return await conn.fetch(
        """SELECT action, actor, reason, file_sha256, created_at FROM quarantine_decisions
           WHERE version_id = $1 ORDER BY created_at, id""",
        version_id,
    )
