"""Indexer jar-reading benchmark: HTTP requests, bytes and jars/s per process, beside the owner's plan.

    python bench/indexer/run.py [--seconds 10] [--concurrency 16] [--quick]

Jars: ``indexium_devstack.jars.large_jar`` from 10 KB to 50 MB and from 10 to 20,000
entries, every loader in turn, with the loader manifest written first (after
MANIFEST.MF, as Gradle writes small jars) or last (right before the central directory),
served by FakeGitHub (github.com-style redirect to a CDN host with signed URLs and Range).

Part 1, per jar, on one in-process FakeGitHub, both readers in the same run:

* ``ours``: the indexer's ``read_metadata`` as the release job calls it (suffix read, directory,
  planned entry reads, the scan's entry sizes packed: ``with_entry_sizes=True``);
* ``owner``: the owner's plan: HEAD for the size, a 64 KiB + 22 B tail for the end record,
  the central directory, then the manifest: 4 requests, each following the redirect.

Requests and bytes are counted by the SERVER (FakeGitHub's per-asset CDN statistics:
requests reaching the CDN host, body bytes it sent); redirect hops on the github host
are listed apart. ``ideal`` = the tail + the part of the central directory before the
tail + the exact local spans (header, name, extra, data) of the loader manifests,
computed with ``zipfile`` independently of the reader.

Part 2, jars/s per process: FakeGitHub runs in a CHILD process (so its CPU is not
charged to the reader) serving a mix of the grid's jars; this process runs
``read_metadata`` (HTTP Range reads + zip parsing + manifest parsing: the indexer's
read+parse path, without the PostgreSQL write) with ``--concurrency`` jobs at once for
``--seconds``, and reports completed jars per wall-clock second and CPU ms per jar (this
process and the server's, from /proc). Ours and the owner's plan take turns in ``--slices``
short slices over the same server (load that drifts during the run falls on both alike),
and the row ends with the two ratios: jars/s, and CPU per jar. On loopback a round trip costs nothing, so the
owner's extra requests hardly show; a second run adds ``--latency-ms`` before every
response, as a CDN round trip would.
Not part of ``make test``; figures depend on the machine.
"""

from __future__ import annotations

import argparse
import asyncio
import io
import json
import os
import statistics
import struct
import subprocess
import sys
import time
import zipfile
from dataclasses import dataclass

import aiohttp

from indexium_devstack import jars as devjars
from indexium_devstack.fakegithub import FakeGitHub
from indexium_devstack.jars import large_jar
from indexium_jar.metadata import read_metadata
from indexium_jar.manifests import LOADER_MANIFESTS
from indexium_jar.http.remote import DownloadPolicy
from indexium_jar.zip.zipfmt import CentralDirectory, locate_eocd

SIZES = (10_000, 100_000, 1_000_000, 5_000_000, 20_000_000, 50_000_000)
ENTRIES = (10, 100, 1_000, 5_000, 20_000)
LOADERS = ("fabric", "forge", "neoforge", "quilt", "mcmod")
MB = 1_000_000
# A small class the scan's prefilter passes over (names no API a rule reads).
CLASS_BYTES = (b"\xca\xfe\xba\xbe\x00\x00\x00\x3d\x00\x05\x07\x00\x02\x01\x00\x05e2e/C\x07\x00\x04"
               b"\x01\x00\x10java/lang/Object\x00\x21\x00\x01\x00\x03\x00\x00\x00\x00\x00\x00\x00\x00")


@dataclass
class Row:
    label: str
    size: int
    entries: int
    cd_size: int
    ours_requests: int
    ours_redirects: int
    ours_bytes: int
    owner_requests: int
    owner_redirects: int
    owner_bytes: int
    ideal: int
    records: int


def grid(quick: bool) -> list[tuple[int, int, str, bool]]:
    sizes = SIZES[:4] if quick else SIZES
    out = []
    i = 0
    for size in sizes:
        for entries in ENTRIES:
            if entries * 140 > size:  # the entries alone would not fit in that size
                continue
            for last in (False, True):
                out.append((size, entries, LOADERS[i % len(LOADERS)], last))
                i += 1
    return out


