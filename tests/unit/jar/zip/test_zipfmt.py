"""The pure ZIP layer against archives built here: by zipfile, or byte by byte when
zipfile cannot produce the layout (different local/central extras, flags, methods)."""

from __future__ import annotations

import contextlib
import io
import os
import re
import struct
import tracemalloc
import warnings
import zipfile
import zlib
from dataclasses import dataclass

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from indexium_jar.errors import (
    CorruptZip,
    CrcMismatch,
    EncryptedEntry,
    EntryTooLarge,
    JarReadError,
    NeedMoreBytes,
    UnsupportedCompression,
)
from indexium_jar.manifests import WANTED_NAMES
from indexium_jar.zip.records import CENTRAL_SIG
from indexium_jar.zip.zipfmt import (
    INDEXED_NAME_BYTES,
    CentralDirectory,
    extract_prefix,
    scan_directory_suffix,
    MAX_EOCD_DISTANCE,
    CentralDirectoryInfo,
    ZipEntry,
    extract,
    local_data_span,
    locate_eocd,
    parse_central_directory,
)

MiB = 1024 * 1024

# --- building archives ----------------------------------------------------------------------


class _NoSeek(io.RawIOBase):
    """A write-only stream; zipfile then writes data descriptors (flag bit 3)."""

    def __init__(self) -> None:
        self.buf = bytearray()

    def writable(self) -> bool:
        return True

    def write(self, b) -> int:
        self.buf += b
        return len(b)


def zip_bytes(
    files: list[tuple[str, bytes, int]],
    *,
    comment: bytes = b"",
    descriptors: bool = False,
    force_zip64: bool = False,
) -> bytes:
    out = _NoSeek() if descriptors else io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # duplicate names are intended
        with zipfile.ZipFile(out, "w") as zf:
            for name, data, method in files:
                info = zipfile.ZipInfo(name, date_time=(2024, 1, 1, 0, 0, 0))
                info.compress_type = method
                with zf.open(info, "w", force_zip64=force_zip64) as fh:
                    fh.write(data)
            zf.comment = comment
    return bytes(out.buf) if descriptors else out.getvalue()


@dataclass
class Raw:
    name: bytes
    data: bytes
    method: int = 8
    flags: int = 0
    local_extra: bytes = b""
    central_extra: bytes = b""
    crc: int | None = None  # declared CRC; None = correct
    descriptor: bool = False  # zero sizes in the local header + a data descriptor


def raw_zip(entries: list[Raw], comment: bytes = b"") -> bytes:
    """A hand-made archive: lets local and central headers disagree as real jars do."""
    out = bytearray()
    central = bytearray()
    for e in entries:
        if e.method == 8:
            c = zlib.compressobj(9, zlib.DEFLATED, -15)
            payload = c.compress(e.data) + c.flush()
        else:
            payload = e.data
        crc = zlib.crc32(e.data) if e.crc is None else e.crc
        flags = e.flags | (0x08 if e.descriptor else 0)
        offset = len(out)
        lsizes = (0, 0, 0) if e.descriptor else (crc, len(payload), len(e.data))
        out += struct.pack(
            "<IHHHHHIIIHH",
            0x04034B50,
            20,
            flags,
            e.method,
            0,
            0x5821,
            *lsizes,
            len(e.name),
            len(e.local_extra),
        )
        out += e.name + e.local_extra + payload
        if e.descriptor:
            out += struct.pack("<IIII", 0x08074B50, crc, len(payload), len(e.data))
        central += struct.pack(
            "<IHHHHHHIIIHHHHHII", 0x02014B50, 20, 20, flags, e.method, 0, 0x5821, crc, len(payload),
            len(e.data), len(e.name), len(e.central_extra), 0, 0, 0, 0, offset,
        )  # fmt: skip
        central += e.name + e.central_extra
    cd_offset = len(out)
    out += central
    out += struct.pack(
        "<IHHHHIIH", 0x06054B50, 0, 0, len(entries), len(entries), len(central), cd_offset, len(comment)
    )
    return bytes(out + comment)


