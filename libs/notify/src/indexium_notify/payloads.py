"""The two bodies a delivery can carry: Indexium's JSON and Discord's webhook message.

Both are built from :class:`Facts` (what the notify role read of the version when it sent the
delivery). Everything in them came from a release or a manifest, so every string is bounded
here, and the Discord body never carries markup of the author's: the changelog excerpt is the
Markdown's plain text (read by markdown-it-py, raw HTML dropped) with Discord's own markup
characters escaped, and ``allowed_mentions`` is empty, so no ``@everyone`` in a changelog
pings a server. :func:`discord_problems` checks a body against Discord's documented limits
(https://discord.com/developers/docs/resources/message#embed-object-embed-limits); the
builder shortens the description until the body passes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime
from urllib.parse import quote

import msgspec
from markdown_it import MarkdownIt

from indexium_jar.gameversions import compact_versions  # one function for the site and these payloads

EVENT = "version.published"
CHANGELOG_CHARS = 8000  # the JSON body's raw changelog (Markdown, the author's text)
EXCERPT_CHARS = 1000  # the plain-text excerpt in both bodies
VERSION_GROUPS = 12  # compact game-version groups shown, then "+ N more"

# Discord's documented limits.
DISCORD_TITLE = 256
DISCORD_DESCRIPTION = 4096
DISCORD_FIELDS = 25
DISCORD_FIELD_NAME = 256
DISCORD_FIELD_VALUE = 1024
DISCORD_FOOTER = 2048
DISCORD_AUTHOR = 256
DISCORD_TOTAL = 6000
DISCORD_USERNAME = 80
DISCORD_EMBEDS = 10

_json = msgspec.json.Encoder()
_md = MarkdownIt("commonmark")  # raw HTML parsed as HTML tokens, which plain_text drops


@dataclass(frozen=True)
class FileFacts:
    filename: str
    url: str
    size: int
    primary: bool
    loaders: tuple[str, ...]
    game_versions: tuple[str, ...]
    sha1: str | None = None
    sha256: str | None = None
    sha512: str | None = None


@dataclass(frozen=True)
class Facts:
    """A public version as a delivery tells it."""

    mod_slug: str
    mod_name: str
    mod_summary: str
    owner: str | None  # the repository owner's login
    repo_full_name: str
    has_icon: bool
    version_id: str
    version_number: str
    version_name: str
    version_type: str
    tag_name: str
    changelog: str
    published_at: datetime | None
    loaders: tuple[str, ...]
    game_versions: tuple[str, ...]  # newest first (the table's order)
    files: tuple[FileFacts, ...]
    new_project: bool  # the mod's first public version
    public_url: str  # the site, without a trailing slash
    github_url: str
    # The Minecraft releases of the versions table, newest first: what "consecutive" means
    # when game versions are written as ranges.
    releases: tuple[str, ...] = field(default=(), repr=False)

    @property
    def mod_url(self) -> str:
        return f"{self.public_url}/mods/{quote(self.mod_slug)}"

    @property
    def icon_url(self) -> str | None:
        return f"{self.public_url}/api/v1/mods/{quote(self.mod_slug)}/icon" if self.has_icon else None

    @property
    def release_url(self) -> str:
        return f"{self.github_url}/{self.repo_full_name}/releases/tag/{quote(self.tag_name, safe='')}"

    @property
    def download_url(self) -> str:
        primary = next((f for f in self.files if f.primary), self.files[0] if self.files else None)
        return primary.url if primary is not None else self.release_url


def cut(text: str, limit: int) -> str:
    """At most ``limit`` characters, ending in an ellipsis when shortened."""
    text = text or ""
    return text if len(text) <= limit else text[: max(0, limit - 1)].rstrip() + "…"


# ---- plain text ---------------------------------------------------------------------------------

_BLOCK_ENDS = {"paragraph_close", "heading_close", "list_item_close", "blockquote_close", "table_close",
               "tr_close"}


def plain_text(markdown: str, limit: int = EXCERPT_CHARS) -> str:
    """The words of a Markdown text: no markup, no HTML, one line per block, at most ``limit``
    characters (cut at a word where one is near)."""
    source = (markdown or "")[: limit * 8]  # a changelog is the author's: parse a bounded part
    parts: list[str] = []
    for token in _md.parse(source):
        if token.type == "inline":
            for child in token.children or ():
                if child.type in ("text", "code_inline"):
                    parts.append(child.content)
                elif child.type in ("softbreak", "hardbreak"):
                    parts.append(" ")
                elif child.type == "image":
                    parts.append(child.content)
        elif token.type in ("fence", "code_block"):
            parts.append(token.content.strip() + "\n")
        elif token.type in _BLOCK_ENDS:
            parts.append("\n")
    lines = [" ".join(line.split()) for line in "".join(parts).splitlines()]
    text = "\n".join(line for line in lines if line)
    text = "".join(ch for ch in text if ch == "\n" or ch.isprintable())
    if len(text) <= limit:
        return text
    head = text[: limit - 1]
    space = head.rfind(" ")
    if space > limit * 0.8:
        head = head[:space]
    return head.rstrip() + "…"


_DISCORD_MARKUP = re.compile(r"([\\*_~`|>\[\]()#<:@-])")


def discord_escaped(text: str) -> str:
    """Plain text that Discord's Markdown shows as written (every markup character escaped)."""
    return _DISCORD_MARKUP.sub(r"\\\1", text)


