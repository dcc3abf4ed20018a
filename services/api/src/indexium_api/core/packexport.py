"""A resolution as a pack a launcher imports: a Modrinth ``.mrpack`` or a packwiz pack (zip).

Pure builders over what the resolver picked and each picked file's download facts; both
formats point every file at its GitHub release asset, so none of our bytes sit between the
player and GitHub.

* ``.mrpack`` (Modrinth's modpack format, version 1): ``modrinth.index.json`` with
  ``formatVersion`` 1, ``game`` ``minecraft``, ``versionId``, ``name``, ``files[]`` (``path``
  under ``mods/``, ``hashes`` sha1 and sha512, ``downloads`` the GitHub URL, ``fileSize``,
  ``env`` from the manifests' sides) and ``dependencies`` (``minecraft`` and the loader).
* packwiz (``pack-format = "packwiz:1.1.0"``): ``pack.toml`` (the index's sha256, the
  versions), ``index.toml`` (each metafile's sha256) and ``mods/<slug>.pw.toml`` with
  ``[download]`` ``url``, ``hash-format`` (sha512) and ``hash``. TOML is written with
  ``tomli-w`` (the standard library reads TOML but does not write it).

The loader version: the one the player gave, checked against every mod's requirement, or the
newest known release (:data:`LOADER_VERSIONS`; per game version for Forge and NeoForge,
:data:`GAME_LOADER_VERSIONS`) every mod accepts. We keep no live list of loader releases (the
index has no source for one offline), so a game version without a table entry, or mods no listed
release satisfies, need the player's.
"""

from __future__ import annotations

import hashlib
import io
import json
import re
import zipfile
from dataclasses import dataclass

import tomli_w

from indexium_jar.deps import LOADER_NAMES, PlatformRequirement
from indexium_jar.packs.mrpack import LOADER_DEPENDENCIES, safe_path
from indexium_platform.web import ApiError

# Released loader versions, newest first: short lists on purpose (the newest a pack's mods accept is
# what a player wants, and older mods accept these). Fabric Loader (fabric-loader's GitHub releases)
# and Quilt Loader (org.quiltmc:quilt-loader on Quilt's Maven) run on any game version.
LOADER_VERSIONS: dict[str, tuple[str, ...]] = {
    "fabric": ("0.16.14", "0.16.10", "0.16.9", "0.16.5", "0.16.0", "0.15.11", "0.15.0", "0.14.25", "0.14.21"),
    "quilt": ("0.29.2", "0.29.1", "0.28.0", "0.26.4", "0.26.0", "0.25.0", "0.24.0"),
}
# A Forge or NeoForge build is made for one game version (Forge's promotions, NeoForge's Maven: a
# NeoForge 21.1.x is for 1.21.1), so their lists are per game version; a game version not listed
# needs the player's loader_version.
GAME_LOADER_VERSIONS: dict[str, dict[str, tuple[str, ...]]] = {
    "forge": {"1.21.1": ("52.1.0",), "1.21": ("51.0.33",), "1.20.1": ("47.4.10", "47.3.0", "47.2.0")},
    "neoforge": {"1.21.1": ("21.1.250", "21.1.218", "21.1.77"), "1.21": ("21.0.167",)},
}
# The manifest id a loader's mods name it by (what the resolver's platform requirements are keyed by).
LOADER_IDS = {"fabric": "fabricloader", "quilt": "quilt_loader", "forge": "forge", "neoforge": "neoforge"}
# modrinth.index.json's dependency key per loader: the mrpack parser's own table, inverted.
MRPACK_KEYS = {loader: key for key, loader in LOADER_DEPENDENCIES.items()}
EXPORT_LOADERS = tuple(MRPACK_KEYS)
FORMATS = ("mrpack", "packwiz")
_ZIP_TIME = (2020, 1, 1, 0, 0, 0)  # fixed entry times: the same resolution gives the same bytes
_UNSAFE = re.compile(r"[^A-Za-z0-9._+-]+")


@dataclass(frozen=True)
class PackFile:
    slug: str
    name: str
    filename: str
    url: str
    size: int | None
    sha1: str
    sha512: str
    side: str  # "both", "client" or "server"


