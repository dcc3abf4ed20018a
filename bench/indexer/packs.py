"""The pack mix (issue 34): requests per archive and archives/s for resource, data and shader
packs and .mrpack modpacks, read the way the release job reads them (``indexium_jar.packread``),
beside the same baseline as the jar bench (the owner's plan: HEAD + tail + central directory +
manifest, each following the redirect).

    python bench/indexer/packs.py [--seconds 6] [--concurrency 16] [--slices 3] [--latency-ms 20]
    python bench/indexer/run.py --part packs

Archives from ``indexium_devstack.packs``: resource packs of 10 to 5,000 textures (the bulk
first, as a zip of a folder puts ``pack.mcmeta`` after ``assets/``), data packs, shader packs
(Iris and OptiFine), and modpacks listing 10 to 1,000 files with jars under ``overrides/``.
Requests are counted by the server (FakeGitHub's per-asset CDN statistics). Archives/s: both
readers in alternating slices over one in-process FakeGitHub (its CPU falls on both alike).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import time

import aiohttp

from indexium_devstack import jars, packs
from indexium_devstack.fakegithub import FakeGitHub
from indexium_jar.http.remote import DownloadPolicy
from indexium_jar.packread import read_pack_metadata
from indexium_jar.packs import mrpack
from indexium_jar.packs._mcmeta import PATH as MCMETA
from indexium_jar.packs.shaderpack import PROPERTIES
from indexium_jar.zip.zipfmt import CentralDirectory, locate_eocd

_MANIFESTS = (mrpack.PATH, MCMETA, PROPERTIES)


def mix() -> list[tuple[str, str, bytes, str]]:
    """(label, file name, bytes, expected project type)."""
    out = []
    for n in (10, 100, 1_000, 5_000):
        out.append((f"resource pack, {n} textures", f"rp{n}.zip", packs.resource_pack(15, filler=n), "resourcepack"))
    out.append(("data pack", "dp.zip", packs.data_pack(41), "datapack"))
    for n in (10, 500):
        out.append((f"shader pack, {n} files", f"sh{n}.zip", packs.shader_pack(filler=n), "shader"))
    out.append(("shader pack, Iris only", "iris.zip", packs.shader_pack(iris_only=True), "shader"))
    for n in (10, 100, 1_000):
        files = [packs.pack_file(f"mods/m{i}.jar", str(i).encode(), f"https://cdn.modrinth.com/data/{i}/m.jar")
                 for i in range(n)]
        overrides = {f"mods/bundled{i}.jar": jars.fabric_jar(f"bundled{i}", "1.0") for i in range(3)}
        out.append((f"modpack, {n} files", f"mp{n}.mrpack", packs.mrpack(files, overrides=overrides), "modpack"))
    return out


async def owner_plan(session: aiohttp.ClientSession, url: str) -> None:
    """HEAD + tail + central directory + the pack's manifest (the jar bench's baseline)."""
    async with session.head(url, allow_redirects=True) as resp:
        size = int(resp.headers["Content-Length"])

    async def get(start: int, end: int) -> bytes:
        async with session.get(url, headers={"Range": f"bytes={start}-{end - 1}"}) as resp:
            return await resp.read()

    tail_start = max(0, size - 65_536 - 22)
    info = locate_eocd(await get(tail_start, size), tail_start, size)
    directory = CentralDirectory(await get(info.cd_offset, info.cd_offset + info.cd_size))
    names = {e.name for e in directory.entries()}
    entry = next((directory.entry(n) for n in _MANIFESTS if n in names), None)
    if entry is not None:
        await get(entry.local_header_offset, entry.local_header_offset + 30 + entry.name_size
                  + entry.compressed_size + 1024)


async def requests_per_archive(gh: FakeGitHub, session, policy, items) -> list[tuple[str, int, int, str, list]]:
    rows = []
    for label, name, url, asset, _data, want in items:
        md = await read_pack_metadata(session, url, policy, file_name=name, with_entry_sizes=True)
        got = md.pack.project_type if md.pack else (md.skip.code if md.skip else "?")
        ours = gh.stats(asset)
        gh.reset_stats()
        await owner_plan(session, url)
        owner = gh.stats(asset)
        gh.reset_stats()
        rows.append((label, ours.requests, owner.requests, got if got == want else f"WRONG {got}",
                     list(md.pack.game_versions.versions[:2]) if md.pack else []))
    return rows


async def rate(session, policy, items, which: str, seconds: float, concurrency: int) -> tuple[int, float, float]:
    done = 0
    stop = time.perf_counter() + seconds
    cpu0, t0 = time.process_time(), time.perf_counter()

    async def worker(k: int) -> None:
        nonlocal done
        i = k
        while time.perf_counter() < stop:
            _label, name, url, *_ = items[i % len(items)]
            if which == "ours":
                await read_pack_metadata(session, url, policy, file_name=name, with_entry_sizes=True)
            else:
                await owner_plan(session, url)
            done += 1
            i += concurrency

    await asyncio.gather(*(worker(k) for k in range(concurrency)))
    return done, time.perf_counter() - t0, time.process_time() - cpu0


async def main(seconds: float, concurrency: int, slices: int, latency_ms: float = 20.0) -> None:
    async with FakeGitHub(url_ttl=3600) as gh, aiohttp.ClientSession(
            connector=aiohttp.TCPConnector(limit=concurrency * 2)) as session:
        policy = DownloadPolicy(allowed_hosts=frozenset({gh.github_host, gh.cdn_host}))
        release = gh.add_release(gh.add_repo("bench", "packs"), "v1")
        items = []
        for label, name, data, want in mix():
            asset = gh.add_asset(release, name, data)
            items.append((label, name, gh.download_url(asset), asset, data, want))
        print("Pack mix: requests per archive (server-side CDN requests)\n")
        rows = await requests_per_archive(gh, session, policy, items)
        for (label, ours, owner, got, versions), item in zip(rows, items):
            print(f"{label:32s} {len(item[4]):>10,} B  ours {ours}  owner {owner}  type {got}  versions {versions}")
        ours = [r[1] for r in rows]
        print(f"\nrequests per archive  ours: median {statistics.median(ours):g}, max {max(ours)}; "
              f"owner: median {statistics.median(r[2] for r in rows):g}")
        print(f"targets: median <= 2: {'MET' if statistics.median(ours) <= 2 else 'MISSED'}; "
              f"max 3: {'MET' if max(ours) <= 3 else 'MISSED'}; right type: "
              f"{'MET' if not any(r[3].startswith('WRONG') for r in rows) else 'MISSED'}")
        for delay in (0.0, *([latency_ms] if latency_ms else [])):
            if delay:
                gh.set_latency(delay / 1000)  # before every answer: a CDN round trip
            totals = {"ours": [0, 0.0, 0.0], "owner": [0, 0.0, 0.0]}
            for _ in range(slices):
                for which in totals:
                    n, wall, cpu = await rate(session, policy, items, which, seconds / slices, concurrency)
                    t = totals[which]
                    t[0], t[1], t[2] = t[0] + n, t[1] + wall, t[2] + cpu
            where = f"{delay:g} ms before every answer" if delay else "loopback"
            print(f"\narchives/s, {where} ({concurrency} at once, {slices} alternating slices, FakeGitHub in this "
                  f"process: its CPU counts for both):")
            for which, (n, wall, cpu) in totals.items():
                print(f"  {which:5s}: {n / wall:7.1f} archives/s ({n}), CPU ms per archive {cpu / max(n, 1) * 1000:.2f}")
            (n1, w1, _), (n2, w2, _) = totals.values()
            print(f"  ours / owner: {(n1 / w1) / (n2 / w2):.2f}x by archives/s")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=6.0)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--slices", type=int, default=3)
    parser.add_argument("--latency-ms", type=float, default=20.0, help="a second run with this delay (0: none)")
    args = parser.parse_args()
    print(f"load average before: {open('/proc/loadavg').read().split()[:3]} on {os.cpu_count()} CPUs\n")
    asyncio.run(main(args.seconds, args.concurrency, args.slices, args.latency_ms))
