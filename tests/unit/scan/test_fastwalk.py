"""The C walk (_fastwalk.c) against the Python walk: the same report on every jar, whatever the chunks.

The C walk only takes runs of plain entries and stops before anything else, so these jars
put every kind of entry it must leave to Python (nested jars, data descriptors, zip64,
encrypted or oddly compressed classes, corrupt streams, crossed limits, offsets the
indexer sent sizes for, central directory tricks) next to plain ones, at chunk sizes that
cut entries anywhere.
"""

import io
import random
import struct
import zipfile
import zlib
from array import array

import pytest
from indexium_devstack import scankit as kit

from indexium_indexer.scan import bytecode, classfile, rules, zipstream
from indexium_indexer.scan.archive import ScanLimits, scan_archive
from indexium_indexer.scan.zipstream import Budget, ClassBatch, Reader, ZipWalk
from indexium_jar.zip import entrysizes

pytestmark = pytest.mark.skipif(zipstream._fastwalk is None,
                                reason="the C walk is not built (`make env` builds it where there is a C compiler)")


def _class(i: int, bad: bool) -> bytes:
    cw = kit.ClassWriter(f"com/example/fw/C{i}")
    for j in range(1 + i % 4):
        m = cw.method(f"m{j}", "(Ljava/lang/String;)V")
        m.println(f"class {i} method {j}").op("return")
    if bad:
        m = cw.method("check", "()V", kit.ACC_PUBLIC | kit.ACC_STATIC)
        m.new("java/net/URL").op("dup").ldc("https://example.org/v.json")
        m.invoke("invokespecial", "java/net/URL", "<init>", "(Ljava/lang/String;)V")
        m.invoke("invokevirtual", "java/net/URL", "openStream", "()Ljava/io/InputStream;").op("pop").op("return")
    return cw.to_bytes()


def _many_classes(n: int, *, stored_every: int = 0, descriptors: bool = False, seed: int = 3) -> bytes:
    rng = random.Random(seed)
    entries = [("fabric.mod.json", b'{"id":"fw"}', True)]
    for i in range(n):
        entries.append((f"com/example/fw/C{i}.class", _class(i, rng.random() < 0.2),
                        not (stored_every and i % stored_every == 0)))
        if i % 17 == 0:
            entries.append((f"assets/fw/t{i}.png", rng.randbytes(300), False))
        if i % 23 == 0:
            entries.append((f"data/fw/d{i}/", b"", False))
    return kit.zip_entries(entries, data_descriptors=descriptors)


def _names_jar() -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("caf\u00e9/Bad\u00e9.class", kit.process_builder_initializer())  # UTF-8 flag
        info = zipfile.ZipInfo("plain/Up.class")
        zf.writestr(info, kit.runtime_exec_method(), zipfile.ZIP_DEFLATED)
        zf.writestr("lib/inner.JAR", kit.fractureiser_jar())
        zf.writestr("x/Y.class", kit.update_checker())
    data = bytearray(out.getvalue())
    at = data.find(b"plain/Up.class")  # a cp437 name with a byte above 0x7f, in header and directory
    data[at] = 0x81
    at = data.find(b"plain/Up.class", at + 1)
    data[at] = 0x81
    return bytes(data)


def _corrupt_class_jar() -> bytes:
    data = bytearray(_many_classes(40))
    at = data.find(b"com/example/fw/C20.class")
    (nlen, elen) = struct.unpack_from("<HH", data, at - 4)
    body = at + nlen + elen
    data[body : body + 3] = b"\xff\xff\xff"  # an invalid deflate block type
    return bytes(data)


def _corrupt_among_many_jar() -> bytes:
    """A damaged class in the middle of a window of hundreds: read by the helpers too."""
    data = bytearray(_many_classes(400))
    at = data.find(b"com/example/fw/C233.class")
    (nlen, elen) = struct.unpack_from("<HH", data, at - 4)
    data[at + nlen + elen : at + nlen + elen + 3] = b"\xff\xff\xff"
    return bytes(data)


