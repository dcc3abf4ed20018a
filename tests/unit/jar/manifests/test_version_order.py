"""Each loader's own comparison vectors, run against our ports (data copied, code not).

Sources, named at each block: FabricMC/fabric-loader ``VersionParsingTests.java`` (a16c6d69),
apache/maven ``maven-artifact`` ``ComparableVersionTest.java`` and ``VersionRangeTest.java`` at
tag maven-3.8.5 (the maven-artifact Forge and NeoForge ship), unascribed/FlexVer
``test/test_vectors.txt`` (quilt-loader compares non-semantic versions with FlexVer), and
QuiltMC/quilt-loader ``testing/version/comparison.json`` (d7112ddb).
"""

from __future__ import annotations

import itertools

import pytest

from indexium_jar.manifests import version_order as vo
from indexium_jar.manifests import version_syntax as vs

pytestmark = pytest.mark.unit

# --- fabric-loader VersionParsingTests: parsing ------------------------------------------
FABRIC_PARSES = [("0.3.5", False), ("0.3.5-beta.2", False), ("0.3.5-alpha.6+build.120", False),
                 ("0.3.5+build.3000", False), ("2.x", True), ("2.x.x", True), ("2.X", True), ("2.*", True),
                 ("1.0.0-0.3.7", False), ("1.0.0-x.7.z.92", False), ("1.0.0+20130313144700", False),
                 ("1.0.0-beta+exp.sha.5114f85", False)]
FABRIC_REJECTS = [("0.0.-1", False), ("0.2147483648.0", False), ("0.-1.0", False), ("-1.0.0", False), ("", False),
                  ("0.0.a", False), ("0.a.0", False), ("a.0.0", False), ("x", True), ("2.x.1", True),
                  ("2.*.1", True), ("2.x-alpha.1", True), ("2.*-alpha.1", True), ("*-alpha.1", True),
                  ("2.x", False), ("2.X", False), ("2.*", False)]

