"""Resource packs: ``pack.mcmeta`` with ``assets/`` (or without ``data/``).

Game versions from the resource-pack column of the pack-format table; Modrinth's loader for
resource packs is ``minecraft``; the icon is ``pack.png`` at the root when present.
"""

from __future__ import annotations

from collections.abc import Mapping

from indexium_jar.formatspec import PACK, RESOURCEPACK, Format, LoaderName
from indexium_jar.model import PackParseResult, PackRecord
from indexium_jar.packs import _mcmeta
from indexium_jar.packs._common import Archive

ICON = "pack.png"


def parse(files: Mapping[str, bytes], archive: Archive) -> PackParseResult:
    meta = _mcmeta.parse(files[_mcmeta.PATH], archive, "resource")
    if not isinstance(meta, _mcmeta.Meta):
        return PackParseResult(problems=(meta,))
    return PackParseResult(record=PackRecord(
        project_type="resourcepack", loaders=("minecraft",), manifest_path=_mcmeta.PATH,
        description=meta.description, icon=ICON if ICON in archive.names else None,
        game_versions=meta.game_versions, warnings=meta.warnings))


FORMATS = (Format("resourcepack", PACK, 320, (".zip",), (_mcmeta.PATH, "assets/"), parse,
                  (LoaderName("minecraft", "Minecraft"),), RESOURCEPACK, (_mcmeta.PATH,),
                  "resource pack: pack.mcmeta with assets/ (or without data/)",
                  matches=lambda names, file_name: _mcmeta.PATH in names),)