def _large_passing_classes_jar() -> bytes:
    """300 classes that pass the prefilter, each ~24 KB inflated from a few hundred bytes: one
    window of them keeps far more than a batch may hold (KEPT_MAX, 1 MiB), so batches end there."""
    entries = []
    for i in range(300):
        cw = kit.ClassWriter(f"com/example/big/B{i}")
        m = cw.method("check", "()V", kit.ACC_PUBLIC | kit.ACC_STATIC)
        m.ldc(f"{i}:" + "x" * 24_000).op("pop")
        m.new("java/net/URL").op("dup").ldc("https://example.org/v.json")
        m.invoke("invokespecial", "java/net/URL", "<init>", "(Ljava/lang/String;)V")
        m.invoke("invokevirtual", "java/net/URL", "openStream", "()Ljava/io/InputStream;").op("pop").op("return")
        entries.append((f"com/example/big/B{i}.class", cw.to_bytes(), True))
    return kit.zip_entries(entries)


def _encrypted_class_jar() -> bytes:
    data = bytearray(_many_classes(30))
    at = data.find(b"com/example/fw/C10.class")
    struct.pack_into("<H", data, at - 30 + 6, struct.unpack_from("<H", data, at - 30 + 6)[0] | 1)
    return bytes(data)


def _odd_method_jar() -> bytes:
    data = bytearray(_many_classes(30))
    at = data.find(b"com/example/fw/C12.class")
    struct.pack_into("<H", data, at - 30 + 8, 12)  # bzip2: unreadable for the JVM too
    return bytes(data)


def _cd_elsewhere_jar() -> bytes:
    data = bytearray(_many_classes(30, stored_every=3))
    cd = data.rfind(b"PK\x01\x02")
    struct.pack_into("<I", data, cd + 42, 40)
    return bytes(data)


def _cd_reordered_jar() -> bytes:
    """The directory's records in reverse order (legal: the JVM looks entries up by name), one
    of them naming another size than its local header."""
    data = _many_classes(60)
    eocd = data.rfind(b"PK\x05\x06")
    cd_size, cd_offset = struct.unpack_from("<II", data, eocd + 12)
    records, at = [], cd_offset
    while at < cd_offset + cd_size:
        nlen, elen, clen = struct.unpack_from("<HHH", data, at + 28)
        records.append(bytearray(data[at : at + 46 + nlen + elen + clen]))
        at += 46 + nlen + elen + clen
    struct.pack_into("<I", records[30], 20, struct.unpack_from("<I", records[30], 20)[0] + 1)
    return data[:cd_offset] + b"".join(reversed(records)) + data[cd_offset + cd_size :]


JARS = {
    "cd-reordered": _cd_reordered_jar,
    "many": lambda: _many_classes(600),
    "many-stored": lambda: _many_classes(300, stored_every=2),
    "many-descriptors": lambda: _many_classes(200, descriptors=True),
    "names": _names_jar,
    "nested": lambda: kit.nesting_jar(_many_classes(150)),
    "nested-descriptors": lambda: kit.nesting_jar(_many_classes(80, descriptors=True), data_descriptors=True),
    "corrupt-class": _corrupt_class_jar,
    "corrupt-among-many": _corrupt_among_many_jar,
    "large-passing": _large_passing_classes_jar,
    "encrypted-class": _encrypted_class_jar,
    "odd-method": _odd_method_jar,
    "cd-elsewhere": _cd_elsewhere_jar,
    "trailing": lambda: _many_classes(50) + b"junk",
    "truncated": lambda: _many_classes(100)[:-3000],
    "fractureiser": lambda: kit.fractureiser_jar(),
    "clean": lambda: kit.clean_mod_jar(),
}

LIMITS = {
    "default": ScanLimits(),
    "small-classes": ScanLimits(max_class_bytes=600),
    "inflate": ScanLimits(max_inflated=60_000),
    "entries": ScanLimits(max_entries=250),
    "findings": ScanLimits(max_findings=7),
    "one-thread": ScanLimits(inflate_threads=1),  # the C walk's batches read by its own thread alone
    "four-threads": ScanLimits(inflate_threads=4),
}


def _report(data: bytes, chunk: int, limits: ScanLimits, sizes, fast: bool, monkeypatch) -> tuple:
    monkeypatch.setattr(zipstream, "FAST_WALK", fast)
    r = scan_archive(iter([data[i : i + chunk] for i in range(0, len(data), chunk)]), limits, sizes)
    return (r.findings, r.entries, r.classes, r.classes_parsed, r.nested_jars, r.notes, r.failure,
            r.dropped_findings)


@pytest.mark.parametrize("jar", sorted(JARS))
@pytest.mark.parametrize("chunk", [997, 4096, 256 * 1024])
def test_both_walks_give_the_same_report(jar, chunk, monkeypatch):
    data = JARS[jar]()
    for name, limits in LIMITS.items():
        python = _report(data, chunk, limits, None, False, monkeypatch)
        fast = _report(data, chunk, limits, None, True, monkeypatch)
        assert fast == python, f"{jar}, limits {name}"


