"""Archives that look like packs but are not ones Indexium lists, each with its own reason.

The codes are stable (docs/indexer.md, "Packs"); the indexer will record them as skips.
"""

from __future__ import annotations

from collections.abc import Collection

from indexium_jar.model import PackSkip

CURSEFORGE_MANIFEST = "manifest.json"
LEGACY_TEXTURE_PACK = "pack.txt"

REASONS = {
    "curseforge_modpack": "a CurseForge-format modpack (manifest.json + overrides/): its mods are CurseForge "
                          "project ids that only CurseForge resolves; Indexium lists Modrinth-format .mrpack modpacks",
    "sources_archive": "a -sources archive (the project's source code), not a playable pack",
    "legacy_texture_pack": "a texture pack of the pre-1.6 era (pack.txt, no pack.mcmeta): Minecraft 1.6 and later "
                           "do not load it",
    "not_a_pack": "no pack.mcmeta, shaders/, modrinth.index.json or loader manifest: an archive of other files",
}


def skip(code: str) -> PackSkip:
    return PackSkip(code=code, reason=REASONS[code])


def which(names: Collection[str], file_name: str = "") -> str | None:
    """The skip code for an archive that is none of the pack formats (checked after them)."""
    lowered = file_name.lower()
    if CURSEFORGE_MANIFEST in names and any(n.startswith("overrides/") for n in names):
        return "curseforge_modpack"
    if lowered.endswith(("-sources.zip", "-sources.jar", "-src.zip")):
        return "sources_archive"
    if LEGACY_TEXTURE_PACK in names:
        return "legacy_texture_pack"
    files = [n for n in names if not n.endswith("/")]
    if files and sum(n.endswith((".java", ".kt", ".scala", ".groovy")) for n in files) * 2 > len(files):
        return "sources_archive"
    return "not_a_pack"