def build(size: int, entries: int, loader: str, last: bool) -> bytes:
    return large_jar(size, entries, mod_id=f"bench{entries}", loader=loader, metadata_last=last, seed=size ^ entries)


def ideal_bytes(data: bytes, tail_size: int) -> tuple[int, int]:
    """(ideal bytes, central directory size): tail + directory before the tail + manifest spans."""
    size = len(data)
    tail_start = max(0, size - tail_size)
    info = locate_eocd(data[tail_start:], tail_start, size)
    before_tail = max(0, min(info.cd_offset + info.cd_size, tail_start) - info.cd_offset)
    spans = 0
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        for zi in zf.infolist():
            if zi.filename in LOADER_MANIFESTS:
                nlen, elen = struct.unpack_from("<HH", data, zi.header_offset + 26)
                start, end = zi.header_offset, zi.header_offset + 30 + nlen + elen + zi.compress_size
                spans += max(0, min(end, tail_start) - start)  # the part the tail does not hold
    return size - tail_start + before_tail + spans, info.cd_size


async def owner_plan(session: aiohttp.ClientSession, url: str) -> None:
    """HEAD + tail + central directory + manifest, each request following the redirect."""
    async with session.head(url, allow_redirects=True) as resp:
        size = int(resp.headers["Content-Length"])

    async def get(start: int, end: int) -> bytes:
        async with session.get(url, headers={"Range": f"bytes={start}-{end - 1}"}) as resp:
            return await resp.read()

    tail_start = max(0, size - 65_536 - 22)
    tail = await get(tail_start, size)
    info = locate_eocd(tail, tail_start, size)
    cd = await get(info.cd_offset, info.cd_offset + info.cd_size)
    directory = CentralDirectory(cd)  # the same name index ours uses: only the plan differs
    manifest = next(e for e in map(directory.entry, sorted(LOADER_MANIFESTS)) if e is not None)
    await get(manifest.local_header_offset, manifest.local_header_offset + 30 + manifest.name_size
              + manifest.compressed_size + 1024)


async def part1(quick: bool) -> list[Row]:
    _memoize_fake_etags()
    rows = []
    async with FakeGitHub() as gh, aiohttp.ClientSession() as session:
        policy = DownloadPolicy(allowed_hosts=frozenset({gh.github_host, gh.cdn_host}))
        repo = gh.add_repo("bench", "jars")
        release = gh.add_release(repo, "v1")
        for n, (size, entries, loader, last) in enumerate(grid(quick)):
            data = build(size, entries, loader, last)
            ideal, cd_size = ideal_bytes(data, policy.tail_size)
            asset = gh.add_asset(release, f"jar{n}.jar", data)
            url = gh.download_url(asset)
            md = await read_metadata(session, url, policy, with_entry_sizes=True)
            ours = gh.stats(asset)
            gh.reset_stats()
            await owner_plan(session, url)
            owner = gh.stats(asset)
            gh.reset_stats()
            gh.remove_asset(asset)
            label = f"{loader:8s} {'last ' if last else 'first'}"
            rows.append(Row(label, len(data), entries, cd_size, ours.requests, ours.redirects, ours.bytes_sent,
                            owner.requests, owner.redirects, owner.bytes_sent, ideal, len(md.records)))
            assert md.records, f"{label}: no record"
    return rows