@pytest.mark.parametrize("jar", ["many", "many-descriptors", "nested-descriptors", "names", "cd-elsewhere"])
def test_both_walks_agree_with_the_indexers_sizes(jar, monkeypatch):
    data = JARS[jar]()
    infos = zipfile.ZipFile(io.BytesIO(data)).infolist()
    every = {i.header_offset: i.compress_size for i in infos}
    some = {o: s for k, (o, s) in enumerate(sorted(every.items())) if k % 3 == 0}
    packed = entrysizes.unpack(entrysizes.pack(sorted(some.items())))
    wrong = {o: s + (1 if k % 5 == 2 else 0) for k, (o, s) in enumerate(sorted(every.items()))}
    for sizes in (every, some, packed, wrong):
        for chunk in (997, 65536):
            assert (_report(data, chunk, ScanLimits(), sizes, True, monkeypatch)
                    == _report(data, chunk, ScanLimits(), sizes, False, monkeypatch))


def test_the_c_walk_takes_plain_entries_and_leaves_the_rest(monkeypatch):
    monkeypatch.setattr(zipstream, "FAST_WALK", True)
    data = JARS["names"]()
    walk = ZipWalk(Reader(iter([data])), budget=Budget(1 << 30, 1000), max_class_bytes=1 << 20)
    kinds = [("batch", [h[0] for h in item.hits]) if type(item) is ClassBatch else ("entry", item.raw_name)
             for item in walk.entries()]
    # Two classes in C (both name a rule's API), then the nested jar by the Python walk, then C again.
    assert kinds == [("batch", ["caf\u00e9/Bad\u00e9.class".encode(), b"\x81lain/Up.class"]),
                     ("entry", b"lib/inner.JAR"), ("batch", [b"x/Y.class"])]
    assert walk.problems == [] and walk.entries_seen == 4


def test_the_python_walk_alone_when_the_c_walk_is_off(monkeypatch):
    monkeypatch.setattr(zipstream, "FAST_WALK", False)
    data = JARS["many"]()
    walk = ZipWalk(Reader(iter([data])), budget=Budget(1 << 30, 10_000), max_class_bytes=1 << 20)
    assert all(type(item) is not ClassBatch for item in walk.entries())


def test_a_corrupt_class_among_plain_ones_is_reported_by_the_python_walk(monkeypatch):
    monkeypatch.setattr(zipstream, "FAST_WALK", True)
    report = scan_archive(iter([JARS["corrupt-class"]()]), ScanLimits())
    assert report.failure == ("corrupt_zip", "invalid deflate data in 'com/example/fw/C20.class'")


def test_a_window_of_many_classes_is_read_by_helper_threads_with_the_same_report(monkeypatch):
    """The comparisons above cover the helpers only if they start: they do for a window of
    many classes (here a 256 KiB chunk, as the stage reads), never with inflate_threads=1."""
    started = zipstream._fastwalk.helpers_started
    chunk = 256 * 1024
    for jar in ("many", "corrupt-among-many", "large-passing"):
        data = JARS[jar]()
        before = started()
        alone = _report(data, chunk, ScanLimits(inflate_threads=1), None, True, monkeypatch)
        assert started() == before, jar
        helped = _report(data, chunk, ScanLimits(inflate_threads=2), None, True, monkeypatch)
        assert started() > before, jar
        assert helped == alone == _report(data, chunk, ScanLimits(), None, False, monkeypatch), jar
    assert _report(JARS["corrupt-among-many"](), chunk, ScanLimits(), None, True, monkeypatch)[6] == (
        "corrupt_zip", "invalid deflate data in 'com/example/fw/C233.class'")
    big = scan_archive(iter([JARS["large-passing"]()]), ScanLimits())
    assert big.failure is None and big.classes_parsed == big.classes == 300


def test_a_batch_keeps_about_a_mebibyte_of_passing_classes(monkeypatch):
    data = JARS["large-passing"]()
    monkeypatch.setattr(zipstream, "FAST_WALK", True)
    walk = ZipWalk(Reader(iter([data])), budget=Budget(1 << 30, 1000), max_class_bytes=1 << 20, inflate_threads=2)
    kept = [sum(len(h[2]) for h in item.hits) for item in walk.entries() if type(item) is ClassBatch]
    assert len(kept) > 1 and all(k < (1 << 20) + 30_000 for k in kept) and max(kept) >= 1 << 20