# --- fabric-loader VersionParsingTests: predicates (predicate, accepted, rejected) --------
FABRIC_PREDICATES = [
    (">=0.3.1-beta.2 <0.4.0",
     ["0.3.1-beta.2", "0.3.1-beta.2.1", "0.3.1-beta.3", "0.3.4+build.125", "0.3.7", "0.4.0-alpha.1", "0.3.4-beta.7",
      "0.3.1-beta.11"], ["0.3.0", "0.3.1-beta.1", "0.4.0"]),
    (">=0.3.1-beta.2 <0.4.0-",
     ["0.3.1-beta.2", "0.3.1-beta.2.1", "0.3.1-beta.3", "0.3.4+build.125", "0.3.7", "0.3.4-beta.7", "0.3.1-beta.11"],
     ["0.3.0", "0.3.1-beta.1", "0.4.0-alpha.1", "0.4.0"]),
    (">=1.4-", ["1.4-beta.2", "1.4+build.125", "1.4", "1.4.2"], ["1.3", "1.3.5", "1.3-alpha.1"]),
    ("<1.4", ["1.3", "1.3.5", "1.3-alpha.1", "1.4-beta.2"], ["1.4+build.125", "1.4"]),
    ("<1.4-", ["1.3", "1.3.5", "1.3-alpha.1"], ["1.4-beta.2", "1.4+build.125", "1.4"]),
    (">=0.3.1-beta.8.d.10",
     ["0.3.1-beta.9", "0.3.1-beta.11", "0.3.1-beta.8.e", "0.3.1-beta.8.d.10", "0.3.1-beta.9.d.5", "0.3.1-beta.final",
      "0.3.1-beta.-final-"],
     ["0.3.1-beta.7", "0.3.1-beta.8.d", "0.3.1-beta.8.a", "0.3.1-alpha.9", "0.3.1-beta.8.8"]),
    ("1.3.x", ["1.3.0", "1.3.0-alpha.1", "1.3.99"], ["1.4.0", "1.2.9", "1.2.9-rc.6", "1.4.0-alpha.1", "2.0.0"]),
    ("2.x", ["2.0.0", "2.0.0-alpha.1", "2.9.0-beta.2", "2.2.4"], ["1.99.99", "3.0.0", "3.0.0-alpha.1"]),
    ("~1.2.3", ["1.2.3", "1.2.4", "1.2.4-alpha.1"], ["1.2.2", "1.2.3-rc.7", "1.3.0", "2.2.0"]),
    ("~1.2", ["1.2.0", "1.2.1-alpha.3", "1.2.6"], ["1.1.9", "1.3.0", "1.2.0-rc.2", "1.3.0-alpha.3"]),
    ("~1.2-", ["1.2.0", "1.2.1-alpha.3", "1.2.6", "1.2.0-rc.2"], ["1.1.9", "1.3.0", "1.3.0-alpha.3"]),
    ("~1", ["1.0.0", "1.0.4"], ["0.9.9", "1.1.5", "3.0.5"]),
    ("~1.2.3-beta.2",
     ["1.2.3-beta.2", "1.2.3-beta.2.1", "1.2.3-beta.3", "1.2.3-beta.11", "1.2.3-rc.7", "1.2.3", "1.2.5",
      "1.2.4-alpha.4"], ["1.3.0", "1.2.2", "1.2.3-beta.1", "1.2.3-beta.1.9", "1.2.3-alpha.4"]),
    ("^1.2.3", ["1.2.3", "1.2.4", "1.3.0", "1.2.4-beta.2"], ["1.2.2", "1.2.3-beta.2", "2.0.0"]),
    ("^0.2.3", ["0.2.3", "0.2.4", "0.2.8-beta.2", "0.3.0"], ["0.2.0", "0.2.3-rc.8", "1.2.0"]),
    ("^1.2.3-beta.2", ["1.2.3-beta.2", "1.2.3-beta.3", "1.2.3-rc.7", "1.2.3", "1.2.5", "1.3.0", "1.2.4-alpha.4"],
     ["1.2.2", "2.0.0", "1.2.3-alpha.4"]),
    ("^1", ["1.0.0", "1.2.4", "1.99.99", "1.2.4-beta.2"], ["0.9.6", "1.0.0-rc.5", "2.0.0", "2.0.0-beta.2"]),
    ("^1-", ["1.0.0", "1.0.0-rc.5", "1.2.4", "1.99.99", "1.2.4-beta.2"],
     ["0.9.0", "0.9.0-rc.5", "2.0.0", "2.0.0-beta.2"]),
]

# --- maven-artifact 3.8.5 ComparableVersionTest ------------------------------------------
MAVEN_QUALIFIER_ORDER = ["1-alpha2snapshot", "1-alpha2", "1-alpha-123", "1-beta-2", "1-beta123", "1-m2", "1-m11",
                         "1-rc", "1-cr2", "1-rc123", "1-SNAPSHOT", "1", "1-sp", "1-sp2", "1-sp123", "1-abc", "1-def",
                         "1-pom-1", "1-1-snapshot", "1-1", "1-2", "1-123"]
MAVEN_NUMBER_ORDER = ["2.0", "2-1", "2.0.a", "2.0.0.a", "2.0.2", "2.0.123", "2.1.0", "2.1-a", "2.1b", "2.1-c",
                      "2.1-1", "2.1.0.1", "2.2", "2.123", "11.a2", "11.a11", "11.b2", "11.b11", "11.m2", "11.m11",
                      "11", "11.a", "11b", "11c", "11m"]