def report1(rows: list[Row]) -> None:
    print("Part 1: per jar (server-side counts; CDN requests, redirects apart)\n")
    print(f"{'jar size':>10} {'entries':>7} {'CD':>9} {'manifest':14} | {'ours req':>8} {'bytes':>10} {'/jar':>7} "
          f"{'/ideal':>6} | {'owner req':>9} {'bytes':>10} {'/jar':>7}")
    for r in rows:
        print(f"{r.size:>10,} {r.entries:>7,} {r.cd_size:>9,} {r.label:14} | {r.ours_requests:>8} {r.ours_bytes:>10,} "
              f"{r.ours_bytes / r.size:>7.3f} {r.ours_bytes / r.ideal:>6.3f} | {r.owner_requests:>9} "
              f"{r.owner_bytes:>10,} {r.owner_bytes / r.size:>7.3f}")
    ours = [r.ours_requests for r in rows]
    owner = [r.owner_requests for r in rows]
    small_cd = [r.ours_requests for r in rows if r.cd_size < MB]
    ratio = [r.ours_bytes / r.ideal for r in rows]
    print(f"\n{len(rows)} jars, {min(r.size for r in rows):,} to {max(r.size for r in rows):,} bytes, "
          f"{min(r.entries for r in rows)} to {max(r.entries for r in rows):,} entries")
    print(f"requests per jar     ours: median {statistics.median(ours):g}, max {max(ours)} "
          f"(max {max(small_cd)} with CD < 1 MB); redirect hops {statistics.median(r.ours_redirects for r in rows):g}/jar")
    print(f"                    owner: median {statistics.median(owner):g}, max {max(owner)}; "
          f"redirect hops {statistics.median(r.owner_redirects for r in rows):g}/jar")
    print(f"bytes per jar        ours: median {statistics.median(r.ours_bytes for r in rows):,.0f}, "
          f"max {max(r.ours_bytes for r in rows):,}; / jar size median {statistics.median(r.ours_bytes / r.size for r in rows):.4f}")
    print(f"                    owner: median {statistics.median(r.owner_bytes for r in rows):,.0f}, "
          f"max {max(r.owner_bytes for r in rows):,}; / jar size median {statistics.median(r.owner_bytes / r.size for r in rows):.4f}")
    print(f"bytes / ideal (tail + CD + manifest span)  ours: median {statistics.median(ratio):.3f}, max {max(ratio):.3f}")
    verdict = [
        ("median <= 2 requests", statistics.median(ours) <= 2),
        ("never more than 3 with CD < 1 MB", max(small_cd) <= 3),
        ("bytes <= 1.2 x (tail + manifest span)", max(ratio) <= 1.2),
    ]
    print("targets: " + "; ".join(f"{name}: {'MET' if ok else 'MISSED'}" for name, ok in verdict))


# --- end to end: the indexer and the scan stage together ----------------------------------------

def e2e_jars(quick: bool) -> list[tuple[str, bytes]]:
    """The grid's jars up to 5 MB (20 MB unless quick), plus mod jars as Gradle and as the JDK's
    jar tool write them (the latter with data descriptors: the sizes the scan is handed matter)."""
    out = [(f"grid {size:>10,} B {entries:>6,} ent. {'last' if last else 'first'}", build(size, entries, loader, last))
           for size, entries, loader, last in grid(True)
           if (size, last) != (5_000_000, True)]
    if not quick:
        out.append(("grid 20,000,000 B 20,000 ent. first", build(20_000_000, 20_000, "fabric", False)))
    for streamed in (False, True):
        data = devjars.fabric_jar("e2emod", extra_entries=400, data_descriptors=streamed,
                                  extra_files={f"com/example/e2e/C{i}.class": CLASS_BYTES for i in range(300)})
        out.append((f"mod jar {'(jar tool, descriptors)' if streamed else '(Gradle)'}", data))
    return out


