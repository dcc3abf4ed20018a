"""How each loader orders two versions of a mod: one comparator per scheme.

* ``fabric``: fabric-loader's ``SemanticVersionImpl.compareTo`` (any number of components,
  pre-releases, ``x`` wildcards; see :mod:`.version_syntax`), and for a version that is not
  semantic its ``StringVersion`` fallback: the two friendly strings compared as Java's
  ``String.compareTo`` does (UTF-16 code units).
* ``quilt``: quilt-loader's ``SemanticVersionImpl`` (fabric's rules without wildcards), and for
  a version that is not semantic ``GenericVersionImpl``: FlexVer. FlexVer comes from the
  ``flexver`` package, the reference implementation's own Python port (unascribed/FlexVer,
  ``python/``): its test vectors pass in ``tests/unit/jar/manifests/test_version_order.py``.
* ``maven``: Maven's ``ComparableVersion`` as shipped in maven-artifact 3.8.5, the version
  Forge and NeoForge (FancyModLoader) put on the classpath for ``versionRange``. Written here
  because no PyPI library matches it: ``univers.maven`` (32.0.1, a port of an older
  ComparableVersion) orders ``1-0.alpha`` equal to ``1``, which 3.8.5 fixed (MNG-6964). Maven
  3.9 changed the algorithm again; the loaders have not moved to it.

Server plugins have no ordering of their own; they use ``maven`` (it orders the free-form
versions plugins write sensibly: ``1.2-SNAPSHOT < 1.2 < 1.2.1``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cmp_to_key, lru_cache
from typing import Literal

import flexver

Scheme = Literal["fabric", "quilt", "maven"]

# --- semver, as fabric-loader's SemanticVersionImpl ----------------------------------

WILD = -1
_INT = re.compile(r"0|[1-9][0-9]*")
_DOT_SEPARATED_ID = re.compile(r"|[-0-9A-Za-z]+(\.[-0-9A-Za-z]+)*")


@dataclass(frozen=True, slots=True)
class SemVer:
    components: tuple[int, ...]
    prerelease: str | None = None
    build: str | None = None

    def component(self, i: int) -> int:
        if i < len(self.components):
            return self.components[i]
        return WILD if self.components[-1] == WILD else 0  # repeat "x" in x-ranges, else 0

    @property
    def wildcard(self) -> bool:
        return WILD in self.components

    @property
    def friendly(self) -> str:
        """``getFriendlyString()``: rebuilt from the parts ("01.2" -> "1.2")."""
        text = ".".join("x" if c == WILD else str(c) for c in self.components)
        if self.prerelease is not None:
            text += "-" + self.prerelease
        return text + ("+" + self.build if self.build is not None else "")


@lru_cache(maxsize=16384)
def parse_semver(text: str, store_x: bool = False) -> SemVer | None:
    """``new SemanticVersionImpl(text, storeX)``; None where the loader falls back to a string."""
    version, plus, build = text.partition("+")  # build metadata is ignored by comparisons
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
            components.append(WILD)
            continue
        if components and components[-1] == WILD:
            return None  # interjacent wildcard, 1.x.2
        if not part.isdigit() or not part.isascii() or int(part) > 2**31 - 1:
            return None
        components.append(int(part))
    if store_x and components == [WILD]:
        return None
    if WILD in components:  # 1.x.x -> 1.x
        components = components[: components.index(WILD) + 1]
    return SemVer(tuple(components), prerelease, build if plus else None)


def compare_semver(a: SemVer, b: SemVer) -> int:
    for i in range(max(len(a.components), len(b.components))):
        x, y = a.component(i), b.component(i)
        if x != WILD and y != WILD and x != y:
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



def java_compare(a: str, b: str) -> int:
    """``String.compareTo``'s sign: UTF-16 code units, which Python's code points order
    differently only above U+FFFF (a surrogate pair sorts before U+E000..U+FFFF)."""
    if a == b:
        return 0
    if a.isascii() and b.isascii():
        return -1 if a < b else 1
    ea, eb = a.encode("utf-16-be", "surrogatepass"), b.encode("utf-16-be", "surrogatepass")
    return -1 if ea < eb else (1 if ea > eb else 0)


def fabric_compare(a: str, b: str) -> int:
    sa, sb = parse_semver(a), parse_semver(b)
    if sa is not None and sb is not None:
        return compare_semver(sa, sb)
    # SemanticVersionImpl.compareTo(StringVersion) and StringVersion.compareTo compare the
    # friendly strings: a semantic version's is rebuilt from its parts ("01.2" -> "1.2").
    return java_compare(sa.friendly if sa else a, sb.friendly if sb else b)


def flexver_compare(a: str, b: str) -> int:
    """FlexVer's order (``GenericVersionImpl.compareRaw``), as -1/0/1."""
    c = flexver.compare(a, b)
    return (c > 0) - (c < 0)


def quilt_compare(a: str, b: str) -> int:
    sa, sb = parse_semver(a), parse_semver(b)
    if sa is not None and sb is not None:
        return compare_semver(sa, sb)
    return flexver_compare(a, b)


