"""The in-process candidate index for catalogue search: which listed mods match a query's
lexemes and filters, and how many, without asking PostgreSQL.

Pure data and set algebra (no I/O): ``indexed.py`` loads it from ``mods`` and runs the
one PostgreSQL query that reads (or ranks) its candidates. Per listed mod it holds an ordinal,
its lexemes (``search_vector``'s, with which of them carry weight A: the name and slug, and
each one's share of ts_rank: ``tsrank``, so a page can be ranked here), its lower-cased
name, downloads, publish and creation times, and the filter keys search uses most
(per-file ``loader|game_version`` pairs, game versions, loaders, environment, categories).
Postings are roaring bitmaps of ordinals (pyroaring): set algebra in C over compact
containers, ~35x faster intersections and ~40x less memory than Python sets of the same
ordinals.

Ordinals are given at a full load in popularity order (downloads descending, then slug), so
"the most popular matches" are a bitmap's smallest members. A mod first seen by an event
gets the next free ordinal (after every loaded one: a new mod has few downloads); a mod
re-read keeps its ordinal until the next full load, which the API runs periodically.

Query lexemes are PostgreSQL's own (stemming, stopwords, the parser), learned per word and
remembered in a :class:`Lexicon`; a query this module cannot split the way PostgreSQL's
parser would (websearch operators, punctuation) is not for the index (``words`` is None).
"""

from __future__ import annotations

import bisect
import hashlib
import math
from array import array
import re
import sys
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from itertools import islice

from pyroaring import BitMap

from indexium_content.categories import only_categories
from indexium_jar.formats import all_project_types

from . import tsrank
from .querytext import MAX_QUERY_WORDS, MAX_TOKEN_CHARS, WORDS, plain_tokens
from .trigram import Words as CatalogueWords, in_at_least, trigram_set

try:  # relevance in C (_fastsearch.c), built by `make env` where a compiler is
    from . import _fastsearch
except ImportError:  # no compiler: relevance() one candidate at a time (the tests run it too)
    _fastsearch = None

# Configurations of one query part, in sqlpath.text_query's order, then the prefix part.
CONFIGS = ("english", "russian", "simple")
_MAX_CHAR = "\U0010ffff"
PREFIX_UNIONS_MAX = 4096  # prefix unions remembered (SearchIndex._prefixed)
# _prefixed's unions come from the postings as loaded, laid end to end (_fastsearch.union_range),
# corrected for the mods changed since: taken out, and put back by the lexemes they hold now,
# found in the postings of the changed mods alone (SearchIndex._changed_postings). Before, each
# union scanned every changed mod's lexemes, and past 128 changed mods was BitMap.union's of
# every posting of the prefix (from a snapshot, each read from the file): a serving replica's
# prefix searches grew slower with every event until its next snapshot (bench/README.md,
# "changed mods").
LAID_MIN_SETS = 8  # a union of fewer sets (lexemes, names) is BitMap's, not union_range's
NAME_WALK = 1024  # members walked for names with a common prefix (SearchIndex.first_name_prefixed)


ODD_NAME = "name:non-ascii"  # filter key: names whose trigrams only PostgreSQL can say
README = "readme"  # the README's lexemes, as a kind of prefix union (SearchIndex._prefixed)
# sqlpath.README_ONLY_PENALTY (this module imports no queries): a mod the query matches only in
# its README ranks this much lower, below every mod it matches in search_vector.
README_ONLY_PENALTY = 2.0


def popularity(downloads: int) -> float:
    """Entry.popularity: relevance's popularity term, ln(1 + downloads) / 100 (sqlpath.rank_expression's)."""
    return math.log(1 + float(downloads)) / 100


def lexicon_key(word: str) -> str:
    """What a word is remembered by: lower-cased when ASCII (every configuration lower-cases
    ASCII first), as typed otherwise (a database whose ctype is C leaves other letters alone)."""
    return word.lower() if word.isascii() else word


@dataclass(frozen=True, slots=True)
class Words:
    """A query the index can take: websearch's tokens and the prefix part's words."""

    tokens: list[str]
    words: list[str]


def plain_words(q: str) -> Words | None:
    """``q``'s tokens and words if the index can take it as it is, else None (the SQL path answers)."""
    tokens = plain_tokens(q)
    if tokens is None:
        return None
    return Words([lexicon_key(t) for t in tokens], WORDS.findall(q.lower()))


def quote(lexeme: str) -> str:
    """A lexeme as tsquery text writes it."""
    return "'" + lexeme.replace("\\", "\\\\").replace("'", "''") + "'"


# Per configuration: the token's lexemes (none: a stopword; several: a phrase), or None when
# PostgreSQL makes something else of it (then the query is not for the index).
Term = tuple[str, ...]


@dataclass(frozen=True, slots=True)
class TokenLexemes:
    english: Term | None
    russian: Term | None
    simple: Term | None