def to_zip64(data: bytes) -> bytes:
    """Rewrite a comment-free archive the way a zip64 writer lays it out: every size and
    offset in the central directory as 0xFFFFFFFF plus a 0x0001 extra, and the end
    record replaced by zip64 record + locator + sentinel-filled classic record."""
    eocd = len(data) - 22
    _sig, _d, _c, _n, count, _cd_size, cd_offset, comment_len = struct.unpack_from("<IHHHHIIH", data, eocd)
    assert comment_len == 0
    cd = bytearray()
    pos = cd_offset
    for _ in range(count):
        fields = list(struct.unpack_from("<IHHHHHHIIIHHHHHII", data, pos))
        nlen, elen, clen = fields[10], fields[11], fields[12]
        name = data[pos + 46 : pos + 46 + nlen]
        extra = data[pos + 46 + nlen : pos + 46 + nlen + elen]
        comment = data[pos + 46 + nlen + elen : pos + 46 + nlen + elen + clen]
        z64 = struct.pack("<HHQQQ", 1, 24, fields[9], fields[8], fields[16])
        fields[8] = fields[9] = fields[16] = 0xFFFFFFFF
        fields[11] = elen + len(z64)
        cd += struct.pack("<IHHHHHHIIIHHHHHII", *fields) + name + extra + z64 + comment
        pos += 46 + nlen + elen + clen
    out = bytearray(data[:cd_offset]) + cd
    z64_at = len(out)
    out += struct.pack("<IQHHIIQQQQ", 0x06064B50, 44, 45, 45, 0, 0, count, count, len(cd), cd_offset)
    out += struct.pack("<IIQI", 0x07064B50, 0, z64_at, 1)
    out += struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, 0xFFFF, 0xFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 0)
    return bytes(out)


def read_all(data: bytes, max_size: int = MiB) -> list[tuple[ZipEntry, bytes]]:
    """The whole pure pipeline over a file held in memory."""
    info = locate_eocd(data, 0, len(data))
    cd = data[info.cd_offset : info.cd_offset + info.cd_size]
    entries = parse_central_directory(cd, info.entry_count, base_offset=info.base_offset)
    return [(e, extract(e, data, 0, max_size)) for e in entries]


def zipfile_read_all(data: bytes) -> list[tuple[str, bytes]]:
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        return [(i.filename, zf.read(i)) for i in zf.infolist()]


def entry(data: bytes, name: str) -> ZipEntry:
    info = locate_eocd(data, 0, len(data))
    cd = data[info.cd_offset : info.cd_offset + info.cd_size]
    return next(e for e in parse_central_directory(cd, info.entry_count) if e.name == name)


MANIFEST = b"Manifest-Version: 1.0\r\nImplementation-Version: 1.2.3\r\n" * 20
DEFLATED, STORED = zipfile.ZIP_DEFLATED, zipfile.ZIP_STORED


# --- examples -------------------------------------------------------------------------------


@pytest.mark.parametrize("descriptors", [False, True])
def test_stored_and_deflated_entries_match_zipfile(descriptors):
    data = zip_bytes(
        [
            ("META-INF/MANIFEST.MF", MANIFEST, DEFLATED),
            ("a/b.bin", os.urandom(3000), STORED),
            ("empty", b"", DEFLATED),
            ("dir/", b"", STORED),
        ],
        descriptors=descriptors,
    )
    got = read_all(data)
    assert [(e.name, d) for e, d in got] == zipfile_read_all(data)
    assert all(bool(e.flags & 0x08) == descriptors for e, _ in got)
    assert got[3][0].is_dir and not got[0][0].is_dir


def test_data_descriptors_leave_zero_sizes_in_the_local_header():
    data = zip_bytes([("fabric.mod.json", b'{"id":"x"}' * 50, DEFLATED)], descriptors=True)
    assert struct.unpack_from("<III", data, 14) == (0, 0, 0)
    [(e, body)] = read_all(data)
    assert body == b'{"id":"x"}' * 50 and e.compressed_size > 0


@pytest.mark.parametrize("comment_len", [0, 1, 126, 65_535])
def test_archive_comment_up_to_the_maximum(comment_len):
    comment = (b"fcsig:PK\x05\x06" * 7000)[:comment_len]
    data = zip_bytes([("a", b"x", DEFLATED)], comment=comment)
    tail_offset = max(0, len(data) - MAX_EOCD_DISTANCE)
    info = locate_eocd(data[tail_offset:], tail_offset, len(data))
    assert info.comment == comment and info.entry_count == 1
    assert read_all(data)[0][1] == b"x"


def test_fake_end_record_inside_the_comment_is_not_taken():
    # A complete, length-consistent end record at the very end of the comment, whose
    # central directory points at bytes that are not a central header.
    body = zip_bytes([("a", b"hello", STORED)])
    fake = struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, 1, 1, 10, 0, 0)
    data = zip_bytes([("a", b"hello", STORED)], comment=b"padding" + fake)
    info = locate_eocd(data, 0, len(data))
    assert info.cd_size == locate_eocd(body, 0, len(body)).cd_size
    assert read_all(data)[0][1] == b"hello"


