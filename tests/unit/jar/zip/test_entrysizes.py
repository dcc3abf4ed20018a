"""Data-descriptor entry sizes: read from a central directory, packed for an event, unpacked by the scan."""

from __future__ import annotations

import io
import zipfile

import pytest

from indexium_devstack import jars as devjars
from indexium_jar.zip import entrysizes
from indexium_jar.zip.zipfmt import CentralDirectory, locate_eocd


def directory_of(data: bytes) -> CentralDirectory:
    info = locate_eocd(data, 0, len(data))
    return CentralDirectory(data[info.cd_offset : info.cd_offset + info.cd_size], base_offset=info.base_offset)


def test_descriptor_sizes_are_those_of_the_streamed_entries_only():
    entries = [(f"a/C{i}.class", bytes([i]) * (100 + i), i % 2 == 0) for i in range(40)]
    streamed = devjars.build_jar(entries, data_descriptors=True)
    expected = {i.header_offset: i.compress_size for i in zipfile.ZipFile(io.BytesIO(streamed)).infolist()
                if i.flag_bits & 0x8}
    assert expected and dict(directory_of(streamed).descriptor_sizes()) == expected
    assert directory_of(devjars.build_jar(entries)).descriptor_sizes() == []  # sizes in every local header


@pytest.mark.parametrize("pairs", [
    [(0, 10)],
    [(5000, 1), (0, 4900), (4950, 0)],  # any order, a zero size
    [(i * 97 + (i % 5), 60 + i % 13) for i in range(53_000)],  # many small classes
    [(10, 100), (40, 5)],  # a doctored directory: records overlapping each other
    [(1 << 40, 1 << 33), (3 << 40, 7)],  # zip64
])
def test_pack_round_trips(pairs):
    packed = entrysizes.pack(pairs)
    assert packed and entrysizes.unpack(packed) == dict(pairs)


def test_nothing_to_send_and_too_much_to_send_are_empty():
    assert entrysizes.pack([]) == b""
    many = [(i * 1000, (i * 7919) % 997) for i in range(20_000)]
    assert entrysizes.pack(many, limit=1000) == b""
    assert entrysizes.unpack(entrysizes.pack(many)) == dict(many)


@pytest.mark.parametrize("junk", [b"", b"\x02abc", b"\x01not zlib", b"\x01" + __import__("zlib").compress(b"x" * 17)])
def test_anything_else_unpacks_to_none(junk):
    assert entrysizes.unpack(junk) is None


def test_event_budget_keeps_the_first_that_fit():
    assert entrysizes.within_budget([b"a" * 6, b"b" * 6, b"c" * 3, b""], budget=10) == [b"a" * 6, b"", b"c" * 3, b""]


def test_unpacked_sizes_behave_as_a_dict_in_two_arrays():
    sizes = entrysizes.unpack(entrysizes.pack([(10, 1), (10, 2), (300, 7)]))
    assert sizes.get(10) == 2 and sizes[300] == 7 and sizes.get(11) is None and 11 not in sizes
    assert dict(sizes) == {10: 2, 300: 7} and len(sizes) == 2
    with pytest.raises(KeyError):
        sizes[0]


@pytest.mark.parametrize("asked", [
    [0, 10, 11, 300, 301],  # the walk's order, offsets without a size among them
    [10, 10, 300],  # the same offset twice
    [300, 10, 0, 10],  # out of order: searched
    [400, 5, 10],
])
def test_sizes_asked_in_order_answer_as_get(asked):
    sizes = entrysizes.unpack(entrysizes.pack([(10, 1), (10, 2), (12, 4), (300, 7), (301, 0)]))
    get = sizes.in_order()
    assert [get(o) for o in asked] == [sizes.get(o) for o in asked]


def test_offsets_out_of_order_are_refused():
    import struct
    import zlib
    # sizes (5, 5), then gaps: first offset 100, then -50 (the next at 55: before the first)
    raw = struct.pack("<4Q", 5, 5, 100, (-50) & ((1 << 64) - 1))
    assert entrysizes.unpack(b"\x01" + zlib.compress(raw)) is None
