"""The skeleton every JetStream job handler shares: decode → run → ack, or ledger → nak/term.

A role subclasses :class:`JobHandler` and says only what is its own: which events it
accepts, the job (``run``, which commits and publishes before the ack), how the failures it
knows map to the ledger (``failed``), what a dead letter also records, and what it counts
and logs. The skeleton does the rest in one order for every role:

1. an undecodable message is dead-lettered (category ``undecodable``);
2. an event the role does not accept is terminated (the consumer's filter is set up wrong);
3. the job runs under a heartbeat, then the message is acked;
4. a failure the role does not map is an outage of PostgreSQL/NATS (nak after a pause, no
   attempt spent) or a bug, logged and retried like any retryable failure, so it ends as a
   dead letter instead of looping forever;
5. after the ack, the role's ``done`` runs, then the ledger forgets the attempts.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Any, Generic, TypeVar

import msgspec
import structlog
from nats.aio.msg import Msg

from indexium_contracts.streams import ConsumerSpec

from . import logs
from .consumer import heartbeat
from .jobs import JobLedger, is_outage, message_id

log = logs.get(__name__)
E = TypeVar("E")
R = TypeVar("R")
# Written in the dead-letter transaction (``JobLedger``'s ``also``).
Record = Callable[[Any], Awaitable[None]]


class JobHandler(Generic[E, R]):
    decoder: Any  # the stream's msgspec decoder (a tagged union of its events)
    crash_event = "job_crashed"  # the log event for a failure nobody foresaw

    def __init__(self, ledger: JobLedger, consumer: ConsumerSpec):
        self.ledger, self.consumer = ledger, consumer

    # ---- what a role says ------------------------------------------------------------------------
    def accepts(self, event: Any) -> bool:
        raise NotImplementedError

    async def run(self, event: E, msg_id: str) -> R:
        """The job: commit, publish what it announces. Raising leaves the outcome to ``failed``."""
        raise NotImplementedError

    async def failed(self, msg: Msg, event: E, exc: Exception) -> tuple[str, str] | None:
        """(outcome, dead-letter category) for a failure this role knows, after telling the
        ledger; None for any other (outage or bug, handled by the skeleton)."""
        return None

    def dead_lettered(self, event: E) -> Record | None:
        """What a dead letter of this event also records, in its transaction."""
        return None

    async def done(self, event: E, result: R, started: float) -> None:
        """After the ack: count and log the success."""

    def counted(self, event: E | None, outcome: str, category: str) -> None:
        """Every outcome but a success (which ``done`` counts); ``event`` is None when undecodable."""

    def finished(self, seconds: float) -> None:
        """After any outcome of an accepted event."""

    # ---- the skeleton ----------------------------------------------------------------------------
    async def handle(self, msg: Msg) -> None:
        msg_id = message_id(msg)
        structlog.contextvars.bind_contextvars(msg_id=msg_id, stream_seq=msg.metadata.sequence.stream)
        started = time.perf_counter()
        try:
            event = self.decoder.decode(msg.data)
        except (msgspec.DecodeError, msgspec.ValidationError) as exc:
            self.counted(None, await self.ledger.give_up(msg, "undecodable", str(exc)), "undecodable")
            return
        if not self.accepts(event):
            await msg.term()
            return
        try:
            await self._run(msg, msg_id, event, started)
        finally:
            self.finished(time.perf_counter() - started)

    async def _run(self, msg: Msg, msg_id: str, event: E, started: float) -> None:
        try:
            async with heartbeat(msg, every_s=self.consumer.ack_wait_s / 3):
                result = await self.run(event, msg_id)
            await msg.ack()
        except Exception as exc:
            known = await self.failed(msg, event, exc)
            if known is None:
                if is_outage(exc):
                    known = await self.ledger.outage(msg, exc), ""
                else:
                    log.exception(self.crash_event)
                    known = (await self.ledger.retry(msg, "internal_error", type(exc).__name__,
                                                     also=self.dead_lettered(event)), "retries_exhausted")
            self.counted(event, *known)
        else:
            await self.done(event, result, started)
            await self.ledger.succeeded(msg)