MAVEN_EQUAL = [("1", "1"), ("1", "1.0"), ("1", "1.0.0"), ("1.0", "1.0.0"), ("1", "1-0"), ("1", "1.0-0"),
               ("1.0", "1.0-0"), ("1a", "1-a"), ("1a", "1.0-a"), ("1a", "1.0.0-a"), ("1.0a", "1-a"), ("1.0.0a", "1-a"),
               ("1x", "1-x"), ("1x", "1.0-x"), ("1x", "1.0.0-x"), ("1.0x", "1-x"), ("1.0.0x", "1-x"), ("1ga", "1"),
               ("1release", "1"), ("1final", "1"), ("1cr", "1rc"), ("1a1", "1-alpha-1"), ("1b2", "1-beta-2"),
               ("1m3", "1-milestone-3"), ("1X", "1x"), ("1A", "1a"), ("1B", "1b"), ("1M", "1m"), ("1Ga", "1"),
               ("1GA", "1"), ("1RELEASE", "1"), ("1release", "1"), ("1RELeaSE", "1"), ("1Final", "1"),
               ("1FinaL", "1"), ("1FINAL", "1"), ("1Cr", "1Rc"), ("1cR", "1rC"), ("1m3", "1Milestone3"),
               ("1m3", "1MileStone3"), ("1m3", "1MILESTONE3"),
               ("1-abcdefghijklmnopqrstuvwxyz", "1-ABCDEFGHIJKLMNOPQRSTUVWXYZ")]
MAVEN_LESS = [("1", "2"), ("1.5", "2"), ("1", "2.5"), ("1.0", "1.1"), ("1.1", "1.2"), ("1.0.0", "1.1"), ("1.0.1", "1.1"),
              ("1.1", "1.2.0"), ("1.0-alpha-1", "1.0"), ("1.0-alpha-1", "1.0-alpha-2"), ("1.0-alpha-1", "1.0-beta-1"),
              ("1.0-beta-1", "1.0-SNAPSHOT"), ("1.0-SNAPSHOT", "1.0"), ("1.0-alpha-1-SNAPSHOT", "1.0-alpha-1"),
              ("1.0", "1.0-1"), ("1.0-1", "1.0-2"), ("1.0.0", "1.0-1"), ("2.0-1", "2.0.1"), ("2.0.1-klm", "2.0.1-lmn"),
              ("2.0.1", "2.0.1-xyz"), ("2.0.1", "2.0.1-123"), ("2.0.1-xyz", "2.0.1-123"),
              # MNG-5568
              ("6.1.0rc3", "6.1.0"), ("6.1.0rc3", "6.1H.5-beta"), ("6.1.0", "6.1H.5-beta"),
              # MNG-6572
              ("20190126.230843", "1234567890.12345"), ("1234567890.12345", "123456789012345.1H.5-beta"),
              ("20190126.230843", "123456789012345.1H.5-beta"),
              ("123456789012345.1H.5-beta", "12345678901234567890.1H.5-beta"),
              ("1234567890.12345", "12345678901234567890.1H.5-beta"),
              ("20190126.230843", "12345678901234567890.1H.5-beta"),
              # MNG-6964
              ("1-0.alpha", "1"), ("1-0.beta", "1"), ("1-0.alpha", "1-0.beta")]
MAVEN_LEADING_ZEROES = ["0" * n + "1" for n in range(19)], ["0" * n for n in range(1, 20)]

# --- maven-artifact 3.8.5 VersionRangeTest -----------------------------------------------
MAVEN_RANGE_CONTAINS = [("[1.0,)", "1.0-SNAPSHOT", False), ("[1.0,1.1-SNAPSHOT]", "1.1-SNAPSHOT", True),
                        ("[5.0.9.0,5.0.10.0)", "5.0.9.0", True), ("2.0.5", "2.0.5", True), ("2.0.4", "2.0.5", True),
                        ("[2.0.5]", "2.0.5", True), ("[2.0.6,)", "2.0.5", False), ("[2.0.6]", "2.0.5", False),
                        ("[2.0,2.1]", "2.0.5", True), ("[2.0,2.0.3]", "2.0.5", False), ("[2.0,2.0.5]", "2.0.5", True),
                        ("[2.0,2.0.5)", "2.0.5", False)]
MAVEN_RANGE_INVALID = ["(1.0)", "[1.0)", "(1.0]", "(1.0,1.0]", "[1.0,1.0)", "(1.0,1.0)", "[1.1,1.0]", "[1.0,1.2),1.3",
                       "[1.0,1.2),(1.1,1.3]", "[1.1,1.3),(1.0,1.2]", "(1.1,1.2],[1.0,1.1)"]