def side_of(environments) -> str:
    sides = set(environments or ()) or {"both"}
    return sides.pop() if len(sides) == 1 and sides <= {"client", "server"} else "both"


def known_versions(loader: str, game_version: str) -> tuple[str, ...]:
    """The loader's releases we know of that run ``game_version``, newest first."""
    return LOADER_VERSIONS.get(loader) or GAME_LOADER_VERSIONS.get(loader, {}).get(game_version, ())


def loader_version(loader: str, given: str | None, platform: tuple[PlatformRequirement, ...], game_version: str) -> str:
    """The loader version to put in the pack: every mod accepts it (400 naming the requirement otherwise)."""
    loader_id = LOADER_IDS[loader]
    needs = [p for p in platform if p.mod_id == loader_id]
    name = LOADER_NAMES.get(loader, loader)
    accepted = "; ".join(p.text for p in needs) or "any version"
    if given is not None:
        for p in needs:
            if not p.versions.contains(given):
                raise ApiError(400, "invalid_parameter",
                               f"'loader_version' {given} does not satisfy every mod: {p.text} ({'; '.join(p.declared)}).")
        return given
    for candidate in known_versions(loader, game_version):
        if all(p.versions.contains(candidate) for p in needs):
            return candidate
    raise ApiError(400, "loader_version_required",
                   f"Give 'loader_version': none of the {name} releases Indexium knows of for {game_version} fits "
                   f"(every mod accepts: {accepted}).")


def _path(f: PackFile) -> str:
    name = f.filename if safe_path(f.filename) and "/" not in f.filename else _UNSAFE.sub("-", f.filename) or f.slug
    return f"mods/{name}"


def _zip(entries: list[tuple[str, bytes]]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in entries:
            info = zipfile.ZipInfo(name, _ZIP_TIME)
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, data)
    return out.getvalue()


def _unique(files: list[PackFile]) -> list[tuple[str, PackFile]]:
    seen: set[str] = set()
    out = []
    for f in files:
        path = _path(f)
        if path in seen:  # two mods' assets with one name: keep both, apart
            path = f"mods/{f.slug}-{path.removeprefix('mods/')}"
        seen.add(path)
        out.append((path, f))
    return out


def mrpack(name: str, version_id: str, game_version: str, loader: str, loader_ver: str, files: list[PackFile]) -> bytes:
    env = {"both": ("required", "required"), "client": ("required", "unsupported"),
           "server": ("unsupported", "required")}
    index = {
        "formatVersion": 1, "game": "minecraft", "versionId": version_id, "name": name,
        "summary": f"Built by Indexium from the mods' own dependency declarations ({game_version}, "
                   f"{LOADER_NAMES.get(loader, loader)}).",
        "files": [{"path": path, "hashes": {"sha1": f.sha1, "sha512": f.sha512},
                   "env": {"client": env[f.side][0], "server": env[f.side][1]},
                   "downloads": [f.url], "fileSize": f.size or 0} for path, f in _unique(files)],
        "dependencies": {"minecraft": game_version, MRPACK_KEYS[loader]: loader_ver},
    }
    return _zip([("modrinth.index.json", json.dumps(index, indent=2).encode())])


def packwiz(name: str, version_id: str, game_version: str, loader: str, loader_ver: str, files: list[PackFile]) -> bytes:
    metas: list[tuple[str, bytes]] = []
    for path, f in _unique(files):
        meta = {"name": f.name, "filename": path.removeprefix("mods/"), "side": f.side,
                "download": {"url": f.url, "hash-format": "sha512", "hash": f.sha512}}
        stem = _UNSAFE.sub("-", f.slug)
        metas.append((f"mods/{stem}.pw.toml", tomli_w.dumps(meta).encode()))
    index = tomli_w.dumps({"hash-format": "sha256", "files": [
        {"file": path, "hash": hashlib.sha256(data).hexdigest(), "metafile": True} for path, data in metas]}).encode()
    pack = tomli_w.dumps({
        "name": name, "version": version_id, "pack-format": "packwiz:1.1.0",
        "index": {"file": "index.toml", "hash-format": "sha256", "hash": hashlib.sha256(index).hexdigest()},
        "versions": {"minecraft": game_version, loader: loader_ver},
    }).encode()
    return _zip([("pack.toml", pack), ("index.toml", index), *metas])
