"""The constant-pool prefilter is exact: a class is skipped unparsed only when no rule could match it.

Each rule declares its markers (``rules.RULE_MARKERS``); these tests pin that every rule's
sample holds one of its own markers, that each sample is still caught when it is the one
suspicious class among thousands of benign ones (which are all skipped), and that a marker
in an awkward place (across chunk boundaries, in a nested deflated jar, in a stored entry
after a data descriptor, reached only through a method handle) still gets the class parsed.
"""

import random

import pytest
from indexium_devstack import scankit as kit

from indexium_indexer.scan.archive import ScanLimits, scan_archive
from indexium_indexer.scan.classfile import UTF8, parse_class
from indexium_indexer.scan.rules import RULE_MARKERS, has_needles, scan_class

FOR_NAME = ("invokestatic", "java/lang/Class", "forName", "(Ljava/lang/String;)Ljava/lang/Class;")


def _dynamic_load() -> bytes:
    cw = kit.ClassWriter("a/Lib")
    m = cw.method("load", "()V", kit.ACC_PUBLIC | kit.ACC_STATIC)
    m.string_from_bytes("x.Payload").invoke(*FOR_NAME).op("pop").op("return")
    return cw.to_bytes()


def _reflective_invoke() -> bytes:
    cw = kit.ClassWriter("a/Refl")
    m = cw.method("run", "()V", kit.ACC_PUBLIC | kit.ACC_STATIC)
    m.string_from_bytes("x.Payload").invoke(*FOR_NAME)
    m.ldc("go").iconst(0).anewarray("java/lang/Class")
    m.invoke("invokevirtual", "java/lang/Class", "getMethod",
             "(Ljava/lang/String;[Ljava/lang/Class;)Ljava/lang/reflect/Method;")
    m.op("aconst_null").iconst(0).anewarray("java/lang/Object")
    m.invoke("invokevirtual", "java/lang/reflect/Method", "invoke",
             "(Ljava/lang/Object;[Ljava/lang/Object;)Ljava/lang/Object;").op("pop").op("return")
    return cw.to_bytes()


def _process_builder_by_name() -> bytes:
    cw = kit.ClassWriter("a/ByName")
    cw.method("find", "()V", kit.ACC_PUBLIC | kit.ACC_STATIC).ldc("java.lang.ProcessBuilder") \
        .invoke(*FOR_NAME).op("pop").op("return")
    return cw.to_bytes()


def _url_classloader_plugin() -> bytes:
    cw = kit.ClassWriter("a/Plugin", super_name="org/bukkit/plugin/java/JavaPlugin")
    cw.method("onEnable", "()V").new("java/net/URLClassLoader").op("pop").op("return")
    return cw.to_bytes()


def _define_class(name: str = "defineClass", owner: str = "java/lang/ClassLoader") -> bytes:
    cw = kit.ClassWriter("a/Loader", super_name="java/lang/ClassLoader")
    m = cw.method("<clinit>", "()V", kit.ACC_STATIC)
    m.op("aconst_null").op("aconst_null").op("aconst_null").iconst(0).iconst(0)
    m.invoke("invokevirtual", owner, name, "(Ljava/lang/String;[BII)Ljava/lang/Class;").op("pop").op("return")
    return cw.to_bytes()


# (sample, the rule it must trigger)
SAMPLES = {
    "fractureiser_stage0": (kit.fractureiser_stage0, "fractureiser_stage0"),
    "url_classloader": (_url_classloader_plugin, "url_classloader"),
    "runtime_exec": (kit.runtime_exec_method, "runtime_exec"),
    "runtime_exec_lambda": (kit.exec_through_a_lambda, "runtime_exec"),
    "process_builder": (kit.process_builder_initializer, "process_builder"),
    "process_builder_by_name": (_process_builder_by_name, "process_builder"),
    "reflective_invoke": (_reflective_invoke, "reflective_invoke"),
    "dynamic_class_load": (_dynamic_load, "dynamic_class_load"),
    "define_class": (_define_class, "define_class"),
    "define_class1": (lambda: _define_class("defineClass1", "a/Loader"), "define_class"),
    "network": (kit.update_checker, "network"),
}


def utf8_entries(data: bytes) -> set[str]:
    cls = parse_class(data)
    return {cls.pool.utf8(i) for i in cls.pool.indices(UTF8)}


