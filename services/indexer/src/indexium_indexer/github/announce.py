"""``ModChanged`` after commit: every API replica drops what it cached of a mod the role changed.

The role applies installation and repository state in its own transactions; the API learns
of it only from an event on ``indexium.version.>``. Each handler names the repositories whose
state it applied, and once the transaction has committed the mods of those repositories are
read again and announced with the state they have now. Announcing every applied change (not
only the ones that flipped ``hidden``) keeps a redelivered event useful: if the publish failed
after the commit, the redelivery applies the same state again and announces it then.
"""

from __future__ import annotations

from collections.abc import Iterable

import asyncpg
from nats.js import JetStreamContext

from indexium_contracts import versions
from indexium_db.queries import github as github_q


class Announcer:
    def __init__(self, pool: asyncpg.Pool, js: JetStreamContext | None):
        self._pool, self._js = pool, js

    async def mods_changed(self, github_repo_ids: Iterable[int], cause: str) -> int:
        """Publish one ``ModChanged`` per mod of these repositories; how many were published."""
        ids = sorted(set(github_repo_ids))
        if not ids or self._js is None:
            return 0
        async with self._pool.acquire() as conn:
            rows = await github_q.mods_for_repos(conn, ids)
        for row in rows:
            event = versions.ModChanged(mod_id=str(row["id"]), slug=row["slug"], visible=not row["hidden"],
                                        cause=cause, hidden_reason=row["hidden_reason"])
            # No Nats-Msg-Id: a repeated announcement only invalidates again, and two real
            # changes within JetStream's duplicate window must not be merged into one.
            await self._js.publish(versions.MOD_CHANGED, versions.encoder.encode(event))
        return len(rows)
