"""Version syntaxes of the loaders, pure and table-free.

* ``SemanticVersionImpl`` / ``VersionPredicateParser`` / ``VersionComparisonOperator`` of
  fabric-loader (a superset of semver: any number of components, ``x`` wildcards).
* quilt-loader's ``VersionConstraintImpl`` (bare version = ``^``) and ``{"any"|"all"}``.
* Maven's ``VersionRange.createFromVersionSpec`` and a ComparableVersion-like ordering,
  which is what (Neo)Forge's ``MavenVersionAdapter`` uses for ``versionRange``.

Predicates are returned as callables over *normalized* version strings.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cmp_to_key, lru_cache
from typing import Any

# --- semver, as fabric-loader's SemanticVersionImpl ----------------------------------

_WILD = -1
_INT = re.compile(r"0|[1-9][0-9]*")
_DOT_SEPARATED_ID = re.compile(r"|[-0-9A-Za-z]+(\.[-0-9A-Za-z]+)*")


class PredicateError(ValueError):
    """A predicate or range the loader itself would reject."""


@dataclass(frozen=True, slots=True)
class SemVer:
    components: tuple[int, ...]
    prerelease: str | None = None

    def component(self, i: int) -> int:
        if i < len(self.components):
            return self.components[i]
        return _WILD if self.components[-1] == _WILD else 0  # repeat "x" in x-ranges, else 0

    @property
    def wildcard(self) -> bool:
        return _WILD in self.components


@lru_cache(maxsize=8192)
def parse_semver(text: str, store_x: bool = False) -> SemVer | None:
    """``new SemanticVersionImpl(text, storeX)``; None where the loader falls back to a string."""
    version = text.split("+", 1)[0]  # build metadata is ignored by comparisons
    prerelease = None
    if "-" in version:
        version, prerelease = version.split("-", 1)
        if not _DOT_SEPARATED_ID.fullmatch(prerelease):
            return None
    if not version or version.startswith(".") or version.endswith("."):
        return None
    components: list[int] = []
    for part in version.split("."):
        if store_x and part in ("x", "X", "*"):
            if prerelease is not None:
                return None
            components.append(_WILD)
            continue
        if components and components[-1] == _WILD:
            return None  # interjacent wildcard, 1.x.2
        if not part.isdigit() or not part.isascii() or int(part) > 2**31 - 1:
            return None
        components.append(int(part))
    if store_x and components == [_WILD]:
        return None
    if _WILD in components:  # 1.x.x -> 1.x
        components = components[: components.index(_WILD) + 1]
    return SemVer(tuple(components), prerelease)


def compare_semver(a: SemVer, b: SemVer) -> int:
    for i in range(max(len(a.components), len(b.components))):
        x, y = a.component(i), b.component(i)
        if x != _WILD and y != _WILD and x != y:
            return -1 if x < y else 1
    if a.prerelease is None and b.prerelease is None:
        return 0
    if a.prerelease is None:
        return 0 if a.wildcard else 1  # a release sorts after its pre-releases
    if b.prerelease is None:
        return 0 if b.wildcard else -1
    pa = [p for p in a.prerelease.split(".") if p]
    pb = [p for p in b.prerelease.split(".") if p]
    for x, y in zip(pa, pb, strict=False):  # a longer pre-release wins below
        xi, yi = bool(_INT.fullmatch(x)), bool(_INT.fullmatch(y))
        if xi != yi:
            return -1 if xi else 1  # numeric identifiers sort before alphanumeric ones
        key_x, key_y = ((len(x), x), (len(y), y)) if xi else ((0, x), (0, y))
        if key_x != key_y:
            return -1 if key_x < key_y else 1
    return (len(pa) > len(pb)) - (len(pa) < len(pb))


_OPERATORS = (">=", "<=", ">", "<", "=", "~", "^")  # enum order: longest match first


def _term(op: str, ref: SemVer | str):
    def test(candidate: str) -> bool:
        cand = parse_semver(candidate)
        if isinstance(ref, str) or cand is None:
            # Non-semver on either side: only equality of the strings can hold.
            return op in (">=", "<=", "=", "~", "^") and candidate == (ref if isinstance(ref, str) else None)
        c = compare_semver(cand, ref)
        if op == ">=":
            return c >= 0
        if op == "<=":
            return c <= 0
        if op == ">":
            return c > 0
        if op == "<":
            return c < 0
        if op == "=":
            return c == 0
        same_major = cand.component(0) == ref.component(0)
        if op == "^":
            return c >= 0 and same_major
        return c >= 0 and same_major and cand.component(1) == ref.component(1)  # "~"

    return test


def fabric_predicate(text: str):
    """``VersionPredicateParser.parse``: space-separated terms, ANDed; ``*``/empty = any."""
    terms = []
    for part in text.split(" "):
        part = part.strip()
        if not part or part == "*":
            continue
        op = next((o for o in _OPERATORS if part.startswith(o)), "=")
        version_text = part[len(op) :] if part.startswith(op) else part
        if not version_text:
            raise PredicateError(f"empty version in {part!r}")
        ref: SemVer | str | None = parse_semver(version_text, store_x=True)
        if ref is None:
            if op in (">", "<"):
                raise PredicateError(f"exclusive bound on a non-semantic version {version_text!r}")
            ref, op = version_text, "="
        elif ref.wildcard:
            if op != "=":
                raise PredicateError("wildcard versions (.x) only work without an operator")
            # 1.20.x -> ~1.20- and 1.x -> ^1-: the empty pre-release admits pre-releases.
            comps = ref.components[:-1]
            op = "^" if len(ref.components) == 2 else "~"
            ref = SemVer(comps, "")
        terms.append(_term(op, ref))
    return lambda candidate: all(t(candidate) for t in terms)


_QUILT_PREFIXES = (">=", "<=", ">", "<", "=", "~", "^")


def quilt_predicate(raw: Any):
    """Quilt ``versions``: a string (bare = ``^``), array = any, ``{"any"|"all": [...]}``."""
    if isinstance(raw, str):
        text = raw.strip()
        if text == "*":
            return lambda candidate: True
        bare = parse_semver(text, store_x=True)
        if not text.startswith(_QUILT_PREFIXES) and not (bare and bare.wildcard):
            text = "^" + text  # quilt-loader: "Spec says that 1.0.0 is the same as ^1.0.0"
        return fabric_predicate(text.replace(" ", ""))
    if isinstance(raw, list):
        tests = [quilt_predicate(r) for r in raw]
        return lambda c: any(t(c) for t in tests)
    if isinstance(raw, dict) and len(raw) == 1 and next(iter(raw)) in ("any", "all"):
        key, items = next(iter(raw.items()))
        if not isinstance(items, list):
            raise PredicateError(f'"{key}" must hold an array')
        tests = [quilt_predicate(r) for r in items]
        combine = any if key == "any" else all
        return lambda c: combine(t(c) for t in tests)
    raise PredicateError("expected a string, an array, or an object with one 'any'/'all' key")


# --- Maven ranges, as VersionRange.createFromVersionSpec + ComparableVersion ----------

_QUALIFIERS = {"alpha": 0, "a": 0, "beta": 1, "b": 1, "milestone": 2, "m": 2, "rc": 3, "cr": 3,
               "snapshot": 4, "": 5, "ga": 5, "final": 5, "release": 5, "sp": 6}


@lru_cache(maxsize=8192)
def _maven_items(version: str) -> tuple[int | str, ...]:
    return tuple(int(t) if t.isdigit() else t for t in re.findall(r"\d+|[a-z]+", version.lower()))


def maven_compare(a: str, b: str) -> int:
    """ComparableVersion-ish: numbers numerically, known qualifiers < release < unknown ones."""
    xs, ys = _maven_items(a), _maven_items(b)
    for i in range(max(len(xs), len(ys))):
        x = xs[i] if i < len(xs) else None
        y = ys[i] if i < len(ys) else None
        kx = (1, x, "") if isinstance(x, int) else (0, _QUALIFIERS.get(x or "", 7), x or "")
        ky = (1, y, "") if isinstance(y, int) else (0, _QUALIFIERS.get(y or "", 7), y or "")
        if x is None:
            kx = (1, 0, "") if isinstance(y, int) else (0, 5, "")
        if y is None:
            ky = (1, 0, "") if isinstance(x, int) else (0, 5, "")
        if kx != ky:
            return -1 if kx < ky else 1
    return 0


@dataclass(frozen=True, slots=True)
class _Restriction:
    lower: str | None
    lower_inclusive: bool
    upper: str | None
    upper_inclusive: bool

    def contains(self, v: str) -> bool:
        if self.lower is not None:
            c = maven_compare(v, self.lower)
            if c < 0 or (c == 0 and not self.lower_inclusive):
                return False
        if self.upper is not None:
            c = maven_compare(v, self.upper)
            if c > 0 or (c == 0 and not self.upper_inclusive):
                return False
        return True


@dataclass(frozen=True, slots=True)
class MavenRange:
    restrictions: tuple[_Restriction, ...]
    soft: str | None = None  # a bare version: a recommendation, not a restriction

    def contains(self, v: str) -> bool:
        return any(r.contains(v) for r in self.restrictions)

    @property
    def lowest(self) -> str | None:
        lows = [r.lower for r in self.restrictions if r.lower is not None]
        return min(lows, key=cmp_to_key(maven_compare)) if lows else self.soft


def parse_maven_range(spec: str) -> MavenRange:
    rest, restrictions = spec.strip(), []
    while rest.startswith(("[", "(")):
        ends = [i for i in (rest.find(")"), rest.find("]")) if i >= 0]
        if not ends:
            raise PredicateError("unbounded range")
        end = min(ends)
        restrictions.append(_parse_restriction(rest[: end + 1]))
        rest = rest[end + 1 :].strip()
        if rest.startswith(","):
            rest = rest[1:].strip()
    if rest:
        if restrictions:
            raise PredicateError("only fully-qualified sets allowed in multiple set scenario")
        return MavenRange((), soft=rest)
    return MavenRange(tuple(restrictions))


def _parse_restriction(spec: str) -> _Restriction:
    lower_inc, upper_inc = spec[0] == "[", spec[-1] == "]"
    body = spec[1:-1].strip()
    if "," not in body:
        if not (lower_inc and upper_inc):
            raise PredicateError("single version must be surrounded by []")
        return _Restriction(body, True, body, True)
    low, _, high = (p.strip() for p in body.partition(","))
    if "," in high:
        raise PredicateError("too many commas in a restriction")
    if low and high and maven_compare(high, low) < 0:
        raise PredicateError("range defies version ordering")
    return _Restriction(low or None, lower_inc, high or None, upper_inc)


def fabric_predicate_any(raw: Any):
    """fabric.mod.json: a string is one predicate (space-separated terms ANDed); an array is OR."""
    if isinstance(raw, str):
        return fabric_predicate(raw)
    if isinstance(raw, list) and all(isinstance(p, str) for p in raw):
        tests = [fabric_predicate(p) for p in raw]
        return lambda v: any(t(v) for t in tests)
    raise PredicateError("expected a string or an array of strings")