MAVEN_RESTRICT = [("[1.1,1.3]", "(1.1,)", ("1.1", False, "1.3", True)), ("(,1.3)", "[1.2,1.3]", ("1.2", True, "1.3", False)),
                  ("[1.1,1.3]", "[1.2,)", ("1.2", True, "1.3", True)), ("(,1.3]", "[1.2,1.4]", ("1.2", True, "1.3", True)),
                  ("(1.2,1.3]", "[1.1,1.4]", ("1.2", False, "1.3", True)),
                  ("(1.2,1.3)", "[1.1,1.4]", ("1.2", False, "1.3", False))]

# --- FlexVer test_vectors.txt (quilt-loader's order of non-semantic versions) -------------
FLEXVER = """10 > 2|100 > 10|1.0 < 1.1|1.0 < 1.0.1|1.1 > 1.0.1|1.5 > 1.5-pre1|1.5 = 1.5+foobar|1.5 < 1.5-2|
1.5-pre10 > 1.5-pre2|a-a < a|a+a = a|a0-a < a0=a|1.16.5-10 > 1.16.5|-a- > -a!|b1.7.3 > a1.2.6|b1.2.6 > a1.7.3|
a1.1.2 < a1.1.2_01|1.16.5-0.00.5 > 1.14.2-1.3.7|1.0.0 < 1.0.0_01|1.0.1 > 1.0.0_01|1.0.0_01 < 1.0.1|
0.17.1-beta.1 < 0.17.1|0.17.1-beta.1 < 0.17.1-beta.2|1.4.5_01 = 1.4.5_01+fabric-1.17|
1.4.5_01 = 1.4.5_01+fabric-1.17+ohgod|14w16a < 18w40b|18w40a < 18w40b|1.4.5_01+fabric-1.17 < 18w40b|
13w02a < c0.3.0_01|0.6.0-1.18.x < 0.9.beta-1.18.x|0000.0.0 = 0.0.0|0000.00.0 = 0.00.0|0.0.0 = 0.00.0000|
1.0.01 = 1.0.1|1.0.0001 = 1.0.01"""
QUILT_ORDER = [["1.0.0", "1.0.2", "1.2.0", "1.3.1", "1.4.0", "2.0.0", "5.1.2", "6.0.0"], ["1.0.0", "1.0.2+63fecff560"]]


@pytest.mark.parametrize(("text", "store_x"), FABRIC_PARSES)
def test_fabric_parses(text, store_x):
    assert vs.parse_semver(text, store_x) is not None


@pytest.mark.parametrize(("text", "store_x"), FABRIC_REJECTS)
def test_fabric_rejects(text, store_x):
    assert vs.parse_semver(text, store_x) is None


@pytest.mark.parametrize(("predicate", "accepted", "rejected"), FABRIC_PREDICATES)
def test_fabric_predicates(predicate, accepted, rejected):
    parsed = vs.fabric_set(predicate)
    assert [v for v in accepted if not parsed.contains(v)] == []
    assert [v for v in rejected if parsed.contains(v)] == []


def test_fabric_string_version_fallback():
    # VersionParser: not semantic -> StringVersion, compared as Java strings; a predicate on one
    # matches only itself, and exclusive operators on one are refused.
    assert vo.fabric_compare("1.0.0-beta.1+mc1.20", "1.0.0") < 0  # both semantic
    assert vo.fabric_compare("build 12", "build 9") < 0  # strings: '1' < '9'
    assert vo.fabric_compare("01.2", "1.2") == 0
    assert vs.fabric_set("abc").contains("abc") and not vs.fabric_set("abc").contains("abd")
    assert vs.fabric_set(">=abc").contains("abc")
    assert not vs.fabric_set(">=1.0").contains("abc")
    with pytest.raises(vs.PredicateError):
        vs.fabric_set(">abc")