def test_bytes_appended_after_the_archive_are_tolerated_when_the_directory_checks_out():
    data = zip_bytes([("a", b"hello", DEFLATED)]) + b"\0" * 100
    assert read_all(data)[0][1] == b"hello"


def test_prepended_stub_shifts_every_offset():
    stub = b"#!/bin/sh\nexec java -jar $0\n"
    data = stub + zip_bytes([("a", b"hello", DEFLATED), ("b", b"world", STORED)])
    info = locate_eocd(data, 0, len(data))
    assert info.base_offset == len(stub)
    assert [(e.name, d) for e, d in read_all(data)] == zipfile_read_all(data)


def test_entry_more_than_64k_from_the_end_needs_its_own_range():
    data = zip_bytes([("META-INF/MANIFEST.MF", MANIFEST, DEFLATED), ("big.bin", os.urandom(200_000), STORED)])
    tail_offset = len(data) - 70_000
    tail = data[tail_offset:]
    info = locate_eocd(tail, tail_offset, len(data))
    cd = tail[info.cd_offset - tail_offset : info.cd_offset - tail_offset + info.cd_size]
    manifest = parse_central_directory(cd, info.entry_count)[0]
    with pytest.raises(NeedMoreBytes) as need:
        extract(manifest, tail, tail_offset, MiB)
    start, end = need.value.start, need.value.end
    assert (start, end) == local_data_span(manifest)
    assert extract(manifest, data[start:end], start, MiB) == MANIFEST


def test_local_extra_differs_from_central_extra():
    timestamp = struct.pack("<HHBI", 0x5455, 5, 1, 1_700_000_000)
    data = raw_zip(
        [
            Raw(b"META-INF/mods.toml", b"modLoader='javafml'\n" * 30, local_extra=timestamp),
            Raw(b"b", b"bb", central_extra=timestamp),
        ]
    )
    assert [(e.name, d) for e, d in read_all(data)] == zipfile_read_all(data)
    manifest = entry(data, "META-INF/mods.toml")
    start, end = local_data_span(manifest)  # 1 KiB margin covers a 9-byte difference
    assert extract(manifest, data[start:end], start, MiB) == b"modLoader='javafml'\n" * 30


def test_local_extra_longer_than_the_margin_asks_for_the_exact_range():
    big_extra = struct.pack("<HH", 0xCAFE, 3000) + b"\0" * 3000
    data = raw_zip([Raw(b"plugin.yml", b"name: X\n" * 10, local_extra=big_extra, descriptor=True)])
    e = entry(data, "plugin.yml")
    start, end = local_data_span(e)
    with pytest.raises(NeedMoreBytes) as need:
        extract(e, data[start:end], start, MiB)
    assert need.value.start == 0 and need.value.end == 30 + 10 + len(big_extra) + e.compressed_size
    assert extract(e, data[: need.value.end], 0, MiB) == b"name: X\n" * 10


def test_duplicate_names_are_kept_in_order():
    data = zip_bytes(
        [
            ("META-INF/MANIFEST.MF", b"first", STORED),
            ("x", b"", STORED),
            ("META-INF/MANIFEST.MF", b"second", DEFLATED),
        ]
    )
    got = read_all(data)
    assert [(e.name, d) for e, d in got] == [
        ("META-INF/MANIFEST.MF", b"first"),
        ("x", b""),
        ("META-INF/MANIFEST.MF", b"second"),
    ]


def directory_of(data: bytes) -> CentralDirectory:
    info = locate_eocd(data, 0, len(data))
    return CentralDirectory(data[info.cd_offset : info.cd_offset + info.cd_size], base_offset=info.base_offset)


def test_directory_lookup_takes_the_last_duplicate_as_java_does():
    data = zip_bytes([("META-INF/MANIFEST.MF", b"first", STORED), ("x", b"", STORED),
                      ("META-INF/MANIFEST.MF", b"second", DEFLATED)])
    directory = directory_of(data)
    found = directory.entry("META-INF/MANIFEST.MF")
    assert found == directory.entries()[2] and extract(found, data, 0, MiB) == b"second"
    assert len(directory) == 3 and list(directory) == ["META-INF/MANIFEST.MF", "x", "META-INF/MANIFEST.MF"]
    assert directory.entry("META-INF/MANIFEST") is None and "MANIFEST.MF" not in directory


