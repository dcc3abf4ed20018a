"""The fate of a JetStream job that did not succeed, with the same rules in every worker.

* our infrastructure is away (PostgreSQL, NATS) -> nak after a pause, no attempt spent;
* a retryable failure (network, 5xx, 429, a bug) -> one attempt counted in PostgreSQL
  ``job_attempts`` (so every replica sees it), nak with ``base x 4^(n-1)`` (at least
  ``Retry-After``), and past ``max_attempts`` give up;
* giving up -> a ``dead_letters`` row (plus the caller's own writes, same transaction) and a
  DEADLETTER copy, then ``term``; never a silent drop: if the row cannot be written the
  message is nak'ed and comes back.

Consumers use ``max_deliver=-1``: JetStream never drops a message on its own, because its
delivery count includes outage naks that must not count.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import asyncpg
import nats.errors
from nats.aio.msg import Msg
from nats.js import JetStreamContext

from indexium_contracts import deadletter
from indexium_contracts.streams import ConsumerSpec
from indexium_db.queries import deadletters as deadletters_q, deliveries as deliveries_q
from indexium_db.retry import is_transient

from . import logs

log = logs.get(__name__)
ERROR_CHARS = 2000


def is_outage(exc: BaseException) -> bool:
    """PostgreSQL or NATS unreachable/restarting: wait for them, spend no attempt."""
    return is_transient(exc) or isinstance(exc, (nats.errors.Error, asyncio.TimeoutError))


def message_id(msg: Msg) -> str:
    return (msg.headers or {}).get("Nats-Msg-Id") or f"seq-{msg.metadata.sequence.stream}"


class JobLedger:
    def __init__(self, pool: asyncpg.Pool, js: JetStreamContext, consumer: ConsumerSpec, *,
                 max_attempts: int, retry_base_s: float, outage_retry_s: float,
                 about: Callable[[bytes], tuple[int | None, str | None]] | None = None):
        """``about``: the GitHub repository and the release tag a message's bytes are about (either
        None), kept with its dead letter so an author's dashboard reads only its own, and not the
        bytes (``ingest.about_message``)."""
        self._pool, self._js, self.consumer = pool, js, consumer
        self.max_attempts, self.retry_base_s, self.outage_retry_s = max_attempts, retry_base_s, outage_retry_s
        self._about = about

    def job_key(self, msg: Msg) -> str:
        return f"{self.consumer.durable}:{message_id(msg)}"

    async def outage(self, msg: Msg, exc: BaseException) -> str:
        log.warning("job_outage", consumer=self.consumer.durable, error=str(exc) or type(exc).__name__)
        await msg.nak(delay=self.outage_retry_s)
        return "outage"

    async def retry(self, msg: Msg, code: str, error: str, *, retry_after: float | None = None,
                    also: Callable[[asyncpg.Connection], Awaitable[None]] | None = None) -> str:
        """Spend one attempt; nak with backoff, or give up once attempts run out."""
        text = f"{code}: {error}"[:ERROR_CHARS]
        try:
            async with self._pool.acquire() as conn:
                attempts = await deliveries_q.add_attempt(conn, self.job_key(msg), text)
        except Exception as exc:
            if not is_outage(exc):
                raise
            return await self.outage(msg, exc)
        if attempts >= self.max_attempts:
            return await self.give_up(msg, "retries_exhausted", text, attempts, also=also)
        delay = self.retry_base_s * 4 ** (attempts - 1)
        if retry_after is not None:
            delay = max(delay, retry_after)
        log.info("job_retry", consumer=self.consumer.durable, code=code, attempts=attempts, delay_s=delay)
        await msg.nak(delay=delay)
        return "retry"

    async def give_up(self, msg: Msg, category: str, error: str, attempts: int | None = None, *,
                      also: Callable[[asyncpg.Connection], Awaitable[None]] | None = None) -> str:
        meta = msg.metadata
        counted = attempts is not None or meta.num_delivered > 1  # job_attempts may hold a row
        attempts = meta.num_delivered if attempts is None else attempts
        error = error[:ERROR_CHARS]
        repo_id, tag = self._about(msg.data) if self._about is not None else (None, None)
        try:
            async with self._pool.acquire() as conn, conn.transaction():
                await deadletters_q.insert(
                    conn, consumer=self.consumer.durable, subject=msg.subject, msg_id=message_id(msg),
                    stream_sequence=meta.sequence.stream, category=category, error=error,
                    attempts=attempts, payload=msg.data, github_repo_id=repo_id, tag_name=tag,
                )
                if also is not None:
                    await also(conn)
            await self._js.publish(
                deadletter.subject_for(self.consumer.durable),
                deadletter.encoder.encode(deadletter.DeadLetter(
                    consumer=self.consumer.durable, subject=msg.subject,
                    stream_sequence=meta.sequence.stream, attempts=attempts, category=category,
                    error=error, payload=msg.data, msg_id=message_id(msg),
                )),
                headers={"Nats-Msg-Id": f"dl:{self.consumer.durable}:{meta.sequence.stream}"},
            )
        except Exception as exc:
            if not is_outage(exc):
                raise
            return await self.outage(msg, exc)
        await msg.term()
        # After the term, never before: a dead letter whose DEADLETTER copy failed is nak'ed
        # and must come back with its attempts still counted.
        if counted:
            await self._forget(msg)
        log.warning("job_dead_lettered", consumer=self.consumer.durable, category=category,
                    error=error[:500], attempts=attempts)
        return "dead_lettered"

    async def succeeded(self, msg: Msg) -> None:
        """Forget the attempts of a job that finished (housekeeping: a leftover row is harmless).

        A job done on its first delivery has none to forget: an attempt is only counted by a
        failed delivery, which is followed by a redelivery (nak) or by the dead letter, which
        forgets them itself. So the common case costs no PostgreSQL round trip (two, with the
        pool's reset of the connection: the indexer's scale-out row profiled 18 per job).
        """
        if msg.metadata.num_delivered <= 1:
            return
        await self._forget(msg)

    async def _forget(self, msg: Msg) -> None:
        try:
            async with self._pool.acquire() as conn:
                await deliveries_q.clear_attempts(conn, self.job_key(msg))
        except Exception as exc:
            log.debug("clear_attempts_failed", error=str(exc))
