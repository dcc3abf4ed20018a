"""Archives built in the test, read back the way the indexer reads a jar: the end record and
central directory from the archive's bytes, then only the entries the pack layer asks for."""

from __future__ import annotations

import io
import json
import zipfile
from typing import Any

from indexium_jar.packs import Archive, entries_to_read, parse_pack
from indexium_jar.zip.zipfmt import CentralDirectory, extract, locate_eocd


def build(entries: dict[str, bytes | str | dict[str, Any] | list[Any]]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        for name, body in entries.items():
            if isinstance(body, (dict, list)):
                body = json.dumps(body)
            z.writestr(name, body.encode() if isinstance(body, str) else body)
    return out.getvalue()


def read(archive: bytes, file_name: str = "", release_text: str = "", **tables: Any):
    """(names, the entries asked for, the parse result) of a zip's bytes."""
    info = locate_eocd(archive, 0, len(archive))
    directory = CentralDirectory(archive[info.cd_offset:info.cd_offset + info.cd_size], base_offset=info.base_offset)
    names = [e.name for e in directory.entries()]
    wanted = entries_to_read(names, file_name)
    files = {name: extract(directory.entry(name), archive, 0, 16 << 20) for name in wanted}
    return names, wanted, parse_pack(files, Archive(names=names, file_name=file_name,
                                                   release_text=release_text, **tables))


def mcmeta(pack: dict[str, Any]) -> dict[str, Any]:
    return {"pack": pack}