def test_a_record_hidden_in_another_records_extra_field_is_not_an_entry():
    name = b"fabric.mod.json"
    fake = struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 20, 20, 0, 0, 0, 0, 0, 3, 3, len(name), 0, 0, 0, 0, 0, 0)
    data = raw_zip([Raw(b"a.txt", b"x", central_extra=fake + name + b"logo.png"),
                    Raw(b"META-INF/jars/real.jar", b"j")])
    directory = directory_of(data)
    assert [e.name for e in directory.entries()] == ["a.txt", "META-INF/jars/real.jar"]
    assert directory.entry("fabric.mod.json") is None and "fabric.mod.json" not in directory
    assert directory.with_prefix("fabric") == [] and directory.search(re.compile(rb"logo\.png")) == []
    assert [e.name for e in directory.with_prefix("META-INF/jar")] == ["META-INF/jars/real.jar"]


def test_a_long_name_hidden_in_an_extra_field_is_not_an_entry():
    name = b"assets/examplemod/textures/gui/icon.png"  # longer than INDEXED_NAME_BYTES: searched for
    assert len(name) > INDEXED_NAME_BYTES
    fake = struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 20, 20, 0, 0, 0, 0, 0, 3, 3, len(name), 0, 0, 0, 0, 0, 0)
    # The hidden record comes last, where a search from the end meets it first.
    data = raw_zip([Raw(name + b".bak", b"z"), Raw(b"x/" + name, b"w"), Raw(b"b.txt", b"y", central_extra=b"pad" + fake + name),
                    Raw(b"a.txt", b"x", central_extra=fake + name)])
    directory = directory_of(data)
    assert directory.entry(name.decode()) is None and name.decode() not in directory
    assert directory.entry("x/" + name.decode()) == directory.entries()[1]
    data = raw_zip([Raw(name, b"first"), Raw(name, b"second"), Raw(b"a.txt", b"x", central_extra=fake + name)])
    directory = directory_of(data)
    assert directory.entry(name.decode()) == directory.entries()[1]
    # A name whose last bytes repeat into its extra field: the last hit overlaps the real one.
    data = raw_zip([Raw(b"a" * 40, b"x", central_extra=b"a" * 8)])
    assert directory_of(data).entry("a" * 40) == directory_of(data).entries()[0]


def test_every_fixed_path_the_indexer_looks_up_is_in_the_name_index():
    assert max(len(n.encode()) for n in WANTED_NAMES) <= INDEXED_NAME_BYTES


def test_directory_lookup_of_names_in_utf8_or_cp437():
    data = raw_zip([Raw("café/ü.txt".encode(), b"u", flags=0x800), Raw(b"caf\x82", b"c"),
                    Raw(b"caf\xc3\xa9", b"unflagged, so CP437")])
    directory = directory_of(data)
    # membership before any lookup: non-ASCII names are decided by building the entry
    assert "café" in directory and "caf├⌐" in directory and "café/ü.txt" in directory
    assert "cafÃ©" not in directory and "caf" not in directory
    assert directory.entry("café/ü.txt").name == "café/ü.txt"
    assert directory.entry("café").name_size == 4  # the CP437 record, not the unflagged UTF-8 bytes
    assert directory.entry("caf├⌐") is not None


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(["fabric.mod.json", "META-INF/MANIFEST.MF", "META-INF/jars/a.jar",
                                 "META-INF/jarjar/b.jar", "assets/m/icon.png", "pack.png", "a/fabric.mod.json",
                                 "fabric.mod.json5", "x/", "", "iconography.txt", "logo.PNG",
                                 # longer than INDEXED_NAME_BYTES: found by searching the bytes,
                                 # inside each other and overlapping (a run of one letter)
                                 "assets/examplemod/textures/gui/icon.png", "x/assets/examplemod/textures/gui/icon.png",
                                 "assets/examplemod/textures/gui/ico", "a" * 40, "a" * 41]), max_size=12))