def test_a_batch_whose_hits_are_not_read_still_moves_the_walk_on(monkeypatch):
    """The walk goes on after a batch whether or not its hits were read to the end."""
    monkeypatch.setattr(zipstream, "FAST_WALK", True)
    data = JARS["many"]()
    every = zipfile.ZipFile(io.BytesIO(data)).infolist()
    for read in (0, 1, None):  # none of its hits, the first one, all
        walk = ZipWalk(Reader(iter([data])), budget=Budget(1 << 30, 10_000), max_class_bytes=1 << 20,
                       inflate_threads=2)
        batches = 0
        for item in walk.entries():
            if type(item) is ClassBatch:
                batches += 1
                hits = item.hits
                for _ in range(len(every) if read is None else read):
                    if next(hits, None) is None:
                        break
        assert batches and walk.entries_seen == len(every) and walk.problems == [], read


def test_a_batch_dropped_half_read_stops_its_helpers():
    data = JARS["many"]()
    limits = (10_000, 1 << 30, 1 << 20, 0)
    before = zipstream._fastwalk.helpers_started()
    for _ in range(20):
        batch = zipstream._fastwalk.walk_batch_start(data, 0, 0, None, None, *limits, 2)
        assert batch.next_hit() is not None
        del batch  # joins the helper: nothing left reading the window
    assert zipstream._fastwalk.helpers_started() - before == 20
    batch = zipstream._fastwalk.walk_batch_start(data, 0, 0, None, None, *limits, 2)
    pos, n, classes, inflated, walked = batch.finish()
    assert n == len(walked) // 16 > 600 and classes == 600 and inflated > 0
    assert batch.next_hit() is None
    with pytest.raises(RuntimeError, match="finished already"):
        batch.finish()


def test_a_deflate_stream_zlib_and_isal_both_reject(monkeypatch):
    # Trailing bytes inside the declared size are ignored by both inflaters (java.util.zip too).
    body = zlib.compressobj(6, zlib.DEFLATED, -15)
    raw = body.compress(kit.update_checker()) + body.flush() + b"tail"
    data = bytearray(kit.zip_entries([("a/B.class", kit.update_checker(), True)]))
    at = data.find(b"a/B.class")
    start = at + 9
    old = struct.unpack_from("<I", data, 18)[0]
    data[start : start + old] = raw
    struct.pack_into("<I", data, 18, len(raw))
    cd = data.rfind(b"PK\x01\x02")
    struct.pack_into("<I", data, cd + 20, len(raw))
    struct.pack_into("<I", data, data.rfind(b"PK\x05\x06") + 16, cd + 0)  # directory moved by 4 bytes
    data = bytes(data)
    assert (_report(data, 4096, ScanLimits(), None, True, monkeypatch)
            == _report(data, 4096, ScanLimits(), None, False, monkeypatch))


def test_the_jars_hold_what_they_are_named_for(monkeypatch):
    monkeypatch.setattr(zipstream, "FAST_WALK", False)

    def report(jar, **limits):
        return scan_archive(iter([JARS[jar]()]), ScanLimits(**limits))

    assert any("C10.class: encrypted" in n for n in report("encrypted-class").notes)
    assert any("C12.class: encrypted or unsupported" in n for n in report("odd-method").notes)
    assert [f.rule for f in report("cd-elsewhere").findings if f.rule == "zip_structure"] == ["zip_structure"]
    assert [f.detail for f in report("cd-reordered").findings if f.rule == "zip_structure"] == [
        "central directory entry 'com/example/fw/C25.class' differs from its local header"]
    assert report("truncated").failure[0] == "corrupt_zip"
    assert report("many", max_class_bytes=600).failure[0] == "class_too_large"
    assert report("many", max_inflated=60_000).failure[0] == "inflate_limit"
    assert report("many", max_entries=250).failure[0] == "too_many_entries"
    many = report("many")
    assert many.failure is None and 100 < many.classes_parsed < 600 and many.classes == 600
    assert {f.rule for f in report("fractureiser").findings} >= {"fractureiser_stage0"}
    assert report("names").nested_jars == 1


# ---- class files: class_pool/class_rest (the C reading) against classfile._parse -----------------