class Lexicon:
    """Query tokens and words already learned from PostgreSQL, bounded; emptied whole when full.
    A word's lexemes never change for a database, so nothing else clears it."""

    def __init__(self, max_words: int = 100_000) -> None:
        self.max_words = max_words
        self._tokens: dict[str, TokenLexemes] = {}
        self._prefix: dict[str, str | None] = {}  # word -> its 'simple' lexeme (prefix part)

    def token(self, token: str) -> TokenLexemes | None:
        return self._tokens.get(token)

    def prefix(self, word: str) -> tuple[bool, str | None]:
        try:
            return True, self._prefix[word]
        except KeyError:
            return False, None

    def unknown(self, words: Words) -> tuple[list[str], list[str]]:
        return ([t for t in dict.fromkeys(words.tokens) if t not in self._tokens],
                [w for w in dict.fromkeys(words.words) if w not in self._prefix])

    def put(self, token: str | None, lexemes: TokenLexemes | None, word: str | None = None,
            prefix: str | None = None) -> None:
        if len(self._tokens) + len(self._prefix) >= self.max_words:
            self._tokens.clear()
            self._prefix.clear()
        if token is not None:
            self._tokens[token] = lexemes
        if word is not None:
            self._prefix[word] = prefix

    def __len__(self) -> int:
        return len(self._tokens) + len(self._prefix)


