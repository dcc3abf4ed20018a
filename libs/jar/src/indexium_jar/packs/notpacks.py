"""Archives that look like packs but are not ones Indexium lists, each with its own reason.

The codes are stable (docs/indexer.md, "Packs"); the indexer will record them as skips.
"""

from __future__ import annotations

from collections.abc import Collection

from indexium_jar.model import PackSkip

NOT_A_PACK = "not_a_pack"  # its reason names the registry's formats (_not_a_pack)
CURSEFORGE_MANIFEST = "manifest.json"
LEGACY_TEXTURE_PACK = "pack.txt"

REASONS = {
    "curseforge_modpack": "a CurseForge-format modpack (manifest.json + overrides/): its mods are CurseForge "
                          "project ids that only CurseForge resolves; Indexium lists Modrinth-format .mrpack modpacks",
    "sources_archive": "a -sources archive (the project's source code), not a playable pack",
    "legacy_texture_pack": "a texture pack of the pre-1.6 era (pack.txt, no pack.mcmeta): Minecraft 1.6 and later "
                           "do not load it",
}


def _not_a_pack() -> str:
    """None of the registry's formats: every pack format's identifying entries, and a loader manifest."""
    from indexium_jar import formats  # noqa: PLC0415 - the registry imports this module

    entries = dict.fromkeys(f.identified_by[0] for f in formats.PACK_FORMATS)  # each format's main entry
    return f"no {', '.join(entries)} or loader manifest: an archive of other files"


def skip(code: str) -> PackSkip:
    return PackSkip(code=code, reason=_not_a_pack() if code == NOT_A_PACK else REASONS[code])


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
