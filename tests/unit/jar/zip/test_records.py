"""The shared ZIP record formats agree with what Python's own zipfile writes."""

from __future__ import annotations

import io
import struct
import zipfile

from indexium_jar.zip import records as r


def _archive() -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("a.txt", b"hello " * 100)
    return out.getvalue()


def test_the_whole_and_body_layouts_read_a_real_archive():
    data = _archive()
    assert data[:4] == r.LOCAL_SIG_BYTES
    whole = r.LOCAL.unpack_from(data, 0)
    assert whole[0] == r.LOCAL_SIG
    assert r.LOCAL_BODY.unpack_from(data, 4) == whole[1:]
    name_len, extra_len = whole[9], whole[10]
    assert data[r.LOCAL.size : r.LOCAL.size + name_len] == b"a.txt"

    eocd_at = data.rindex(r.EOCD_SIG_BYTES)
    eocd = r.EOCD.unpack_from(data, eocd_at)
    assert r.EOCD_BODY.unpack_from(data, eocd_at + 4) == eocd[1:]
    cd_size, cd_offset = eocd[5], eocd[6]
    assert cd_offset + cd_size == eocd_at
    central = r.CENTRAL.unpack_from(data, cd_offset)
    assert central[0] == r.CENTRAL_SIG and central[4] == r.DEFLATED
    assert r.CENTRAL_BODY.unpack_from(data, cd_offset + 4) == central[1:]
    # The narrow views read the same fields as the whole record.
    sig, flags, method, crc, csize, usize, nlen, elen, clen, offset = r.CENTRAL_USED.unpack_from(data, cd_offset)
    assert (sig, flags, method, crc, csize, usize, nlen, elen, clen, offset) == (
        central[0], central[3], central[4], central[7], central[8], central[9],
        central[10], central[11], central[12], central[16],
    )  # fmt: skip
    assert r.CENTRAL_WALK.unpack_from(data, cd_offset) == (central[0], central[3], *central[10:13])
    assert extra_len >= 0


def test_zip64_sentinels_are_replaced_in_order():
    extra = struct.pack("<HH", 0x5455, 1) + b"\x00" + r.EXTRA_HEADER.pack(r.ZIP64_EXTRA_TAG, 16)
    extra += struct.pack("<QQ", 5_000_000_000, 6_000_000_000)
    values = r.zip64_extra_values(extra)
    assert values == [5_000_000_000, 6_000_000_000]
    assert r.replace_sentinels([r.U32_MAX, 7, r.U32_MAX], values) == [5_000_000_000, 7, 6_000_000_000]
    assert r.replace_sentinels([r.U32_MAX, r.U32_MAX, r.U32_MAX], values) is None
    assert r.zip64_extra_values(b"") is None