def test_directory_lookups_agree_with_parsing_every_record(names):
    data = zip_bytes([(n, n.encode() * 3, STORED) for n in names])
    info = locate_eocd(data, 0, len(data))
    everything = parse_central_directory(data[info.cd_offset : info.cd_offset + info.cd_size], 0)
    # Read in place inside a larger window too: local headers (the same names) before the
    # directory, and after it a record-shaped copy of every name that is not part of it.
    after = b"".join(CENTRAL_SIG.to_bytes(4, "little") + bytes(24) + struct.pack("<HHH", len(n.encode()), 0, 0)
                     + bytes(12) + n.encode() for n in names)
    in_place = CentralDirectory(data[: info.cd_offset + info.cd_size] + after, start=info.cd_offset,
                                end=info.cd_offset + info.cd_size)
    last = {e.name: e for e in everything}
    asked = {*names, "fabric", "META-INF/jars", "nothing", "a" * 39, "examplemod/textures/gui/icon.png"}
    # Membership asked of a fresh directory (short ASCII names answer from the name index
    # without building the entry) agrees with the lookup.
    fresh = CentralDirectory(data[: info.cd_offset + info.cd_size] + after, start=info.cd_offset,
                             end=info.cd_offset + info.cd_size)
    assert {name for name in asked if name in fresh} == {name for name in asked if name in last}
    for directory in (directory_of(data), in_place):
        assert directory.entries() == everything
        for name in asked:
            assert directory.entry(name) == last.get(name)
            assert directory.entry(name) == last.get(name) and (name in directory) == (name in last)  # asked again
        for prefix in ("META-INF/jar", "fabric", "a/", "assets/examplemod/textures/gui/ic", "a" * 39):
            assert directory.with_prefix(prefix) == [e for e in everything if e.name.startswith(prefix)]
        icons = directory.search(re.compile(rb"(?:icon|logo|pack)[\x20-\x2e\x30-\x7e]{0,200}?\.(?:png|jpe?g)", re.I))
        assert icons == [e for e in everything if re.search(r"(?:icon|logo|pack)[^/]*\.(?:png|jpe?g)$", e.name, re.I)]


def test_name_encoding_utf8_flag_or_cp437():
    data = raw_zip(
        [
            Raw("café/ü.txt".encode(), b"u", flags=0x800),
            Raw(b"caf\x82", b"c"),
            Raw(b"bad\xff", b"b", flags=0x800),
        ]
    )
    names = [e.name for e, _ in read_all(data)]
    assert (
        names[:2]
        == ["café/ü.txt", "café"]
        == [
            n
            for n, _ in zipfile_read_all(
                raw_zip([Raw("café/ü.txt".encode(), b"u", flags=0x800), Raw(b"caf\x82", b"c")])
            )
        ]
    )
    assert names[2] == "bad\ufffd"


def test_zip64_end_records_and_extra_fields():
    plain = zip_bytes([("META-INF/MANIFEST.MF", MANIFEST, DEFLATED), ("a.bin", os.urandom(500), STORED)])
    data = to_zip64(plain)
    info = locate_eocd(data, 0, len(data))
    assert info.zip64 and info.entry_count == 2
    assert [(e.name, d) for e, d in read_all(data)] == zipfile_read_all(data) == zipfile_read_all(plain)


def test_zip64_record_outside_the_tail_is_requested():
    data = to_zip64(zip_bytes([("a", b"hello", DEFLATED)]))
    eocd = len(data) - 22
    locator, record = eocd - 20, eocd - 20 - 56
    for tail_offset, wanted in [(eocd - 10, (record, eocd - 10)), (locator - 8, (record, record + 56))]:
        with pytest.raises(NeedMoreBytes) as need:
            locate_eocd(data[tail_offset:], tail_offset, len(data))
        assert (need.value.start, need.value.end) == wanted
        start = need.value.start
        assert locate_eocd(data[start:], start, len(data)).zip64


def test_zip64_local_headers_written_by_zipfile():
    data = zip_bytes([("a", b"x" * 1000, DEFLATED), ("b", b"y" * 10, STORED)], force_zip64=True)
    assert [(e.name, d) for e, d in read_all(data)] == zipfile_read_all(data)


def test_more_than_65535_entries_with_zip64_end_record():
    data = zip_bytes([(f"{i}", b"", STORED) for i in range(65_540)] + [("fabric.mod.json", b"{}", DEFLATED)])
    info = locate_eocd(data, 0, len(data))
    assert info.zip64 and info.entry_count == 65_541
    entries = parse_central_directory(data[info.cd_offset : info.cd_offset + info.cd_size], info.entry_count)
    assert len(entries) == 65_541 and extract(entries[-1], data, 0, MiB) == b"{}"


def test_crc_mismatch():
    data = raw_zip([Raw(b"a", b"hello", crc=12345)])
    with pytest.raises(CrcMismatch) as err:
        read_all(data)
    assert err.value.code == "crc_mismatch" and not err.value.retryable


def test_encrypted_entry():
    data = raw_zip([Raw(b"a", b"hello", flags=0x1)])
    with pytest.raises(EncryptedEntry) as err:
        read_all(data)
    assert err.value.code == "encrypted_entry"


@pytest.mark.parametrize(
    ("method", "word"), [(9, "deflate64"), (12, "bzip2"), (14, "lzma"), (77, "method 77")]
)
def test_unsupported_methods(method, word):
    data = raw_zip([Raw(b"a", b"hello", method=method)])
    with pytest.raises(UnsupportedCompression) as err:
        read_all(data)
    assert err.value.code == "unsupported_compression" and word in str(err.value)