async def end_to_end(quick: bool) -> None:
    """CDN requests and bytes per jar for the indexer's read plus the scan stage's, counted at
    FakeGitHub's CDN, against 1 range read (the ideal bytes of part 1) + 1 full download."""
    from concurrent.futures import ThreadPoolExecutor

    from indexium_indexer.scan.archive import ScanLimits
    from indexium_indexer.scan.pipeline import FileToScan, ScanContext, scan_file
    from indexium_jar.http.remote import RemoteJar

    _memoize_fake_etags()
    print("\nEnd to end: CDN requests and bytes per jar, indexer + scan stage (server-side counts)\n")
    print(f"{'jar':36} {'size':>11} | {'indexer':>7} {'scan':>4} {'total':>5} {'bytes':>11} | "
          f"{'baseline':>8} {'bytes':>11} {'ratio':>6} | {'before':>6} {'bytes':>11}")
    rows = []
    parse, hashing = ThreadPoolExecutor(1), ThreadPoolExecutor(1)
    async with FakeGitHub() as gh, aiohttp.ClientSession() as session:
        policy = DownloadPolicy(allowed_hosts=frozenset({gh.github_host, gh.cdn_host}))
        ctx = ScanContext(session=session, policy=policy, parse_executor=parse, hash_executor=hashing,
                          limits=ScanLimits(), max_bytes=256 * MB)
        release = gh.add_release(gh.add_repo("bench", "e2e"), "v1")
        for n, (label, data) in enumerate(e2e_jars(quick)):
            asset = gh.add_asset(release, f"e2e{n}.jar", data)
            url = gh.download_url(asset)
            ideal, _ = ideal_bytes(data, policy.tail_size)
            gh.reset_stats()
            md = await read_metadata(session, url, policy, with_entry_sizes=True)
            indexer = gh.stats(asset)
            gh.reset_stats()
            verdict = await scan_file(ctx, FileToScan(url, asset.size, asset.digest, None, md.entry_sizes))
            scan = gh.stats(asset)
            assert verdict.status == "clean", (label, verdict)
            gh.reset_stats()
            await RemoteJar.open(session, url, policy)  # what the stage used to read before its download
            before = gh.stats(asset)
            gh.reset_stats()
            gh.remove_asset(asset)
            total_req, total_bytes = indexer.requests + scan.requests, indexer.bytes_sent + scan.bytes_sent
            base_bytes = ideal + len(data)
            rows.append((total_req, total_bytes / base_bytes, scan.requests))
            print(f"{label:36} {len(data):>11,} | {indexer.requests:>7} {scan.requests:>4} {total_req:>5} "
                  f"{total_bytes:>11,} | {2:>8} {base_bytes:>11,} {total_bytes / base_bytes:>6.3f} | "
                  f"{total_req + before.requests:>6} {total_bytes + before.bytes_sent:>11,}")
    parse.shutdown()
    hashing.shutdown()
    reqs = [r[0] for r in rows]
    print(f"\nrequests per jar, indexer + scan: median {statistics.median(reqs):g}, max {max(reqs)} "
          f"(baseline 2); scan requests per file: max {max(r[2] for r in rows)}; "
          f"bytes / baseline: median {statistics.median(r[1] for r in rows):.3f}, max {max(r[1] for r in rows):.3f}")
    print("'before': the same with the scan stage's former directory read (a second tail) before its download")


# --- part 2: throughput ---------------------------------------------------------------------

# (size, entries). SURVEY: shaped like the spec's survey of real jars (median central
# directory 13.7 KB, 12/41 over 64 KiB, largest 266 KB = 2,485 entries; sizes mostly under
# 4 MiB). GRID: the whole range the indexer must read (10 KB to 50 MB, 10 to 20,000
# entries) evenly, 20,000-entry jars included (a stress mix).
SURVEY = (
    (40_000, 25), (150_000, 80), (300_000, 120), (600_000, 150), (900_000, 160), (1_500_000, 250),
    (2_000_000, 400), (3_000_000, 500), (4_000_000, 900), (6_000_000, 1_300), (10_000_000, 2_500),
)
GRID = (
    (10_000, 10), (100_000, 100), (1_000_000, 1_000), (5_000_000, 5_000), (20_000_000, 20_000),
    (50_000_000, 10), (50_000_000, 100), (50_000_000, 1_000), (50_000_000, 5_000), (50_000_000, 20_000),
)
MIX = SURVEY + GRID


def _memoize_fake_etags() -> None:
    """FakeGitHub hashes an asset's whole content for its ETag on every request (SHA-256 of
    50 MB per Range request): fine for tests, but it would make this benchmark measure the
    fake server. The bench's assets never change, so the ETag is computed once."""
    from indexium_devstack.fakegithub import models

    original = models.Asset.etag.fget
    cache: dict[int, str] = {}
    models.Asset.etag = property(lambda self: cache.get(self.id) or cache.setdefault(self.id, original(self)))


