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
* every link, the stored ones included, passes the one URL policy (``indexium_content.urls``:
  absolute http(s), a host, no credentials, bounded); a link it refuses is dropped and logged
  here, once per write (``url_refused``: repository, link name, source, reason; never the
  URL, which may be any text). A refused repository homepage leaves the manifest's;
* ``topics`` are the repository's topics as GitHub gives them: the writer
  (``queries/mods.py``) stores them as categories of the vocabulary and plain tags
  (``indexium_content.categories``);
* NUL characters are dropped (PostgreSQL text and jsonb cannot hold U+0000).
"""

from __future__ import annotations

from dataclasses import dataclass

from indexium_content import urls
from indexium_contracts import github
from indexium_db.queries import mods as mods_q
from indexium_jar import formats
from indexium_jar.model import ModRecord, PackRecord
from indexium_platform import logs

log = logs.get(__name__)

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
    topics: list[str]  # the repository's, as given: queries/mods.py makes categories and tags of them


def card_links(repo: github.Repository, record: ModRecord | None,
               current_links: dict[str, str] | None = None) -> dict[str, str]:
    """The card's links: the stored ones, then the manifest's, then the repository's homepage
    and page, each later source replacing an earlier one only with a link the policy keeps."""
    links: dict[str, str] = {}
    sources = [("stored", current_links or {}), ("manifest", record.links if record else {}),
               ("repository", {"homepage": repo.homepage, "sources": repo.html_url})]
    for source, given in sources:
        kept, refused = urls.links({k: v for k, v in given.items() if v is not None})
        links.update(kept)
        for name, reason in refused:
            log.warning("url_refused", repository=repo.full_name, link=name, source=source, reason=reason)
    if len(links) > urls.MAX_LINKS:  # each source is bounded, the three together as well
        links = dict(list(links.items())[: urls.MAX_LINKS])
    return links


def card_fields(repo: github.Repository, record: ModRecord | None,
                current_links: dict[str, str] | None = None) -> CardFields:
    """``current_links``: links kept unless the manifest or the repository gives them anew."""
    name = usable(record.name) if record else None
    description = (usable(record.description) if record else None) or usable(repo.description)
    return CardFields(
        name=name[:NAME_MAX].rstrip() if name else None,
        summary=summary_of(description) if description else None,
        description=description,
        links=card_links(repo, record, current_links),
        topics=list(repo.topics),
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


# Where a pack's project runs (Modrinth's sides): resource and shader packs on the client,
# data packs in the world (the server), a modpack on both.
_PACK_ENVIRONMENT = {formats.RESOURCEPACK: "client", formats.SHADER: "client", formats.DATAPACK: "server"}


def pack_card(record: PackRecord, repo: github.Repository, name: str | None = None) -> mods_q.Card:
    """The card of a project whose primary file is a pack: a modpack names itself; other packs
    carry no name, so ``name`` (the release job's: the file's, beside other projects of the
    release) or the repository's name stands in (the release's name is a version's)."""
    description = usable(record.description) or usable(repo.description)
    name = usable(record.name) or usable(name) or repo.name
    return mods_q.Card(
        name=name[:NAME_MAX].rstrip(),
        summary=summary_of(description) if description else "",
        description=description or "",
        authors=[shown(repo.owner.login)],
        licenses=[],
        links=card_links(repo, None),
        environment=_PACK_ENVIRONMENT.get(record.project_type, "both"),
    )