def test_entry_too_large_is_refused_before_inflating():
    data = zip_bytes([("big", b"\0" * (2 * MiB), DEFLATED)])
    with pytest.raises(EntryTooLarge) as err:
        read_all(data, max_size=MiB)
    assert err.value.code == "entry_too_large"
    assert read_all(data, max_size=2 * MiB)[0][1] == b"\0" * (2 * MiB)


def test_understated_size_is_caught_without_inflating_everything():
    # 20 MiB of zeros declared as 100 bytes: inflating stops at 101 bytes.
    data = bytearray(raw_zip([Raw(b"bomb", b"\0" * (20 * MiB))]))
    cd = locate_eocd(bytes(data), 0, len(data)).cd_offset
    struct.pack_into("<I", data, cd + 24, 100)
    tracemalloc.start()
    try:
        with pytest.raises(CorruptZip):
            read_all(bytes(data))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 2 * MiB


def test_truncated_deflate_stream():
    data = bytearray(raw_zip([Raw(b"a", os.urandom(2000))]))
    e = entry(bytes(data), "a")
    data[30 + 1 + e.compressed_size - 5 : 30 + 1 + e.compressed_size] = b"\0" * 5
    with pytest.raises((CorruptZip, CrcMismatch)):
        read_all(bytes(data))


def test_stored_entry_with_two_sizes_is_corrupt():
    data = bytearray(raw_zip([Raw(b"a", b"hello", method=0)]))
    cd = locate_eocd(bytes(data), 0, len(data)).cd_offset
    struct.pack_into("<I", data, cd + 24, 4)
    with pytest.raises(CorruptZip):
        read_all(bytes(data))


def test_empty_archive_and_garbage():
    empty = zip_bytes([])
    assert read_all(empty) == []
    for junk in [b"", b"PK", b"not a zip at all" * 100, b"PK\x05\x06" + b"\0" * 17]:
        with pytest.raises(CorruptZip):
            read_all(junk)


def test_parse_rejects_a_directory_that_does_not_fill_its_size():
    data = zip_bytes([("a", b"x", STORED)])
    info = locate_eocd(data, 0, len(data))
    cd = data[info.cd_offset : info.cd_offset + info.cd_size]
    for bad in [cd[:-1], cd + b"\0", b"\0" * 46]:
        with pytest.raises(CorruptZip):
            parse_central_directory(bad, 1)


def test_tail_must_end_at_the_file_size():
    with pytest.raises(ValueError):
        locate_eocd(b"abc", 0, 10)


def test_central_directory_info_is_frozen():
    info = CentralDirectoryInfo(0, 0, 0, b"")
    with pytest.raises(AttributeError):
        info.cd_size = 1  # type: ignore[misc]


# --- properties -----------------------------------------------------------------------------

names = st.text(alphabet=st.sampled_from("abcXYZ/._-é☃0"), min_size=1, max_size=20).filter(
    lambda n: not n.startswith("/")
)
payloads = st.one_of(
    st.binary(max_size=3000),
    st.builds(lambda b, n: b * n, st.binary(min_size=1, max_size=8), st.integers(1, 2000)),
)
files = st.lists(st.tuples(names, payloads, st.sampled_from([STORED, DEFLATED])), max_size=8)


@st.composite
def archives(draw, signature_in_comment: bool = False) -> bytes:
    entries = draw(files)
    zip64 = draw(st.booleans())
    comments = st.binary(max_size=300).filter(lambda c: b"PK\x05\x06" not in c)
    if signature_in_comment:  # CPython's zipfile is fooled by these; we must not be
        comments = st.one_of(
            comments, st.just(b"PK\x05\x06" * 10), st.binary(max_size=30).map(lambda b: b + b"PK\x05\x06" + b)
        )
    comment = b"" if zip64 else draw(comments)
    data = zip_bytes(
        entries, comment=comment, descriptors=draw(st.booleans()), force_zip64=draw(st.booleans())
    )
    if zip64:
        data = to_zip64(data)
    return draw(st.sampled_from([b"", b"MZ-stub" * 3])) + data


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(archives())
def test_reader_extracts_exactly_what_zipfile_reads(data):
    assert [(e.name, d) for e, d in read_all(data)] == zipfile_read_all(data)


