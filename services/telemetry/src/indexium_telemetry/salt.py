"""The daily salt: random per UTC day, shared by every replica, destroyed when the day ends.

The salt of day D lives in the JetStream key-value bucket ``telemetry_salts``
(memory storage: never written to a disk) under key ``D``, created by whichever
replica needs it first (create-if-absent: every other replica reads the winner's
value). Its entry carries a TTL that ends with day D, so NATS deletes it at
midnight even if no replica is running; replicas also purge past days and forget
them from memory. With yesterday's salt gone, yesterday's hashes cannot be linked
to today's, nor reversed by hashing every possible uuid again.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import uuid
from collections.abc import Callable
from datetime import date, datetime, timedelta

import nats.js.errors
from nats.js.kv import KeyValue

from indexium_contracts.telemetry import day_bounds, utc_day
from indexium_platform import logs

log = logs.get(__name__)
Clock = Callable[[], datetime]
SALT_BYTES = 32


def server_hash(server_uuid: uuid.UUID, salt: bytes) -> bytes:
    """The one salted hash: sha256(canonical lowercase uuid text || salt), 32 bytes."""
    return hashlib.sha256(str(server_uuid).encode("ascii") + salt).digest()


def salt_key(day: date) -> str:
    return day.isoformat()


def seconds_left(now: datetime, day: date) -> float:
    """Until the end of ``day`` (at least 1 s: JetStream's smallest message TTL)."""
    return max(1.0, (day_bounds(day)[1] - now).total_seconds())


class DailySalt:
    def __init__(self, kv: KeyValue, clock: Clock, *, timeout_s: float = 2.0):
        self._kv, self._clock, self._timeout = kv, clock, timeout_s
        self._salts: dict[date, bytearray] = {}
        self._purged: set[date] = set()
        self._lock = asyncio.Lock()

    async def hash_now(self, server_uuid: uuid.UUID) -> tuple[datetime, bytes]:
        """(the instant the ping is received, its server hash under that day's salt)."""
        now = self._clock()
        salt = await self.for_day(utc_day(now), now)
        return now, server_hash(server_uuid, bytes(salt))

    async def for_day(self, day: date, now: datetime) -> bytearray:
        salt = self._salts.get(day)
        if salt is not None:
            return salt
        async with self._lock:  # one fetch per replica per day, however many requests wait
            salt = self._salts.get(day)
            if salt is None:
                salt = bytearray(await self._fetch_or_create(day, now))
                self._forget_before(day)
                self._salts[day] = salt
                log.info("salt_loaded", day=day.isoformat())
        return salt

    async def _fetch_or_create(self, day: date, now: datetime) -> bytes:
        key = salt_key(day)
        for _ in range(3):
            try:
                return (await asyncio.wait_for(self._kv.get(key), self._timeout)).value
            except nats.js.errors.KeyNotFoundError:
                pass
            try:
                await asyncio.wait_for(
                    self._kv.create(key, os.urandom(SALT_BYTES), msg_ttl=seconds_left(now, day)),
                    self._timeout)
            except nats.js.errors.KeyWrongLastSequenceError:
                pass  # another replica created it first: read theirs
        return (await asyncio.wait_for(self._kv.get(key), self._timeout)).value

    def _forget_before(self, day: date) -> None:
        for old in [d for d in self._salts if d < day]:
            self._salts.pop(old)[:] = bytes(SALT_BYTES)  # overwrite the bytes we held

    async def maintain(self) -> None:
        """Periodic: forget and purge past salts; re-seed today's if NATS lost it (a restart).

        Re-seeding with the value this replica already uses keeps every replica on one
        salt for the day; a replica without it would otherwise mint a second one.
        """
        now = self._clock()
        today = utc_day(now)
        self._forget_before(today)
        for past in (today - timedelta(days=1), today - timedelta(days=2)):
            if past in self._purged:
                continue
            try:
                await asyncio.wait_for(self._kv.purge(salt_key(past)), self._timeout)
                self._purged.add(past)
            except Exception as exc:
                log.warning("salt_purge_failed", day=past.isoformat(), error=str(exc))
        salt = self._salts.get(today)
        if salt is not None:
            try:
                await asyncio.wait_for(self._kv.create(
                    salt_key(today), bytes(salt), msg_ttl=seconds_left(now, today)), self._timeout)
                log.warning("salt_reseeded", day=today.isoformat())
            except nats.js.errors.KeyWrongLastSequenceError:
                pass  # still there: the normal case

    def held_days(self) -> list[date]:
        return sorted(self._salts)
