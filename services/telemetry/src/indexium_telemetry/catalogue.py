"""Which mods a ping may name: in-memory slug / id / manifest id -> mod id maps.

The accept path must not query PostgreSQL per ping (it would tie availability and
throughput to the database). The maps follow the catalogue's events (``follow.py``: a mod
named by a version or mod event is read again by id and learned or forgotten at once), and
are rebuilt whole from PostgreSQL periodically, the safety net for events missed. Unknown
mods in a ping are dropped and counted, never stored.

Between two rebuilds a mod learned from an event takes only manifest ids nobody holds yet:
an id several mods claim keeps its holder until the next rebuild applies the ownership
order of ``queries.telemetry._MANIFEST_IDS`` (a newcomer republishing another mod's id
never takes its servers, even for a minute).
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass

import asyncpg

from indexium_db.queries import telemetry as telemetry_q

from .protocol import ModEntry


@dataclass(frozen=True)
class Entry:
    """One mod as an event left it: known (``slug``, ``claims``) or forgotten (``slug`` None)."""

    mod_id: uuid.UUID
    slug: str | None
    claims: tuple[str, ...] = ()


class ModCatalogue:
    def __init__(self, clock=time.monotonic) -> None:
        self._clock = clock
        self._by_slug: dict[str, uuid.UUID] = {}
        self._by_manifest_id: dict[str, uuid.UUID] = {}
        self._by_manifest_id_lower: dict[str, uuid.UUID] = {}
        self._ids: set[uuid.UUID] = set()
        self._slug_of: dict[uuid.UUID, str] = {}
        self._claims_of: dict[uuid.UUID, tuple[str, ...]] = {}  # the manifest ids each mod holds
        # Entries applied from events, with when: re-applied over a rebuild whose read began
        # before them (it may not have seen their commit). Pruned by each rebuild.
        self._recent: dict[uuid.UUID, tuple[float, Entry]] = {}
        self.loaded_at: float | None = None  # monotonic; None until the first load

    @property
    def loaded(self) -> bool:
        return self.loaded_at is not None

    def __len__(self) -> int:
        return len(self._ids)

    async def reload(self, pool: asyncpg.Pool) -> int:
        started = self._clock()
        async with pool.acquire() as conn:
            rows = await telemetry_q.known_mods(conn)
            claims = await telemetry_q.manifest_ids(conn)
        return self.replace(rows, claims, started=started)

    def replace(self, rows, claims, *, started: float | None = None) -> int:
        """Swap in new maps from (id, slug) rows and (manifest_id, id) claims; returns the mods.
        ``started``: when the read began; entries learned from events since then are applied
        again over the new maps."""
        # The old maps go before the new ones are built: nothing else runs until this returns
        # (no await), so no reader sees a half-built map, and the process never holds two
        # catalogues at once (~70 MB of objects each at 100,000 mods, and the memory the first
        # one left behind was not given back: RSS rose with every rebuild, bench/README.md "Soak").
        self._by_slug, self._slug_of, self._ids = by_slug, slug_of, ids = {}, {}, set()
        self._by_manifest_id, self._by_manifest_id_lower = by_manifest_id, lower = {}, {}
        self._claims_of = claims_of = {}
        # One id object per mod: the claims' rows bring their own copies of the same ids (72
        # bytes each), which would otherwise stay in three of the maps.
        same: dict[uuid.UUID, uuid.UUID] = {}
        for r in rows:
            mod_id, slug = r["id"], r["slug"]
            by_slug[slug] = mod_id
            slug_of[mod_id] = slug
            ids.add(mod_id)
            same[mod_id] = mod_id
        for r in claims:  # one row per manifest id, in the ownership order (_MANIFEST_IDS)
            claimed, mod_id = r["manifest_id"], r["id"]
            mod_id = same.get(mod_id, mod_id)
            by_manifest_id[claimed] = mod_id
            # Legacy mcmod.info ids vary in case between a jar and what the loader reports. An id
            # already in lower case is kept once, not as a second equal string.
            low = claimed.lower()
            lower.setdefault(claimed if low == claimed else low, mod_id)
            # A tuple, not a set: most mods hold one or two ids (a one-id set is 216 bytes).
            held = claims_of.get(mod_id)
            claims_of[mod_id] = (claimed,) if held is None else (*held, claimed)
        self.loaded_at = self._clock()
        since = started if started is not None else self.loaded_at
        self._recent = {k: v for k, v in self._recent.items() if v[0] >= since}
        for _, entry in self._recent.values():
            self._apply(entry)
        return len(self._ids)

    def apply(self, entry: Entry) -> None:
        """A mod as PostgreSQL holds it now (read after an event named it)."""
        self._recent[entry.mod_id] = (self._clock(), entry)
        self._apply(entry)

    def _apply(self, entry: Entry) -> None:
        mod_id = entry.mod_id
        old_slug = self._slug_of.pop(mod_id, None)
        if old_slug is not None and self._by_slug.get(old_slug) == mod_id:
            del self._by_slug[old_slug]
        # Ids it no longer claims (a hidden version's, or all of a hidden mod's) are let go;
        # another claimant gets them at the next rebuild.
        kept = set(entry.claims) if entry.slug is not None else set()
        kept_lower = {c.lower() for c in kept}
        for claimed in set(self._claims_of.pop(mod_id, ())) - kept:
            if self._by_manifest_id.get(claimed) == mod_id:
                del self._by_manifest_id[claimed]
            if claimed.lower() not in kept_lower and self._by_manifest_id_lower.get(claimed.lower()) == mod_id:
                del self._by_manifest_id_lower[claimed.lower()]
        if entry.slug is None:  # hidden or gone: nothing resolves to it any more
            self._ids.discard(mod_id)
            return
        self._ids.add(mod_id)
        self._slug_of[mod_id] = entry.slug
        self._by_slug[entry.slug] = mod_id
        held = set()
        for claimed in kept:
            if self._by_manifest_id.setdefault(claimed, mod_id) == mod_id:
                held.add(claimed)
            self._by_manifest_id_lower.setdefault(claimed.lower(), mod_id)
        if held:
            self._claims_of[mod_id] = tuple(held)

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
