"""Reading one jar's metadata: how many requests each layout costs, and what is read.

The jars are built in the test; ``MemorySource`` counts requests exactly as HTTP would
(without the redirect hop, which ``read_metadata`` does not count either).
"""

from __future__ import annotations

import io
import os
import zipfile
import warnings

import pytest

from indexium_devstack import jars
from indexium_jar.http.remote import DownloadPolicy, MemorySource, RemoteJar
from indexium_jar.metadata import icon_guesses, read_source

POLICY = DownloadPolicy(allowed_hosts=frozenset())
MF = jars.manifest({"Implementation-Version": "3.2.1", "Fabric-Minecraft-Version": "1.20.1"})
PNG = jars.png_icon(64)
TOML = (b'modLoader="javafml"\nloaderVersion="[47,)"\nlicense="MIT"\n[[mods]]\nmodId="walljump"\n'
        b'version="${file.jarVersion}"\nlogoFile="logo.png"\n[[dependencies.walljump]]\nmodId="minecraft"\n'
        b'mandatory=true\nversionRange="[1.20.1,1.21)"\n')
FABRIC = b'{"schemaVersion":1,"id":"walljump","version":"1.0","icon":"assets/walljump/icon.png"%s}'
WITH_MC = FABRIC % b',"depends":{"minecraft":"1.20.1"}'
NO_MC = FABRIC % b""


def blob(n: int, name: str = "big.bin"):
    return (name, os.urandom(n), False)


def classes(n: int, tag: str):
    return [(f"com/example/{tag}/C{i:05d}.class", os.urandom(60), False) for i in range(n)]


async def read(entries):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        data = jars.build_jar(entries)
    source = MemorySource(data)
    md = await read_source(source, POLICY)
    assert md.requests == source.stats.requests
    # the read's byte budget: within 1.2 x (tail + directory + the entries that were needed)
    assert md.bytes_fetched <= 1.2 * md.needed_bytes
    return md


async def test_small_jar_is_one_request():
    md = await read([("META-INF/MANIFEST.MF", MF), ("fabric.mod.json", WITH_MC), ("assets/walljump/icon.png", PNG, False)])
    assert md.requests == 1 and md.icon is not None and md.records[0].mod_id == "walljump"


async def test_manifest_icon_and_manifest_mf_together_away_from_the_tail_are_one_more_request():
    md = await read([("META-INF/MANIFEST.MF", MF), ("fabric.mod.json", NO_MC), ("assets/walljump/icon.png", PNG, False),
                     blob(2_000_000)])
    assert md.requests == 2 and md.icon == ("image/png", PNG)
    assert md.records[0].game_versions.versions == ("1.20.1",)  # MANIFEST.MF came along, for free


async def test_manifest_mf_is_not_fetched_when_no_parser_needs_it():
    md = await read([("META-INF/MANIFEST.MF", MF), blob(2_000_000, "a.bin"), ("fabric.mod.json", WITH_MC),
                     ("assets/walljump/icon.png", PNG, False), blob(1_000_000, "b.bin")])
    assert md.requests == 2 and md.icon is not None
    assert md.bytes_fetched < 80_000  # tail + the manifest's neighbourhood, never offset 0


async def test_manifest_mf_far_away_is_read_when_a_parser_needs_it():
    md = await read([("META-INF/MANIFEST.MF", MF), blob(2_000_000, "a.bin"), ("META-INF/mods.toml", TOML),
                     ("logo.png", PNG, False), blob(1_000_000, "b.bin")])
    assert md.requests == 3 and md.records[0].version == "3.2.1" and md.icon is not None


async def test_a_far_icon_is_read_while_within_three_requests():
    md = await read([("META-INF/MANIFEST.MF", MF), ("assets/walljump/icon.png", PNG, False), blob(2_000_000, "a.bin"),
                     ("fabric.mod.json", WITH_MC), blob(1_000_000, "b.bin")])
    assert md.requests == 3 and md.icon is not None


async def test_the_icon_is_given_up_rather_than_a_fourth_request():
    md = await read([("META-INF/MANIFEST.MF", MF), blob(2_000_000, "a.bin"), ("META-INF/mods.toml", TOML),
                     blob(1_000_000, "b.bin"), ("logo.png", PNG, False), blob(100_000, "c.bin")])
    assert md.requests == 3 and md.records[0].version == "3.2.1"
    assert md.icon is None and any("logo.png" in w and "requests" in w for w in md.warnings)


