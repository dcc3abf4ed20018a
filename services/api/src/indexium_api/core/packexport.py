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
newest of :data:`LOADER_VERSIONS` every mod accepts. We keep no live list of loader releases
(the index has no source for one offline), so a loader without a table entry needs the player's.
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

# Released Fabric Loader versions (fabric-loader's GitHub releases), newest first. A short list on
# purpose: the newest a pack's mods accept is what a player wants, and older mods accept these.
LOADER_VERSIONS: dict[str, tuple[str, ...]] = {
    "fabric": ("0.16.14", "0.16.10", "0.16.9", "0.16.5", "0.16.0", "0.15.11", "0.15.0", "0.14.25", "0.14.21"),
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


def loader_version(loader: str, given: str | None, platform: tuple[PlatformRequirement, ...]) -> str:
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
    for candidate in LOADER_VERSIONS.get(loader, ()):
        if all(p.versions.contains(candidate) for p in needs):
            return candidate
    raise ApiError(400, "loader_version_required",
                   f"Give 'loader_version': Indexium keeps no list of {name} releases that fits "
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