@dataclass(frozen=True, slots=True)
class Part:
    """One alternative of the query's tsquery: every term must match (the last as a prefix
    when ``prefix``); a term of several lexemes is a phrase."""

    terms: tuple[Term, ...]
    prefix: bool = False
    # The part as tsquery text, written once: a search reads it several times (parts_of's
    # dedup, tsquery_of, rank_query's order). As a property, written at every read, it was 8%
    # of a full-name search's samples (py-spy, bench/api's full-name queries, 2026-12-02);
    # written once, a three-word query's parts cost 17 us instead of 23.
    text: str = field(init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        t = " & ".join(" <-> ".join(quote(x) for x in term) for term in self.terms)
        object.__setattr__(self, "text", t + ":*" if self.prefix else t)

    @property
    def exact(self) -> bool:
        """Whether the index decides it exactly (it knows no positions: a phrase it over-matches)."""
        return all(len(term) == 1 for term in self.terms)


def parts_of(words: Words, lexicon: Lexicon, prefix_min_chars: int, prefix: bool = True) -> list[Part] | None:
    """The distinct parts of sqlpath.text_query's tsquery; None if a token or word is not known
    (learn them first) or is not something the index can match (the SQL path answers).
    ``prefix`` False: without the prefix part (a partial query's token other than the last)."""
    learned = [lexicon.token(t) for t in words.tokens]
    if any(x is None for x in learned):
        return None
    parts: dict[str, Part] = {}
    for cfg in CONFIGS:
        terms = [getattr(x, cfg) for x in learned]
        if any(t is None for t in terms):
            return None
        terms = tuple(t for t in terms if t)
        if terms:
            part = Part(terms)
            parts.setdefault(part.text, part)
    if not prefix:
        return list(parts.values())
    # sqlpath.prefix_tsquery: a last word shorter than prefix_min_chars is still being typed.
    prefixed = []
    for w in words.words:
        known, lexeme = lexicon.prefix(w)
        if not known or not lexeme:
            return None
        prefixed.append((lexeme,))
    if len(words.words[-1]) < prefix_min_chars:
        if len(prefixed) > 1:
            part = Part(tuple(prefixed[:-1]))
            parts.setdefault(part.text, part)
    elif prefixed:
        part = Part(tuple(prefixed), prefix=True)
        parts.setdefault(part.text, part)
    return list(parts.values())


def tsquery_text(parts: list[Part]) -> str:
    """The parts ORed, as sqlpath.text_query's query CTE builds them."""
    return " | ".join(f"({p.text})" for p in parts)


@dataclass(frozen=True, slots=True)
class Filters:
    """The filters of one search the index can evaluate: (key, values) groups, ANDed; a group is
    the union of its keys' bitmaps (``negate``: everything else)."""

    groups: tuple[tuple[tuple[str, ...], bool], ...] = ()


def _micros(t: datetime | None) -> int | None:
    return None if t is None else int(t.timestamp() * 1_000_000)


micros = _micros  # (a time in the entries' unit: also a position's, indexed.load)


@dataclass(slots=True)
class Entry:
    id: object
    slug: str
    name: str  # lower(name), as PostgreSQL lowers it
    downloads: int
    updated: int | None  # last_published_at, microseconds since the epoch
    created: int
    keys: tuple[str, ...]  # every posting key this mod is in (lexemes and filter keys)
    changed: int  # mods.updated_at, microseconds since the epoch: what the catch-up compares
    heavy: tuple[str, ...]  # lexemes with weight A
    lexemes: int  # how many of keys are lexemes (the rest are filter keys)
    terms: array  # per lexeme (keys[:lexemes]) its share of ts_rank (tsrank.entry_term), float4
    popularity: float  # ln(1 + downloads) / 100, relevance's popularity term
    # The mod's hit as sqlpath.HIT_COLUMNS reads it (HIT_KEYS), when the row carried those
    # columns: what a page served from memory answers (``SearchIndex.recheck`` False). Shared
    # by every answer that shows the mod: never changed, replaced whole by a re-read.
    hit: dict | None = None
    # Which README lexemes (mods.readme_vector: matched, never ranked) the mod's postings hold,
    # as a hash of them (0: none): a re-read whose README is unchanged (most: a release, a card)
    # leaves its README postings alone; a changed one takes the mod out of every README posting
    # (SearchIndex._drop_readme). Not the lexemes themselves: ~300 a README, 30 million at
    # 100,000 mods, 120 MB even as 4-byte ids, to be read only when a README changes.
    readme: int = 0
    # The mod's abbreviations (mods.abbreviations: a query equal to one ranks as its exact name).
    abbreviations: tuple[str, ...] = ()


# sqlpath.HIT_COLUMNS' names, in its order: a hit row from memory has exactly these keys.
HIT_KEYS = ("slug", "name", "summary", "authors", "categories", "environment", "loaders", "project_type",
            "game_versions",
            "latest_version", "downloads", "updated_at", "created_at", "has_icon", "active_servers")


def _hit(row: Mapping) -> dict | None:
    """The hit of a row read with indexed._INDEX_COLUMNS (its ``updated_at`` is the row's
    own; the hit's is last_published_at, as the SQL path names it), or None without the columns."""
    if "summary" not in row.keys():
        return None
    return {k: row["last_published_at" if k == "updated_at" else k] for k in HIT_KEYS}


def _entry(row: Mapping) -> Entry:
    # Keys interned: one string per distinct lexeme or filter key, however many mods hold it
    # (without, each row's own copies stay alive: most of the index's memory).
    lexemes, heavy, terms = tsrank.parse_vector(row["vector"])
    keys = tuple(map(sys.intern, [*lexemes, *filter_keys(row)]))
    abbreviations = row["abbreviations"] if "abbreviations" in row.keys() else None
    return Entry(row["id"], row["slug"], row["lower_name"], row["downloads"], _micros(row["last_published_at"]),
                 _micros(row["created_at"]) or 0, keys, _micros(row["updated_at"]) or 0,
                 tuple(map(sys.intern, heavy)), len(lexemes), terms, popularity(row["downloads"]),
                 _hit(row), readme_hash(row), tuple(abbreviations or ()))


def readme_lexemes(row: Mapping) -> list[str]:
    """The README lexemes of a row read with indexed._INDEX_COLUMNS ([] without the column)."""
    return (row["readme"] or []) if "readme" in row.keys() else []


def readme_hash(row: Mapping) -> int:
    """Entry.readme of the row: a hash of its README lexemes, 0 for none. The same in every
    process (not ``hash``, which is salted per process): a snapshot's entries carry the writer's."""
    lexemes = readme_lexemes(row)
    if not lexemes:
        return 0
    digest = hashlib.blake2b("\0".join(lexemes).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "little", signed=True) or 1


def filter_keys(row: Mapping) -> list[str]:
    name = row["lower_name"]
    keys = [ODD_NAME] if not name.isascii() else [f"tg:{t}" for t in trigram_set(name)]
    keys += [f"ff:{x}" for x in row["file_facets"]]
    keys += [f"gv:{x}" for x in row["game_versions"]]
    keys += [f"lo:{x}" for x in row["loaders"]]
    # Vocabulary names only, as the SQL filter can match (a row stored before 0020 may hold topics).
    keys += [f"cat:{x}" for x in only_categories(row["categories"])]
    keys.append(f"env:{row['environment']}")
    # Every type the project is, as v2's project_type facets read it (facets._positive).
    if "project_type" in row.keys():
        keys += [f"pt:{t}" for t in all_project_types(row["project_type"], row["loaders"])]
    if "abbreviations" in row.keys():
        keys += [f"ab:{x}" for x in row["abbreviations"] or ()]
    return keys


class SearchIndex:
    """Listed mods by ordinal, their postings, and sorted views for prefixes and browse orders."""

    def __init__(self) -> None:
        self.entries: list[Entry | None] = []
        # Each ordinal's lower-cased name ("" once dropped): the fuzzy pass's word similarity
        # reads thousands of them, ~0.2 us a name cheaper from here than through its Entry.
        self.name_of: list[str] = []
        self.by_slug: dict[str, int] = {}
        self.listed = BitMap()
        self.postings: dict[str, BitMap] = {}  # lexeme -> every mod holding it
        self.heavy: dict[str, BitMap] = {}  # lexeme -> mods holding it with weight A (name, slug)
        self.readme: dict[str, BitMap] = {}  # lexeme -> mods whose README holds it (not in postings)
        self._readme_vocabulary: list[str] = []  # sorted, with their postings (prefix ranges)
        self._readme_vocabulary_postings: list[BitMap] = []
        self.filters: dict[str, BitMap] = {}  # filter key -> mods
        self._vocabulary: list[str] = []  # sorted lexemes, for prefix expansion
        # Their postings in the same order (weight A: None where a lexeme has none), so a
        # prefix's bitmaps are a slice, not hundreds of dict look-ups.
        self._vocabulary_postings: list[BitMap] = []
        self._vocabulary_heavy: list[BitMap | None] = []
        self._prefix_unions: dict[tuple[bool, str], BitMap] = {}  # _prefixed's, kept up to date
        # The postings as a full load built them, laid end to end in that load's vocabulary
        # order (weight A or not -> (ordinals, offsets)), and the mods re-read since (_prefixed).
        self._laid_vocabulary: list[str] = []
        self._laid: dict[bool, tuple[array, array]] = {}
        self._changed = BitMap()
        # With _laid: the changed mods' lexemes as they hold them now, per weight (A or not):
        # lexeme -> changed mods holding it, and those lexemes sorted (emptied ones stay).
        self._changed_postings: dict[bool, dict[str, BitMap]] = {False: {}, True: {}}
        self._changed_vocabulary: dict[bool, list[str]] = {False: [], True: []}
        # Ordinals sorted by (lower name, ordinal), for name prefixes: an array, its keys read
        # from name_of (no (name, ordinal) tuple per mod: 4 bytes a mod, and a snapshot's
        # array is used as it is). With _laid (the C module) each is one set for union_range.
        self._names = array("I")
        self._name_offsets = array("Q", [0])
        # Browse orders (sqlpath.ORDER) as ordinals sorted by (_order_key, ordinal), the keys read
        # from the entries; True when the database sorts text as this process does (the C
        # collation), else the SQL path pages browses.
        self._orders: dict[str, array] = {"updated": array("I"), "newest": array("I"), "downloads": array("I"),
                                          "name": array("I")}
        self.ordered = True
        # Catalogue words for typo corrections (search_words, followed by re-reads); exact: the
        # database's ctype and collation are C, so trigram.Words answers as PostgreSQL would.
        self.words = CatalogueWords()
        self.words_exact = False
        # Whether a page's rows are read from PostgreSQL with ``listed`` and the facets re-checked
        # (True), or are the entries' own hits (False: the page is as fresh as the index, as a
        # cached answer is; indexed.py's module doc). False only where every entry
        # holds its hit (loaded and re-read with the hit columns) and its owner keeps it fresh.
        self.recheck = True
        # The catalogue position this index covers (indexed.load: its transaction's start,
        # microseconds since the epoch); a snapshot's, for one loaded from a snapshot.
        self.position: int | None = None
        self.snapshot = None  # the snapshot.Snapshot this index reads from (snapshot.load), or None

    # --- building and following ---------------------------------------------------------

    @classmethod
    def build(cls, rows: Iterable[Mapping]) -> "SearchIndex":
        """From rows in popularity order (see module doc) with the columns of indexed.py."""
        builder = Builder()
        builder.add(rows)
        return builder.finish()

    def upsert(self, row: Mapping) -> None:
        """A mod re-read after an event: replace what the index holds of it (a listed row) or drop it
        (its README postings kept when the README's lexemes are the same)."""
        ordinal = self.by_slug.get(row["slug"])
        same_readme = (ordinal is not None and row["listed"]
                       and self.entries[ordinal].readme == readme_hash(row))
        if ordinal is not None:
            self._remove(ordinal, readme=not same_readme)
        if row["listed"]:
            self._add(row, ordinal if ordinal is not None else len(self.entries), readme=not same_readme)

    def remove(self, slug: str) -> None:
        ordinal = self.by_slug.get(slug)
        if ordinal is not None:
            self._remove(ordinal)

    def _follow(self, entry: Entry, ordinal: int, add: bool, readme: Iterable[str] = ()) -> None:
        """Keep remembered prefix unions exact: the mod joins (or leaves) every union whose
        prefix starts one of its lexemes (a removed mod leaves all its postings at once);
        ``readme``: the README lexemes it joins or leaves."""
        if not self._prefix_unions:
            return
        for heavy, lexemes in ((False, entry.keys[:entry.lexemes]), (True, entry.heavy), (README, readme)):
            for lexeme in lexemes:
                for i in range(1, len(lexeme) + 1):
                    bm = self._prefix_unions.get((heavy, lexeme[:i]))
                    if bm is not None:
                        bm.add(ordinal) if add else bm.discard(ordinal)

    def _add(self, row: Mapping, ordinal: int, readme: bool = True) -> None:
        """``readme`` False: its README postings are already in (the same lexemes as before)."""
        entry = _entry(row)
        if ordinal == len(self.entries):
            self.entries.append(entry)
            self.name_of.append(entry.name)
        else:
            self.entries[ordinal] = entry
            self.name_of[ordinal] = entry.name
        self._changed.add(ordinal)
        if self._laid:
            self._follow_changed(entry, ordinal, add=True)
        self.by_slug[entry.slug] = ordinal
        self.listed.add(ordinal)
        n = entry.lexemes
        for lexeme in entry.keys[:n]:
            bm = _held(self.postings, lexeme)
            if bm is None:
                bm = self.postings[lexeme] = BitMap()
                i = bisect.bisect_left(self._vocabulary, lexeme)
                self._vocabulary.insert(i, lexeme)
                self._vocabulary_postings.insert(i, bm)
                self._vocabulary_heavy.insert(i, None)
            bm.add(ordinal)
        for lexeme in entry.heavy:
            bm = _held(self.heavy, lexeme)
            if bm is None:
                bm = self.heavy[lexeme] = BitMap()
                # (a weight-A lexeme is one of the mod's lexemes: already in the vocabulary)
                self._vocabulary_heavy[bisect.bisect_left(self._vocabulary, lexeme)] = bm
            bm.add(ordinal)
        for key in entry.keys[n:]:
            self.filters.setdefault(key, BitMap()).add(ordinal)
        added = readme_lexemes(row) if readme else []
        for lexeme in added:
            bm = _held(self.readme, lexeme)
            if bm is None:
                lexeme = sys.intern(lexeme)
                bm = self.readme[lexeme] = BitMap()
                i = bisect.bisect_left(self._readme_vocabulary, lexeme)
                self._readme_vocabulary.insert(i, lexeme)
                self._readme_vocabulary_postings.insert(i, bm)
            bm.add(ordinal)
        for view, key in self._views():
            view.insert(bisect.bisect_right(view, key(ordinal), key=key), ordinal)
            if view is self._names and self._laid:
                self._name_offsets.append(len(self._name_offsets))
        self._follow(entry, ordinal, add=True, readme=added)

    @property
    def _name_ordinals(self) -> array:
        """The ordinals in name order: union_range's sets (one ordinal each) are _names itself."""
        return self._names

    def _name_key(self, ordinal: int) -> tuple[str, int]:
        return self.name_of[ordinal], ordinal

    def _order_keys(self, sort: str):
        entries, order_key = self.entries, self._order_key
        from_columns = getattr(entries, "order_key", None)  # (a snapshot's: no Entry built to sort by)
        if from_columns is not None:
            return lambda o: (from_columns(sort, o), o)
        return lambda o: (order_key(sort, entries[o]), o)

    def _views(self):
        """Each sorted view of ordinals with its key (read from name_of and the entries as they are now)."""
        yield self._names, self._name_key
        for sort, view in self._orders.items():
            yield view, self._order_keys(sort)

    @staticmethod
    def _order_key(sort: str, e: Entry) -> tuple:
        # sqlpath.ORDER, each ending in the slug.
        if sort == "updated":
            return (e.updated is None, -(e.updated or 0), e.slug)
        if sort == "newest":
            return (-e.created, e.slug)
        if sort == "downloads":
            return (-e.downloads, e.slug)
        return (e.name, e.slug)

    def _remove(self, ordinal: int, readme: bool = True) -> None:
        """``readme`` False: its README postings stay (the same lexemes are coming back)."""
        entry = self.entries[ordinal]
        if entry is None:
            return
        self._follow(entry, ordinal, add=False, readme=self._drop_readme(ordinal) if readme and entry.readme else ())
        self._changed.add(ordinal)
        if self._laid:
            self._follow_changed(entry, ordinal, add=False)
        self.listed.discard(ordinal)
        for key in entry.keys:
            for table in (self.postings, self.filters):
                bm = _held(table, key)
                if bm is not None:
                    bm.discard(ordinal)
        for lexeme in entry.heavy:
            bm = _held(self.heavy, lexeme)
            if bm is not None:
                bm.discard(ordinal)
        for view, key in self._views():
            i = bisect.bisect_left(view, key(ordinal), key=key)
            if i < len(view) and view[i] == ordinal:
                del view[i]
                if view is self._names and self._laid:
                    self._name_offsets.pop()
        self.entries[ordinal] = None
        self.name_of[ordinal] = ""
        del self.by_slug[entry.slug]

    def _drop_readme(self, ordinal: int) -> list[str]:
        """Take the mod out of every README posting; the lexemes it was in. A pass over the
        README vocabulary (~10 ms at 100,000 mods' READMEs), made only when a README changed or
        its mod left: what the index saves by keeping no README lexemes per mod (Entry.readme)."""
        drop = getattr(self.readme, "drop", None)
        if drop is not None:  # (a snapshot's table: its postings still in the file too)
            return drop(ordinal)
        dropped = []
        for lexeme, bm in self.readme.items():
            if ordinal in bm:
                bm.discard(ordinal)
                dropped.append(lexeme)
        return dropped

    def __len__(self) -> int:
        return len(self.listed)

    def stale(self, rows: Iterable[Mapping]) -> list[str]:
        """Of (slug, updated_at, listed) rows, the slugs whose row changed since the index read it."""
        out = []
        entries = self.entries
        # (a snapshot's: the one column read, no Entry built: a catch-up compares thousands)
        changed_of = getattr(entries, "changed_of", None)
        for row in rows:
            ordinal = self.by_slug.get(row["slug"])
            if ordinal is None:
                if row["listed"]:
                    out.append(row["slug"])
            elif ((changed_of(ordinal) if changed_of is not None else entries[ordinal].changed)
                  != _micros(row["updated_at"]) or not row["listed"]):
                out.append(row["slug"])
        return out

    # --- answering -----------------------------------------------------------------------

    def _lexeme(self, table: dict[str, BitMap], lexeme: str) -> BitMap:
        return table.get(lexeme) or BitMap()

    def _prefixed(self, table: dict[str, BitMap], prefix: str) -> BitMap:
        """Mods holding a lexeme that starts with ``prefix`` (read-only: it may be cached). A
        word's prefix covers hundreds of lexemes ('ores' -> 'oresarmor-api', ...: the slugs'),
        whose union took ~0.2-0.6 ms at 100,000 mods; the same last words come back in query
        after query, so unions are remembered, and kept exact as mods come and go (_follow)."""
        kind = README if table is self.readme else table is self.heavy  # (only these three tables)
        key = (kind, prefix)
        found = self._prefix_unions.get(key)
        if found is not None:
            return found
        # (README lexemes are not laid: their 25 million postings at 100,000 mods would take
        # another 100 MB; their prefix unions are BitMap.union's, remembered as the others.)
        found = self._laid_union(kind, prefix) if kind is not README and self._laid else None
        if found is None:
            vocabulary = self._readme_vocabulary if kind is README else self._vocabulary
            lo = bisect.bisect_left(vocabulary, prefix)
            hi = bisect.bisect_left(vocabulary, prefix + _MAX_CHAR, lo)
            if kind is README:
                sets = self._readme_vocabulary_postings[lo:hi]
            elif kind:
                sets = [x for x in self._vocabulary_heavy[lo:hi] if x is not None]
            else:
                sets = self._vocabulary_postings[lo:hi]
            found = BitMap.union(*sets) if sets else BitMap()
        if len(self._prefix_unions) >= PREFIX_UNIONS_MAX:
            self._prefix_unions.clear()
        self._prefix_unions[key] = found
        return found

    def _laid_union(self, heavy: bool, prefix: str) -> BitMap | None:
        """_prefixed's union from the postings as loaded, in one pass in C over the lexemes the
        prefix starts (a third to a tenth of BitMap.union's time over hundreds of one-mod slug
        lexemes: 350 -> 20-123 us for 'weapon', 616 -> 83 for 'dark' at 100,000 mods), the mods
        re-read since taken out and put back by the lexemes they hold now. None when the prefix
        starts fewer than LAID_MIN_SETS lexemes of that load (BitMap.union's, then)."""
        vocabulary = self._laid_vocabulary
        lo = bisect.bisect_left(vocabulary, prefix)
        hi = bisect.bisect_left(vocabulary, prefix + _MAX_CHAR, lo)
        if hi - lo < LAID_MIN_SETS:
            return None
        found = BitMap(_fastsearch.union_range(*self._laid[heavy], lo, hi))
        if self._changed:
            found -= self._changed
            vocabulary = self._changed_vocabulary[heavy]
            lo = bisect.bisect_left(vocabulary, prefix)
            hi = bisect.bisect_left(vocabulary, prefix + _MAX_CHAR, lo)
            if hi > lo:
                postings = self._changed_postings[heavy]
                found |= BitMap.union(*[postings[x] for x in vocabulary[lo:hi]])
        return found

    def _follow_changed(self, entry: Entry, ordinal: int, add: bool) -> None:
        """The changed mod joins (or leaves) the changed postings of its lexemes (_laid_union)."""
        for heavy, lexemes in ((False, entry.keys[:entry.lexemes]), (True, entry.heavy)):
            postings = self._changed_postings[heavy]
            for lexeme in lexemes:
                bm = postings.get(lexeme)
                if bm is None:
                    if not add:
                        continue  # (a lexeme it held at the load: the laid postings have it)
                    bm = postings[lexeme] = BitMap()
                    bisect.insort(self._changed_vocabulary[heavy], lexeme)
                bm.add(ordinal) if add else bm.discard(ordinal)

    def matches(self, parts: list[Part], *, heavy: bool = False, readme: bool = False) -> BitMap:
        """Mods whose lexemes match any part (``heavy``: with weight A, i.e. in the name or slug);
        a phrase as all of its lexemes, wherever they are (a superset: see Part.exact).
        ``readme``: in the README's lexemes instead, where a phrase never matches (they have no
        positions: PostgreSQL's ``@@`` is false for a phrase over a stripped vector)."""
        table = self.readme if readme else self.heavy if heavy else self.postings
        found = BitMap()
        for part in parts:
            if readme and not part.exact:
                continue
            lexemes = [x for term in part.terms for x in term]
            sets = [self._lexeme(table, x) for x in lexemes[:-1]]
            last = lexemes[-1]
            sets.append(self._prefixed(table, last) if part.prefix else self._lexeme(table, last))
            sets.sort(key=len)
            hit = sets[0] if len(sets) == 1 else BitMap.intersection(*sets)
            found |= hit
        return found

    def found(self, parts: list[Part]) -> BitMap:
        """Mods the query's parts match (sqlpath.text_match): in the name, slug, summary,
        authors or abbreviations (``matches``), or in the README."""
        return self.matches(parts) | self.matches(parts, readme=True)

    def text_matches(self, parts: list[Part], allowed: BitMap) -> tuple[BitMap, BitMap]:
        """(strong, matches) among ``allowed``: the mods the parts match in search_vector
        (``matches``; the README penalty spares them), and those or in the README (``found``),
        the search_vector half computed once."""
        if not parts:
            return BitMap(), BitMap()
        strong = self.matches(parts) & allowed
        return strong, strong | (self.matches(parts, readme=True) & allowed)

    def candidates(self, matches: BitMap, parts: list[Part], ql: str, need: int, per_source: int) -> list[int]:
        """The bounded candidates of a broad relevance query (indexed.py's module doc): the
        max(need, per_source) most popular matches, as many whose name starts with ``ql``, whose
        name or slug holds every part (weight A), and for which ``ql`` is an abbreviation."""
        n = max(need, per_source)
        chosen = BitMap(self.first(matches, n))
        chosen |= BitMap(self.first_name_prefixed(ql, matches, n))
        chosen |= BitMap(self.first(self.matches(parts, heavy=True) & matches, n))
        abbreviated = self.filters.get(f"ab:{ql}")  # (a query that is one of a mod's abbreviations)
        if abbreviated:
            chosen |= BitMap(self.first(abbreviated & matches, n))
        return list(chosen)

    def filtered(self, filters: Filters) -> BitMap:
        """Listed mods passing every filter group."""
        result = self.listed
        for keys, negate in filters.groups:
            if "*" in keys:  # a facet that holds for every mod
                group = self.listed
            else:
                found = [self.filters[k] for k in keys if k in self.filters]
                group = BitMap.union(*found) if found else BitMap()
            result = result - group if negate else result & group
        return result if filters.groups else BitMap(result)

    def _name_span(self, text: str) -> slice:
        """Where the names starting with ``text`` are in the sorted names."""
        key = self._name_key
        lo = bisect.bisect_left(self._names, (text,), key=key)
        return slice(lo, bisect.bisect_left(self._names, (text + _MAX_CHAR,), lo, key=key))

    def name_prefixed(self, text: str, span: slice | None = None) -> BitMap:
        """Mods whose lower-cased name starts with ``text`` (``span``: its _name_span, if known)."""
        if span is None:
            span = self._name_span(text)
        if self._laid and span.stop - span.start > LAID_MIN_SETS:  # (gathered in C, as _laid_union's are)
            return BitMap(_fastsearch.union_range(self._names, self._name_offsets, span.start, span.stop))
        return BitMap(self._names[span])

    def first_name_prefixed(self, text: str, within: BitMap, n: int) -> list[int]:
        """first(name_prefixed(text) & within, n). A short prefix starts thousands of names
        (~0.5 ms to gather into a bitmap at 100,000 mods), so then ``within`` is walked in
        popularity order instead, as far as NAME_WALK members, which finds them sooner where
        such names are common in it (else the bitmap after all). With the C module the bitmap
        is gathered in C (name_prefixed), so always."""
        span = self._name_span(text)
        if not self._laid and span.stop - span.start > NAME_WALK // 4:
            found, entries = [], self.entries
            for i, o in enumerate(within):
                if i == NAME_WALK:
                    break
                if entries[o].name.startswith(text):
                    found.append(o)
                    if len(found) == n:
                        return found
            else:
                return found
        return self.first(self.name_prefixed(text, span) & within, n)

    def similar_names(self, text: str, allowed: BitMap, threshold: float, most: int) -> BitMap | None:
        """A superset of the allowed mods whose name ``text`` is at least ``threshold`` word-similar
        to (pg_trgm's ``<%``), or None when ``text`` is not ASCII or more than ``most`` remain.

        Word similarity is at most (trigrams shared) / (trigrams of ``text``), so a match shares
        at least k = ceil(threshold * m) of the query's m trigrams; such a name holds one of any
        m - k + 1 of them (the rarest are taken), and the exact count is kept per threshold
        step with bitmaps. Names that are not ASCII are always in (PostgreSQL decides)."""
        if not text.isascii():
            return None
        query = trigram_set(text)
        m = len(query)
        k = math.ceil(threshold * m - 1e-9)
        odd = self.filters.get(ODD_NAME, BitMap()) & allowed
        if k < 1:
            return None  # too short to bound: every allowed mod might match
        empty = BitMap()
        # (Every listed mod allowed: no cut needed, the postings hold listed mods only.)
        within = None if len(allowed) == len(self.listed) else allowed
        found = in_at_least([self.filters.get(f"tg:{t}", empty) for t in query], k, within) | odd
        return found if len(found) <= most else None

    @staticmethod
    def first(bm: BitMap, n: int) -> list[int]:
        """The n most popular members."""
        return list(islice(bm, n))

    def relevance(self, ordinal: int, query: tsrank.Query, ql: str, strong: bool = True) -> float:
        """sqlpath.rank_expression of one mod: ts_rank(search_vector, query, 32) as float8, + 1.0
        for the exact lower-cased name, 0.9 for one of its abbreviations (an exact name outranks
        another mod's abbreviation or manifest id: SimpleSorter over SimpleSorterR, whose id is
        simplesorter), 0.5 for a name starting with ``ql``, + ln(1 + downloads) / 100,
        - README_ONLY_PENALTY unless ``strong`` (the query matches its search_vector, not only its
        README), summed in that order as PostgreSQL sums them."""
        e = self.entries[ordinal]
        name = e.name
        r = tsrank.rank(query, e.keys, e.lexemes, e.terms) + (
            1.0 if name == ql else 0.9 if ql in e.abbreviations else 0.5 if name.startswith(ql) else 0.0) + e.popularity
        return r - (0.0 if strong else README_ONLY_PENALTY)

    def ranked(self, ordinals: Iterable[int], query: tsrank.Query, ql: str,
               added: Mapping[int, float] | None = None, strong: BitMap | None = None,
               weights: Iterable[tuple[BitMap, float]] = ()) -> list[int]:
        """The ordinals in the SQL path's relevance order: relevance (less README_ONLY_PENALTY for
        those not in ``strong``, when given; plus ``added[o]``, summed after it: the fuzzy pass's
        word similarity; plus each weight whose set holds the mod: a partial query's words),
        then downloads, then slug (the index's order only under the C collation: ``ordered``)."""
        entries = self.entries
        ordinals = list(ordinals)
        picked = None  # (the candidates' Ranking or Entry, where read from a snapshot's entries)
        if _fastsearch is None:
            scores = [self.relevance(o, query, ql) for o in ordinals]
        elif type(entries) is list:
            scores = _fastsearch.relevances(entries, ordinals, query.operands, query.size, ql)
        else:  # (a snapshot's entries: what ranking reads of each candidate, as the C loop takes a list)
            ranking = entries.ranking
            picked = [ranking(o) for o in ordinals]
            scores = _fastsearch.relevances(picked, range(len(picked)), query.operands, query.size, ql)
        if _fastsearch is not None:  # (the C scores know no abbreviations: those few in Python)
            abbreviated = self.filters.get(f"ab:{ql}")
            if abbreviated:
                scores = [self.relevance(o, query, ql) if o in abbreviated else r for r, o in zip(scores, ordinals)]
        if strong is not None:
            scores = [r - (0.0 if o in strong else README_ONLY_PENALTY) for r, o in zip(scores, ordinals)]
        for within, weight in weights:
            scores = [r + (weight if o in within else 0.0) for r, o in zip(scores, ordinals)]
        if added is not None:
            scores = [r + added[o] for r, o in zip(scores, ordinals)]
        if picked is None:
            keyed = sorted((-r, -entries[o].downloads, entries[o].slug, o) for r, o in zip(scores, ordinals))
        else:
            keyed = sorted((-r, -e.downloads, e.slug, o) for r, o, e in zip(scores, ordinals, picked))
        return [k[3] for k in keyed]

    def ids(self, ordinals: Iterable[int]) -> list:
        id_of = getattr(self.entries, "id_of", None)  # (a snapshot's: from the column, no Entry built)
        if id_of is not None:
            return [id_of(o) for o in ordinals]
        return [self.entries[o].id for o in ordinals]

    def hits(self, ordinals: Iterable[int]) -> list[dict] | None:
        """The mods' hit rows as the index holds them (sqlpath.HIT_COLUMNS' keys), or None
        when one of them holds none (its row was read without those columns): the caller
        reads the page from PostgreSQL instead."""
        entries = self.entries
        hit_of = getattr(entries, "hit_of", None)  # (a snapshot's: decoded from the file when shown)
        out = [hit_of(o) for o in ordinals] if hit_of is not None else [entries[o].hit for o in ordinals]
        return None if None in out else out

    def page(self, allowed: BitMap, sort: str, offset: int, limit: int) -> list | None:
        """Ordinals of one browse page in ``sort`` order, or None for an order the index lacks."""
        order = self._orders.get(sort)
        if order is None or not self.ordered:
            return None
        if len(allowed) * 16 < len(order):  # few pass: sort those rather than walk every mod
            return sorted(allowed, key=self._order_keys(sort))[offset:offset + limit]
        return list(islice((o for o in order if o in allowed), offset, offset + limit))


def _held(table: Mapping[str, BitMap], key: str) -> BitMap | None:
    """``table.get(key)`` for a posting about to be changed in place: a snapshot's table
    (``snapshot.Table``) keeps it for good instead of among the postings it may let go."""
    held = getattr(table, "held", None)
    return table.get(key) if held is None else held(key)


def _laid(postings: Mapping[str, list[int]], vocabulary: list[str]) -> tuple[array, array]:
    """Each lexeme's ordinals (ascending) end to end in vocabulary order, and where each starts."""
    flat, offsets, empty = array("I"), array("Q", [0]), ()
    for lexeme in vocabulary:
        flat.extend(postings.get(lexeme, empty))
        offsets.append(len(flat))
    return flat, offsets


class Builder:
    """A whole index built from rows in batches (so a load never holds the catalogue's rows at once)."""

    def __init__(self) -> None:
        self.index = SearchIndex()
        self._postings: dict[str, list[int]] = defaultdict(list)
        self._heavy: dict[str, list[int]] = defaultdict(list)
        self._filters: dict[str, list[int]] = defaultdict(list)

    def add(self, rows: Iterable[Mapping]) -> None:
        index = self.index
        for row in rows:
            ordinal = len(index.entries)
            entry = _entry(row)
            index.entries.append(entry)
            index.name_of.append(entry.name)
            index.by_slug[entry.slug] = ordinal
            n = entry.lexemes
            for lexeme in entry.keys[:n]:
                self._postings[lexeme].append(ordinal)
            for lexeme in entry.heavy:
                self._heavy[lexeme].append(ordinal)
            for key in entry.keys[n:]:
                self._filters[key].append(ordinal)
            # README postings straight into bitmaps (no lists of 30 million ordinals meanwhile).
            readme = index.readme
            for lexeme in readme_lexemes(row):
                bm = readme.get(lexeme)
                if bm is None:
                    bm = readme[sys.intern(lexeme)] = BitMap()
                bm.add(ordinal)

    def finish(self) -> SearchIndex:
        index = self.index
        index.listed = BitMap(range(len(index.entries)))
        index.postings = {k: BitMap(v) for k, v in self._postings.items()}
        index.heavy = {k: BitMap(v) for k, v in self._heavy.items()}
        index.filters = {k: BitMap(v) for k, v in self._filters.items()}
        index._readme_vocabulary = sorted(index.readme)
        index._readme_vocabulary_postings = [index.readme[x] for x in index._readme_vocabulary]
        index._vocabulary = sorted(index.postings)
        index._vocabulary_postings = [index.postings[x] for x in index._vocabulary]
        index._vocabulary_heavy = [index.heavy.get(x) for x in index._vocabulary]
        if _fastsearch is not None:
            index._laid_vocabulary = list(index._vocabulary)
            index._laid = {False: _laid(self._postings, index._vocabulary),
                           True: _laid(self._heavy, index._vocabulary)}
        everyone = range(len(index.entries))
        index._names = array("I", sorted(everyone, key=index._name_key))
        if _fastsearch is not None:
            index._name_offsets = array("Q", range(len(index._names) + 1))
        for sort in index._orders:
            index._orders[sort] = array("I", sorted(everyone, key=index._order_keys(sort)))
        return index
