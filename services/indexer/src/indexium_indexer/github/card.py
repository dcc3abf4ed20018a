"""Refresh the mod card fields a repository owns: name, summary, links, categories (its topics).

The release role writes the whole card from the newest release's jar; between releases the
repository itself may change (a push to the manifest, a new description or topics), and
this refreshes just those fields, built by the same rules (``indexium_indexer.modcard``).
Versions are never touched here.
"""

from __future__ import annotations

from indexium_contracts import github
from indexium_db.queries import github as github_q
from indexium_db.queries import mods as mods_q
from indexium_db.queries import ownership as ownership_q
from indexium_jar.model import ModRecord

from ..modcard import card_fields


async def refresh(conn, repo: github.Repository, record: ModRecord | None) -> bool:
    """Write the fields; False when the repository has no mod yet or nothing changed."""
    mod = await github_q.mod_for_repo(conn, repo.id)
    if mod is None:
        return False
    if record is not None and not await ownership_q.may_show_card(conn, mod["id"], record.loader, record.mod_id):
        record = None  # a manifest claiming another owner's mod id names nothing here (ownership)
    fields = card_fields(repo, record, mod["links"] or {})
    return await mods_q.update_card(conn, mod["id"], name=fields.name, summary=fields.summary,
                                    links=fields.links, categories=fields.topics)