def _annotated() -> bytes:
    cw = kit.ClassWriter("a/ForgeMod", interfaces=["java/lang/Runnable", "net/fabricmc/api/ModInitializer"],
                         annotations=["Lnet/minecraftforge/fml/common/Mod;", "Ljava/lang/Deprecated;"])
    cw.method("init", "()V", annotations=["Lnet/minecraftforge/fml/common/Mod$EventHandler;"]).op("return")
    m = cw.method("<clinit>", "()V", kit.ACC_STATIC)
    m.ldc("x").op("pop").op("return")
    cw.long(1 << 40)  # a two-slot constant in the pool
    return cw.to_bytes()


CLASSES = [kit.clean_initializer(), kit.clean_helper(), kit.process_builder_initializer(), kit.runtime_exec_method(),
           kit.update_checker(), kit.constant_reflection(), kit.fractureiser_stage0(), _annotated(), kit.exec_through_a_lambda(),
           _class(7, True), kit.ClassWriter("caf\u00e9/Unicode\u00e9").to_bytes()]


def _dump(data: bytes, fast: bool, monkeypatch):
    monkeypatch.setattr(classfile, "FAST_PARSE", fast)
    try:
        c = classfile.parse_class(data)
    except classfile.ClassFormatError as exc:
        return "error", str(exc)
    p = c.pool
    return (c.major, c.access, c.name, c.super_name, c.interfaces, c.annotations, c.bootstrap_methods,
            p.count, bytes(p._tags), list(p._offsets), p.end, p._data == data,
            [(m.access, m.name_index, m._desc_index, m._name, m._descriptor, m.code, m.code_at, m.handlers,
              m.annotations) for m in c.methods])


def test_the_c_reading_is_used_for_plain_classes():
    for data in CLASSES[:-1]:  # the last one's name is not ASCII: _parse reads it
        assert classfile._parse_fast(data) is not None
    assert classfile._parse_fast(CLASSES[-1]) is None


def test_both_readings_give_the_same_class(monkeypatch):
    for data in CLASSES:
        assert _dump(data, True, monkeypatch) == _dump(data, False, monkeypatch)
        assert _dump(data, True, monkeypatch)[0] != "error"


def test_both_readings_fail_alike_on_damaged_classes(monkeypatch):
    rng = random.Random(11)
    errors = 0
    for data in CLASSES:
        for _ in range(300):
            b = bytearray(data)
            for _ in range(rng.randint(1, 3)):
                b[rng.randrange(len(b))] = rng.randrange(256)
            for damaged in (bytes(b), data[: rng.randrange(len(data))]):
                fast, python = _dump(damaged, True, monkeypatch), _dump(damaged, False, monkeypatch)
                assert fast == python
                errors += fast[0] == "error"
    assert errors > 1000  # most damage is caught, by both, with the same message


def _hot(cls, data, fast: bool, monkeypatch):
    monkeypatch.setattr(classfile, "FAST_PARSE", fast)  # also picks hot_methods' C steps
    try:
        return [m.code_at for m in rules.hot_methods(cls, data)]
    except Exception as exc:  # noqa: BLE001 - both must fail alike
        return repr(exc)


def test_both_hot_methods_pick_the_same_methods(monkeypatch):
    rng = random.Random(13)
    picked = 0
    for data in CLASSES + [_class(i, i % 2 == 0) for i in range(8)]:
        variants = [data]
        for _ in range(200):
            b = bytearray(data)
            b[rng.randrange(len(b))] = rng.randrange(256)
            variants.append(bytes(b))
        for v in variants:
            monkeypatch.setattr(classfile, "FAST_PARSE", False)
            try:
                cls = classfile.parse_class(v)
            except classfile.ClassFormatError:
                continue
            fast = _hot(cls, v, True, monkeypatch)
            assert fast == _hot(cls, v, False, monkeypatch)
            picked += bool(fast)
    assert picked > 500


def test_hot_methods_of_methods_not_made_by_parse_class(monkeypatch):
    monkeypatch.setattr(classfile, "FAST_PARSE", True)
    cls = classfile.parse_class(kit.runtime_exec_method())
    (hot,) = rules.hot_methods(cls, cls.pool._data)
    copy = classfile.Method(hot.access, cls.pool, hot.name_index, hot._desc_index, hot.code, hot.handlers)
    cls.methods = [copy]  # code_at -1: the Python steps
    assert rules.hot_methods(cls, cls.pool._data) == [copy]