# --- Maven ComparableVersion (maven-artifact 3.8.5) ------------------------------------

_QUALIFIERS = ("alpha", "beta", "milestone", "rc", "snapshot", "", "sp")
_ALIASES = {"ga": "", "final": "", "release": "", "cr": "rc"}
_RELEASE_INDEX = "5"  # str(_QUALIFIERS.index(""))


class _Str:
    """StringItem: a qualifier, compared through ``comparableQualifier`` (a string)."""

    __slots__ = ("key", "value")

    def __init__(self, value: str, followed_by_digit: bool) -> None:
        if followed_by_digit and len(value) == 1:
            value = {"a": "alpha", "b": "beta", "m": "milestone"}.get(value, value)  # a1 = alpha-1
        self.value = _ALIASES.get(value, value)
        i = _QUALIFIERS.index(self.value) if self.value in _QUALIFIERS else -1
        self.key = str(i) if i >= 0 else f"{len(_QUALIFIERS)}-{self.value}"


_Item = int | _Str | list  # IntItem/LongItem/BigIntegerItem are one Python int


def _is_null(item: _Item) -> bool:
    if isinstance(item, int):
        return item == 0
    if isinstance(item, _Str):
        return item.key == _RELEASE_INDEX
    return not item


def _cmp_str(a: str, b: str) -> int:
    return java_compare(a, b)


def _compare(a: _Item, b: _Item | None) -> int:
    if isinstance(a, int):
        if b is None:
            return 0 if a == 0 else 1  # 1.0 == 1, 1.1 > 1
        if isinstance(b, int):
            return (a > b) - (a < b)
        return 1  # 1.1 > 1-sp, 1.1 > 1-1
    if isinstance(a, _Str):
        if b is None:
            return _cmp_str(a.key, _RELEASE_INDEX)  # 1-rc < 1, 1-ga > 1
        if isinstance(b, _Str):
            return _cmp_str(a.key, b.key)
        return -1  # 1.any < 1.1, 1.any < 1-1
    if b is None:
        for item in a:  # the whole list against null, not just the first item (MNG-6964)
            if (result := _compare(item, None)) != 0:
                return result
        return 0
    if isinstance(b, int):
        return -1  # 1-1 < 1.0.x
    if isinstance(b, _Str):
        return 1  # 1-1 > 1-sp
    for i in range(max(len(a), len(b))):
        left = a[i] if i < len(a) else None
        right = b[i] if i < len(b) else None
        if left is None:
            result = 0 if right is None else -_compare(right, None)
        else:
            result = _compare(left, right)
        if result != 0:
            return result
    return 0


def _normalize(items: list) -> None:
    for i in range(len(items) - 1, -1, -1):
        if _is_null(items[i]):
            del items[i]  # trailing 0, "", empty list
        elif not isinstance(items[i], list):
            break


def _parse_item(is_digit: bool, buf: str) -> _Item:
    return int(buf) if is_digit else _Str(buf, False)


@lru_cache(maxsize=16384)
def _maven_items(version: str) -> list:
    """``ComparableVersion.parseVersion``. Cached: treat the result as read-only."""
    items: list = []
    current = items
    stack = [items]
    text = version.lower()
    is_digit = False
    start = 0
    for i, c in enumerate(text):
        if c in ".-":
            current.append(0 if i == start else _parse_item(is_digit, text[start:i]))
            start = i + 1
            if c == "-":
                current.append(new := [])
                current = new
                stack.append(new)
        elif c.isdecimal():  # Character.isDigit: any Unicode decimal digit
            if not is_digit and i > start:
                current.append(_Str(text[start:i], True))
                start = i
                current.append(new := [])
                current = new
                stack.append(new)
            is_digit = True
        else:
            if is_digit and i > start:
                current.append(_parse_item(True, text[start:i]))
                start = i
                current.append(new := [])
                current = new
                stack.append(new)
            is_digit = False
    if len(text) > start:
        current.append(_parse_item(is_digit, text[start:]))
    for lst in reversed(stack):
        _normalize(lst)
    return items


def maven_compare(a: str, b: str) -> int:
    """``new ComparableVersion(a).compareTo(new ComparableVersion(b))``, as -1/0/1."""
    if a == b:
        return 0
    return _compare(_maven_items(a), _maven_items(b))


def maven_canonical(version: str) -> str:
    """``ComparableVersion.getCanonical()``: items joined by '.', a sub-list by '-'."""
    return _canonical(_maven_items(version))


def _canonical(items: list) -> str:
    out = ""
    for item in items:
        if out:
            out += "-" if isinstance(item, list) else "."
        out += _canonical(item) if isinstance(item, list) else (item.value if isinstance(item, _Str) else str(item))
    return out


_COMPARATORS = {"fabric": fabric_compare, "quilt": quilt_compare, "maven": maven_compare}


def comparator(scheme: Scheme):
    return _COMPARATORS[scheme]


def sort_key(scheme: Scheme):
    """A key for ``sorted``: oldest first in the scheme's order."""
    return cmp_to_key(_COMPARATORS[scheme])
