"""Ping protocol v1: the allow-list, field by field (pure; no I/O)."""

import uuid

import msgspec
import pytest

from indexium_devstack import telemetry_samples as samples
from indexium_telemetry.protocol import MAX_MODS, InvalidPing, decode_ping, java_major

BAD_PINGS = [
    ("protocol", {"protocol": 2}),
    ("server_uuid", {"server_uuid": "not-a-uuid"}),
    ("server_uuid", {"server_uuid": "00000000-0000-0000-0000-000000000000"}),
    ("server_uuid", {"server_uuid": 12345}),
    ("mods", {"mods": []}),
    ("mods", {"mods": "sodium"}),
    ("mods", {"mods": [{"slug": "sodium"}] * (MAX_MODS + 1)}),
    ("mods[0]", {"mods": [{"version": "1.0"}]}),
    ("mods[0]", {"mods": [{"slug": "sodium", "mod_id": str(uuid.uuid4())}]}),
    ("mods[0]", {"mods": [{"slug": "sodium", "extra": 1}]}),
    ("mods[0].slug", {"mods": [{"slug": "Sodium!"}]}),
    ("mods[0].slug", {"mods": [{"slug": "s"}]}),
    ("mods[0].slug", {"mods": [{"slug": "a" * 65}]}),
    ("mods[0].mod_id", {"mods": [{"mod_id": "sodium"}]}),
    ("game_version", {"game_version": 1.2}),
    ("game_version", {"game_version": "1" * 65}),
    ("mods[0].version", {"mods": [{"slug": "sodium", "version": "x" * 257}]}),
    ("mods[0].version", {"mods": [{"slug": "sodium", "version": 5}]}),
    ("mods[0].manifest_id", {"mods": [{"manifest_id": "bad id!"}]}),
    ("mods[0].manifest_id", {"mods": [{"manifest_id": "a" * 65}]}),
    ("mods[0]", {"mods": [{"manifest_id": "sodium", "slug": "sodium"}]}),
    ("loader", {"loader": 1}),
    ("loader", {"loader": "f" * 65}),
    ("java_version", {"java_version": "9" * 65}),
    ("os", {"os": "L" * 65}),
    ("os", {"os": None}),
    ("arch", {"arch": ["amd64"]}),
    ("game_version", {"game_version": ...}),
    ("core_count", {"core_count": 0}),
    ("core_count", {"core_count": 1025}),
    ("core_count", {"core_count": "8"}),
    ("core_count", {"core_count": 8.0}),
    ("player_count", {"player_count": -1}),
    ("player_count", {"player_count": 100_001}),
    ("online_mode", {"online_mode": "yes"}),
    ("ip", {"ip": "203.0.113.5"}),
    ("hostname", {"hostname": "mc.example.org"}),
]


@pytest.mark.parametrize("field,change", BAD_PINGS, ids=[f"{f}-{i}" for i, (f, _) in enumerate(BAD_PINGS)])
def test_bad_pings_are_refused_naming_the_field(field, change):
    with pytest.raises(InvalidPing) as err:
        decode_ping(samples.encode(samples.ping(**change)))
    assert field in str(err.value)


@pytest.mark.parametrize("change", [
    {}, {"player_count": None, "online_mode": None}, {"player_count": ..., "online_mode": ...},
    {"loader": "neoforge", "os": "windows", "arch": "aarch64"},
    {"game_version": "24w14a"}, {"game_version": "1.21-pre1"}, {"java_version": "1.8.0_372"},
    {"mods": [{"slug": "sodium", "version": "mc1.20.1-0.5.3+build.12 beta"}]},
    {"mods": [{"mod_id": str(uuid.uuid4())}]},
    {"mods": [{"manifest_id": "sodium", "version": "0.5.8+mc1.20.1"}, {"manifest_id": "fabric-api"},
              {"manifest_id": "JourneyMap"}, {"manifest_id": "create_sa"}]},
    {"protocol": ...},
    {"mods": [{"slug": "sodium"}] * MAX_MODS},
])
def test_good_pings_decode(change):
    ping = decode_ping(samples.encode(samples.ping(**change)))
    assert ping.protocol == 1


@pytest.mark.parametrize("os_name,expected", [
    ("Linux", "linux"), ("linux", "linux"), ("Windows 11", "windows"), ("Windows Server 2022", "windows"),
    ("Mac OS X", "macos"), ("macOS", "macos"), ("Darwin", "macos"), ("FreeBSD", "freebsd"),
    ("SunOS", "other"), ("templeos", "other"), ("", "other")])
def test_os_as_the_jvm_reports_it_is_normalized(os_name, expected):
    assert decode_ping(samples.encode(samples.ping(os=os_name))).os == expected


