"""Scan one indexed version: every file not already scanned, then one transaction deciding visibility.

The event only triggers the job: what to scan is read from PostgreSQL, so a stale
or duplicated event does no harm. Files whose stored result is still valid (same
rule set, same size, digest consistent) are not downloaded again, so re-indexing a
release after an edit costs no bandwidth. Nothing here acks or publishes.
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass, field

import asyncpg

from indexium_contracts import versions as version_events
from indexium_db.queries import mods as mods_q
from indexium_db.queries import scan as scan_q

from .. import ownership
from .metrics import ScanMetrics
from .pipeline import FileToScan, ScanContext, scan_file
from .rules import RULESET_VERSION
from .verdict import FileVerdict

SCAN_ACTOR = "scan"


def reusable(row) -> bool:
    """Is a stored result still the answer for this file?"""
    digest = row["github_digest"]
    return (
        row["scan_status"] in ("clean", "suspicious")
        and row["scan_version"] == RULESET_VERSION
        and row["sha256"] is not None
        and row["scanned_size"] == row["size"]
        and (digest is None or digest.lower() == f"sha256:{row['sha256']}")
    )


def next_status(current: str, files: list[tuple[str, str | None]], approved: set[str], *,
                scan_owns_quarantine: bool) -> str:
    """The version's status from its files' ``(scan_status, sha256)``.

    * ``rejected`` is an operator's decision: never changed here;
    * a non-clean file whose exact bytes an operator has not approved quarantines;
    * all files clean (or approved) makes it public, releasing a quarantine only if the
      scan stage put it there (the indexer quarantines corrupt sibling jars itself);
    * otherwise (files still pending) it stays as it is.
    """
    if current == "rejected" or not files:
        return current
    if any(status in ("suspicious", "failed") and sha256 not in approved for status, sha256 in files):
        return "quarantined"
    if any(status == "pending" for status, _ in files):
        return current
    if current == "quarantined" and not scan_owns_quarantine:
        return current
    return "public"


@dataclass
class ScanOutcome:
    outcome: str  # scanned | skipped
    event: version_events.VersionScanned | None = None
    bytes_scanned: int = 0
    verdicts: list[FileVerdict] = field(default_factory=list)
    reused: int = 0
    # Other versions the hashes just stored made re-uploads (or released): published after commit.
    also: list[version_events.VersionStatusChanged] = field(default_factory=list)


def _reason(verdicts: list[FileVerdict]) -> str:
    parts = []
    for v in verdicts:
        if v.status == "failed":
            parts.append(f"scan failed ({v.reason})")
        elif v.status == "suspicious":
            top = max(v.findings, key=lambda f: f.severity)
            parts.append(f"{top.rule} (severity {top.severity}) in {top.class_name or top.path or 'the file'}")
    return "; ".join(parts)[:1000] or "files not clean"


class VersionScanner:
    def __init__(self, pool: asyncpg.Pool, ctx: ScanContext, metrics: ScanMetrics):
        self._pool, self._ctx, self._metrics = pool, ctx, metrics

    async def handle(self, event: version_events.VersionIndexed) -> ScanOutcome:
        version_id = uuid.UUID(event.version_id)
        async with self._pool.acquire() as conn:
            state = await scan_q.version_state(conn, version_id)
            rows = await scan_q.version_files(conn, version_id)
        if state is None or state["hidden"] or state["status"] == "rejected":
            return ScanOutcome("skipped")
        results: list[scan_q.FileResult] = []
        verdicts: list[FileVerdict] = []
        reused = 0
        sent = {f.file_id: f for f in event.files}
        for row in rows:
            if reusable(row):
                reused += 1
                continue
            started = time.perf_counter()
            verdict = await scan_file(self._ctx, FileToScan(row["url"], row["size"], row["github_digest"],
                                                            row["sidecar_url"], _entry_sizes(row, sent)))
            self._observe(verdict, time.perf_counter() - started)
            verdicts.append(verdict)
            results.append(_file_result(row["id"], verdict))
        self._metrics.files.labels("reused").inc(reused)
        committed = await self._commit(version_id, results, verdicts)
        if committed is None:
            return ScanOutcome("skipped")
        event_out, also = committed
        return ScanOutcome("scanned", event_out, sum(v.hashes.size for v in verdicts if v.hashes), verdicts, reused,
                           also)

    def _observe(self, verdict: FileVerdict, seconds: float) -> None:
        m = self._metrics
        m.file_seconds.observe(seconds)
        m.files.labels(verdict.status).inc()
        if verdict.hashes:
            m.bytes_scanned.inc(verdict.hashes.size)
        for f in verdict.findings:
            m.findings.labels(f.rule).inc()

    async def _commit(self, version_id: uuid.UUID, results: list[scan_q.FileResult], verdicts: list[FileVerdict]
                      ) -> tuple[version_events.VersionScanned, list[version_events.VersionStatusChanged]] | None:
        async with self._pool.acquire() as conn, conn.transaction():
            locked = await scan_q.lock_version(conn, version_id)
            if locked is None:
                return None
            for r in results:
                await scan_q.record_file(conn, version_id, r)
            files = await scan_q.version_files(conn, version_id)
            approved = await scan_q.approved_sha256(conn, version_id)
            history = await scan_q.decisions(conn, version_id)
            owns = bool(history) and history[-1]["actor"] == SCAN_ACTOR and history[-1]["action"] == "quarantined"
            current = locked["status"]
            status = next_status(current, [(f["scan_status"], f["sha256"]) for f in files], approved,
                                 scan_owns_quarantine=owns)
            not_clean = any(f["scan_status"] in ("suspicious", "failed") for f in files)
            hashes = [f["sha256"] for f in files if f["sha256"]]
            if status != current:
                await scan_q.set_status(conn, version_id, status, suspicious=not_clean)
                if status == "quarantined":
                    await scan_q.add_decision(conn, version_id, "quarantined", SCAN_ACTOR, _reason(verdicts), hashes)
                elif current == "quarantined":
                    await scan_q.add_decision(conn, version_id, "cleared", SCAN_ACTOR,
                                              "every file is clean or approved", hashes)
                await mods_q.refresh_rollup(conn, locked["mod_id"])
            elif not_clean:
                await scan_q.set_status(conn, version_id, status, suspicious=True)
            # The hashes just stored claimed the bytes (a trigger, same statement): a file GitHub
            # gave no digest for is checked for a re-upload here, before anything can find it by hash.
            settled = await ownership.settle(conn, mod_id=locked["mod_id"], version_id=version_id,
                                             pending_status="pending_scan")
            status = next((c.status for c in settled.changed if c.version_id == version_id), status)
        await self._metrics.refresh_quarantined(self._pool)
        return version_events.VersionScanned(
            mod_id=str(locked["mod_id"]), slug=locked["slug"], version_id=str(version_id),
            version_number=locked["version_number"], status=status,
            visible=status == "public" and not locked["hidden"],
            files=[version_events.FileScanned(
                file_id=str(f["id"]), result=f["scan_status"], sha1=_strip(f["sha1"]), sha256=_strip(f["sha256"]),
                sha512=_strip(f["sha512"]), reason=f["scan_reason"],
                findings=next((len(r.findings) for r in results if r.file_id == f["id"]), 0),
            ) for f in files],
        ), settled.events(besides=version_id)


def _entry_sizes(row, sent: dict[str, version_events.FileRef]) -> bytes:
    """The sizes the event carried for this file, if it describes the file as stored now
    (a stale event about an asset replaced since has other bytes behind the same row)."""
    ref = sent.get(str(row["id"]))
    if ref is None or ref.url != row["url"] or ref.size != row["size"] or ref.digest != row["github_digest"]:
        return b""
    return ref.entry_sizes


def _strip(value: str | None) -> str | None:
    return value.strip() if value else None


def _file_result(file_id: uuid.UUID, v: FileVerdict) -> scan_q.FileResult:
    h = v.hashes
    return scan_q.FileResult(
        file_id=file_id, status=v.status, reason=v.reason,
        sha1=h.sha1 if h else None, sha256=h.sha256 if h else None, sha512=h.sha512 if h else None,
        scanned_size=h.size if h else None, scan_version=RULESET_VERSION,
        findings=[scan_q.FindingRow(f.rule, f.severity, f.location, f.path, f.class_name, f.method, f.detail)
                  for f in v.findings],
    )
