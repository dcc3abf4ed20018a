"""Scan-stage metrics (all prefixed indexium_scan_; labels are bounded: rule ids, results)."""

import asyncio

from indexium_db.queries import scan as scan_q
from indexium_platform.metrics import ServiceMetrics

DURATION_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0)


class ScanMetrics:
    def __init__(self, base: ServiceMetrics):
        self.bytes_scanned = base.counter("bytes_scanned_total", "Bytes streamed, hashed and scanned.")
        self.file_seconds = base.histogram("scan_duration_seconds", "Time to scan one file, download included.",
                                           buckets=DURATION_BUCKETS)
        # result: clean|suspicious|failed|reused
        self.files = base.counter("files_total", "Files by scan result.", ("result",))
        self.findings = base.counter("findings_total", "Findings by rule.", ("rule",))
        # outcome: scanned|skipped|retry|outage|dead_lettered
        self.jobs = base.counter("jobs_total", "Version scan jobs by outcome.", ("outcome",))
        self.dead_letters = base.counter("dead_letters_total", "Jobs dead-lettered, by category.", ("category",))
        self.quarantined = base.gauge("quarantined_versions", "Versions currently in quarantine.")
        self._quarantine_lock = asyncio.Lock()

    async def refresh_quarantined(self, pool) -> None:
        """Re-count quarantined versions. Called after a commit, never inside one (a count taken in an
        open transaction misses what concurrent scans commit), and serialized, so the count taken last
        is the one the gauge keeps."""
        async with self._quarantine_lock, pool.acquire() as conn:
            self.quarantined.set(await scan_q.quarantined_count(conn))
