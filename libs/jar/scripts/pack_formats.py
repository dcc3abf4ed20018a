"""Regenerate ``indexium_jar/data/pack_formats.json`` from Mojang's own version metadata.

Every client jar since 18w47b carries a ``version.json`` whose ``pack_version`` names the
resource-pack and data-pack formats that version reads: a bare number (the 1.14 era),
``{"resource": N, "data": M}`` (to 1.21.8), or since 25w31a
``{"resource_major", "resource_minor", "data_major", "data_minor"}``. This script reads them
from one of two sources and writes the table the pack parsers map formats through:

* ``--misode PATH_OR_URL``: misode/mcmeta's ``summary`` branch ``versions/data.json`` (or
  ``data.min.json``, or a checkout of that branch), which lists every version from 1.14 on
  with ``resource_pack_version``/``data_pack_version`` (and ``*_minor`` since 25w31a), each
  taken from that version's ``version.json``; with internet,
  https://raw.githubusercontent.com/misode/mcmeta/summary/versions/data.json
* ``--mojang [MANIFEST_URL]``: Mojang's own metadata, read directly: piston-meta's
  ``version_manifest_v2.json`` (the default URL below), each version's JSON from it, and the
  ``version.json`` entry of each client jar read with the jar reader's HTTP Range requests
  (``indexium_jar.http.remote``: a few requests per jar, never the whole jar), from the newest
  version back to 18w47b (the first client jar with a ``version.json``); ids, types and release
  times as the manifest gives them. Hosts: Mojang's (``MOJANG_HOSTS``) unless ``--allow-host``.
* ``--version-json DIR``: a directory of ``version.json`` files extracted from client jars
  (``unzip -p client.jar version.json``); ``stable: true`` marks a release.

Usage (from the checkout, with ``make env`` done), where the internet is reachable::

    .venv/bin/python libs/jar/scripts/pack_formats.py --mojang \
        --source "Mojang piston-meta version_manifest_v2.json and client-jar version.json, read <date>"

or from misode's summary (``--misode URL --source "misode/mcmeta summary, versions/data.json at
<commit>"``). ``--out FILE`` writes elsewhere than the shipped table. The table is never edited
by hand: ``tests/unit/jar/test_pack_formats_table.py`` checks it is exactly this script's output.
"""

from __future__ import annotations

import argparse
import json
import sys
import urllib.request
from pathlib import Path
from typing import Any

OUT = Path(__file__).resolve().parents[1] / "src" / "indexium_jar" / "data" / "pack_formats.json"


def _read_json(source: str) -> Any:
    if source.startswith(("http://", "https://")):
        with urllib.request.urlopen(source, timeout=60) as answer:  # noqa: S310 - a URL the operator typed
            return json.load(answer)
    path = Path(source)
    if path.is_dir():  # a checkout of misode/mcmeta's summary branch
        path = path / "versions" / "data.json"
    return json.loads(path.read_text(encoding="utf-8"))


def _pair(major: Any, minor: Any = 0) -> list[int]:
    if not isinstance(major, int) or isinstance(major, bool) or major < 0:
        raise ValueError(f"pack version {major!r} is not a non-negative integer")
    minor = minor if isinstance(minor, int) and not isinstance(minor, bool) and minor >= 0 else 0
    return [major, minor]


def rows_from_misode(doc: Any) -> list[dict[str, Any]]:
    """misode's ``versions/data.json``: one object per version, newest first."""
    if not isinstance(doc, list):
        raise ValueError("misode's versions/data.json is a JSON array")
    rows = []
    for v in doc:
        rows.append({
            "id": str(v["id"]),
            "type": "release" if v.get("type") == "release" else "snapshot",
            "releaseTime": str(v["release_time"]),
            "resource": _pair(v["resource_pack_version"], v.get("resource_pack_version_minor", 0)),
            "data": _pair(v["data_pack_version"], v.get("data_pack_version_minor", 0)),
        })
    return rows


def pack_version_of(doc: dict[str, Any]) -> tuple[list[int], list[int]]:
    """``pack_version`` of a client jar's version.json, in each of its three shapes."""
    pv = doc["pack_version"]
    if isinstance(pv, int):  # 18w47b .. 1.16-ish: one number for both kinds
        return _pair(pv), _pair(pv)
    if "resource_major" in pv:  # 25w31a on
        return (_pair(pv["resource_major"], pv.get("resource_minor", 0)),
                _pair(pv["data_major"], pv.get("data_minor", 0)))
    return _pair(pv["resource"]), _pair(pv["data"])


def rows_from_version_jsons(directory: Path) -> list[dict[str, Any]]:
    rows = []
    for path in sorted(directory.glob("*.json")):
        doc = json.loads(path.read_text(encoding="utf-8"))
        resource, data = pack_version_of(doc)
        rows.append({"id": str(doc["id"]), "type": "release" if doc.get("stable") else "snapshot",
                     "releaseTime": str(doc.get("release_time") or doc.get("build_time")),
                     "resource": resource, "data": data})
    return sorted(rows, key=lambda r: r["releaseTime"], reverse=True)


MOJANG_MANIFEST = "https://piston-meta.mojang.com/mc/game/version_manifest_v2.json"
MOJANG_HOSTS = ("piston-meta.mojang.com", "piston-data.mojang.com", "launchermeta.mojang.com", "launcher.mojang.com")
FIRST_WITH_VERSION_JSON = "18w47b"  # older client jars carry no version.json
MAX_JSON_BYTES = 16 << 20  # the manifest is ~300 KB, a version's JSON ~30 KB


