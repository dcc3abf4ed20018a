"""The telemetry mod is itself a mod we index: our indexer's reader and our scan stage on its jar.

The reader is the indexer's own (``indexium_jar.metadata.read_source``: the Range-request reader over the
built bytes); the scan is the scan stage's per-file pipeline (``scan.pipeline.scan_file``)
downloading the jar from a release on the fake GitHub over loopback HTTP.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import aiohttp

from indexium_devstack.fakegithub import FakeGitHub
from indexium_jar.metadata import read_source
from indexium_indexer.scan.archive import ScanLimits
from indexium_indexer.scan.pipeline import FileToScan, ScanContext, scan_file
from indexium_jar.http.policy import DownloadPolicy
from indexium_jar.http.remote import MemorySource

from .javaclient import build


async def test_all_three_manifests_parse_with_their_loaders_and_environment_server():
    data = build().read_bytes()
    md = await read_source(MemorySource(data), DownloadPolicy(allowed_hosts=frozenset()))
    assert md.problems == []
    by_path = {r.manifest_path: r for r in md.records}
    assert {p: (r.loader, r.mod_id, r.version, r.environment) for p, r in by_path.items()} == {
        "fabric.mod.json": ("fabric", "indexium_telemetry", "1.0.0", "server"),
        "META-INF/mods.toml": ("forge", "indexium_telemetry", "1.0.0", "server"),
        "META-INF/neoforge.mods.toml": ("neoforge", "indexium_telemetry", "1.0.0", "server"),
    }
    assert all(not r.warnings for r in md.records), [r.warnings for r in md.records]
    assert "1.20.1" in by_path["fabric.mod.json"].game_versions.versions
    assert "1.20.1" in by_path["META-INF/mods.toml"].game_versions.versions
    assert "1.21.1" in by_path["META-INF/neoforge.mods.toml"].game_versions.versions


async def test_the_scan_stage_verdict_on_the_jar_is_clean_with_one_low_network_finding():
    data = build().read_bytes()
    parse, hashing = ThreadPoolExecutor(1), ThreadPoolExecutor(1)
    try:
        async with FakeGitHub() as gh, aiohttp.ClientSession() as session:
            repo = gh.add_repo("indexium", "indexium-telemetry")
            rel = gh.add_release(repo, "v1.0.0", assets=[("indexium-telemetry-1.0.0.jar", data)])
            asset = rel.asset("indexium-telemetry-1.0.0.jar")
            ctx = ScanContext(session=session, policy=DownloadPolicy(
                allowed_hosts=frozenset({gh.github_host, gh.cdn_host}), timeout=10),
                parse_executor=parse, hash_executor=hashing, limits=ScanLimits(), max_bytes=16 << 20)
            verdict = await scan_file(ctx, FileToScan(gh.download_url(asset), asset.size, asset.digest, None))
    finally:
        parse.shutdown()
        hashing.shutdown()
    # The recorded verdict: clean. Its one finding is the HTTP POST itself, in an ordinary
    # method of Sender (run on the daemon thread, never from an initializer): weight 1 x 1,
    # far below the threshold of 6. Reflection uses constant class names only, so neither
    # dynamic_class_load nor reflective_invoke is found.
    assert verdict.status == "clean", verdict
    assert [(f.rule, f.severity, f.location, f.class_name) for f in verdict.findings] == [
        ("network", 1, "method", "dev.indexium.telemetry.Sender")]
    assert verdict.classes == 11
