"""One file end to end over HTTP: the fake GitHub's redirect to its CDN, digests, sidecars, faults."""

import dataclasses
import hashlib
from concurrent.futures import ThreadPoolExecutor

import aiohttp
import pytest
from indexium_devstack import scankit as kit

from indexium_devstack.fakegithub import FakeGitHub
from indexium_indexer.scan.archive import ScanLimits
from indexium_indexer.scan.pipeline import FileToScan, ScanContext, scan_file
from indexium_jar.errors import HttpError, NetworkError
from indexium_jar.http.policy import DownloadPolicy
from indexium_jar.http.remote import MemorySource
from indexium_jar.metadata import read_source

CLEAN = kit.clean_mod_jar()
BAD = kit.fractureiser_jar()


@pytest.fixture
async def gh():
    async with FakeGitHub() as server:
        yield server


@pytest.fixture
def executors():
    parse, hashing = ThreadPoolExecutor(2), ThreadPoolExecutor(2)
    yield parse, hashing
    parse.shutdown()
    hashing.shutdown()


@pytest.fixture
async def make_ctx(gh, executors):
    sessions = []

    async def make(*, max_bytes=128 << 20, hosts=None, **limits):
        session = aiohttp.ClientSession()
        sessions.append(session)
        policy = DownloadPolicy(allowed_hosts=frozenset(hosts or {gh.github_host, gh.cdn_host}), timeout=5)
        return ScanContext(session=session, policy=policy, parse_executor=executors[0], hash_executor=executors[1],
                           limits=ScanLimits(**limits), max_bytes=max_bytes)

    yield make
    for s in sessions:
        await s.close()


def release(gh, *assets):
    repo = gh.add_repo("alice", f"mod{len(gh.state.repos)}")
    return gh.add_release(repo, "v1.0.0", assets=list(assets))


def target(gh, rel, name, *, digest=True, sidecar=False):
    asset = rel.asset(name)
    side = rel.asset(name + ".sha256") if sidecar else None
    return FileToScan(gh.download_url(asset), asset.size, asset.digest if digest else None,
                      gh.download_url(side) if side else None)


@pytest.mark.parametrize("descriptors", [False, True])
@pytest.mark.parametrize("handed_sizes", [False, True])
async def test_clean_file_has_launcher_hashes_and_is_clean_in_one_request(gh, make_ctx, descriptors, handed_sizes):
    data = kit.clean_mod_jar(data_descriptors=descriptors)
    rel = release(gh, ("clean.jar", data))
    f = target(gh, rel, "clean.jar")
    if handed_sizes:  # what the indexer's read of the same jar puts in the event
        md = await read_source(MemorySource(data), DownloadPolicy(allowed_hosts=frozenset()), with_entry_sizes=True)
        assert bool(md.entry_sizes) == descriptors
        f = dataclasses.replace(f, entry_sizes=md.entry_sizes)
    verdict = await scan_file(await make_ctx(), f)
    assert verdict.status == "clean", verdict
    assert verdict.hashes.sha1 == hashlib.sha1(data).hexdigest()
    assert verdict.hashes.sha256 == hashlib.sha256(data).hexdigest()
    assert verdict.hashes.sha512 == hashlib.sha512(data).hexdigest()
    assert verdict.hashes.size == len(data)
    # the streaming download is the only request for the file's bytes
    stats = gh.stats(rel.asset("clean.jar"))
    assert (stats.requests, stats.ranges) == (1, ()), stats


async def test_handed_sizes_that_do_not_match_the_bytes_are_a_finding_not_a_miss(gh, make_ctx):
    good = kit.clean_mod_jar(data_descriptors=True)
    md = await read_source(MemorySource(good), DownloadPolicy(allowed_hosts=frozenset()), with_entry_sizes=True)
    # The CDN now serves other bytes (a fractureiser jar) than the indexer read.
    rel = release(gh, ("swapped.jar", BAD))
    f = dataclasses.replace(target(gh, rel, "swapped.jar"), entry_sizes=md.entry_sizes)
    verdict = await scan_file(await make_ctx(), f)
    assert verdict.status in ("suspicious", "failed") and verdict.status != "clean", verdict


