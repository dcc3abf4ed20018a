"""The job-handler skeleton and the resource lifecycle every service shares, on a real
JetStream and PostgreSQL: each kind of message ends where the skeleton says (dead letter,
term, ack), and resources close last-opened first, also when start-up fails half-way."""

from __future__ import annotations

import asyncio
import time

import nats
import pytest

from indexium_contracts import versions as version_events
from indexium_platform.consumer import PullConsumer
from indexium_platform.handler import JobHandler
from indexium_platform.jobs import JobLedger
from indexium_platform.lifecycle import cleanup_ctx
from indexium_platform.metrics import ServiceMetrics
from indexium_platform.web import READINESS, base_app

CONSUMER = version_events.SCAN


class Recording(JobHandler):
    decoder = version_events.decoder

    def __init__(self, ledger: JobLedger):
        super().__init__(ledger, CONSUMER)
        self.done_slugs: list[str] = []
        self.counts: list[tuple[str | None, str, str]] = []
        self.finished_count = 0

    def accepts(self, event) -> bool:
        return isinstance(event, version_events.VersionIndexed)

    async def run(self, event, msg_id: str) -> str:
        if event.slug == "boom":
            raise RuntimeError("a bug")
        if event.slug == "known":
            raise LookupError("a failure this role maps")
        return event.slug

    async def failed(self, msg, event, exc):
        if isinstance(exc, LookupError):
            return await self.ledger.give_up(msg, "known_failure", str(exc)), "known_failure"
        return None

    async def done(self, event, result, started: float) -> None:
        self.done_slugs.append(result)

    def counted(self, event, outcome: str, category: str) -> None:
        self.counts.append((event.slug if event is not None else None, outcome, category))

    def finished(self, seconds: float) -> None:
        self.finished_count += 1


def _indexed(slug: str) -> bytes:
    return version_events.encoder.encode(version_events.VersionIndexed(
        mod_id="m", slug=slug, version_id=f"v-{slug}", version_number="1", visible=False))


async def test_each_kind_of_message_ends_where_the_skeleton_says(nats_url, pool):
    nc = await nats.connect(nats_url)
    js = nc.jetstream()
    # One attempt: a bug is dead-lettered at once instead of waiting out the backoff.
    handler = Recording(JobLedger(pool, js, CONSUMER, max_attempts=1, retry_base_s=0.1, outage_retry_s=0.1))
    hidden = version_events.encoder.encode(version_events.VersionHidden(
        mod_id="m", slug="h", version_id="v-h", version_number="1", reason="r"))
    for i, data in enumerate([b"not an event", hidden, _indexed("boom"), _indexed("known"), _indexed("ok")]):
        await js.publish(version_events.INDEXED, data, headers={"Nats-Msg-Id": f"m{i}"})
    consumer = PullConsumer(js, CONSUMER, handler.handle, concurrency=1, grace_s=1.0, fetch_timeout_s=0.2)
    await consumer.start()
    deadline = time.monotonic() + 15
    while len(handler.counts) < 3 or not handler.done_slugs:
        assert time.monotonic() < deadline, handler.counts
        await asyncio.sleep(0.05)
    await consumer.stop()

    assert handler.done_slugs == ["ok"]
    assert sorted(handler.counts, key=str) == sorted([
        (None, "dead_lettered", "undecodable"),
        ("boom", "dead_lettered", "retries_exhausted"),  # the bug: internal_error, attempts spent
        ("known", "dead_lettered", "known_failure"),
    ], key=str)
    assert handler.finished_count == 3  # the accepted events; not the undecodable nor the termed
    rows = await pool.fetch("SELECT msg_id, category, error FROM dead_letters ORDER BY msg_id")
    assert [(r["msg_id"], r["category"]) for r in rows] == [
        ("m0", "undecodable"), ("m2", "retries_exhausted"), ("m3", "known_failure")]
    assert rows[1]["error"].startswith("internal_error: RuntimeError")
    # The bug's attempt was counted, then forgotten with its dead letter (after the term).
    assert await pool.fetchval("SELECT count(*) FROM job_attempts") == 0
    # Nothing is left to deliver: the hidden event was terminated, the rest acked or termed.
    info = await js.consumer_info(CONSUMER.stream, CONSUMER.durable)
    assert info.num_pending == 0 and info.num_ack_pending == 0
    await nc.drain()


async def test_resources_close_last_opened_first_and_after_a_failed_start(nats_url, database_url):
    app = base_app("lifecycle-test", ServiceMetrics("lifecycle_test"))
    order: list[str] = []
    opened = {}

    async def note(what: str) -> None:
        order.append(what)

    async def open_(res) -> None:
        opened["pool"] = await res.postgres(database_url, max_size=2)
        opened["nc"] = await res.nats(nats_url)
        opened["session"] = res.http()
        res.on_close(note, "last opened")

    ctx = cleanup_ctx(open_)(app)
    await ctx.__anext__()
    assert set(app[READINESS]) == {"postgres", "nats"}
    assert all([await check() for check in app[READINESS].values()])
    # (each backend named after its role in pg_stat_activity, as its NATS connection is)
    assert await opened["pool"].fetchval("SHOW application_name") == "indexium-lifecycle-test"
    with pytest.raises(StopAsyncIteration):
        await ctx.__anext__()
    assert order == ["last opened"]
    assert opened["session"].closed and opened["nc"].is_closed and opened["pool"].is_closing()

    failing = {}

    async def fails_half_way(res) -> None:
        failing["pool"] = await res.postgres(database_url, max_size=2)
        raise RuntimeError("start-up failed")

    with pytest.raises(RuntimeError, match="start-up failed"):
        await cleanup_ctx(fails_half_way)(base_app("lifecycle-test", ServiceMetrics("lifecycle_test_2"))).__anext__()
    assert failing["pool"].is_closing()  # what was open is closed, not leaked