@st.composite
def damaged(draw) -> bytes:
    data = bytearray(draw(archives(signature_in_comment=True)))
    assume(len(data) > 22)
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(["byte", "byte", "word", "word", "truncate", "splice"]))
        # Half the damage lands in the last quarter, where the directory lives.
        low = draw(st.sampled_from([0, len(data) * 3 // 4]))
        at = draw(st.integers(low, len(data) - 1))
        if kind == "byte":
            data[at] = draw(st.integers(0, 255))
        elif kind == "word":
            word = draw(
                st.sampled_from(
                    [0xFFFFFFFF, 0xFFFF, 0x7FFFFFFF, 0, 1, 0x10000, len(data), 0x06054B50, 0x02014B50]
                )
            )
            data[at : at + 4] = word.to_bytes(4, "little")
        elif kind == "truncate":
            data = data[at:] if draw(st.booleans()) else data[:at]
        else:
            data[at:at] = draw(st.binary(max_size=40))
        if len(data) <= 22:
            break
    return bytes(data)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(archives(signature_in_comment=True))
def test_signature_in_the_comment_does_not_fool_the_reader(data):
    stripped = data[: len(data) - len(locate_eocd(data, 0, len(data)).comment)]
    stripped = stripped[:-2] + b"\0\0"  # comment length 0
    assert [(e.name, d) for e, d in read_all(data)] == zipfile_read_all(stripped)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(damaged())
def test_damaged_archives_fail_only_with_typed_errors_and_bounded_memory(data):
    tracemalloc.start()
    try:
        with contextlib.suppress(JarReadError):
            read_all(data, max_size=MiB)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 4 * MiB


# --- the directory's last records, from a suffix read ---------------------------------------


def _cd_bounds(data: bytes) -> tuple[int, int, int, list[ZipEntry]]:
    info = locate_eocd(data, 0, len(data))
    start, end = info.cd_offset, info.cd_offset + info.cd_size
    return start, end, info.base_offset, parse_central_directory(
        data[start:end], info.entry_count, base_offset=info.base_offset)


def test_suffix_of_the_directory_names_the_entries_written_last():
    data = zip_bytes([(f"com/x/C{i:04d}.class", os.urandom(50), STORED) for i in range(300)]
                     + [("fabric.mod.json", b'{"id":"abc"}', DEFLATED)])
    start, end, _, full = _cd_bounds(data)
    cut = end - 5000  # the tail read holds only the directory's last 5000 bytes
    got = scan_directory_suffix(data[cut:], cut, start, end).entries()
    assert got[-1].name == "fabric.mod.json"
    assert got == full[-len(got):] and 5000 // 70 <= len(got) < len(full)
    assert scan_directory_suffix(data[end - 10:], end - 10, start, end) is None  # no whole record
    assert scan_directory_suffix(data[start:], start, start, end).entries() == full  # all of it


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(archives(), st.floats(0, 1))
def test_suffix_scan_only_returns_trailing_records(data, where):
    start, end, base, full = _cd_bounds(data)
    assume(end > start)
    cut = start + int((end - start) * where)
    suffix = scan_directory_suffix(data[cut:], cut, start, end, base_offset=base)
    if suffix is not None:
        got = suffix.entries()
        # the first record may be a false start merging into the true chain; the rest is exact
        assert 1 <= len(got) and got[1:] == full[len(full) - len(got) + 1 :]


def _same_directory(a: CentralDirectory, b: CentralDirectory) -> None:
    assert a.entries() == b.entries() and len(a) == len(b)
    assert a.descriptor_sizes() == b.descriptor_sizes()
    for e in b.entries():
        assert a.entry(e.name) == b.entry(e.name)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(archives(), st.floats(0, 1))
def test_a_directory_that_takes_over_its_walked_suffix_is_the_directory_walked_whole(data, where):
    start, end, base, _ = _cd_bounds(data)
    assume(end > start)
    cut = start + int((end - start) * where)
    suffix = scan_directory_suffix(data[cut:], cut, start, end, base_offset=base)
    whole = CentralDirectory(data, start=start, end=end, base_offset=base)
    # suffix positions are in data[cut:]; a false first record (a signature inside a name
    # or extra field) is never arrived at, and the rest is walked
    _same_directory(CentralDirectory(data, start=start, end=end, base_offset=base, suffix=suffix, shift=cut), whole)


def test_a_suffix_over_other_bytes_is_not_taken_over():
    names = [f"com/x/C{i:04d}.class" for i in range(200)] + ["fabric.mod.json"]
    data = zip_bytes([(n, b"x", STORED) for n in names])
    start, end, _, _ = _cd_bounds(data)
    other = data.replace(b"fabric.mod.json", b"fabric.mod.jsoX")  # same lengths, other name
    cut = end - 3000
    suffix = scan_directory_suffix(other[cut:], cut, start, end)
    assert suffix is not None and suffix.entry("fabric.mod.jsoX") is not None
    spliced = CentralDirectory(data, start=start, end=end, suffix=suffix, shift=cut)
    _same_directory(spliced, CentralDirectory(data, start=start, end=end))
    assert spliced.entry("fabric.mod.json") is not None and spliced.entry("fabric.mod.jsoX") is None
    # and a damaged record before the suffix still fails the walk
    bad = bytearray(data)
    bad[start + 46 + len(names[0]) : start + 50 + len(names[0])] = b"XXXX"  # the second record's signature
    suffix = scan_directory_suffix(bytes(bad[cut:]), cut, start, end)
    with pytest.raises(CorruptZip):
        CentralDirectory(bytes(bad), start=start, end=end, suffix=suffix, shift=cut)


# --- prefix of a large entry (a signed jar's MANIFEST.MF) -----------------------------------


@pytest.mark.parametrize("method", [DEFLATED, STORED])
def test_prefix_of_a_large_entry_needs_only_its_start(method):
    body = b"Manifest-Version: 1.0\r\nImplementation-Version: 2.0\r\n\r\n" + b"".join(
        b"Name: com/x/C%05d.class\r\nSHA-256-Digest: %s\r\n\r\n" % (i, os.urandom(32).hex().encode())
        for i in range(20000))
    data = zip_bytes([("META-INF/MANIFEST.MF", body, method), ("z.bin", os.urandom(1000), STORED)])
    e = entry(data, "META-INF/MANIFEST.MF")
    assert e.uncompressed_size > 1024 * 1024
    with pytest.raises(NeedMoreBytes) as need:
        extract_prefix(e, data[:100], 0, 4096)
    assert need.value.end < e.local_header_offset + 30 + e.name_size + 4096 * 2 + 1024
    assert extract_prefix(e, data[: need.value.end], 0, 4096) == body[:4096]
    small = entry(zip_bytes([("a", b"abc", method)]), "a")
    assert extract_prefix(small, zip_bytes([("a", b"abc", method)]), 0, 4096) == b"abc"  # whole, CRC-checked


def _records(directory: bytes) -> list[bytes]:
    out, pos = [], 0
    while pos < len(directory):
        nlen, elen, clen = struct.unpack_from("<HHH", directory, pos + 28)
        out.append(directory[pos : pos + 46 + nlen + elen + clen])
        pos += 46 + nlen + elen + clen
    return out


def test_search_near_looks_only_among_the_entries_in_that_part_of_the_file():
    """search(near=): the run of records whose entries lie in [lo, hi) of the file, for a
    directory in file order; a directory of up to 1,000 records is searched whole."""
    png = re.compile(rb"\.png")
    files = [("a/icon.png", b"x" * 50, STORED)] + [(f"c/C{i:04d}.class", b"y" * 50, STORED) for i in range(1500)]
    data = zip_bytes(files + [("z/icon.png", b"x" * 50, STORED)])
    directory = directory_of(data)
    middle = entry(data, "c/C0700.class").local_header_offset
    assert [e.name for e in directory.search(png)] == ["a/icon.png", "z/icon.png"]
    assert [e.name for e in directory.search(png, near=(0, middle))] == ["a/icon.png"]
    assert [e.name for e in directory.search(png, near=(middle, len(data)))] == ["z/icon.png"]
    assert directory.search(png, near=(middle, middle + 1)) == []
    small = zip_bytes(files[:1] + files[1:900] + [("z/icon.png", b"x", STORED)])
    assert [e.name for e in directory_of(small).search(png, near=(0, 1))] == ["a/icon.png", "z/icon.png"]


def test_search_near_in_a_directory_out_of_file_order_may_miss_but_never_invents():
    """The trade: for a directory not in file order the bisection finds the wrong run, so a
    guess (an icon-like file to take along) can be missed; what it finds is still a record."""
    png = re.compile(rb"\.png")
    files = [("a/icon.png", b"x" * 50, STORED)] + [(f"c/C{i:04d}.class", b"y" * 50, STORED) for i in range(1500)]
    data = zip_bytes(files)
    info = locate_eocd(data, 0, len(data))
    reversed_directory = b"".join(reversed(_records(data[info.cd_offset : info.cd_offset + info.cd_size])))
    directory = CentralDirectory(reversed_directory)
    near_start = (0, entry(data, "c/C0010.class").local_header_offset)
    found = directory.search(png, near=near_start)
    assert {e.name for e in found} <= {"a/icon.png"}
    assert [e.name for e in directory.search(png)] == ["a/icon.png"]