def test_hot_methods_of_methods_out_of_file_order(monkeypatch):
    # The C steps scan each method's code once, which relies on parse_class's order (the code
    # of each method after the one before): any other order is left to the Python steps.
    monkeypatch.setattr(classfile, "FAST_PARSE", True)
    cls = classfile.parse_class(kit.fractureiser_stage0())
    args = (cls.pool._data, cls.pool._data, cls.pool.end, cls.pool._tags, cls.pool._offsets)
    assert zipstream._fastwalk.hot_methods(*args, cls.methods, cls.bootstrap_methods) is not None
    assert len(cls.methods) > 1
    cls.methods.reverse()
    assert zipstream._fastwalk.hot_methods(*args, cls.methods, cls.bootstrap_methods) is None


def _facts(cls, method, fast: bool, monkeypatch):
    monkeypatch.setattr(bytecode, "FAST_QUICK", fast)
    try:
        f = bytecode.analyze(cls, method)
    except Exception as exc:  # noqa: BLE001 - both must fail alike
        return repr(exc)
    return (sorted((r.owner, r.name, r.descriptor) for r in f.calls), f.loads, f.built_strings, sorted(f.types),
            sorted(f.strings), {type(r) for r in f.calls})


def _many_strings() -> bytes:
    cw = kit.ClassWriter("a/Strings")
    m = cw.method("many", "()V", kit.ACC_PUBLIC | kit.ACC_STATIC)
    for i in range(300):  # more than bytecode.MAX_RECORDED
        m.ldc(f"s{i}").op("pop")
    m.new("java/net/URL").op("pop").op("return")
    return cw.to_bytes()


def test_both_quick_walks_give_the_same_facts(monkeypatch):
    """bytecode.analyze with _quick's walk in C and without, on every method of the classes
    above and of damaged copies of them: the same facts or the same error."""
    rng = random.Random(17)
    compared = taken = 0
    for data in CLASSES + [_class(i, i % 2 == 0) for i in range(8)] + [_many_strings()]:
        variants = [data]
        for _ in range(200):
            b = bytearray(data)
            for _ in range(rng.randint(1, 2)):
                b[rng.randrange(len(b))] = rng.randrange(256)
            variants.append(bytes(b))
        for v in variants:
            try:
                cls = classfile.parse_class(v)
            except classfile.ClassFormatError:
                continue
            for method in cls.methods:
                if not method.code:
                    continue
                fast = _facts(cls, method, True, monkeypatch)
                assert fast == _facts(cls, method, False, monkeypatch)
                compared += 1
                pool = cls.pool
                taken += zipstream._fastwalk.quick_facts(method.code, pool._data, pool._tags, pool._offsets,
                                                         classfile.MemberRef, bytecode._LEN,
                                                         bytecode.MAX_RECORDED) is not None
    assert compared > 3000 and taken > compared // 2  # most are ordinary: the C walk answers them


def test_the_c_parts_do_the_work_when_built(monkeypatch):
    """The comparisons above would pass if a C part never took anything: check each does."""
    monkeypatch.setattr(zipstream, "FAST_WALK", True)
    taken = []
    real = zipstream._fastwalk.cd_batch

    def spy(*args):
        out = real(*args)
        taken.append(out[1])
        return out

    monkeypatch.setattr(zipstream._fastwalk, "cd_batch", spy)
    report = scan_archive(iter([JARS["many"]()]), ScanLimits())
    assert sum(taken) >= report.entries - 2  # all but the last record (and any past a window's end)
    # the fingerprints computed as CPython's tuple hash, without a tuple (checked at import),
    # are ZipWalk._print's: a stored and a deflated entry, one with a name that is not ASCII
    assert zipstream._fastwalk.DIRECT_PRINTS == 1
    data = kit.zip_entries([("caf\u00e9/X.class", b"x" * 5000, True), ("a/b.txt", b"y" * 300, False)])
    walked = zipstream._fastwalk.walk_batch(data, 0, 0, None, None, 10, 10**6, 10**6, 0)[4]
    infos = zipfile.ZipFile(io.BytesIO(data)).infolist()
    pairs = array("Q", walked)
    assert list(pairs[0::2]) == [i.header_offset for i in infos]
    assert list(pairs[1::2]) == [zipstream.ZipWalk._print(i.filename.encode(), i.compress_type, i.compress_size)
                                 for i in infos]
    cls = classfile.parse_class(kit.update_checker())
    found = zipstream._fastwalk.hot_methods(cls.pool._data, cls.pool._data, cls.pool.end, cls.pool._tags,
                                            cls.pool._offsets, cls.methods, cls.bootstrap_methods)
    assert found is not None and [cls.methods[i] for i in found] == rules.hot_methods(cls, cls.pool._data) != []
