"""Data packs: ``pack.mcmeta`` with ``data/``.

Game versions from the data-pack column of the pack-format table (it moves apart from the
resource column from 1.16.2 on); Modrinth's loader for data packs is ``datapack``. A pack that
also carries ``assets/`` is both at once; it is listed as a data pack with a note.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from itertools import repeat

from indexium_jar.formatspec import DATAPACK, PACK, Format, LoaderName
from indexium_jar.model import PackParseResult, PackRecord
from indexium_jar.packs import _mcmeta
from indexium_jar.packs._common import Archive
from indexium_jar.packs.resourcepack import ICON


def parse(files: Mapping[str, bytes], archive: Archive) -> PackParseResult:
    meta = _mcmeta.parse(files[_mcmeta.PATH], archive, "data")
    if not isinstance(meta, _mcmeta.Meta):
        return PackParseResult(problems=(meta,))
    notes = meta.warnings
    if any(n.startswith("assets/") for n in archive.names):
        notes += ("also carries assets/ (a combined data and resource pack); listed as a data pack",)
    return PackParseResult(record=PackRecord(
        project_type="datapack", loaders=("datapack",), manifest_path=_mcmeta.PATH,
        description=meta.description, icon=ICON if ICON in archive.names else None,
        game_versions=meta.game_versions, warnings=notes))


def _is_datapack(names: Collection[str], file_name: str) -> bool:
    # (map: no Python frame per name)
    return _mcmeta.PATH in names and any(map(str.startswith, names, repeat("data/")))


FORMATS = (Format("datapack", PACK, 310, (".zip",), (_mcmeta.PATH, "data/"), parse,
                  (LoaderName("datapack", "Data Pack"),), DATAPACK, (_mcmeta.PATH,),
                  "data pack: pack.mcmeta with data/", matches=_is_datapack),)
