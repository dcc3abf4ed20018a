"""JobLedger.succeeded: a job done on its first delivery costs no PostgreSQL round trip; a
redelivered one forgets the attempts its earlier deliveries counted."""

from __future__ import annotations

import contextlib
from types import SimpleNamespace

from indexium_contracts import versions as version_events
from indexium_platform.jobs import JobLedger


class Pool:
    """Records what the ledger runs; any acquire counts."""

    def __init__(self) -> None:
        self.executed: list[tuple] = []

    @contextlib.asynccontextmanager
    async def acquire(self):
        yield self

    async def execute(self, query: str, *args) -> str:
        self.executed.append((" ".join(query.split()), *args))
        return "DELETE 1"


def _msg(delivered: int) -> SimpleNamespace:
    return SimpleNamespace(headers={"Nats-Msg-Id": "d-1"},
                           metadata=SimpleNamespace(num_delivered=delivered, sequence=SimpleNamespace(stream=7)))


def _ledger(pool: Pool) -> JobLedger:
    return JobLedger(pool, js=None, consumer=version_events.SCAN, max_attempts=3, retry_base_s=1, outage_retry_s=1)


async def test_first_delivery_success_touches_no_row():
    pool = Pool()
    await _ledger(pool).succeeded(_msg(1))
    assert pool.executed == []


async def test_redelivered_success_forgets_its_attempts():
    pool = Pool()
    await _ledger(pool).succeeded(_msg(3))
    assert pool.executed == [("DELETE FROM job_attempts WHERE job_key = $1", f"{version_events.SCAN.durable}:d-1")]
