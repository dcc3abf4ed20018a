"""Rebuild the real-pack corpus from corpus.tsv and measure the pack layer on it (not part of make test).

Each row names a public repository, a commit and the folder holding an unpacked pack (or an
archive committed as a file). The archive is rebuilt from a snapshot fetched under
/work/.mirror (``git archive <commit>:<path>``, so the pack's files sit at the archive's root
as in a released zip; a committed archive is copied as it is), then
read the way the indexer reads a jar: the central directory, the entries
``indexium_jar.packs.entries_to_read`` names, ``parse_pack``. A row without its snapshot is
skipped with a message. Prints per row the type and game versions found against those
expected, and the totals.

    .venv/bin/python tests/data/packs/corpus.py [--mirror /work/.mirror] [--out /tmp/pack-corpus] [--indexer]

``--indexer``: read each archive the way the release job does instead, over HTTP from a
FakeGitHub release named by the row's release text (``indexium_jar.packread.read_pack_metadata``:
Range requests counted by the server, not estimated).
"""

from __future__ import annotations

import argparse
import csv
import statistics
import subprocess
import sys
from pathlib import Path

from indexium_jar.gameversions import default_table
from indexium_jar.packs import Archive, entries_to_read, parse_pack
from indexium_jar.http.policy import DownloadPolicy
from indexium_jar.zip.zipfmt import CentralDirectory, extract, local_data_span, locate_eocd

HERE = Path(__file__).resolve().parent


def rows() -> list[dict[str, str]]:
    lines = [line for line in (HERE / "corpus.tsv").read_text(encoding="utf-8").splitlines() if not line.startswith("#")]
    return list(csv.DictReader(lines, delimiter="\t"))


def rebuild(row: dict[str, str], mirror: Path, out: Path) -> Path | None:
    git_dir = mirror / row["repo"].replace("/", "+") / "repo"
    if not git_dir.is_dir():
        print(f"skip {row['repo']}: no snapshot at {git_dir} (fetch it with the search tool first)", file=sys.stderr)
        return None
    target = out / f"{row['repo'].replace('/', '+')}.{row['archive']}"
    tree = row["commit"] if row["path"] in (".", "") else f"{row['commit']}:{row['path']}"
    git = ["git", "--git-dir", str(git_dir)]
    kind = subprocess.run([*git, "cat-file", "-t", tree], capture_output=True, text=True, check=True).stdout.strip()
    if kind == "blob":  # an archive committed as a file: taken as it is
        target.write_bytes(subprocess.run([*git, "show", tree], capture_output=True, check=True).stdout)
    else:  # an unpacked pack: zipped with its folder as the archive's root
        subprocess.run([*git, "archive", "--format=zip", "-o", str(target), tree], check=True)
    return target


def expected_versions(spec: str) -> set[str]:
    if spec in ("", "-"):
        return set()
    releases = [v.id for v in default_table().releases]  # newest first
    found: set[str] = set()
    for part in spec.split(","):
        if ".." in part:
            lo, hi = part.split("..")
            found |= set(releases[releases.index(hi):releases.index(lo) + 1])
        else:
            found.add(part)
    return found


def requests(size: int, cd_offset: int, spans: list[tuple[int, int]]) -> int:
    """Range requests the jar reader's plan would make (an estimate over its default tail):
    the tail, the rest of the directory when it starts before the tail, one per wanted entry
    outside what was fetched (adjacent entries share one)."""
    tail_start = max(0, size - DownloadPolicy(allowed_hosts=frozenset()).tail_size)
    count = 1 + (cd_offset < tail_start)
    covered = min(tail_start, cd_offset)
    outside = sorted(span for span in spans if span[0] < covered)
    count += len(outside)
    return count


def measure(path: Path, row: dict[str, str]):
    data = path.read_bytes()
    info = locate_eocd(data, 0, len(data))
    directory = CentralDirectory(data[info.cd_offset:info.cd_offset + info.cd_size], base_offset=info.base_offset)
    names = [e.name for e in directory.entries()]
    wanted = entries_to_read(names, path.name)
    files = {n: extract(directory.entry(n), data, 0, 16 << 20) for n in wanted}
    spans = [local_data_span(directory.entry(n), file_size=len(data)) for n in wanted]
    result = parse_pack(files, Archive(names=names, file_name=path.name, release_text=row["release_text"]))
    return result, requests(len(data), info.cd_offset, spans)


def measure_indexer(paths: list[tuple[Path, dict[str, str]]]) -> list:
    """(PackParseResult-like, server-side requests) per archive, through the release job's read path."""
    import asyncio

    import aiohttp

    from indexium_devstack.fakegithub import FakeGitHub
    from indexium_jar.model import PackParseResult
    from indexium_jar.packread import read_pack_metadata

    async def run():
        out = []
        async with FakeGitHub() as gh, aiohttp.ClientSession() as session:
            policy = DownloadPolicy(allowed_hosts=frozenset({gh.github_host, gh.cdn_host}))
            repo = gh.add_repo("corpus", "packs")
            for i, (path, row) in enumerate(paths):
                release = gh.add_release(repo, f"r{i}", name=row["release_text"])
                asset = gh.add_asset(release, path.name, path.read_bytes())
                md = await read_pack_metadata(session, gh.download_url(asset), policy, file_name=path.name,
                                              release_text=row["release_text"])
                out.append((PackParseResult(record=md.pack, problems=tuple(md.problems), skip=md.skip),
                            gh.stats(asset).requests))
        return out

    return asyncio.run(run())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mirror", type=Path, default=Path("/work/.mirror"))
    parser.add_argument("--out", type=Path, default=Path("/tmp/pack-corpus"))
    parser.add_argument("--indexer", action="store_true", help="read over HTTP as the release job does")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    releases = {v.id for v in default_table().releases}
    total = right_type = right_versions = unknown = 0
    counts: list[int] = []
    built = [(path, row) for row in rows() if (path := rebuild(row, args.mirror, args.out)) is not None]
    measured = measure_indexer(built) if args.indexer else [measure(path, row) for path, row in built]
    for (path, row), (result, n_requests) in zip(built, measured):
        total += 1
        counts.append(n_requests)
        rec = result.record
        got_type = rec.project_type if rec else (result.skip.code if result.skip else result.problems[0].code)
        got_loaders = ",".join(rec.loaders) if rec else "-"
        got = {v for v in rec.game_versions.versions if v in releases} if rec else set()
        type_ok = got_type == row["expected_type"] and got_loaders == row["expected_loaders"]
        right_type += type_ok
        if row["expected_versions"] == "?":  # the pack's formats lie outside the shipped table
            unknown += 1
            versions_ok = True
        else:
            versions_ok = got == expected_versions(row["expected_versions"])
            right_versions += versions_ok
        print(f"{'ok ' if type_ok and versions_ok else 'BAD'} {row['repo']:40} {got_type:12} {got_loaders:14} "
              f"{','.join(sorted(got)) or '-'}  (expected {row['expected_type']} {row['expected_loaders']} "
              f"{row['expected_versions']}; ~{n_requests} range requests)")
    print(f"{total} archives: {right_type} with the right type and loaders; game versions right in {right_versions} "
          f"of {total - unknown} ({unknown} declare formats newer than the shipped pack-format table); "
          f"{'range requests (server-side)' if args.indexer else 'estimated range requests'} per archive: median {statistics.median(counts) if counts else 0}, "
          f"max {max(counts, default=0)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
