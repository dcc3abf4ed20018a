"""Scan-stage benchmark: MB/s per process beside a plain hashlib pass, and peak memory vs jar size.

    python bench/scan/run.py [--sizes 4,16,64] [--repeat 3]

For each jar, in the same run and over the same bytes in the same 256 KiB chunks:

* ``hashlib``: sha1 + sha256 + sha512, one thread (the baseline);
* ``scan``: the stage's real pipeline (``scan_stream``: hashing thread + archive walk,
  class parsing and rules), with the entry sizes the indexer hands over in the event
  (``FileRef.entry_sizes``: data-descriptor entries only), and without them.

Jars: ``mod`` is shaped like a content mod (by compressed bytes ~35% deflated classes,
~45% incompressible textures, ~20% deflated JSON/lang); ``mod-strm`` is the same written
with data descriptors (as the JDK's jar tool does: there the sizes matter); ``classes``
is all classes, ~53,000 of them (the worst case: everything must be inflated and
pre-filtered); ``stored`` is the devstack's ``large_jar`` (stored filler). Targets:
``mod`` >= 0.5x, ``classes`` >= 0.25x of the hashlib pass. Peak memory is tracemalloc's peak during a
scan of ``mod`` jars of growing size (the jar's own bytes excluded). Not part of
``make test``; figures depend on the machine.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import io
import os
import random
import time
import tracemalloc
import zipfile
from concurrent.futures import ThreadPoolExecutor

from indexium_devstack import jars, scankit
from indexium_devstack.jars import large_jar
from indexium_indexer.scan.archive import ScanLimits, scan_archive
from indexium_indexer.scan.pipeline import scan_stream
from indexium_jar.metadata import read_source
from indexium_jar.zip import entrysizes
from indexium_jar.http.policy import DownloadPolicy
from indexium_jar.http.remote import MemorySource

CHUNK = 256 * 1024
MiB = 1024 * 1024


def class_pool(kit, n: int = 120) -> list[bytes]:
    """Distinct, realistic-looking classes: many methods with calls, strings, branches."""
    out = []
    for i in range(n):
        cw = kit.ClassWriter(f"com/example/bench/gen/Block{i}", interfaces=["java/lang/Runnable"])
        for j in range(8 + i % 12):
            m = cw.method(f"tick{j}", "(Ljava/lang/String;)V")
            m.println(f"block {i} tick {j} " + "x" * (j * 3))
            m.aload(1).invoke("invokevirtual", "java/lang/String", "length", "()I").op("pop")
            m.iconst(j).op("istore", 2).label("l").op("iload", 2).jump("ifeq", "e").op("iinc", 2, 255)
            m.jump("goto", "l").label("e").op("return")
        if i % 10 == 0:  # some name what a rule reads: these are parsed in full
            m = cw.method("check", "()V", kit.ACC_PUBLIC | kit.ACC_STATIC)
            m.new("java/net/URL").op("dup").ldc("https://example.org/v.json")
            m.invoke("invokespecial", "java/net/URL", "<init>", "(Ljava/lang/String;)V")
            m.invoke("invokevirtual", "java/net/URL", "openStream", "()Ljava/io/InputStream;").op("pop").op("return")
        out.append(cw.to_bytes())
    return out


def build_jar(size: int, classes: list[bytes], *, share_classes: float, seed: int = 1,
              streamed: bool = False) -> bytes:
    """``streamed``: written as the JDK's ``jar`` tool and ZipOutputStream do, every entry
    with a data descriptor (zero sizes in the local headers)."""
    rng = random.Random(seed)
    sink = jars.Unseekable() if streamed else io.BytesIO()
    buf = sink.buf if streamed else sink
    with zipfile.ZipFile(sink, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("fabric.mod.json", b'{"schemaVersion":1,"id":"bench","version":"1.0.0"}')
        i = 0
        while buf.tell() < size:
            r = rng.random()
            if r < share_classes:
                zf.writestr(f"com/example/bench/gen/p{i // 500}/C{i}.class", classes[i % len(classes)])
            elif r < share_classes + (1 - share_classes) * 0.7:
                zf.writestr(f"assets/bench/textures/t{i}.png", rng.randbytes(rng.randint(2000, 30000)),
                            compress_type=zipfile.ZIP_STORED if i % 2 else zipfile.ZIP_DEFLATED)
            else:
                words = [rng.choice(("block", "item", "minecraft", "stone", "variant", "model", "true"))
                         for _ in range(rng.randint(200, 3000))]
                zf.writestr(f"assets/bench/models/m{i}.json", ('{"k": "' + " ".join(words) + '"}').encode())
            i += 1
    return buf.getvalue()


def chunks_of(data: bytes) -> list[bytes]:
    return [data[i : i + CHUNK] for i in range(0, len(data), CHUNK)]


def hashlib_pass(chunks: list[bytes]) -> float:
    started = time.perf_counter()
    hs = (hashlib.sha1(), hashlib.sha256(), hashlib.sha512())
    for c in chunks:
        for h in hs:
            h.update(c)
    for h in hs:
        h.hexdigest()
    return time.perf_counter() - started


def _thread_cpu(fn, *args) -> float:
    started = time.thread_time()
    fn(*args)
    return time.thread_time() - started


def _process_cpu(fn, *args) -> float:
    """CPU of every thread of the process: the walk's helper threads (ScanLimits.inflate_threads)
    are part of the parse. Nothing else runs in this process meanwhile."""
    started = time.process_time()
    fn(*args)
    return time.process_time() - started


async def _aiter(chunks):
    for c in chunks:
        yield c


async def scan_pass(chunks: list[bytes], sizes, parse, hashing, limits: ScanLimits = ScanLimits(),
                    ) -> tuple[float, object]:
    started = time.perf_counter()
    hashes, report = await scan_stream(_aiter(chunks), limits=limits, parse_executor=parse,
                                       hash_executor=hashing, sizes=sizes)
    return time.perf_counter() - started, report


async def handed_sizes(data: bytes) -> bytes:
    """What the indexer puts in ``FileRef.entry_sizes`` for this jar (its own read path)."""
    md = await read_source(MemorySource(data), DownloadPolicy(allowed_hosts=frozenset(), max_cd_size=64 * MiB,
                                                             max_fetch_bytes=256 * MiB),
                           with_entry_sizes=True)
    return md.entry_sizes


async def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="4,16,64", help="jar sizes in MiB for the memory curve")
    ap.add_argument("--speed-size", type=int, default=32, help="MiB of each jar kind for the speed figures")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    kit = scankit
    pool = class_pool(kit)
    parse, hashing = ThreadPoolExecutor(1), ThreadPoolExecutor(1)
    size = args.speed_size * MiB
    jars = {
        "mod": build_jar(size, pool, share_classes=0.55),
        "mod-strm": build_jar(size, pool, share_classes=0.55, streamed=True),
        "classes": build_jar(size, pool, share_classes=1.0),
        "stored": large_jar(size, 4000),
    }
    targets = {"mod": 0.5, "mod-strm": 0.5, "classes": 0.25}
    print(f"# speed: best of {args.repeat}, 256 KiB chunks, MB = 10^6 bytes; load average "
          f"{open('/proc/loadavg').read().split()[:3]} on {os.cpu_count()} CPUs")
    print("# 'scan': the stage's pipeline with the entry sizes the indexer hands over in the event")
    print("# (data-descriptor entries only: none for 'mod'/'classes'/'stored'); 'no sizes': without them")
    print(f"{'jar':<8} {'MB':>6} {'hashlib MB/s':>13} {'scan MB/s':>10} {'ratio':>6} "
          f"{'no sizes MB/s':>14} {'ratio':>6}  {'target':>6}  classes parsed/seen")
    for name, data in jars.items():
        chunks = chunks_of(data)
        sizes = await handed_sizes(data)
        base = min(hashlib_pass(chunks) for _ in range(args.repeat))
        with_dir = min([await scan_pass(chunks, sizes, parse, hashing) for _ in range(args.repeat)],
                       key=lambda r: r[0])
        no_dir = min([await scan_pass(chunks, None, parse, hashing) for _ in range(args.repeat)],
                     key=lambda r: r[0])
        mb = len(data) / 1e6
        report = with_dir[1]
        assert report.failure is None, report.failure
        target = targets.get(name)
        verdict = "" if target is None else f"{target:.2f} {'MET' if base / with_dir[0] >= target else 'MISSED'}"
        print(f"{name:<8} {mb:>6.1f} {mb / base:>13.0f} {mb / with_dir[0]:>10.0f} {base / with_dir[0]:>6.2f} "
              f"{mb / no_dir[0]:>14.0f} {base / no_dir[0]:>6.2f}  {verdict:>10}  "
              f"{report.classes_parsed}/{report.classes}")
        if name == "classes":  # the same pipeline with the walk's thread alone, right after
            alone = min([await scan_pass(chunks, sizes, parse, hashing, ScanLimits(inflate_threads=1))
                         for _ in range(args.repeat)], key=lambda r: r[0])
            print(f"{'':<8} {'':>6} {'':>13} {mb / alone[0]:>10.0f} {base / alone[0]:>6.2f}  "
                  f"(classes inflated by the parse thread alone, ScanLimits(inflate_threads=1))")

    print("\n# CPU view (CPU time, best of repeats): robust to other load on the machine. 'parse CPU':")
    print("# the walk's thread and the helpers it starts for windows of many classes (inflate_threads).")
    print("# The pipeline hashes and parses on two threads; with a free core each it runs at the")
    print("# slower of the two, so 'pipeline ratio' = hash CPU / max(hash CPU, parse CPU); on a")
    print("# machine whose other core is busy they take turns: 'one core' = hash CPU / (hash + parse CPU).")
    print(f"{'jar':<8} {'hash CPU s':>11} {'parse CPU s':>12} {'pipeline ratio':>15} {'one core':>9} "
          f"{'parse CPU s (no sizes)':>23} {'pipeline ratio':>15}")
    for name, data in jars.items():
        chunks = chunks_of(data)
        sizes = entrysizes.unpack(await handed_sizes(data))
        hash_cpu = min(_thread_cpu(hashlib_pass, chunks) for _ in range(args.repeat))
        parse_dir = min(_process_cpu(scan_archive, iter(chunks), ScanLimits(), sizes) for _ in range(args.repeat))
        parse_nodir = min(_process_cpu(scan_archive, iter(chunks), ScanLimits(), None) for _ in range(args.repeat))
        print(f"{name:<8} {hash_cpu:>11.3f} {parse_dir:>12.3f} {hash_cpu / max(hash_cpu, parse_dir):>15.2f} "
              f"{hash_cpu / (hash_cpu + parse_dir):>9.2f} "
              f"{parse_nodir:>23.3f} {hash_cpu / max(hash_cpu, parse_nodir):>15.2f}")

    print("\n# peak memory during one scan (tracemalloc; the jar's own bytes excluded)")
    print(f"{'jar MiB':>8} {'entries':>8} {'peak KiB (sizes)':>17} {'peak KiB (no sizes)':>20}  (streamed mod jars)")
    for mib in (int(s) for s in args.sizes.split(",")):
        data = build_jar(mib * MiB, pool, share_classes=0.55, seed=mib, streamed=True)
        chunks = chunks_of(data)
        sizes = await handed_sizes(data)
        peaks = []
        for hint in (sizes, None):
            tracemalloc.start()
            tracemalloc.reset_peak()
            base_now = tracemalloc.get_traced_memory()[0]
            _, report = await scan_pass(chunks, hint, parse, hashing)
            peaks.append((tracemalloc.get_traced_memory()[1] - base_now) / 1024)
            tracemalloc.stop()
        print(f"{mib:>8} {report.entries:>8} {peaks[0]:>17.0f} {peaks[1]:>20.0f}")
    parse.shutdown()
    hashing.shutdown()


if __name__ == "__main__":
    asyncio.run(main())
