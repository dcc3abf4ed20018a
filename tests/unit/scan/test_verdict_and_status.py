"""File verdicts (digest, sidecar, size) and the version status decision."""

import hashlib

import pytest

from indexium_indexer.scan.archive import ArchiveReport
from indexium_indexer.scan.job import next_status, reusable
from indexium_indexer.scan.rules import RULESET_VERSION, Finding
from indexium_indexer.scan.verdict import (
    SIDECAR_MISSING, MultiHasher, decide, integrity_findings, parse_sidecar,
)

DATA = b"jar bytes" * 1000


def hashes():
    h = MultiHasher()
    h.update(DATA[:100])
    h.update(DATA[100:])
    return h.result()


def check(**kw):
    args = dict(expected_size=len(DATA), digest=None, sidecar=None) | kw
    found, notes = integrity_findings(hashes(), **args)
    return [f.rule for f in found], notes


def test_hashes_match_hashlib():
    h = hashes()
    assert (h.sha1, h.sha256, h.sha512, h.size) == (
        hashlib.sha1(DATA).hexdigest(), hashlib.sha256(DATA).hexdigest(), hashlib.sha512(DATA).hexdigest(), len(DATA))


def test_digest():
    sha = hashlib.sha256(DATA).hexdigest()
    assert check(digest=f"sha256:{sha}") == ([], [])
    assert check(digest=f"sha256:{sha.upper()}") == ([], [])
    assert check(digest="sha256:" + "0" * 64)[0] == ["digest_mismatch"]
    assert check(digest=None) == ([], [])  # missing digest: nothing to check
    assert check(digest="md5:abc")[1]  # unknown algorithm: a note, not a finding


def test_sidecar():
    sha = hashlib.sha256(DATA).hexdigest()
    assert check(sidecar=f"{sha}  mod.jar\n".encode()) == ([], [])
    assert check(sidecar=sha.encode()) == ([], [])
    assert check(sidecar=("f" * 64).encode())[0] == ["sidecar_mismatch"]
    assert check(sidecar=b"not a hash")[0] == ["sidecar_mismatch"]
    assert check(sidecar=SIDECAR_MISSING) == ([], ["the release's .sha256 sidecar is gone"])
    assert parse_sidecar(b"") is None


def test_size_mismatch():
    assert check(expected_size=len(DATA) + 1)[0] == ["size_mismatch"]
    assert check(expected_size=0) == ([], [])  # GitHub gave no size


def test_decide():
    low = Finding("network", 1, "method")
    high = Finding("process_builder", 9, "mod_initializer")
    assert decide(ArchiveReport(findings=[low]), hashes(), [], [], 6).status == "clean"
    assert decide(ArchiveReport(findings=[low, high]), hashes(), [], [], 6).status == "suspicious"
    failed = decide(ArchiveReport(failure=("corrupt_zip", "truncated")), hashes(), [], [], 6)
    assert failed.status == "failed" and failed.reason == "corrupt_zip: truncated"


@pytest.mark.parametrize("current,files,approved,owns,expected", [
    ("pending_scan", [("clean", "a"), ("clean", "b")], set(), False, "public"),
    ("pending_scan", [("clean", "a"), ("suspicious", "b")], set(), False, "quarantined"),
    ("pending_scan", [("failed", None)], set(), False, "quarantined"),
    ("pending_scan", [("clean", "a"), ("pending", None)], set(), False, "pending_scan"),
    ("public", [("suspicious", "b")], set(), False, "quarantined"),  # published before scan, then hidden
    ("public", [("suspicious", "b")], {"b"}, False, "public"),  # an operator approved these bytes
    ("quarantined", [("clean", "a")], set(), True, "public"),  # our quarantine, now clean
    ("quarantined", [("clean", "a")], set(), False, "quarantined"),  # the indexer's quarantine stays
    ("rejected", [("clean", "a")], set(), True, "rejected"),
])
def test_next_status(current, files, approved, owns, expected):
    assert next_status(current, files, approved, scan_owns_quarantine=owns) == expected


def test_reusable():
    row = dict(scan_status="clean", scan_version=RULESET_VERSION, sha256="ab" * 32, scanned_size=10, size=10,
               github_digest=None)
    assert reusable(row)
    assert reusable(row | {"github_digest": "sha256:" + "ab" * 32})
    assert not reusable(row | {"github_digest": "sha256:" + "cd" * 32})
    assert not reusable(row | {"scan_version": RULESET_VERSION - 1})
    assert not reusable(row | {"scan_status": "failed"})
    assert not reusable(row | {"size": 11})