# ---- game versions as ranges --------------------------------------------------------------------

def versions_text(versions, releases, limit: int = VERSION_GROUPS) -> str:
    groups = compact_versions(versions, releases)
    if not groups:
        return "any"
    shown = ", ".join(groups[:limit])
    return shown + (f" + {len(groups) - limit} more" if len(groups) > limit else "")


# ---- Indexium JSON --------------------------------------------------------------------------------

def indexium_body(facts: Facts, *, delivery_id: str, subscription_id: str, created_at: datetime) -> bytes:
    return _json.encode({
        "event": EVENT,
        "delivery_id": delivery_id,
        "subscription_id": subscription_id,
        "created_at": created_at.isoformat(),  # the delivery's: the same body on every retry
        "new_project": facts.new_project,
        "mod": {
            "slug": facts.mod_slug,
            "name": facts.mod_name,
            "summary": facts.mod_summary,
            "owner": facts.owner,
            "repository": facts.repo_full_name,
            "url": facts.mod_url,
            "icon_url": facts.icon_url,
        },
        "version": {
            "id": facts.version_id,
            "version_number": facts.version_number,
            "name": facts.version_name,
            "version_type": facts.version_type,
            "published_at": facts.published_at.isoformat() if facts.published_at else None,
            "loaders": list(facts.loaders),
            "game_versions": list(facts.game_versions),
            "game_versions_compact": compact_versions(facts.game_versions, facts.releases),
            "changelog": cut(facts.changelog, CHANGELOG_CHARS),
            "changelog_excerpt": plain_text(facts.changelog),
            "release_url": facts.release_url,
            "download_url": facts.download_url,
            "files": [{
                "filename": f.filename, "url": f.url, "size": f.size, "primary": f.primary,
                "loaders": list(f.loaders), "game_versions": list(f.game_versions),
                "hashes": {"sha1": f.sha1, "sha256": f.sha256, "sha512": f.sha512},
            } for f in facts.files],
        },
    })


# ---- Discord --------------------------------------------------------------------------------------

