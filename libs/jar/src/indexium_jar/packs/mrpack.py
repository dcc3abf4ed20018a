"""Modrinth modpacks: a ``.mrpack`` zip with ``modrinth.index.json`` (format version 1).

Source: Modrinth's format definition (docs.modrinth.com, "Modpack format"): ``game``
(``minecraft``), ``versionId``, ``name``, ``summary``, ``files[]`` (``path``, ``hashes``
with ``sha1`` and ``sha512``, ``env`` ``{client, server}``, ``downloads``, ``fileSize``),
``dependencies`` (``minecraft`` and one of ``forge``, ``neoforge``, ``fabric-loader``,
``quilt-loader``); files under ``overrides/``, ``server-overrides/``, ``client-overrides/``
are copied into the instance. Every field is hostile input: paths may not leave the instance
directory, the file list is capped, and a download outside Modrinth's allowed hosts is
reported per file so the indexer holds the pack for review.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from indexium_jar.formatspec import MODPACK, PACK, Format, LoaderName
from indexium_jar.manifests._common import problem, text
from indexium_jar.model import FileEnv, GameVersions, ManifestProblem, PackFile, PackParseResult, PackRecord
from indexium_jar.packs._common import Archive, description_of, read_json

PATH = "modrinth.index.json"
OVERRIDES = ("overrides/", "server-overrides/", "client-overrides/")
# Modrinth's own validator accepts downloads from these hosts only (format definition, "downloads").
ALLOWED_HOSTS = frozenset({"cdn.modrinth.com", "github.com", "raw.githubusercontent.com", "gitlab.com"})
LOADER_DEPENDENCIES = {"fabric-loader": "fabric", "quilt-loader": "quilt", "forge": "forge", "neoforge": "neoforge"}
MAX_FILES = 5000  # the largest published packs list ~1,000 files
MAX_INDEX_BYTES = 8 << 20  # 5,000 entries of ~400 bytes fit
MAX_PATH = 512
MAX_DOWNLOADS = 8  # mirrors per file
MAX_NOTES = 20  # warnings about single files; the rest are counted
_HEX = {"sha1": re.compile(r"[0-9a-f]{40}"), "sha512": re.compile(r"[0-9a-f]{128}")}
_ENV: tuple[FileEnv, ...] = ("required", "optional", "unsupported")


def safe_path(path: Any) -> str | None:
    """The path when it stays inside the instance directory, else None."""
    if not isinstance(path, str) or not path or len(path) > MAX_PATH or "\x00" in path or "\\" in path:
        return None
    if path.startswith("/") or re.match(r"[A-Za-z]:", path):
        return None
    parts = path.split("/")
    if any(p in ("", ".", "..") for p in parts):
        return None
    return path


# An https URL on an allowed host with the default port, decided without parsing it (a
# 1,000-file pack checks 1,000 URLs): the authority ends at the first "/".
_ALLOWED_PREFIX = re.compile("https://(?:" + "|".join(re.escape(h) for h in sorted(ALLOWED_HOSTS)) + ")/",
                             re.IGNORECASE)


def off_host(url: str) -> bool:
    if _ALLOWED_PREFIX.match(url):
        return False
    parts = urlsplit(url)
    return parts.scheme != "https" or (parts.hostname or "").lower() not in ALLOWED_HOSTS or parts.port not in (None, 443)


def _file(raw: Any, index: int) -> PackFile | str:
    """One ``files`` entry, or why it is unusable."""
    if not isinstance(raw, dict):
        return f"files[{index}] is not an object"
    path = safe_path(raw.get("path"))
    if path is None:
        return f"files[{index}].path {str(raw.get('path'))[:80]!r} leaves the instance directory or is malformed"
    hashes_raw = raw.get("hashes") if isinstance(raw.get("hashes"), dict) else {}
    hashes = {k: str(hashes_raw[k]).lower() for k in _HEX if isinstance(hashes_raw.get(k), str)}
    bad = [k for k, v in hashes.items() if not _HEX[k].fullmatch(v)]
    if "sha1" not in hashes or "sha512" not in hashes or bad:
        return f"files[{index}] ({path}) lacks a well-formed sha1 and sha512"
    downloads = raw.get("downloads")
    if not isinstance(downloads, list) or not downloads or not all(isinstance(u, str) and u for u in downloads):
        return f"files[{index}] ({path}) has no downloads"
    downloads = [u.strip()[:2048] for u in downloads[:MAX_DOWNLOADS]]
    size = raw.get("fileSize")
    env = raw.get("env") if isinstance(raw.get("env"), dict) else {}
    return PackFile(
        path=path, hashes=hashes, downloads=tuple(downloads),
        file_size=size if isinstance(size, int) and not isinstance(size, bool) and size >= 0 else None,
        env_client=env.get("client") if env.get("client") in _ENV else None,
        env_server=env.get("server") if env.get("server") in _ENV else None,
        off_host_downloads=tuple(u for u in downloads if off_host(u)))


def _game_and_loaders(deps: Any, archive: Archive, warnings: list[str]) -> tuple[GameVersions, tuple[str, ...]]:
    deps = deps if isinstance(deps, dict) else {}
    loaders = tuple(LOADER_DEPENDENCIES[k] for k in LOADER_DEPENDENCIES if isinstance(deps.get(k), str))
    unknown = sorted(str(k)[:40] for k in deps if k != "minecraft" and k not in LOADER_DEPENDENCIES)
    if unknown:
        warnings.append(f"unknown dependencies ignored: {', '.join(unknown[:10])}")
    mc = deps.get("minecraft")
    if not isinstance(mc, str) or not mc.strip():
        warnings.append("dependencies.minecraft missing; game versions not stated")
        return GameVersions(), loaders
    mc = mc.strip()[:64]
    if mc not in archive.table.by_id:
        warnings.append(f"Minecraft version {mc!r} is not in the versions table")
    return GameVersions(source="dependencies.minecraft", raw=mc,
                        versions=(mc,) if mc in archive.table.by_id else ()), loaders


def parse(files: Mapping[str, bytes], archive: Archive) -> PackParseResult:
    doc, warnings, failed = read_json(files[PATH], PATH, MAX_INDEX_BYTES)
    if failed is not None:
        return PackParseResult(problems=(failed,))
    fails: list[ManifestProblem] = []
    if doc.get("formatVersion") != 1:
        fails.append(problem(PATH, "unsupported_format_version",
                             f"formatVersion {str(doc.get('formatVersion'))[:20]!r} (only 1 exists)"))
    if doc.get("game") != "minecraft":
        fails.append(problem(PATH, "not_minecraft", f"game {str(doc.get('game'))[:40]!r} is not \"minecraft\""))
    raw_files = doc.get("files")
    if not isinstance(raw_files, list):
        fails.append(problem(PATH, "invalid_manifest", "files must be an array"))
    elif len(raw_files) > MAX_FILES:
        fails.append(problem(PATH, "too_many_files", f"{len(raw_files)} files listed (at most {MAX_FILES})"))
    if fails:
        return PackParseResult(problems=tuple(fails))
    pack_files: list[PackFile] = []
    bad_paths: list[str] = []
    skipped: list[str] = []
    for i, raw in enumerate(raw_files):
        item = _file(raw, i)
        if isinstance(item, PackFile):
            pack_files.append(item)
        elif "leaves the instance" in item:
            bad_paths.append(item)
        else:
            skipped.append(item)
    warnings += [s + "; skipped" for s in skipped[:MAX_NOTES]]
    if len(skipped) > MAX_NOTES:
        warnings.append(f"{len(skipped) - MAX_NOTES} more unusable files skipped")
    if bad_paths:  # a launcher would write outside the instance: the whole pack is hostile
        return PackParseResult(problems=(problem(PATH, "path_traversal", "; ".join(bad_paths[:5])),))
    game, loaders = _game_and_loaders(doc.get("dependencies"), archive, warnings)
    if not loaders:
        warnings.append("no loader dependency (fabric-loader, quilt-loader, forge, neoforge): a vanilla pack")
    held = [f for f in pack_files if f.off_host_downloads]
    hosts = sorted({(urlsplit(u).hostname or "?") for f in held for u in f.off_host_downloads})
    review = (f"{len(held)} of {len(pack_files)} files download from outside Modrinth's allowed hosts "
              f"({', '.join(hosts[:10])})",) if held else ()
    nested = tuple(n for n in archive.names if n.startswith(OVERRIDES) and n.endswith(".jar"))
    return PackParseResult(record=PackRecord(
        project_type="modpack", loaders=loaders, manifest_path=PATH,
        name=text(doc.get("name"))[:200] if text(doc.get("name")) else None,
        version=text(doc.get("versionId"))[:100] if text(doc.get("versionId")) else None,
        description=description_of(doc.get("summary")), game_versions=game, files=tuple(pack_files),
        nested_jars=nested, held_for_review=review, warnings=tuple(warnings)))


# packwiz's pack.toml: a modpack's source tree (``packwiz modrinth export`` makes the .mrpack).
PACKWIZ = "pack.toml"
FORMATS = (Format("modpack", PACK, 50, (".mrpack", ".zip"), (PATH,), parse,
                  tuple(LoaderName(n, n) for n in LOADER_DEPENDENCIES.values()), MODPACK, (PATH, PACKWIZ),
                  "Modrinth modpack (.mrpack): modrinth.index.json lists the files a launcher downloads"),)
