"""Forge 1.6–1.12 coremods that carry no mcmod.info but declare themselves to Forge.

FML's CoreModManager loads a jar as a coremod when its MANIFEST.MF names an
``FMLCorePlugin`` class; such a jar needs no mcmod.info, and many ship none. CodeChicken's
mods (NotEnoughItems, CodeChickenCore) describe themselves instead in their own
``neimod.info`` / ``cccmod.info``: mcmod.info's format, read by the mod's own container, not
by FML's MetadataCollection.

What they declare is indexed, marked as less certain than a loader manifest's word the way
an inferred Minecraft requirement already is: ``game_versions.inferred`` is set (the versions
come from a convention no loader checks, or, with no metadata file at all, only from the
years FMLCorePlugin existed), and a warning on the record says what it was read from.
"""

from __future__ import annotations

import re

import msgspec

from indexium_jar.formatspec import JAR, MOD, Format, LoaderName
from indexium_jar.manifests import _common as helpers
from indexium_jar.manifests import mcmod
from indexium_jar.manifests._gamever import resolve
from indexium_jar.model import GameVersions, ManifestProblem, ModRecord

INFO_PATHS = ("neimod.info", "cccmod.info")
CORE_PLUGIN = "FMLCorePlugin"
MANIFEST_PATH = "META-INF/MANIFEST.MF"
# FMLCorePlugin in MANIFEST.MF: from Forge for 1.6 (CoreModManager reads it) to 1.12.2;
# 1.13's ModLauncher dropped coremods of this kind.
CORE_PLUGIN_ERA = "[1.6,1.13)"
# A plugin class's simple name minus the suffix coremods give it: NEICorePlugin -> NEI.
_PLUGIN_SUFFIX = re.compile(r"(?:Loading)?(?:Core)?(?:Plugin|Loader|Transformer)$")
_ID_CHARS = re.compile(r"[^a-z0-9_-]+")


def _core_plugin_note(jar: helpers.Jar) -> str:
    plugin = (jar.attribute(CORE_PLUGIN) or "").strip()
    return f"; a coremod (MANIFEST.MF FMLCorePlugin: {plugin})" if plugin else ""


def parse_info(data: bytes, jar: helpers.Jar, path: str) -> helpers.Output:
    """``neimod.info`` / ``cccmod.info``: mcmod.info's format under the mod's own name."""
    out: helpers.Output = []
    for item in mcmod.parse(data, jar):
        if isinstance(item, ManifestProblem):
            out.append(msgspec.structs.replace(item, manifest_path=path))
            continue
        game = item.game_versions
        if game.source or game.versions:
            game = msgspec.structs.replace(game, source=f"{path}:mcversion", inferred=True)
        note = (f"no mcmod.info: read from {path}, the mod's own metadata file (FML does not read it)"
                f"{_core_plugin_note(jar)}")
        out.append(msgspec.structs.replace(item, manifest_path=path, game_versions=game,
                                           warnings=(note, *item.warnings)))
    return out


def from_core_plugin(jar: helpers.Jar) -> ModRecord | None:
    """A record from MANIFEST.MF alone, for a jar whose only declaration is its FMLCorePlugin."""
    plugin = (jar.attribute(CORE_PLUGIN) or "").strip()
    if not plugin:
        return None
    simple = plugin.rsplit(".", 1)[-1]
    title = helpers.text(jar.attribute("Implementation-Title")) or helpers.text(jar.attribute("Specification-Title"))
    base = _PLUGIN_SUFFIX.sub("", simple) or simple
    mod_id = _ID_CHARS.sub("", (title or base).lower().replace(" ", "_"))[:64] or "coremod"
    version = helpers.text(jar.attribute("Implementation-Version")) or helpers.text(jar.attribute("Specification-Version"))
    game, notes = resolve("maven", CORE_PLUGIN_ERA, f"{MANIFEST_PATH}:{CORE_PLUGIN}", jar.table)
    game = GameVersions(source=game.source, raw=game.raw, versions=game.versions, inferred=True)
    warnings = [
        f"no mod metadata file: a coremod known only by MANIFEST.MF FMLCorePlugin {plugin}; id "
        f"{mod_id!r} taken from {'Implementation-Title' if title else 'the plugin class name'}",
        f"Minecraft versions inferred from the coremod era {CORE_PLUGIN_ERA} (FMLCorePlugin exists from 1.6 "
        "to 1.12.2)",
        *notes,
    ]
    if version is None:
        warnings.append("no version")
    return ModRecord(loader="forge", manifest_path=MANIFEST_PATH, mod_id=mod_id, version=version,
                     name=title or base, game_versions=game, warnings=tuple(warnings))


# (A coremod with neither file, only MANIFEST.MF's FMLCorePlugin, is parse_jar's last resort.)
FORMATS = (Format("forge-coremod", JAR, 131, (".jar",), INFO_PATHS, parse_info, (LoaderName("forge", "Forge"),), MOD,
                  (), "Forge 1.6–1.12 coremod: neimod.info / cccmod.info, or MANIFEST.MF's FMLCorePlugin"),)
