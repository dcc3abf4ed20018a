"""The pipeline over an async stream of chunks: hashing and the walk each fed by their own pipe."""

import asyncio
import hashlib
from concurrent.futures import ThreadPoolExecutor

import pytest
from indexium_devstack import scankit as kit

from indexium_indexer.scan.archive import ScanLimits
from indexium_indexer.scan.pipeline import scan_stream

BAD = kit.fractureiser_jar()


@pytest.fixture
def executors():
    # One thread each: a scan that left either thread blocked would hang the next one.
    parse, hashing = ThreadPoolExecutor(1), ThreadPoolExecutor(1)
    yield parse, hashing
    parse.shutdown(cancel_futures=True)
    hashing.shutdown(cancel_futures=True)


async def chunks_of(data: bytes, size: int = 4096, *, fail_after: int | None = None):
    for n, i in enumerate(range(0, len(data), size)):
        if fail_after is not None and n == fail_after:
            raise ConnectionResetError("download cut")
        yield data[i : i + size]


async def scan(executors, stream):
    return await asyncio.wait_for(scan_stream(stream, limits=ScanLimits(), parse_executor=executors[0],
                                              hash_executor=executors[1]), 30)


async def test_hashes_and_findings_of_the_whole_stream(executors):
    hashes, report = await scan(executors, chunks_of(BAD))
    assert (hashes.sha1, hashes.sha256, hashes.sha512, hashes.size) == (
        hashlib.sha1(BAD).hexdigest(), hashlib.sha256(BAD).hexdigest(), hashlib.sha512(BAD).hexdigest(), len(BAD))
    assert "fractureiser_stage0" in {f.rule for f in report.findings}


async def test_a_failed_download_stops_both_threads_and_the_next_scan_runs(executors):
    with pytest.raises(ConnectionResetError):
        await scan(executors, chunks_of(BAD, 512, fail_after=3))
    hashes, report = await scan(executors, chunks_of(BAD))  # both single threads are free again
    assert hashes.sha256 == hashlib.sha256(BAD).hexdigest() and report.failure is None