async def test_large_directory_with_the_manifest_written_last_is_two_requests():
    md = await read([("META-INF/MANIFEST.MF", MF), *classes(3000, "a"), ("fabric.mod.json", WITH_MC),
                     ("assets/walljump/icon.png", PNG, False)])
    assert md.requests == 2 and md.icon is not None


async def test_large_directory_with_the_manifest_first_is_three_requests():
    md = await read([("META-INF/MANIFEST.MF", MF), ("fabric.mod.json", WITH_MC), ("assets/walljump/icon.png", PNG, False),
                     *classes(3000, "a")])
    assert md.requests == 3 and md.icon is not None


@pytest.mark.parametrize("builder", [jars.fabric_jar, jars.quilt_jar, jars.forge_jar, jars.neoforge_jar,
                                     jars.mcmod_jar, jars.multiloader_jar])
@pytest.mark.parametrize("pad", [0, 3_000_000])
async def test_sample_jars_of_every_loader(builder, pad):
    data = builder("samplemod", "1.2.0", pad_bytes=pad)
    md = await read_source(MemorySource(data), POLICY)
    assert md.records and md.icon is not None and md.requests <= 2
    assert md.bytes_fetched <= 1.2 * md.needed_bytes


async def test_a_jar_without_manifest_says_why():
    lib = jars.manifest({"FMLModType": "GAMELIBRARY"})
    md = await read([("META-INF/MANIFEST.MF", lib), blob(200_000), *classes(10, "x")])
    assert md.records == [] and md.problems[0].code == "library"


def test_icon_guesses():
    data = jars.build_jar([("pack.png", PNG, False), ("assets/m/icon.png", PNG, False), ("assets/m/textures/stone.png", PNG),
                           ("logo.png", PNG), ("mod_logo.png", PNG), ("huge_icon.png", os.urandom(300_000), False)])
    import asyncio

    jar = asyncio.run(RemoteJar.from_source(MemorySource(data), POLICY))
    assert icon_guesses(jar.entries) == ["logo.png", "mod_logo.png", "pack.png", "assets/m/icon.png"]


from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from indexium_jar.errors import JarReadError  # noqa: E402

_SAMPLE = jars.fabric_jar("damaged", "1.0", extra_entries=30)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.integers(0, len(_SAMPLE) - 1), st.binary(min_size=1, max_size=8)), min_size=1, max_size=4),
       st.integers(0, len(_SAMPLE)))
def test_a_damaged_jar_ends_as_a_record_or_a_typed_error_in_bounded_memory(patches, cut):
    import asyncio
    import tracemalloc

    data = bytearray(_SAMPLE[: max(cut, 22)])
    for at, raw in patches:
        data[at % len(data) : at % len(data) + len(raw)] = raw
    tracemalloc.start()
    try:
        try:
            md = asyncio.run(read_source(MemorySource(bytes(data)), POLICY))
        except JarReadError:
            pass
        else:
            assert isinstance(md.records, list)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 8 * 1024 * 1024


async def test_entry_sizes_are_packed_only_when_asked_for():
    from indexium_jar.zip import entrysizes

    data = jars.fabric_jar("streamed", extra_entries=50, data_descriptors=True)
    probe = await read_source(MemorySource(data), POLICY)
    indexed = await read_source(MemorySource(data), POLICY, with_entry_sizes=True)
    assert probe.entry_sizes == b"" and probe.records == indexed.records
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        expected = {zi.header_offset: zi.compress_size for zi in zf.infolist() if zi.flag_bits & 0x08}
    sizes = entrysizes.unpack(indexed.entry_sizes)
    assert expected and sizes is not None and {o: sizes[o] for o in expected} == expected
    assert all(o in expected for o in sizes)


async def test_reach_brackets_the_missing_manifest_bytes_and_is_none_once_they_are_held():
    """RemoteJar.reach: where an icon-like file must lie to ride along with the manifests'
    request (the icon search looks only there), None when no request is left to ride on."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        data = jars.build_jar([("fabric.mod.json", WITH_MC), ("assets/walljump/icon.png", PNG, False),
                               *classes(3000, "a"), blob(2_000_000)])
    jar = await RemoteJar.from_source(MemorySource(data), POLICY)
    manifest = jar.entry("fabric.mod.json")
    lo, hi = jar.reach(["fabric.mod.json"])
    assert lo <= manifest.local_header_offset < manifest.local_header_offset + manifest.compressed_size <= hi
    assert hi < len(data) // 2  # nowhere near the whole file
    await jar.read(["fabric.mod.json"])
    assert jar.reach(["fabric.mod.json"]) is None
