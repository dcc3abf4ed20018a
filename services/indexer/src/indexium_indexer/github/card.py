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
from indexium_jar.identity import mod_key
from indexium_jar.model import ModRecord

from ..modcard import card_fields


async def refresh(conn, repo: github.Repository, record: ModRecord | None) -> bool:
    """Write the fields; False when the repository has no project yet or nothing changed.

    A repository may publish several projects (0025): the manifest read from the branch names
    the one whose identity key is its id's (``indexium_jar.identity.mod_key``), or the
    repository's only project; that project takes the name and summary. What the repository
    owns (its page and homepage among the links, its topics) is written to every project."""
    projects = await github_q.projects_for_repo(conn, repo.id)
    if not projects:
        return False
    key = mod_key(record.mod_id) if record is not None else None
    target = next((p for p in projects if p["identity"] == key), None)
    if target is None and len(projects) == 1:
        target = projects[0]
    changed = False
    for project in projects:
        own = record if project is target else None
        if own is not None and not await ownership_q.may_show_card(conn, project["id"], own.loader, own.mod_id):
            own = None  # a manifest claiming another owner's mod id names nothing here (ownership)
        fields = card_fields(repo, own, project["links"] or {})
        if project is target:
            changed |= await mods_q.update_card(conn, project["id"], name=fields.name, summary=fields.summary,
                                                links=fields.links, categories=fields.topics)
        else:  # another project of the repository: its own name and summary stay
            changed |= await mods_q.update_card(conn, project["id"], links=fields.links, categories=fields.topics)
    return changed
