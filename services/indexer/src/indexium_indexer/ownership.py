"""Ownership of bytes and mod ids, applied by the release role (with GitHub's digests, at index
time) and by the scan stage (with the hashes it computes): one call each, in their transaction.

The rules and their SQL are ``indexium_db.queries.ownership``: a file's bytes belong to the
first project to publish them (the GitHub asset's ``created_at``, then first indexed), a mod id
per loader to the first project to declare it. A re-upload of another project's bytes, or a mod
id another owner's project holds, quarantines the version (actor ``ownership``) until the rules
or an operator settle it. Versions of *other* projects whose status changed with it (an impostor
indexed before the original loses the bytes or the id when the original arrives) are reported
as ``VersionStatusChanged`` events, published after the commit.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field

import asyncpg

from indexium_contracts import versions as version_events
from indexium_db.queries import ownership as ownership_q


@dataclass
class Settled:
    changed: list[ownership_q.Changed] = field(default_factory=list)
    with_reasons: set[uuid.UUID] = field(default_factory=set)
    slug: str | None = None  # the project's new slug, when it took one over (``take_slug``)

    def held(self, version_id: uuid.UUID) -> bool:
        """Do these rules hold this version (a re-upload, or a mod id in review or rejected)?"""
        return version_id in self.with_reasons

    def touched(self, version_id: uuid.UUID) -> bool:
        return any(c.version_id == version_id for c in self.changed)

    def events(self, *, besides: uuid.UUID | None = None) -> list[version_events.VersionStatusChanged]:
        """One event per version changed, except ``besides`` (its own job reports it)."""
        return [version_events.VersionStatusChanged(
            mod_id=str(c.mod_id), slug=c.slug, version_id=str(c.version_id), version_number=c.version_number,
            status=c.status, visible=c.visible, reason=c.reason,
        ) for c in self.changed if c.version_id != besides]


async def settle(conn: asyncpg.Connection, *, mod_id: uuid.UUID, version_id: uuid.UUID,
                 declared: list[ownership_q.Declared] = (), pending_status: str, new_project: bool = False) -> Settled:
    """After a version's files were written (their hashes claimed by the trigger): claim the mod
    ids they declare, then hold or release this version and every other one the change reaches.
    ``pending_status``: where a released version goes while a file awaits its scan; ``new_project``:
    the project was created in this transaction. Two statements for a project's next release
    (its claims read, the holds), four for a new project's first (the lock, the read, the claims)."""
    displaced = await ownership_q.claim_mod_ids(conn, mod_id, list(declared), new=new_project)
    slug = None
    for other in sorted(displaced):
        if await ownership_q.take_slug(conn, mod_id, other):
            slug = await conn.fetchval("SELECT slug FROM mods WHERE id = $1", mod_id)
    changed, with_reasons = await ownership_q.reevaluate(conn, [version_id], pending_status=pending_status,
                                                         affected=True, displaced=displaced)
    return Settled(changed, with_reasons, slug)


async def held_reasons(conn: asyncpg.Connection, version_id: uuid.UUID) -> list[str]:
    """Why these rules hold the version now (empty: they do not)."""
    return [text for _, text in (await ownership_q.reasons(conn, [version_id])).get(version_id, [])]
