"""The ZIP record formats (APPNOTE 4.3), defined once for every reader of them.

Two readers use these: :mod:`indexium_jar.zip.zipfmt` reads windows of a file at random
(end record first, then the central directory, then single entries), and the scan
stage's streaming walk reads local headers front to back. They differ in how they move
through a file, not in what a record looks like, so signatures, layouts, flags and
sentinels live here.

Each record layout is given whole (signature first, for a reader that unpacks a window
at an offset) and as a ``*_BODY`` without the 4-byte signature (for a reader that has
just matched the signature in a stream). All little-endian.
"""

from __future__ import annotations

import struct

# --- signatures ---------------------------------------------------------------------------
LOCAL_SIG = 0x04034B50  # "PK\x03\x04"
CENTRAL_SIG = 0x02014B50  # "PK\x01\x02"
EOCD_SIG = 0x06054B50  # "PK\x05\x06"
ZIP64_EOCD_SIG = 0x06064B50  # "PK\x06\x06"
ZIP64_LOCATOR_SIG = 0x07064B50  # "PK\x06\x07"
DESCRIPTOR_SIG = 0x08074B50  # "PK\x07\x08" (optional before a data descriptor)

LOCAL_SIG_BYTES = LOCAL_SIG.to_bytes(4, "little")
CENTRAL_SIG_BYTES = CENTRAL_SIG.to_bytes(4, "little")
EOCD_SIG_BYTES = EOCD_SIG.to_bytes(4, "little")
ZIP64_EOCD_SIG_BYTES = ZIP64_EOCD_SIG.to_bytes(4, "little")
ZIP64_LOCATOR_SIG_BYTES = ZIP64_LOCATOR_SIG.to_bytes(4, "little")
DESCRIPTOR_SIG_BYTES = DESCRIPTOR_SIG.to_bytes(4, "little")

# --- record layouts -------------------------------------------------------------------------
# Local file header: sig, version needed, flags, method, time, date, crc32, compressed size,
# uncompressed size, name length, extra length; then name and extra.
LOCAL = struct.Struct("<IHHHHHIIIHH")  # 30 bytes
# Central directory header: sig, version made by, version needed, flags, method, time, date,
# crc32, compressed size, uncompressed size, name/extra/comment lengths, disk number,
# internal attributes, external attributes, local header offset; then name, extra, comment.
CENTRAL = struct.Struct("<IHHHHHHIIIHHHHHII")  # 46 bytes
# End of central directory: sig, disk, directory disk, entries on this disk, entries,
# directory size, directory offset, comment length; then the comment.
EOCD = struct.Struct("<IHHHHIIH")  # 22 bytes
# Zip64 end record locator: sig, disk of the zip64 end record, its offset, disk count.
ZIP64_LOCATOR = struct.Struct("<IIQI")  # 20 bytes
# Zip64 end record: sig, size of the rest, version made by, version needed, disk, directory
# disk, entries on this disk, entries, directory size, directory offset (+ extensible data).
ZIP64_EOCD = struct.Struct("<IQHHIIQQQQ")  # 56 bytes
# Data descriptor after its optional signature: crc32, compressed size, uncompressed size;
# the sizes are 8 bytes each when the entry is zip64.
DESCRIPTOR = struct.Struct("<III")  # 12 bytes
DESCRIPTOR64 = struct.Struct("<IQQ")  # 20 bytes

# Views of the central header that read only what a directory walk needs (the fields in
# between are skipped with pad bytes; each view is as long as the prefix it spans).
# Signature, general-purpose flags (bytes 8-9), name, extra and comment lengths:
CENTRAL_WALK = struct.Struct("<I4xH18xHHH")  # 34 bytes
# Signature, flags, method, crc32, compressed and uncompressed size, name/extra/comment
# lengths, local header offset:
CENTRAL_USED = struct.Struct("<I4xHH4xIIIHHH8xI")  # 46 bytes


def _body(layout: struct.Struct) -> struct.Struct:
    assert layout.format.startswith("<I")
    return struct.Struct("<" + layout.format[2:])


LOCAL_BODY = _body(LOCAL)  # 26 bytes
CENTRAL_BODY = _body(CENTRAL)  # 42 bytes
EOCD_BODY = _body(EOCD)  # 18 bytes
ZIP64_EOCD_SIZE_FIELD = struct.Struct("<Q")  # the first field after a zip64 end record's sig

# --- methods, flags, sentinels --------------------------------------------------------------
STORED = 0
DEFLATED = 8
FLAG_ENCRYPTED = 0x0001
FLAG_DESCRIPTOR = 0x0008  # sizes and crc follow the data; zero in the local header
FLAG_UTF8 = 0x0800  # the name is UTF-8 (else CP437)
U16_MAX = 0xFFFF
U32_MAX = 0xFFFFFFFF  # in a 32-bit size or offset: the value is in the zip64 extra field
U64_MAX = 0xFFFFFFFFFFFFFFFF
MAX_COMMENT = U16_MAX


def decode_name(raw: bytes, flags: int) -> str:
    """An entry's name: UTF-8 when flagged (invalid bytes become U+FFFD rather than failing the
    whole jar; such a name cannot be a manifest we look up anyway), else CP437."""
    if raw.isascii():  # the same text in both (CP437's first half is ASCII), without CP437's charmap codec
        return raw.decode("ascii")
    return raw.decode("utf-8", "replace") if flags & FLAG_UTF8 else raw.decode("cp437")

# --- extra fields ---------------------------------------------------------------------------
EXTRA_HEADER = struct.Struct("<HH")  # tag, size
ZIP64_EXTRA_TAG = 0x0001


def zip64_extra_values(extra: bytes) -> list[int] | None:
    """The 64-bit values of the zip64 extra block (tag 0x0001); None when there is none.

    The block holds, in the order uncompressed size, compressed size, local header offset,
    only the fields whose 32-bit value is :data:`U32_MAX`; see :func:`replace_sentinels`.
    """
    pos = 0
    while pos + 4 <= len(extra):
        tag, size = EXTRA_HEADER.unpack_from(extra, pos)
        if tag == ZIP64_EXTRA_TAG:
            body = extra[pos + 4 : pos + 4 + size]
            return [int.from_bytes(body[i : i + 8], "little") for i in range(0, len(body) - 7, 8)]
        pos += 4 + size
    return None


def replace_sentinels(fields: list[int], values: list[int]) -> list[int] | None:
    """``fields`` (usize, csize[, offset]) with each :data:`U32_MAX` taken from ``values`` in
    turn; None when ``values`` runs out (the block is too short)."""
    out = []
    i = 0
    for v in fields:
        if v == U32_MAX:
            if i == len(values):
                return None
            v = values[i]
            i += 1
        out.append(v)
    return out
