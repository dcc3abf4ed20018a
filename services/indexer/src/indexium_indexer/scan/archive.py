"""Scan one jar streamed front to back: every class file, every nested jar, the zip structure.

Synchronous and pure apart from consuming its chunk iterator (the pipeline runs it
in a worker thread). Memory: one class file at a time (at most ``max_class_bytes``),
the walker's 16 bytes per entry, and per nesting level one inflater window. A nested
jar is walked straight out of its parent's (inflated) data, never buffered whole.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field

from indexium_jar.zip.records import EOCD_SIG_BYTES, LOCAL_SIG_BYTES, decode_name

from .classfile import ClassFormatError, parse_class
from .rules import DEFAULT_THRESHOLD, Finding, has_needles, scan_class  # rules gives the C walk its needles
from .zipstream import Budget, ClassBatch, CorruptArchive, LimitExceeded, Reader, ZipWalk

MiB = 1024 * 1024


@dataclass(frozen=True)
class ScanLimits:
    max_class_bytes: int = 8 * MiB  # javac output rarely passes 1 MiB; larger is treated as hostile
    max_nesting: int = 4  # jar-in-jar levels below the file itself (Fabric API bundles go 2 deep)
    max_inflated: int = 1024 * MiB  # all inflated bytes of one file, nested jars included (zip bombs)
    max_entries: int = 500_000  # entries of one file, nested jars included
    max_findings: int = 200  # stored per file; the rest are counted in a note
    threshold: int = DEFAULT_THRESHOLD
    # Threads that inflate and prefilter one window's classes in the C walk: this one and its
    # helpers, started for a window of many classes (_fastwalk.c). 2: on a 2-core machine the
    # hashing thread leaves most of a core idle; 1: the walk's thread alone.
    inflate_threads: int = 2


@dataclass
class ArchiveReport:
    findings: list[Finding] = field(default_factory=list)
    entries: int = 0
    classes: int = 0  # class files seen
    classes_parsed: int = 0  # class files that named something a rule looks for
    nested_jars: int = 0
    notes: list[str] = field(default_factory=list)
    failure: tuple[str, str] | None = None  # (code, safe text): the scan could not be completed
    dropped_findings: int = 0

    def note(self, text: str) -> None:
        if len(self.notes) < 50:
            self.notes.append(text)

    def add(self, findings: list[Finding], limit: int) -> None:
        room = max(0, limit - len(self.findings))
        self.findings += findings[:room]
        self.dropped_findings += max(0, len(findings) - room)


def scan_archive(chunks: Iterator[bytes], limits: ScanLimits = ScanLimits(),
                 sizes: Mapping[int, int] | None = None) -> ArchiveReport:
    """Walk the whole stream; a report with ``failure`` set when it could not be scanned."""
    report = ArchiveReport()
    budget = Budget(limits.max_inflated, limits.max_entries)
    try:
        _walk(Reader(chunks), report, budget, limits, sizes, prefix="", depth=0)
    except CorruptArchive as exc:
        report.failure = ("corrupt_zip", str(exc))
    except LimitExceeded as exc:
        report.failure = (exc.code, str(exc))
    if report.dropped_findings:
        report.note(f"{report.dropped_findings} more findings not stored")
    return report


def _walk(reader: Reader, report: ArchiveReport, budget: Budget, limits: ScanLimits,
          sizes: Mapping[int, int] | None, prefix: str, depth: int) -> None:
    walk = ZipWalk(reader, budget=budget, sizes=sizes, max_class_bytes=limits.max_class_bytes,
                   inflate_threads=limits.inflate_threads)
    for entry in walk.entries():
        if type(entry) is ClassBatch:  # plain entries the C walk takes: only the classes to check
            for raw, flags, data in entry.hits:  # each checked while the next ones are inflated
                _class(data, prefix + decode_name(raw, flags), report, limits)
            report.classes += entry.classes  # known once its hits are read
            continue
        raw = entry.raw_name
        if raw.endswith(b".class"):
            report.classes += 1
            if not entry.readable:
                report.note(f"{prefix + entry.name}: encrypted or unsupported compression, "
                            "the JVM cannot load it either")
                continue
            try:
                data = entry.read_all(limits.max_class_bytes)
            except LimitExceeded as exc:
                if exc.code != "entry_too_large":
                    raise
                raise LimitExceeded("class_too_large", f"{prefix + entry.name}: class file larger than "
                                    f"{limits.max_class_bytes} bytes") from exc
            if has_needles(data):  # else it names nothing any rule looks for: nothing to find
                _class(data, prefix + entry.name, report, limits)  # the name decoded only here
        elif raw[-4:].lower() == b".jar" and entry.readable:
            path = prefix + entry.name
            inner = Reader(entry.data())
            buf, start, end = inner.window(4)
            if buf[start : start + 4] not in (LOCAL_SIG_BYTES, EOCD_SIG_BYTES):
                report.note(f"{path}: named .jar but not a zip archive")
                continue
            if depth + 1 > limits.max_nesting:
                raise LimitExceeded("nesting_too_deep", f"{path}: jars nested more than {limits.max_nesting} deep")
            report.nested_jars += 1
            try:
                _walk(inner, report, budget, limits, None, prefix=path + "!/", depth=depth + 1)
            except CorruptArchive as exc:
                raise CorruptArchive(f"nested jar {path}: {exc}") from None
    report.entries += walk.entries_seen
    report.add([Finding("zip_structure", 10, "archive", prefix.removesuffix("!/"), detail=problem)
                for problem in walk.problems], limits.max_findings)


def _class(data: bytes, path: str, report: ArchiveReport, limits: ScanLimits) -> None:
    report.classes_parsed += 1
    try:
        findings = scan_class(parse_class(data), path, data)
    except ClassFormatError as exc:
        # It names dangerous APIs and we cannot read it: an operator should look.
        findings = [Finding("malformed_class", limits.threshold, "archive", path, detail=str(exc)[:200])]
    except UnicodeDecodeError as exc:
        # A name the parse does not decode (a method's, decoded when the rules ask for it) that
        # is not even modified UTF-8: the same, instead of the whole scan failing on it.
        findings = [Finding("malformed_class", limits.threshold, "archive", path,
                            detail=f"malformed class file ({type(exc).__name__})")]
    report.add(findings, limits.max_findings)