async def serve(args: argparse.Namespace) -> None:
    """Child process: FakeGitHub with the mix; prints the URLs, runs until stdin closes."""
    _memoize_fake_etags()
    async with FakeGitHub(url_ttl=3600) as gh:
        if args.latency_ms:
            gh.set_latency(args.latency_ms / 1000)  # before every answer of both hosts
        repo = gh.add_repo("bench", "mix")
        release = gh.add_release(repo, "v1")
        urls = []
        for i, (size, entries) in enumerate(MIX):
            loader, last = LOADERS[i % len(LOADERS)], bool(i % 2)
            asset = gh.add_asset(release, f"mix{i}.jar", build(size, entries, loader, last))
            urls.append(gh.download_url(asset))
        print(json.dumps({"urls": urls, "hosts": [gh.github_host, gh.cdn_host]}), flush=True)
        await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)


async def part2(seconds: float, concurrency: int, which: str, urls: list[str], hosts: list[str]) -> tuple[float, float, int]:
    rate, cpu_ms, done, _wall = await _slice(seconds, concurrency, which, urls, hosts)
    return rate, cpu_ms, done


async def _slice(seconds: float, concurrency: int, which: str, urls: list[str],
                 hosts: list[str]) -> tuple[float, float, int, float]:
    """One timed run of one reader: (jars/s, CPU ms per jar, jars, wall seconds)."""
    policy = DownloadPolicy(allowed_hosts=frozenset(hosts))
    connector = aiohttp.TCPConnector(limit=concurrency * 2)
    done = 0
    async with aiohttp.ClientSession(connector=connector) as session:
        for url in urls:  # warm-up: connections, imports, caches
            await (read_metadata(session, url, policy, with_entry_sizes=True) if which == "ours"
                   else owner_plan(session, url))
        stop = time.perf_counter() + seconds
        cpu0, t0 = time.process_time(), time.perf_counter()

        async def worker(k: int) -> None:
            nonlocal done
            i = k
            while time.perf_counter() < stop:
                url = urls[i % len(urls)]
                if which == "ours":
                    await read_metadata(session, url, policy, with_entry_sizes=True)
                else:
                    await owner_plan(session, url)
                done += 1
                i += concurrency

        await asyncio.gather(*(worker(k) for k in range(concurrency)))
        wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0
    return done / wall, cpu / max(done, 1) * 1000, done, wall


def _cpu_seconds(pid: int) -> float:
    """user + system CPU of a process (Linux /proc), to show whether the server is the limit."""
    try:
        fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return 0.0


def run_part2(seconds: float, concurrency: int, latency_ms: float, slices: int = 4) -> None:
    print(f"\nPart 2: jars/s in this process (FakeGitHub in a child process), {concurrency} jobs at once, "
          f"{seconds:g} s per reader and mix in {slices} alternating slices, each mix's jars read round-robin")
    _part2_child(seconds, concurrency, 0, full=True, slices=slices)
    if latency_ms:
        _part2_child(seconds, concurrency, latency_ms, full=False, slices=slices)
    print("target: >= 200 jars/s per indexer process on loopback")


