"""The mod card, built by one set of rules for both writers of it.

The release role writes the whole card from the newest release's primary jar manifest; the
GitHub role, between releases, refreshes the fields the repository owns (name, summary,
links, categories) from a source manifest and the repository. Both build it here:

* a name or description that is blank or still a build template (``${mod_name}``,
  ``{{name}}``) is not used: a jar built from an unfilled template shows the same text a
  source manifest does, and neither is a name. The release role then names the mod by its
  manifest id, the GitHub role keeps the current name;
* the summary is the description's first paragraph, at most ``SUMMARY_MAX`` characters;
* ``sources`` is the repository's page and ``homepage`` the repository's homepage when it
  has one: the repository is where the mod is indexed from, and a manifest inside an old
  jar may still name the repository before a rename;
* NUL characters are dropped (PostgreSQL text and jsonb cannot hold U+0000).
"""

from __future__ import annotations

from dataclasses import dataclass

from indexium_contracts import github
from indexium_db.queries import mods as mods_q
from indexium_jar.model import ModRecord

SUMMARY_MAX = 240  # docs/schema.md, numeric settings
NAME_MAX = 128  # mods.name is varchar(128)


def shown(text: str) -> str:
    """Text that is only displayed, without the NUL characters PostgreSQL cannot store."""
    return text.replace("\x00", "") if "\x00" in text else text


def summary_of(description: str) -> str:
    first = description.strip().split("\n\n", 1)[0].replace("\n", " ").strip()
    return first if len(first) <= SUMMARY_MAX else first[: SUMMARY_MAX - 1].rstrip() + "…"


def usable(text: str | None) -> str | None:
    """The text, or None when it is blank or an unfilled build template."""
    if not text:
        return None
    text = shown(text).strip()
    if not text or "${" in text or "{{" in text:
        return None
    return text


@dataclass(frozen=True)
class CardFields:
    name: str | None  # None: the manifest names no usable name
    summary: str | None  # None: no usable description
    description: str | None
    links: dict[str, str]
    categories: list[str]


def card_fields(repo: github.Repository, record: ModRecord | None,
                current_links: dict[str, str] | None = None) -> CardFields:
    """``current_links``: links kept unless the manifest or the repository gives them anew."""
    name = usable(record.name) if record else None
    description = (usable(record.description) if record else None) or usable(repo.description)
    links = dict(current_links or {})
    if record:
        links.update({k: u for k, v in record.links.items() if (u := usable(v))})
    if repo.homepage:
        links["homepage"] = repo.homepage
    if repo.html_url:
        links["sources"] = repo.html_url
    return CardFields(
        name=name[:NAME_MAX].rstrip() if name else None,
        summary=summary_of(description) if description else None,
        description=description,
        links=links,
        categories=list(repo.topics),
    )


def release_card(record: ModRecord, repo: github.Repository) -> mods_q.Card:
    """The whole card, from a release's primary manifest (the release role)."""
    fields = card_fields(repo, record)
    return mods_q.Card(
        name=fields.name or record.mod_id,
        summary=fields.summary or "",
        description=fields.description or "",
        authors=[shown(p.name) for p in record.authors],
        licenses=list(record.licenses),
        links=fields.links,
        environment=record.environment,
    )
