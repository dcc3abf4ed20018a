"""Version predicates and ranges of the loaders, parsed into one comparable form.

Every syntax becomes a :class:`VersionSet`: a union of intervals over one version order
(:mod:`.version_order`), which is the form the loaders themselves reduce them to
(fabric-loader's ``VersionPredicate.getInterval``, quilt-loader's ``VersionRange``, Maven's
``Restriction`` list). Membership is tested the way each loader tests it.

* fabric-loader: ``VersionPredicateParser`` / ``VersionComparisonOperator`` (space-separated
  terms ANDed, an array ORed, ``x`` wildcards, ``~``/``^``; a version that is not semantic
  only matches itself, with an inclusive operator).
* quilt-loader: ``V1ModMetadataReader.readVersionSpecifier`` (a bare version is ``^``; ``~``
  and ``^`` bounds carry no pre-release, so ``~1.2`` admits ``1.3-alpha``), arrays = any,
  ``{"any"|"all": [...]}``.
* Maven: ``VersionRange.createFromVersionSpec`` (maven-artifact 3.8.5, what (Neo)Forge's
  ``MavenVersionAdapter`` calls): ``[1.2,2.0)``, ``[36,)``, ``(,1.0]``, unions; a bare
  version is a recommendation that admits every version.

Everything is bounded: a predicate longer than :data:`MAX_TEXT` characters or with more than
:data:`MAX_TERMS` terms is refused (:class:`PredicateError`), so a hostile manifest cannot make
the intersection of two sets quadratic in anything large.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from indexium_jar.manifests.version_order import (
    WILD,
    Scheme,
    SemVer,
    compare_semver,
    comparator,
    maven_compare,
    parse_semver,
)

__all__ = [
    "MAX_TERMS", "MAX_TEXT", "Interval", "MavenRange", "PredicateError", "SemVer", "VersionSet",
    "compare_semver", "fabric_predicate", "fabric_predicate_any", "fabric_set", "maven_compare",
    "maven_set", "parse_maven_range", "parse_semver", "quilt_predicate", "quilt_set",
]

MAX_TEXT = 1000  # characters of one predicate or range as written
MAX_TERMS = 64  # terms, alternatives or restrictions in one predicate


class PredicateError(ValueError):
    """A predicate or range the loader itself would reject (or one too large to read)."""


@dataclass(frozen=True, slots=True)
class Interval:
    """Versions between two bounds; a missing bound is unbounded on that side."""

    lower: str | None = None
    lower_inclusive: bool = False
    upper: str | None = None
    upper_inclusive: bool = False

    @property
    def exact(self) -> str | None:
        """The one version an interval such as ``[1.2]`` or ``=1.2`` admits."""
        if self.lower is not None and self.lower == self.upper and self.lower_inclusive and self.upper_inclusive:
            return self.lower
        return None


_EVERYTHING = Interval()


@dataclass(frozen=True, slots=True)
class VersionSet:
    """A union of intervals in one scheme's order. ``(Interval(),)`` is any version, ``()`` none.

    ``recommended`` keeps Maven's bare version (a recommendation, not a restriction).
    """

    scheme: Scheme
    intervals: tuple[Interval, ...] = (_EVERYTHING,)
    recommended: str | None = None

    @property
    def is_any(self) -> bool:
        return _EVERYTHING in self.intervals

    @property
    def is_empty(self) -> bool:
        return not self.intervals

    def contains(self, version: str) -> bool:
        return any(_interval_contains(self.scheme, i, version) for i in self.intervals)

    def intersect(self, other: VersionSet) -> VersionSet:
        if other.scheme != self.scheme:
            raise ValueError(f"cannot intersect a {self.scheme} set with a {other.scheme} set")
        if other.is_any:
            return self
        if self.is_any:
            return other
        out: list[Interval] = []
        for a in self.intervals:
            for b in other.intervals:
                if (both := _intersect(self.scheme, a, b)) is not None and both not in out:
                    out.append(both)
        return VersionSet(self.scheme, tuple(out), self.recommended or other.recommended)

    def union(self, other: VersionSet) -> VersionSet:
        if self.is_any or other.is_any:
            return VersionSet(self.scheme)
        merged = self.intervals + tuple(i for i in other.intervals if i not in self.intervals)
        return VersionSet(self.scheme, merged, self.recommended or other.recommended)

    def complement(self) -> VersionSet:
        """Every version this set does not hold (a version that is not semantic counts as a
        point nobody else can reach, so removing it removes nothing for Fabric)."""
        result = VersionSet(self.scheme)
        for i in self.intervals:
            if self.scheme == "fabric" and not _semantic_interval(i):
                continue
            parts = []
            if i.lower is not None:
                parts.append(Interval(None, False, i.lower, not i.lower_inclusive))
            if i.upper is not None:
                parts.append(Interval(i.upper, not i.upper_inclusive, None, False))
            result = result.intersect(VersionSet(self.scheme, tuple(parts)))
        return result


def _semantic_interval(i: Interval) -> bool:
    return all(b is None or parse_semver(b) is not None for b in (i.lower, i.upper))


def _bound_ok(scheme: Scheme, version: str, bound: str, inclusive: bool, lower: bool) -> bool:
    if scheme == "fabric":
        v, b = parse_semver(version), parse_semver(bound)
        if v is None or b is None:
            # VersionComparisonOperator.test: outside semver only an inclusive operator
            # matches, by the friendly strings being equal.
            return inclusive and (v.friendly if v else version) == (b.friendly if b else bound)
        c = compare_semver(v, b)
    else:
        c = comparator(scheme)(version, bound)
    if c == 0:
        return inclusive
    return c > 0 if lower else c < 0


def _interval_contains(scheme: Scheme, i: Interval, version: str) -> bool:
    if i.lower is not None and not _bound_ok(scheme, version, i.lower, i.lower_inclusive, True):
        return False
    return i.upper is None or _bound_ok(scheme, version, i.upper, i.upper_inclusive, False)


def _intersect(scheme: Scheme, a: Interval, b: Interval) -> Interval | None:
    if scheme == "fabric":
        for point, other in ((a, b), (b, a)):
            if not _semantic_interval(point):  # a version that is not semantic: a point
                return point if _interval_contains(scheme, other, point.lower or "") else None
    cmp = comparator(scheme)
    lower, lower_inc = a.lower, a.lower_inclusive
    if b.lower is not None:
        c = 1 if lower is None else cmp(b.lower, lower)
        if c > 0 or (c == 0 and not b.lower_inclusive):
            lower, lower_inc = b.lower, b.lower_inclusive
    upper, upper_inc = a.upper, a.upper_inclusive
    if b.upper is not None:
        c = -1 if upper is None else cmp(b.upper, upper)
        if c < 0 or (c == 0 and not b.upper_inclusive):
            upper, upper_inc = b.upper, b.upper_inclusive
    if lower is not None and upper is not None:
        c = cmp(lower, upper)
        if c > 0 or (c == 0 and not (lower_inc and upper_inc)):
            return None
    return Interval(lower, lower_inc, upper, upper_inc)


def _checked(text: str) -> str:
    if len(text) > MAX_TEXT:
        raise PredicateError(f"longer than {MAX_TEXT} characters")
    return text


# --- fabric-loader ----------------------------------------------------------------------

_OPERATORS = (">=", "<=", ">", "<", "=", "~", "^")  # enum order: longest match first


def _fabric_term(op: str, ref: SemVer) -> Interval:
    """``VersionComparisonOperator.minVersion/maxVersion`` of one semantic term."""
    text = ref.friendly
    if op == ">=":
        return Interval(text, True)
    if op == ">":
        return Interval(text, False)
    if op == "<=":
        return Interval(None, False, text, True)
    if op == "<":
        return Interval(None, False, text, False)
    if op == "=":
        return Interval(text, True, text, True)
    if op == "~":  # same major and minor: below (major).(minor+1)-
        return Interval(text, True, f"{ref.component(0)}.{ref.component(1) + 1}-", False)
    return Interval(text, True, f"{ref.component(0) + 1}-", False)  # "^": same major


def fabric_set(text: str) -> VersionSet:
    """``VersionPredicateParser.parse``: space-separated terms, ANDed; ``*``/empty = any."""
    result = VersionSet("fabric")
    parts = [p.strip() for p in _checked(text).split(" ")]
    parts = [p for p in parts if p and p != "*"]
    if len(parts) > MAX_TERMS:
        raise PredicateError(f"more than {MAX_TERMS} terms")
    for part in parts:
        op = next((o for o in _OPERATORS if part.startswith(o)), "=")
        version_text = part[len(op):] if part.startswith(op) else part
        if not version_text:
            raise PredicateError(f"empty version in {part!r}")
        ref = parse_semver(version_text, store_x=True)
        if ref is None:
            if op in (">", "<"):
                raise PredicateError(f"exclusive bound on a non-semantic version {version_text!r}")
            term = Interval(version_text, True, version_text, True)  # StringVersion: itself only
        elif ref.wildcard:
            if op != "=":
                raise PredicateError("wildcard versions (.x) only work without an operator")
            # 1.20.x -> ~1.20- and 1.x -> ^1-: the empty pre-release admits pre-releases.
            comps = ref.components[: ref.components.index(WILD)]
            term = _fabric_term("^" if len(ref.components) == 2 else "~", SemVer(comps, "", ref.build))
        else:
            term = _fabric_term(op, ref)
        result = result.intersect(VersionSet("fabric", (term,)))
    return result


def fabric_set_any(raw: Any) -> VersionSet:
    """fabric.mod.json: a string is one predicate; an array of them is OR."""
    if isinstance(raw, str):
        return fabric_set(raw)
    if isinstance(raw, list) and all(isinstance(p, str) for p in raw):
        if len(raw) > MAX_TERMS:
            raise PredicateError(f"more than {MAX_TERMS} alternatives")
        result = VersionSet("fabric", ())
        for part in raw:
            result = result.union(fabric_set(part))
        return result
    raise PredicateError("expected a string or an array of strings")


# --- quilt-loader -----------------------------------------------------------------------


def _quilt_semantic(text: str) -> SemVer:
    ref = parse_semver(text)
    if ref is None:
        raise PredicateError(f"{text!r} is not a semantic version (required by ~ and ^)")
    return ref


def _quilt_specifier(text: str) -> Interval:
    """``readVersionSpecifier``: one string, no spaces split (quilt reads it whole)."""
    if text == "*":
        return _EVERYTHING
    if not text:
        raise PredicateError("empty version specifier")
    head = text[0]
    if head == "=":
        return Interval(text[1:], True, text[1:], True)
    if head in "<>":
        inclusive = text[1:2] == "="
        version = text[2:] if inclusive else text[1:]
        if not version:
            raise PredicateError(f"no version after {text!r}")
        return Interval(version, inclusive) if head == ">" else Interval(None, False, version, inclusive)
    if head == "~":
        ref = _quilt_semantic(text[1:])
        comps = ref.components
        upper = f"{comps[0]}.1" if len(comps) < 2 else f"{comps[0]}.{comps[1] + 1}"
        return Interval(text[1:], True, upper, False)
    if head == "^":
        ref = _quilt_semantic(text[1:])
        return Interval(text[1:], True, str(ref.components[0] + 1), False)
    stripped = text
    if "-" in text:
        stripped = text[: text.index("-")]
    if "+" in text:
        stripped = text[: text.index("+")]  # sic: quilt-loader cuts the original string here too
    if stripped.endswith(".x"):
        if text.index(".x") != len(text) - 2:
            raise PredicateError(f"invalid version specifier {text!r}")
        low = _quilt_semantic(text[:-2])
        comps = list(low.components)
        comps[-1] += 1
        return Interval(text[:-2], True, ".".join(map(str, comps)), False)
    ref = parse_semver(text)
    if ref is None:
        return Interval(text, True, text, True)  # not semantic: "same as ="
    return Interval(text, True, str(ref.components[0] + 1), False)  # bare: "same as ^"


def quilt_set(raw: Any, _depth: int = 0) -> VersionSet:
    """Quilt ``versions``: a string, an array (any of), or ``{"any"|"all": [...]}``."""
    if _depth > 8:
        raise PredicateError("nested too deeply")
    if isinstance(raw, str):
        return VersionSet("quilt", (_quilt_specifier(_checked(raw).strip()),))
    items, combine = None, "any"
    if isinstance(raw, list):
        items = raw
    elif isinstance(raw, dict) and len(raw) == 1 and next(iter(raw)) in ("any", "all"):
        combine, items = next(iter(raw.items()))
        if not isinstance(items, list):
            raise PredicateError(f'"{combine}" must hold an array')
    if items is None:
        raise PredicateError("expected a string, an array, or an object with one 'any'/'all' key")
    if not items:
        raise PredicateError("an empty array of versions")
    if len(items) > MAX_TERMS:
        raise PredicateError(f"more than {MAX_TERMS} alternatives")
    sets = [quilt_set(item, _depth + 1) for item in items]
    result = sets[0]
    for s in sets[1:]:
        result = result.union(s) if combine == "any" else result.intersect(s)
    return result


# --- Maven VersionRange -----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class MavenRange:
    """``VersionRange``: restrictions, or a bare recommended version that restricts nothing."""

    restrictions: tuple[Interval, ...]
    soft: str | None = None

    def contains(self, v: str) -> bool:
        return self.soft is not None or VersionSet("maven", self.restrictions).contains(v)

    @property
    def lowest(self) -> str | None:
        lows = [r.lower for r in self.restrictions if r.lower is not None]
        if not lows:
            return self.soft
        low = lows[0]
        for other in lows[1:]:
            low = other if maven_compare(other, low) < 0 else low
        return low

    def as_set(self) -> VersionSet:
        if self.soft is not None:
            return VersionSet("maven", recommended=self.soft)
        return VersionSet("maven", self.restrictions)


def parse_maven_range(spec: str) -> MavenRange:
    """``VersionRange.createFromVersionSpec``, with its errors."""
    rest, restrictions = _checked(spec).strip(), []
    upper_before: str | None = None
    while rest.startswith(("[", "(")):
        ends = [i for i in (rest.find(")"), rest.find("]")) if i >= 0]
        if not ends:
            raise PredicateError("unbounded range")
        end = min(ends)
        restriction = _parse_restriction(rest[: end + 1])
        if upper_before is not None and (restriction.lower is None or maven_compare(restriction.lower, upper_before) < 0):
            raise PredicateError("ranges overlap")
        restrictions.append(restriction)
        if len(restrictions) > MAX_TERMS:
            raise PredicateError(f"more than {MAX_TERMS} restrictions")
        upper_before = restriction.upper
        rest = rest[end + 1:].strip()
        if rest.startswith(","):
            rest = rest[1:].strip()
    if rest:
        if restrictions:
            raise PredicateError("only fully-qualified sets allowed in multiple set scenario")
        return MavenRange((), soft=rest)
    return MavenRange(tuple(restrictions))


def _parse_restriction(spec: str) -> Interval:
    lower_inc, upper_inc = spec[0] == "[", spec[-1] == "]"
    body = spec[1:-1].strip()
    if "," not in body:
        if not (lower_inc and upper_inc):
            raise PredicateError("single version must be surrounded by []")
        return Interval(body, True, body, True)
    low, _, high = (p.strip() for p in body.partition(","))
    if low == high:
        raise PredicateError("range cannot have identical boundaries")
    if low and high and maven_compare(high, low) < 0:
        raise PredicateError("range defies version ordering")
    # Restriction keeps the flags as written, but a missing bound is never inclusive in effect.
    return Interval(low or None, lower_inc and bool(low), high or None, upper_inc and bool(high))


def maven_set(spec: str) -> VersionSet:
    return parse_maven_range(spec).as_set()


# --- the callables the Minecraft-version evaluation uses ---------------------------------

Predicate = Callable[[str], bool]


def fabric_predicate(text: str) -> Predicate:
    return fabric_set(text).contains


def fabric_predicate_any(raw: Any) -> Predicate:
    return fabric_set_any(raw).contains


def quilt_predicate(raw: Any) -> Predicate:
    return quilt_set(raw).contains