def _check_order(compare, ordered):
    for low, high in itertools.combinations(ordered, 2):
        assert compare(low, high) < 0, (low, high)
        assert compare(high, low) > 0, (high, low)


@pytest.mark.parametrize("ordered", [MAVEN_QUALIFIER_ORDER, MAVEN_NUMBER_ORDER])
def test_maven_orders(ordered):
    _check_order(vo.maven_compare, ordered)
    for v in ordered:  # newComparable: the canonical form parses to itself
        assert vo.maven_canonical(vo.maven_canonical(v)) == vo.maven_canonical(v)


@pytest.mark.parametrize(("a", "b"), MAVEN_EQUAL)
def test_maven_equal(a, b):
    assert vo.maven_compare(a, b) == 0 and vo.maven_compare(b, a) == 0
    assert vo.maven_canonical(a) == vo.maven_canonical(b)


@pytest.mark.parametrize(("a", "b"), MAVEN_LESS)
def test_maven_less(a, b):
    _check_order(vo.maven_compare, [a, b])


@pytest.mark.parametrize("same", MAVEN_LEADING_ZEROES)
def test_maven_leading_zeroes(same):
    for a, b in itertools.combinations(same, 2):
        assert vo.maven_compare(a, b) == 0


@pytest.mark.parametrize(("spec", "version", "expected"), MAVEN_RANGE_CONTAINS)
def test_maven_range_contains(spec, version, expected):
    assert vs.parse_maven_range(spec).contains(version) is expected


@pytest.mark.parametrize("spec", MAVEN_RANGE_INVALID)
def test_maven_range_invalid(spec):
    with pytest.raises(vs.PredicateError):
        vs.parse_maven_range(spec)


@pytest.mark.parametrize(("a", "b", "expected"), MAVEN_RESTRICT)
def test_maven_range_restrict(a, b, expected):
    (only,) = vs.maven_set(a).intersect(vs.maven_set(b)).intervals
    assert (only.lower, only.lower_inclusive, only.upper, only.upper_inclusive) == expected


@pytest.mark.parametrize("line", [line.strip() for line in FLEXVER.split("|")])
def test_flexver_vectors(line):
    left, op, right = line.split(" ")
    expected = {"<": -1, "=": 0, ">": 1}[op]
    assert vo.flexver_compare(left, right) == expected
    assert vo.flexver_compare(right, left) == -expected
    if vs.parse_semver(left) is None or vs.parse_semver(right) is None:
        assert vo.quilt_compare(left, right) == expected  # quilt-loader uses FlexVer for these


@pytest.mark.parametrize("ordered", QUILT_ORDER)
def test_quilt_semantic_order(ordered):
    _check_order(vo.quilt_compare, ordered)


def test_quilt_specifiers_follow_quilt_loader():
    # readVersionSpecifier: bare = ^, and ~/^ bounds carry no pre-release
    assert vs.quilt_set("1.2").contains("1.9") and not vs.quilt_set("1.2").contains("2.0")
    assert vs.quilt_set("~1.2").contains("1.3-alpha.1") and not vs.quilt_set("~1.2").contains("1.3")
    assert vs.quilt_set("1.2.x").contains("1.2.9") and not vs.quilt_set("1.2.x").contains("1.3.0")
    assert vs.quilt_set({"all": [">=1.0", "<2.0"]}).contains("1.5")
    assert vs.quilt_set({"any": ["=1.0", "=3.0"]}).contains("3.0")
    with pytest.raises(vs.PredicateError):
        vs.quilt_set("~abc")


def test_hostile_predicates_are_bounded():
    with pytest.raises(vs.PredicateError):
        vs.fabric_set(">=1 " * 600)
    with pytest.raises(vs.PredicateError):
        vs.fabric_set_any(["1"] * 100)
    with pytest.raises(vs.PredicateError):
        vs.quilt_set({"any": [{"any": [{"any": [{"any": [{"any": [{"any": [{"any": [{"any": [{"any": ["1"]}]}]}]}]}]}]}]}]})