@pytest.mark.parametrize("arch,expected", [
    ("amd64", "x86_64"), ("x86_64", "x86_64"), ("AMD64", "x86_64"), ("aarch64", "aarch64"),
    ("arm64", "aarch64"), ("i386", "x86"), ("arm", "arm"), ("riscv64", "riscv64"), ("sparcv9", "other"),
    ("ppc64le", "other")])
def test_arch_as_the_jvm_reports_it_is_normalized(arch, expected):
    assert decode_ping(samples.encode(samples.ping(arch=arch))).arch == expected


@pytest.mark.parametrize("loader,expected", [
    ("fabric", "fabric"), ("Fabric", "fabric"), ("QUILT", "quilt"), ("NeoForge", "neoforge"),
    ("forge", "forge"), ("bukkit", "other")])
def test_loader_case_and_unknown_loaders(loader, expected):
    assert decode_ping(samples.encode(samples.ping(loader=loader))).loader == expected


def test_a_real_linux_jvm_ping_without_protocol_is_accepted_as_v1():
    ping = decode_ping(samples.encode(samples.ping(protocol=..., os="Linux", arch="amd64",
                                                   java_version="17.0.9")))
    assert (ping.protocol, ping.os, ping.arch, java_major(ping.java_version)) == (1, "linux", "x86_64", "17")


def test_informational_strings_are_cleaned_not_refused():
    ping = decode_ping(samples.encode(samples.ping(game_version="1.20.1; DROP TABLE mods", mods=[
        {"slug": "sodium", "version": "1.0\n"}, {"slug": "jei", "version": "\u00e9"},
        {"slug": "iris", "version": "x" * 100}])))
    assert ping.game_version == "other"
    assert [m.version for m in ping.mods] == ["1.0", None, "x" * 64]
    assert java_major(decode_ping(samples.encode(samples.ping(java_version="java21"))).java_version) == "other"


def test_optional_fields_default_to_none():
    ping = decode_ping(samples.encode(samples.ping(player_count=..., online_mode=...)))
    assert ping.player_count is None and ping.online_mode is None


@pytest.mark.parametrize("body", [b"", b"   ", b"{", b"[]", b"null", b'"x"', b"\xff\xfe", b'{"protocol": 1,}'])
def test_malformed_json_is_refused(body):
    with pytest.raises(InvalidPing):
        decode_ping(body)


@pytest.mark.parametrize("given,major", [
    ("1.8.0_372", "8"), ("1.7", "7"), ("17.0.2", "17"), ("21", "21"), ("21.0.2+13-LTS", "21"),
    ("22-ea", "22")])
def test_java_major(given, major):
    assert java_major(given) == major


def test_the_ping_struct_forbids_unknown_fields_and_its_schema_is_exportable():
    from indexium_telemetry.protocol import PingV1
    schema = msgspec.json.schema(PingV1)
    props = schema["$defs"]["PingV1"]["properties"]
    assert set(props["mods"]["items"]["$ref"] and schema["$defs"]["ModEntry"]["properties"]) == {
        "slug", "mod_id", "manifest_id", "version"}
    assert set(props) == {"protocol", "server_uuid", "mods", "game_version", "loader", "java_version",
                          "os", "arch", "core_count", "player_count", "online_mode"}


def _strict_error(body: bytes) -> str:
    from indexium_telemetry.protocol import PingV1
    try:
        msgspec.json.decode(body, type=PingV1)
    except msgspec.ValidationError as exc:
        return f"Invalid ping: {exc}"
    raise AssertionError("PingV1 accepted it")


@pytest.mark.parametrize("mods,extra", [
    # A bad slug after good ones (the good ones are remembered as valid by then).
    ([{"slug": "sodium"}, {"slug": "jei"}, {"slug": "Bad Slug"}], {}),
    ([{"slug": "sodium"}] * 5 + [{"slug": "x"}], {}),
    # A bad slug before a bad number: the first refused in the document is named, as before.
    ([{"slug": "sodium"}, {"slug": "NOPE"}], {"core_count": 0}),
    # A bad slug before an entry naming two ids, and before a nil server uuid.
    ([{"slug": "ok-mod"}, {"slug": "-bad"}, {"slug": "sodium", "mod_id": str(uuid.uuid4())}], {}),
    ([{"slug": "s" * 65}], {"server_uuid": "00000000-0000-0000-0000-000000000000"}),
])
def test_slugs_checked_after_decoding_are_refused_as_a_strict_decode_refuses_them(mods, extra):
    body = samples.encode(samples.ping(mods=mods, **extra))
    decode_ping(samples.encode(samples.ping(mods=[{"slug": "sodium"}, {"slug": "jei"}])))  # remembered
    with pytest.raises(InvalidPing) as err:
        decode_ping(body)
    assert str(err.value) == _strict_error(body)
    assert "slug" in str(err.value)


