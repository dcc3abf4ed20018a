"""One file's result from its hashes, its archive report and what GitHub said about it. Pure."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field

from .archive import ArchiveReport
from .rules import Finding

_HEX64 = re.compile(r"[0-9a-f]{64}")
SIDECAR_MISSING = object()  # the release listed a sidecar but it is gone now


@dataclass(frozen=True)
class Hashes:
    sha1: str
    sha256: str
    sha512: str
    size: int


class MultiHasher:
    """sha1 + sha256 + sha512 and the size in one pass (hashlib releases the GIL per update)."""

    def __init__(self) -> None:
        self._h = (hashlib.sha1(), hashlib.sha256(), hashlib.sha512())
        self.size = 0

    def update(self, chunk: bytes) -> None:
        for h in self._h:
            h.update(chunk)
        self.size += len(chunk)

    def result(self) -> Hashes:
        sha1, sha256, sha512 = (h.hexdigest() for h in self._h)
        return Hashes(sha1, sha256, sha512, self.size)


@dataclass
class FileVerdict:
    status: str  # clean | suspicious | failed
    findings: list[Finding] = field(default_factory=list)
    reason: str | None = None  # for failed: "code: safe text"
    hashes: Hashes | None = None
    notes: list[str] = field(default_factory=list)
    classes: int = 0
    nested_jars: int = 0


def failed(code: str, text: str, hashes: Hashes | None = None) -> FileVerdict:
    return FileVerdict("failed", reason=f"{code}: {text}"[:500], hashes=hashes)


def parse_sidecar(content: bytes) -> str | None:
    """The sha256 in a ``name.jar.sha256`` file (``<hex>`` or ``sha256sum`` output), else None."""
    words = content.decode("utf-8", "replace").strip().split()
    token = words[0].lower() if words else ""
    return token if _HEX64.fullmatch(token) else None


def integrity_findings(hashes: Hashes, *, expected_size: int, digest: str | None,
                       sidecar: bytes | None | object) -> tuple[list[Finding], list[str]]:
    """Findings for a size, GitHub digest or sidecar mismatch; notes for what could not be checked."""
    findings: list[Finding] = []
    notes: list[str] = []
    if expected_size and hashes.size != expected_size:
        findings.append(Finding("size_mismatch", 10, "file",
                                detail=f"GitHub says {expected_size} bytes, the download had {hashes.size}"))
    if digest:
        algorithm, _, value = digest.partition(":")
        ours = {"sha256": hashes.sha256, "sha1": hashes.sha1, "sha512": hashes.sha512}.get(algorithm.lower())
        if ours is None:
            notes.append(f"GitHub digest uses {algorithm!r}, which we do not compute")
        elif value.strip().lower() != ours:
            findings.append(Finding("digest_mismatch", 10, "file",
                                    detail=f"GitHub's {algorithm} digest differs from the downloaded bytes"))
    if sidecar is SIDECAR_MISSING:
        notes.append("the release's .sha256 sidecar is gone")
    elif isinstance(sidecar, bytes):
        expected = parse_sidecar(sidecar)
        if expected is None:
            findings.append(Finding("sidecar_mismatch", 10, "file", detail="the .sha256 sidecar holds no sha256"))
        elif expected != hashes.sha256:
            findings.append(Finding("sidecar_mismatch", 10, "file",
                                    detail="the .sha256 sidecar differs from the downloaded bytes"))
    return findings, notes


def decide(report: ArchiveReport, hashes: Hashes, integrity: list[Finding], notes: list[str],
           threshold: int) -> FileVerdict:
    findings = [*integrity, *report.findings]
    common = dict(hashes=hashes, notes=[*notes, *report.notes], classes=report.classes,
                  nested_jars=report.nested_jars)
    if report.failure is not None:
        code, text = report.failure
        return FileVerdict("failed", findings, f"{code}: {text}"[:500], **common)
    status = "suspicious" if any(f.severity >= threshold for f in findings) else "clean"
    return FileVerdict(status, findings, None, **common)