def benign_classes(n: int, seed: int = 7) -> list[tuple[str, bytes]]:
    """Classes that name nothing a rule reads, several shapes, ``n`` distinct names."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        pkg = f"com/example/benign/p{i % 37}/c{i}"
        if i % 3 == 0:
            data = kit.clean_helper(pkg)
        elif i % 3 == 1:
            data = kit.clean_initializer(pkg)
        else:  # names close to markers that are not markers
            cw = kit.ClassWriter(f"{pkg}/Near")
            m = cw.method("near", "()V", kit.ACC_PUBLIC | kit.ACC_STATIC)
            m.ldc("java/net/URLs " + "x" * rng.randint(0, 40)).op("pop")
            m.invoke("invokestatic", "java/net/URLConnection", "forNameX", "()V")
            m.invoke("invokestatic", "java/lang/RuntimeException", "loadClasses", "()V").op("return")
            data = cw.to_bytes()
        out.append((f"{pkg}.class", data))
    return out


def test_every_rule_declares_markers_and_has_a_sample_here():
    assert set(RULE_MARKERS) == {rule for _, rule in SAMPLES.values()}


@pytest.mark.parametrize("sample", sorted(SAMPLES))
def test_each_sample_holds_a_marker_of_every_rule_it_triggers(sample):
    make, rule = SAMPLES[sample]
    data = make()
    found = {f.rule for f in scan_class(parse_class(data), "x.class")}
    assert rule in found
    assert has_needles(data)
    pool = utf8_entries(data)
    for r in found:  # a finding without one of its rule's markers would mean the prefilter could skip it
        assert pool & set(RULE_MARKERS[r]), (r, sorted(pool))


def test_benign_classes_are_skipped_and_hold_no_marker():
    for _, data in benign_classes(60):
        assert not has_needles(data)
        assert not utf8_entries(data) & {m for ms in RULE_MARKERS.values() for m in ms}
        assert scan_class(parse_class(data), "x.class") == []


@pytest.mark.parametrize("descriptors", [False, True])
@pytest.mark.parametrize("sample", sorted(SAMPLES))
def test_one_bad_class_among_thousands_of_benign_ones_is_caught(sample, descriptors):
    make, rule = SAMPLES[sample]
    bad = make()
    alone = {(f.rule, f.severity, f.location) for f in scan_class(parse_class(bad), "x.class")}
    entries = [(name, data, True) for name, data in benign_classes(2500)]
    at = random.Random(sample).randrange(len(entries))
    entries.insert(at, ("com/example/bad/Bad.class", bad, at % 2 == 0))  # stored or deflated
    jar = kit.zip_entries(entries, data_descriptors=descriptors)
    report = scan_archive(iter([jar[i : i + 65536] for i in range(0, len(jar), 65536)]), ScanLimits())
    assert report.failure is None
    assert report.classes == 2501
    assert report.classes_parsed == 1  # every benign class skipped, the bad one parsed
    assert {(f.rule, f.severity, f.location) for f in report.findings} == alone
    assert {f.path for f in report.findings} == {"com/example/bad/Bad.class"}
    assert rule in {f.rule for f in report.findings}


@pytest.mark.parametrize("chunk", [1, 3, 7, 4096])
@pytest.mark.parametrize("descriptors", [False, True])
def test_markers_in_awkward_places_still_get_the_class_parsed(chunk, descriptors):
    """Marker bytes split across stream chunks, inside a deflated jar inside a jar, in stored
    entries found by their data descriptor, and reached only through a lambda's method handle."""
    lam, define1 = kit.exec_through_a_lambda(), _define_class("defineClass1", "a/Loader")
    inner = kit.zip_entries([("a/Lambda.class", lam, False), ("a/Loader.class", define1, True),
                             ("b/Fine.class", kit.clean_helper("b"), True)], data_descriptors=descriptors)
    outer = kit.zip_entries([("c/Fine.class", kit.clean_helper("c"), True),
                             ("META-INF/jars/inner.jar", inner, True),  # deflated: the markers only after two inflates
                             ("a/Stored.class", kit.update_checker("d"), False)], data_descriptors=descriptors)
    report = scan_archive(iter([outer[i : i + chunk] for i in range(0, len(outer), chunk)]), ScanLimits())
    assert report.failure is None
    got = {(f.path, f.rule) for f in report.findings}
    assert ("META-INF/jars/inner.jar!/a/Lambda.class", "runtime_exec") in got
    assert ("META-INF/jars/inner.jar!/a/Loader.class", "define_class") in got
    assert ("a/Stored.class", "network") in got
    assert report.classes == 5 and report.classes_parsed == 3