def test_a_slug_refused_once_is_refused_every_time_and_a_valid_one_always_passes():
    bad = samples.encode(samples.ping(mods=[{"slug": "UPPER"}]))
    good = samples.encode(samples.ping(mods=[{"slug": "upper"}]))
    for _ in range(3):
        with pytest.raises(InvalidPing):
            decode_ping(bad)
        assert [m.slug for m in decode_ping(good).mods] == ["upper"]


def test_a_decoded_ping_is_a_ping_v1_of_mod_entries():
    from indexium_telemetry.protocol import ModEntry, PingV1
    ping = decode_ping(samples.encode(samples.ping(mods=[{"slug": "sodium", "version": "1.0\n"}])))
    assert isinstance(ping, PingV1) and all(isinstance(m, ModEntry) for m in ping.mods)
    assert ping.mods[0].slug == "sodium" and ping.mods[0].version == "1.0"


def test_refusals_keep_their_order_a_slug_anywhere_then_the_nil_uuid_then_an_entry_naming_two_ids():
    two_ids = {"slug": "sodium", "mod_id": str(uuid.uuid4())}
    nil = "00000000-0000-0000-0000-000000000000"
    body = samples.encode(samples.ping(mods=[two_ids, {"slug": "jei"}, {"slug": "Bad Slug"}]))
    with pytest.raises(InvalidPing, match="slug") as err:
        decode_ping(body)
    assert str(err.value) == _strict_error(body)
    with pytest.raises(InvalidPing, match="nil UUID"):
        decode_ping(samples.encode(samples.ping(server_uuid=nil, mods=[{"slug": "jei"}, two_ids])))
    with pytest.raises(InvalidPing, match=r"exactly one .* at `\$\.mods\[1\]`"):
        decode_ping(samples.encode(samples.ping(mods=[{"slug": "jei"}, two_ids, {"mod_id": str(uuid.uuid4()),
                                                                               "manifest_id": "x"}])))
    with pytest.raises(InvalidPing, match=r"exactly one .* at `\$\.mods\[0\]`"):
        decode_ping(samples.encode(samples.ping(mods=[{"version": "1.0"}, {"slug": "jei"}])))


def test_a_version_is_cleaned_every_time_and_a_clean_one_remembered_is_kept_as_sent():
    for _ in range(3):
        ping = decode_ping(samples.encode(samples.ping(mods=[
            {"slug": "sodium", "version": "1.0.0"}, {"slug": "jei", "version": " 1.0.0\t"},
            {"slug": "iris", "version": "1.0.0"}])))
        assert [m.version for m in ping.mods] == ["1.0.0", "1.0.0", "1.0.0"]


@pytest.mark.parametrize("sent,kept", [(" 1.20.1 ", "1.20.1"), ("24w14a", "24w14a"), ("1.20.1; DROP", "other")])
def test_a_game_version_seen_before_is_kept_as_it_was_the_first_time(sent, kept):
    for _ in range(3):  # the first decode normalizes it; later ones find it remembered
        assert decode_ping(samples.encode(samples.ping(game_version=sent))).game_version == kept


def test_remembered_values_are_bounded_lru_caches_that_answer_as_the_functions_do():
    """Slug checks, shown versions and the four spellings are remembered by functools.lru_cache
    (not sets and dicts of our own), each within its bound: a ping stream of made-up values
    evicts old entries instead of growing the caches, and a remembered answer is the same as
    a fresh one."""
    from indexium_telemetry import protocol

    caches = {protocol._slug_valid: 100_000, protocol._shown_version: 100_000,
              protocol._os_spelling: 256, protocol._arch_spelling: 256,
              protocol._loader_spelling: 256, protocol._game_version_spelling: 256}
    for cache, bound in caches.items():
        assert cache.cache_info().maxsize == bound
    for i in range(300):  # more made-up spellings than the bound
        decode_ping(samples.encode(samples.ping(os=f"Plan{i}", arch=f"cpu{i}", loader=f"ldr{i}",
                                                game_version=f"9.{i}")))
    for cache in (protocol._os_spelling, protocol._arch_spelling, protocol._loader_spelling,
                  protocol._game_version_spelling):
        assert cache.cache_info().currsize <= 256
    dirty = {"mods": [{"slug": "sodium", "version": " 1.0\x07 "}], "os": "Windows 11"}
    first, again = (decode_ping(samples.encode(samples.ping(**dirty))) for _ in range(2))
    assert first.mods[0].version == again.mods[0].version == "1.0"
    assert first.os == again.os == "windows"
    assert protocol._shown_version.cache_info().hits >= 1
