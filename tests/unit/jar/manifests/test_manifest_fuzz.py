"""No parser raises, whatever the bytes: bad input is a ManifestProblem, never an exception."""

from hypothesis import given, settings
from hypothesis import strategies as st
from indexium_jar.manifests import WANTED_NAMES, parse_jar
from indexium_jar.model import ParseResult

SEEDS = [
    b'{"schemaVersion":1,"id":"abc","version":"1","depends":{"minecraft":">=1.20"}}',
    b'[[mods]]\nmodId="abc"\nversion="1"\n[[dependencies.abc]]\nmodId="minecraft"\nversionRange="[1.20,)"\n',
    b'{"schema_version":1,"quilt_loader":{"id":"abc","version":"1"}}',
    b"name: P\nversion: 1.20\nmain: M\n",
    b'[{"modid":"abc","version":"1","mcversion":"1.12.2"}]',
]


@settings(max_examples=150, deadline=None)
@given(
    name=st.sampled_from(sorted(WANTED_NAMES)),
    seed=st.sampled_from(SEEDS),
    cut=st.integers(min_value=0, max_value=120),
    noise=st.binary(max_size=40),
)
def test_parsers_never_raise(name, seed, cut, noise):
    data = seed[:cut] + noise + seed[cut:]
    result = parse_jar({name: data}, [name])
    assert isinstance(result, ParseResult)
    assert all(p.code != "parser_error" for p in result.problems), result.problems


@settings(max_examples=100, deadline=None)
@given(
    predicate=st.one_of(
        st.text(alphabet="<>=~^*x.-0123456789 abw", max_size=20),
        st.lists(st.text(alphabet="<>=.0123456789", max_size=8), max_size=3),
    )
)
def test_fabric_dependency_predicates_never_raise(predicate):
    import json

    data = json.dumps({"schemaVersion": 1, "id": "abc", "version": "1", "depends": {"minecraft": predicate}}).encode()
    result = parse_jar({"fabric.mod.json": data})
    assert all(p.code != "parser_error" for p in result.problems), result.problems


@settings(max_examples=100, deadline=None)
@given(range_text=st.text(alphabet="[](),.0123456789 ab-", max_size=20))
def test_maven_ranges_never_raise(range_text):
    data = ('license="MIT"\n[[mods]]\nmodId="abc"\nversion="1"\n[[dependencies.abc]]\nmodId="minecraft"\n'
            'versionRange="%s"\n' % range_text).encode()
    result = parse_jar({"META-INF/mods.toml": data})
    assert all(p.code != "parser_error" for p in result.problems), result.problems


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)
FIELDS = ["id", "version", "name", "description", "authors", "contributors", "contact", "license", "icon",
          "environment", "depends", "recommends", "breaks", "jars", "links", "side", "requires", "quilt_loader",
          "metadata", "minecraft", "dependencies", "modid", "mcversion", "authorList", "requiredMods", "modList"]


@settings(max_examples=150, deadline=None)
@given(
    name=st.sampled_from(["fabric.mod.json", "quilt.mod.json", "quilt.mod.json5", "mcmod.info", "velocity-plugin.json",
                          "litemod.json", "META-INF/jarjar/metadata.json"]),
    fields=st.dictionaries(st.sampled_from(FIELDS), JSON_VALUES, max_size=8),
    schema=st.sampled_from([{}, {"schemaVersion": 1}, {"schema_version": 1}]),
)
def test_json_manifests_with_wrongly_typed_fields_never_raise(name, fields, schema):
    import json

    doc = {**schema, **fields}
    if name == "quilt.mod.json" and isinstance(fields.get("quilt_loader"), dict):
        doc["quilt_loader"] = {"id": "abc", "version": "1", **fields["quilt_loader"]}
    result = parse_jar({name: json.dumps(doc).encode(), "META-INF/neoforge.mods.toml": b'[[mods]]\nmodId="abc"\n'})
    assert all(p.code != "parser_error" for p in result.problems), result.problems