async def test_fractureiser_and_nested_are_suspicious(gh, make_ctx):
    rel = release(gh, ("bad.jar", BAD), ("bundle.jar", kit.nesting_jar(BAD)), ("pb.jar", kit.process_builder_jar()))
    ctx = await make_ctx()
    for name, rule in (("bad.jar", "fractureiser_stage0"), ("bundle.jar", "fractureiser_stage0"),
                       ("pb.jar", "process_builder")):
        verdict = await scan_file(ctx, target(gh, rel, name))
        assert verdict.status == "suspicious"
        assert rule in {f.rule for f in verdict.findings}


async def test_digest_mismatch_is_suspicious_and_missing_digest_is_fine(gh, make_ctx):
    rel = release(gh, {"name": "wrong.jar", "content": CLEAN, "digest": "sha256:" + "0" * 64},
                  {"name": "nodigest.jar", "content": CLEAN, "digest": None})
    ctx = await make_ctx()
    wrong = await scan_file(ctx, target(gh, rel, "wrong.jar"))
    assert wrong.status == "suspicious" and [f.rule for f in wrong.findings] == ["digest_mismatch"]
    assert (await scan_file(ctx, target(gh, rel, "nodigest.jar"))).status == "clean"


async def test_sidecar_present_matching_mismatching_and_gone(gh, make_ctx):
    good = hashlib.sha256(CLEAN).hexdigest()
    rel = release(gh, ("a.jar", CLEAN), ("a.jar.sha256", f"{good}  a.jar\n".encode()),
                  ("b.jar", CLEAN), ("b.jar.sha256", b"f" * 64))
    ctx = await make_ctx()
    assert (await scan_file(ctx, target(gh, rel, "a.jar", sidecar=True))).status == "clean"
    b = await scan_file(ctx, target(gh, rel, "b.jar", sidecar=True))
    assert [f.rule for f in b.findings] == ["sidecar_mismatch"]
    gone = target(gh, rel, "a.jar", sidecar=True)
    gh.remove_asset(rel.asset("a.jar.sha256"))
    verdict = await scan_file(ctx, gone)
    assert verdict.status == "clean" and any("sidecar" in n for n in verdict.notes)
    assert (await scan_file(ctx, target(gh, rel, "a.jar"))).status == "clean"  # no sidecar at all


async def test_oversize_file_fails_without_reading_it(gh, make_ctx):
    rel = release(gh, ("big.jar", CLEAN))
    verdict = await scan_file(await make_ctx(max_bytes=1000), target(gh, rel, "big.jar"))
    assert verdict.status == "failed" and verdict.reason.startswith("too_large")
    assert verdict.hashes is None  # Content-Length said too much: the body was never read


async def test_truncated_download_is_retryable(gh, make_ctx):
    rel = release(gh, ("cut.jar", CLEAN))
    gh.set_mode(rel.asset("cut.jar"), "truncate")
    with pytest.raises(NetworkError) as exc:
        await scan_file(await make_ctx(), target(gh, rel, "cut.jar"))
    assert exc.value.retryable


async def test_server_errors_are_retryable(gh, make_ctx):
    rel = release(gh, ("flaky.jar", CLEAN))
    gh.fail_next(rel.asset("flaky.jar"), 503, count=5, retry_after=7)
    with pytest.raises(HttpError) as exc:
        await scan_file(await make_ctx(), target(gh, rel, "flaky.jar"))
    assert exc.value.retryable and exc.value.retry_after == 7


async def test_redirect_to_a_host_not_allowed_fails(gh, make_ctx):
    rel = release(gh, ("moved.jar", CLEAN))
    gh.redirect_asset_to(rel.asset("moved.jar"), "http://evil.invalid/payload.jar")
    verdict = await scan_file(await make_ctx(), target(gh, rel, "moved.jar"))
    assert verdict.status == "failed" and verdict.reason.startswith("download_host_not_allowed")
    # the CDN itself is not on the list either
    rel2 = release(gh, ("ok.jar", CLEAN))
    verdict = await scan_file(await make_ctx(hosts={gh.github_host}), target(gh, rel2, "ok.jar"))
    assert verdict.reason.startswith("download_host_not_allowed")


async def test_corrupt_jar_fails_with_hashes(gh, make_ctx):
    rel = release(gh, ("broken.jar", CLEAN[: len(CLEAN) // 2]))
    verdict = await scan_file(await make_ctx(), target(gh, rel, "broken.jar"))
    assert verdict.status == "failed" and verdict.reason.startswith("corrupt_zip")
    assert verdict.hashes.sha256 == hashlib.sha256(CLEAN[: len(CLEAN) // 2]).hexdigest()