def discord_message(facts: Facts, *, excerpt_chars: int = EXCERPT_CHARS) -> dict:
    title = cut(f"{facts.mod_name} {facts.version_number}", DISCORD_TITLE)
    primary = next((f for f in facts.files if f.primary), facts.files[0] if facts.files else None)
    fields = [
        {"name": "Version", "value": cut(discord_escaped(facts.version_number), DISCORD_FIELD_VALUE), "inline": True},
        {"name": "Type", "value": facts.version_type, "inline": True},
        {"name": "Loaders", "value": cut(discord_escaped(", ".join(facts.loaders) or "any"), DISCORD_FIELD_VALUE),
         "inline": True},
        {"name": "Game versions",
         "value": cut(discord_escaped(versions_text(facts.game_versions, facts.releases)), DISCORD_FIELD_VALUE)},
        {"name": "Download",
         "value": cut(f"[{discord_escaped(cut(primary.filename, 200))}]({facts.download_url})"
                      if primary is not None and len(facts.download_url) < 700 else facts.release_url[:1000],
                      DISCORD_FIELD_VALUE)},
    ]
    embed: dict = {
        "title": title,
        "url": facts.mod_url,
        "description": discord_escaped(plain_text(facts.changelog, excerpt_chars)) or "No release notes.",
        "color": 0x2F9E44,
        "fields": fields,
        "author": {"name": cut(f"{'New mod' if facts.new_project else 'New version'} on Indexium"
                               + (f" · {facts.owner}" if facts.owner else ""), DISCORD_AUTHOR),
                   "url": facts.mod_url},
        "footer": {"text": cut(f"{facts.repo_full_name} · {facts.tag_name}", DISCORD_FOOTER)},
    }
    if facts.published_at is not None:
        embed["timestamp"] = facts.published_at.isoformat()
    if facts.icon_url:
        embed["thumbnail"] = {"url": facts.icon_url}
    embed["description"] = cut(embed["description"], DISCORD_DESCRIPTION)
    over = embed_chars(embed) - DISCORD_TOTAL
    if over > 0:  # (the fields are bounded; only a long description can take the total over)
        embed["description"] = cut(embed["description"], max(1, len(embed["description"]) - over))
    return {"username": "Indexium", "allowed_mentions": {"parse": []}, "embeds": [embed]}


def discord_body(facts: Facts) -> bytes:
    return _json.encode(discord_message(facts))


def embed_chars(embed: dict) -> int:
    """The characters Discord counts towards an embed's 6,000."""
    n = len(embed.get("title") or "") + len(embed.get("description") or "")
    n += len((embed.get("footer") or {}).get("text") or "") + len((embed.get("author") or {}).get("name") or "")
    for f in embed.get("fields") or ():
        n += len(f.get("name") or "") + len(f.get("value") or "")
    return n


def discord_problems(message: dict) -> list[str]:
    """Every limit of Discord's a webhook message breaks (empty: Discord would take it)."""
    problems = []
    if len(message.get("content") or "") > 2000:
        problems.append("content over 2000")
    if len(message.get("username") or "") > DISCORD_USERNAME:
        problems.append(f"username over {DISCORD_USERNAME}")
    embeds = message.get("embeds") or []
    if not embeds and not message.get("content"):
        problems.append("neither content nor embeds")
    if len(embeds) > DISCORD_EMBEDS:
        problems.append(f"more than {DISCORD_EMBEDS} embeds")
    total = 0
    for i, e in enumerate(embeds):
        checks = [("title", len(e.get("title") or ""), DISCORD_TITLE),
                  ("description", len(e.get("description") or ""), DISCORD_DESCRIPTION),
                  ("fields", len(e.get("fields") or []), DISCORD_FIELDS),
                  ("footer.text", len((e.get("footer") or {}).get("text") or ""), DISCORD_FOOTER),
                  ("author.name", len((e.get("author") or {}).get("name") or ""), DISCORD_AUTHOR)]
        for j, f in enumerate(e.get("fields") or []):
            checks.append((f"fields[{j}].name", len(f.get("name") or ""), DISCORD_FIELD_NAME))
            checks.append((f"fields[{j}].value", len(f.get("value") or ""), DISCORD_FIELD_VALUE))
            if not f.get("name") or not f.get("value"):
                problems.append(f"embeds[{i}].fields[{j}] has an empty name or value")
        problems += [f"embeds[{i}].{name} is {n} (limit {limit})" for name, n, limit in checks if n > limit]
        total += embed_chars(e)
    if total > DISCORD_TOTAL:
        problems.append(f"embeds total {total} characters (limit {DISCORD_TOTAL})")
    return problems
