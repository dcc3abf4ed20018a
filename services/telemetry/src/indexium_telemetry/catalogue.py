"""Which mods a ping may name: in-memory slug / id / manifest id -> mod id maps, reloaded periodically.

The accept path must not query PostgreSQL per ping (it would tie availability and
throughput to the database); a mod published a minute ago is counted from the next
reload on. Unknown mods in a ping are dropped and counted, never stored.
"""

from __future__ import annotations

import time
import uuid

import asyncpg

from indexium_db.queries import telemetry as telemetry_q

from .protocol import ModEntry


class ModCatalogue:
    def __init__(self) -> None:
        self._by_slug: dict[str, uuid.UUID] = {}
        self._by_manifest_id: dict[str, uuid.UUID] = {}
        self._by_manifest_id_lower: dict[str, uuid.UUID] = {}
        self._ids: frozenset[uuid.UUID] = frozenset()
        self.loaded_at: float | None = None  # monotonic; None until the first load

    @property
    def loaded(self) -> bool:
        return self.loaded_at is not None

    def __len__(self) -> int:
        return len(self._ids)

    async def reload(self, pool: asyncpg.Pool) -> int:
        async with pool.acquire() as conn:
            rows = await telemetry_q.known_mods(conn)
            claims = await telemetry_q.manifest_ids(conn)
        return self.replace(rows, claims)

    def replace(self, rows, claims) -> int:
        """Swap in new maps from (id, slug) rows and (manifest_id, id) claims; returns the mods."""
        lower: dict[str, uuid.UUID] = {}
        for r in claims:
            # Legacy mcmod.info ids vary in case between a jar and what the loader reports.
            lower.setdefault(r["manifest_id"].lower(), r["id"])
        # Swap whole maps: readers never see a half-built one.
        self._by_slug = {r["slug"]: r["id"] for r in rows}
        self._by_manifest_id = {r["manifest_id"]: r["id"] for r in claims}
        self._by_manifest_id_lower = lower
        self._ids = frozenset(r["id"] for r in rows)
        self.loaded_at = time.monotonic()
        return len(rows)

    def resolve(self, entry: ModEntry) -> uuid.UUID | None:
        if entry.mod_id is not None:
            return entry.mod_id if entry.mod_id in self._ids else None
        if entry.manifest_id is not None:
            found = self._by_manifest_id.get(entry.manifest_id)
            return found if found is not None else self._by_manifest_id_lower.get(entry.manifest_id.lower())
        return self._by_slug.get(entry.slug)  # type: ignore[arg-type]

    def resolve_all(self, entries: list[ModEntry]) -> tuple[list[tuple[uuid.UUID, str | None]], int]:
        """Known mods (first mention wins for a mod named twice) and how many were unknown."""
        seen: dict[uuid.UUID, str | None] = {}
        unknown = 0
        by_slug, resolve = self._by_slug, self.resolve
        for entry in entries:
            # The common case (a slug) without a method call per entry.
            mod_id = by_slug.get(entry.slug) if entry.slug is not None else resolve(entry)
            if mod_id is None:
                unknown += 1
            elif mod_id not in seen:
                seen[mod_id] = entry.version
        return list(seen.items()), unknown
