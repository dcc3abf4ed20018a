"""The mod card fields a repository owns: name, summary, links, categories (its topics).

The indexer writes the whole card from the newest release's jar; between releases the
repository itself may change (a push to the manifest, a new description or topics), and
this refreshes just those fields. Versions are never touched here.
"""

from __future__ import annotations

from dataclasses import dataclass

from indexium_contracts import github
from indexium_db.queries import github as gh_db
from indexium_jar.model import ModRecord

SUMMARY_MAX = 240  # as the indexer's card (docs/schema.md, numeric settings)


def summary_of(description: str) -> str:
    first = description.strip().split("\n\n", 1)[0].replace("\n", " ").strip()
    return first if len(first) <= SUMMARY_MAX else first[: SUMMARY_MAX - 1].rstrip() + "…"


def _usable(text: str | None) -> str | None:
    """Source manifests are templates: ``${mod_name}`` is filled in by the build, not by us."""
    if not text or not text.strip() or "${" in text or "{{" in text:
        return None
    return text.strip()


@dataclass(frozen=True)
class CardFields:
    name: str | None  # None: keep the current one
    summary: str | None
    links: dict[str, str]
    categories: list[str]


def card_fields(repo: github.Repository, record: ModRecord | None, current_links: dict[str, str]) -> CardFields:
    name = _usable(record.name) if record else None
    description = (_usable(record.description) if record else None) or _usable(repo.description)
    links = dict(current_links)
    if record:
        links.update({k: v for k, v in record.links.items() if _usable(v)})
    if repo.homepage:
        links["homepage"] = repo.homepage
    if repo.html_url:
        links["sources"] = repo.html_url
    return CardFields(
        name=name[:128] if name else None,
        summary=summary_of(description) if description else None,
        links=links,
        categories=list(repo.topics),
    )


async def refresh(conn, repo: github.Repository, record: ModRecord | None) -> bool:
    """Write the fields; False when the repository has no mod yet or nothing changed."""
    mod = await gh_db.mod_for_repo(conn, repo.id)
    if mod is None:
        return False
    fields = card_fields(repo, record, mod["links"] or {})
    return await gh_db.update_mod_card(conn, repo.id, name=fields.name, summary=fields.summary,
                                       links=fields.links, categories=fields.categories)
