"""Search facets in Modrinth's algebra (``[["categories:forge"], ["versions:1.20.1"]]``): OR within a
group, AND across groups, each facet ``field op value``. These are the groups search cannot
hand to its own per-file loader/game-version filter (``sqlpath.SearchQuery.loaders`` and
``game_versions``, which must hold on one file); each becomes one condition over the mod's row.

Values always travel as parameters: ``p(value, cast)`` appends one and returns its ``$n``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from indexium_content import categories as vocabulary
from indexium_jar import formats

LOADERS = frozenset(formats.LOADERS)
# Loaders whose jars are server plugins: Modrinth lists such projects as "plugin".
PLUGIN_LOADERS = formats.loaders_of(formats.PLUGIN)
EQUALITY = (":", "=", "!=")
ORDERED = (":", "=", "!=", ">=", ">", "<=", "<")
# field -> the operators that mean something for it (a set membership has no order).
FIELDS: dict[str, tuple[str, ...]] = {
    "categories": EQUALITY, "versions": EQUALITY, "project_type": EQUALITY,
    "client_side": EQUALITY, "server_side": EQUALITY, "license": EQUALITY, "title": EQUALITY,
    "author": EQUALITY, "project_id": EQUALITY,
    "downloads": ORDERED, "follows": ORDERED, "created_timestamp": ORDERED, "modified_timestamp": ORDERED,
}
NUMERIC = frozenset({"downloads", "follows", "created_timestamp", "modified_timestamp"})
# Which of our environments a side value holds for: a "client" mod needs the client and is
# unsupported on a server; "both" needs both. Nothing we index is "optional" on a side.
SIDES = {
    "client_side": {"required": ("client", "both"), "unsupported": ("server",), "optional": ()},
    "server_side": {"required": ("server", "both"), "unsupported": ("client",), "optional": ()},
}


@dataclass(frozen=True, slots=True)
class Facet:
    field: str
    op: str
    value: str | int  # int for NUMERIC fields


Groups = tuple[tuple[Facet, ...], ...]
Param = Callable[..., str]


def _positive(f: Facet, p: Param) -> str:
    """The condition for ``field = value`` (``!=`` negates it)."""
    v = f.value
    if f.field == "categories":
        if v in LOADERS:
            return f"m.loaders && ARRAY[{p(v, '::text')}]"
        category = vocabulary.category_of(v)  # a topic is never a category: matches nothing
        return f"m.categories && ARRAY[{p(category, '::text')}]" if category is not None else "false"
    if f.field == "versions":
        return f"m.game_versions && ARRAY[{p(v, '::text')}]"
    if f.field == "project_type":
        # Every type a project is (formats.all_project_types): a mod, a data pack and a plugin are
        # all "mod" on v2 (Modrinth rewrites them so), and a mod with a plugin loader is a plugin too.
        if v == formats.PLUGIN:
            jars = [t for t in formats.PROJECT_TYPES if t in (formats.MOD, formats.PLUGIN)]
            return (f"(m.project_type = {p(formats.PLUGIN, '::text')} OR (m.project_type = ANY({p(jars, '::text[]')})"
                    f" AND m.loaders && {p(list(PLUGIN_LOADERS), '::text[]')}))")
        types = [t for t in formats.PROJECT_TYPES if v in formats.all_project_types(t, ())]
        return f"m.project_type = ANY({p(types, '::text[]')})" if types else "false"
    if f.field in SIDES:
        environments = SIDES[f.field].get(v, ())
        return f"m.environment = ANY({p(list(environments), '::text[]')})" if environments else "false"
    if f.field == "license":
        return f"EXISTS (SELECT 1 FROM unnest(m.licenses) l WHERE lower(l) = lower({p(v, '::text')}))"
    if f.field == "title":
        return f"lower(m.name) = lower({p(v, '::text')})"
    if f.field == "author":
        a = p(str(v).lower(), "::text")
        return (f"(m.author_keys @> ARRAY[{a}] OR m.author_github_id IN "
                f"(SELECT github_id FROM authors WHERE lower(login) = {a}))")
    if f.field == "project_id":
        return f"m.public_id = {p(v, '::text')}"
    raise ValueError(f"unknown facet field {f.field!r}")


_NUMERIC_COLUMNS = {
    "downloads": "m.downloads",
    "follows": "0",
    "created_timestamp": "extract(epoch FROM m.created_at)",
    "modified_timestamp": "extract(epoch FROM m.last_published_at)",
}


def _one(f: Facet, p: Param) -> str:
    if f.field in NUMERIC:
        op = "=" if f.op == ":" else "<>" if f.op == "!=" else f.op
        return f"COALESCE({_NUMERIC_COLUMNS[f.field]} {op} {p(int(f.value), '::bigint')}, false)"
    cond = _positive(f, p)
    return f"NOT ({cond})" if f.op == "!=" else cond


def conditions(groups: Groups, p: Param) -> list[str]:
    """One SQL condition per group (its facets ORed); the caller ANDs them."""
    return ["(" + " OR ".join(_one(f, p) for f in group) + ")" for group in groups if group]