def _part2_child(seconds: float, concurrency: int, latency_ms: float, *, full: bool, slices: int) -> None:
    child = subprocess.Popen([sys.executable, __file__, "--serve", "--latency-ms", str(latency_ms)],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                             env={**os.environ, "INDEXIUM_LOG_LEVEL": "warning"})
    try:
        info = json.loads(child.stdout.readline())
        print(f"\n-- {'loopback' if not latency_ms else f'{latency_ms:g} ms added before every response (a CDN round trip)'}"
              f" (server pid {child.pid})")
        survey, stress = info["urls"][: len(SURVEY)], info["urls"][len(SURVEY):]
        runs = [("ours, survey-like mix", survey), ("owner, survey-like mix", survey)]
        if full:
            runs += [("ours, grid mix (to 50 MB / 20,000 entries)", stress), ("owner, grid mix", stress)]
        # The two readers of a mix take turns in --slices short slices (ours, owner, ours, ...)
        # rather than one long run each: on a machine shared with other work the load drifts
        # within seconds, and back-to-back long runs gave whichever ran in the quieter half
        # the better figure. Each reader's jars, wall time and CPU are summed over its slices.
        for k in range(0, len(runs), 2):
            totals = {runs[k][0]: [0, 0.0, 0.0, 0.0], runs[k + 1][0]: [0, 0.0, 0.0, 0.0]}
            for _ in range(slices):
                for which, urls in runs[k : k + 2]:
                    server0 = _cpu_seconds(child.pid)
                    _rate, cpu_ms, n, wall = asyncio.run(_slice(seconds / slices, concurrency, which.split(",")[0],
                                                                urls, info["hosts"]))
                    t = totals[which]
                    t[0] += n
                    t[1] += wall
                    t[2] += cpu_ms * n / 1000
                    t[3] += _cpu_seconds(child.pid) - server0
            per_jar = {}
            for which, (n, wall, cpu, server) in totals.items():
                cpu_ms, server_ms = cpu / max(n, 1) * 1000, server / max(n, 1) * 1000
                per_jar[which] = (n / wall, cpu_ms)
                print(f"{which:42s}: {n / wall:7.1f} jars/s ({n} jars); CPU ms per jar: {cpu_ms:5.2f} here "
                      f"(ceiling ~{1000 / cpu_ms:,.0f} jars/s), {server_ms:5.2f} in FakeGitHub")
            (ours_rate, ours_cpu), (owner_rate, owner_cpu) = per_jar.values()
            print(f"{'  ours / owner':42s}: {ours_rate / owner_rate:5.2f}x by jars/s, "
                  f"{owner_cpu / ours_cpu:5.2f}x by CPU per jar (owner's CPU / ours; >= 1: ours cheaper)")
    finally:
        child.stdin.close()
        child.wait(10)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--quick", action="store_true", help="jars up to 5 MB only, 3 s throughput runs")
    parser.add_argument("--part", choices=("1", "2", "e2e", "scale", "packs", "both", "all"), default="all",
                        help="1: requests/bytes; 2: jars/s; e2e: indexer + scan requests; scale: replicas; "
                             "packs: the pack mix (packs.py); both: 1 and 2; all: every part")
    parser.add_argument("--latency-ms", type=float, default=20.0,
                        help="also measure jars/s with this delay before every response (0: loopback only)")
    parser.add_argument("--slices", type=int, default=4,
                        help="part 2: slices per reader, ours and the owner's plan alternating")
    parser.add_argument("--scale-jobs", type=int, default=300, help="releases per scale-out run")
    parser.add_argument("--scale-repeat", type=int, default=2, help="rounds of 1, 2, 3 processes")
    parser.add_argument("--cdn-latency-ms", type=float, default=50.0, help="scale-out: delay before every CDN answer")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        asyncio.run(serve(args))
        return
    print(f"load average before: {open('/proc/loadavg').read().split()[:3]} on {os.cpu_count()} CPUs\n")
    if args.part in ("1", "both", "all"):
        report1(asyncio.run(part1(args.quick)))
    if args.part in ("e2e", "all"):
        asyncio.run(end_to_end(args.quick))
    if args.part in ("2", "both", "all"):
        run_part2(3.0 if args.quick else args.seconds, args.concurrency, args.latency_ms, max(1, args.slices))
    if args.part in ("packs", "all"):
        import packs  # this directory is on sys.path when run as a script

        asyncio.run(packs.main(3.0 if args.quick else args.seconds, args.concurrency, max(1, args.slices),
                               args.latency_ms))
    if args.part in ("scale", "all"):
        import scale  # this directory is on sys.path when run as a script

        asyncio.run(scale.main(args.scale_jobs, args.cdn_latency_ms, args.scale_repeat))


if __name__ == "__main__":
    main()