async def rows_from_mojang(manifest_url: str = MOJANG_MANIFEST, hosts: tuple[str, ...] = MOJANG_HOSTS, *,
                           concurrency: int = 8) -> list[dict[str, Any]]:
    """Every version from the newest back to 18w47b, its pack versions from its client jar's
    version.json (Range reads); the manifest's id, type and release time."""
    import asyncio  # noqa: PLC0415 - the other sources need neither the network nor the jar reader

    import aiohttp  # noqa: PLC0415
    from yarl import URL  # noqa: PLC0415

    from indexium_jar.http.policy import DownloadPolicy, check_host  # noqa: PLC0415
    from indexium_jar.http.remote import RemoteJar  # noqa: PLC0415

    policy = DownloadPolicy(allowed_hosts=frozenset(hosts), timeout=60.0)

    async def get_json(session: aiohttp.ClientSession, url: str) -> Any:
        await check_host(URL(url), policy)
        async with session.get(url, allow_redirects=False) as resp:
            resp.raise_for_status()
            body = await resp.content.read(MAX_JSON_BYTES + 1)
        if len(body) > MAX_JSON_BYTES:
            raise ValueError(f"{url}: more than {MAX_JSON_BYTES} bytes")
        return json.loads(body)

    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=120)) as session:
        manifest = await get_json(session, manifest_url)
        listed = sorted(manifest["versions"], key=lambda v: v["releaseTime"], reverse=True)
        ids = [v["id"] for v in listed]
        if FIRST_WITH_VERSION_JSON not in ids:
            raise ValueError(f"the manifest does not list {FIRST_WITH_VERSION_JSON}")
        wanted = listed[: ids.index(FIRST_WITH_VERSION_JSON) + 1]
        gate = asyncio.Semaphore(concurrency)

        async def row(v: dict[str, Any]) -> dict[str, Any] | None:
            async with gate:
                client = (await get_json(session, v["url"]))["downloads"]["client"]["url"]
                jar = await RemoteJar.open(session, client, policy)
                found = await jar.read(["version.json"])
            if "version.json" not in found:
                print(f"{v['id']}: its client jar has no version.json; left out", file=sys.stderr)
                return None
            resource, data = pack_version_of(json.loads(found["version.json"]))
            return {"id": str(v["id"]), "type": "release" if v.get("type") == "release" else "snapshot",
                    "releaseTime": str(v["releaseTime"]), "resource": resource, "data": data}

        rows = await asyncio.gather(*(row(v) for v in wanted))
    return [r for r in rows if r is not None]


def check(rows: list[dict[str, Any]]) -> None:
    """Refuse a table whose formats ever go down with time, or that names a version twice."""
    ids = [r["id"] for r in rows]
    if len(ids) != len(set(ids)):
        raise ValueError("a version appears twice")
    chronological = sorted(rows, key=lambda r: r["releaseTime"])
    for kind in ("resource", "data"):
        releases = [r for r in chronological if r["type"] == "release"]
        for before, after in zip(releases, releases[1:]):
            if after[kind] < before[kind]:
                raise ValueError(f"{kind} format goes down from {before['id']} to {after['id']}")


def build(rows: list[dict[str, Any]], source: str) -> dict[str, Any]:
    check(rows)
    return {
        "_comment": "Generated by libs/jar/scripts/pack_formats.py; do not edit. resource/data are "
                    "[major, minor] pack formats from each version's version.json pack_version.",
        "source": source,
        "newest": rows[0]["id"] if rows else None,
        "oldest": rows[-1]["id"] if rows else None,
        "versions": rows,
    }


def dumps(table: dict[str, Any]) -> str:
    """One version a line, so a regeneration reads as a diff of versions."""
    head = {k: v for k, v in table.items() if k != "versions"}
    lines = [json.dumps(r, ensure_ascii=False, separators=(", ", ": ")) for r in table["versions"]]
    body = json.dumps(head, indent=1, ensure_ascii=False)[:-2]
    return body + ',\n "versions": [\n  ' + ",\n  ".join(lines) + "\n ]\n}\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--misode", help="misode/mcmeta summary versions/data.json (path, checkout or URL)")
    group.add_argument("--version-json", type=Path, help="a directory of client-jar version.json files")
    group.add_argument("--mojang", nargs="?", const=MOJANG_MANIFEST, metavar="MANIFEST_URL",
                       help=f"Mojang's version manifest and client jars (default {MOJANG_MANIFEST})")
    parser.add_argument("--allow-host", action="append", default=[],
                        help="--mojang: a host to fetch from instead of Mojang's (repeatable; host or host:port)")
    parser.add_argument("--source", required=True, help="where the input came from (repository, commit, URL)")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    if args.mojang:
        import asyncio  # noqa: PLC0415

        rows = asyncio.run(rows_from_mojang(args.mojang, tuple(args.allow_host) or MOJANG_HOSTS))
    elif args.misode:
        rows = rows_from_misode(_read_json(args.misode))
    else:
        rows = rows_from_version_jsons(args.version_json)
    table = build(rows, args.source)
    args.out.write_text(dumps(table), encoding="utf-8")
    print(f"{len(rows)} versions, {table['oldest']} .. {table['newest']} -> {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
