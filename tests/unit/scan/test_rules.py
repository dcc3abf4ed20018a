"""Rules over parsed classes: what is flagged, where, and how much it weighs."""

from indexium_devstack import scankit as kit

from indexium_indexer.scan import rules
from indexium_indexer.scan.bytecode import ClassLoad, MethodFacts, analyze
from indexium_indexer.scan.classfile import MemberRef, parse_class
from indexium_indexer.scan.rules import DEFAULT_THRESHOLD, has_needles, is_suspicious, scan_class


def findings(data: bytes):
    return scan_class(parse_class(data), "x.class")


def test_clean_classes_have_no_findings_and_are_skipped_by_the_prefilter():
    for data in (kit.clean_initializer(), kit.clean_helper()):
        assert not has_needles(data)
        assert findings(data) == []


def test_process_builder_in_a_fabric_initializer_is_suspicious():
    (f,) = findings(kit.process_builder_initializer())
    assert (f.rule, f.location, f.severity) == ("process_builder", "mod_initializer", 9)
    assert f.class_name == "com.example.pb.PbMod" and f.method == "onInitialize()V"
    assert is_suspicious([f])


def test_runtime_exec_and_network_in_ordinary_methods_are_recorded_but_not_suspicious():
    (exec_,) = findings(kit.runtime_exec_method())
    (net,) = findings(kit.update_checker())
    assert (exec_.rule, exec_.severity) == ("runtime_exec", 3)
    assert (net.rule, net.severity) == ("network", 1)
    assert not is_suspicious([exec_, net], DEFAULT_THRESHOLD)


def test_fractureiser_stage0_is_detected_as_such():
    out = findings(kit.fractureiser_stage0())
    rules = {f.rule: f for f in out}
    stage0 = rules["fractureiser_stage0"]
    assert stage0.location == "called_from_init"  # a static method called from <clinit>
    assert stage0.method == "_d1385bd3c36f464882460aa4f0484c53()V"
    assert stage0.severity == 20
    assert rules["url_classloader"].severity == 12  # looked up by a name built at run time
    assert "reflective_invoke" in rules
    assert is_suspicious(out)


def test_byte_array_strings_are_decoded():
    cls = parse_class(kit.fractureiser_stage0())
    payload = next(m for m in cls.methods if m.name.startswith("_d"))
    facts = analyze(cls, payload)
    assert facts.built_strings[:4] == ["java.net.URLClassLoader", kit.UNROUTABLE, "loadClass", "run"]
    (load,) = facts.loads
    assert (load.constant, load.value) == (False, "java.net.URLClassLoader")


def test_constant_reflection_in_clinit_is_not_stage0():
    out = findings(kit.constant_reflection())
    assert not any(f.rule in ("fractureiser_stage0", "reflective_invoke", "dynamic_class_load") for f in out)
    assert not is_suspicious(out)


def test_same_payload_outside_clinit_reach_is_weighted_as_an_ordinary_method():
    cw = kit.ClassWriter("a/Lib")
    m = cw.method("load", "()V", kit.ACC_PUBLIC | kit.ACC_STATIC)
    m.string_from_bytes("java.net.URLClassLoader")
    m.invoke("invokestatic", "java/lang/Class", "forName", "(Ljava/lang/String;)Ljava/lang/Class;").op("pop")
    m.op("return")
    out = findings(cw.to_bytes())
    assert [(f.rule, f.location, f.severity) for f in out] == [
        ("url_classloader", "method", 6), ("dynamic_class_load", "method", 2)]


def test_a_local_assigned_a_constant_and_a_built_string_counts_as_built():
    cw = kit.ClassWriter("a/Tricky")
    m = cw.method("load", "()V", kit.ACC_PUBLIC | kit.ACC_STATIC)
    m.string_from_bytes("x.Y").astore(0).ldc("harmless.Name").astore(0).aload(0)
    m.invoke("invokestatic", "java/lang/Class", "forName", "(Ljava/lang/String;)Ljava/lang/Class;").op("pop")
    m.op("return")
    cls = parse_class(cw.to_bytes())
    (load,) = analyze(cls, cls.methods[0]).loads
    assert load.constant is False


def test_forge_mod_constructor_and_bukkit_on_enable_are_initialisers():
    cw = kit.ClassWriter("a/ForgeMod", annotations=["Lnet/minecraftforge/fml/common/Mod;"])
    cw.method("<init>", "()V").invoke("invokestatic", "java/lang/Runtime", "getRuntime", "()Ljava/lang/Runtime;") \
        .ldc("calc").invoke("invokevirtual", "java/lang/Runtime", "exec", "(Ljava/lang/String;)Ljava/lang/Process;") \
        .op("pop").op("return")
    (f,) = findings(cw.to_bytes())
    assert (f.rule, f.location, f.severity) == ("runtime_exec", "mod_initializer", 9)

    cw = kit.ClassWriter("a/Plugin", super_name="org/bukkit/plugin/java/JavaPlugin")
    cw.method("onEnable", "()V").new("java/net/URLClassLoader").op("pop").op("return")
    (f,) = findings(cw.to_bytes())
    assert (f.rule, f.location) == ("url_classloader", "mod_initializer")


def test_method_reference_to_runtime_exec_through_a_lambda_is_seen():
    cw = kit.ClassWriter("a/Lambda")
    bsm = cw.method_reference("java/lang/Runtime", "exec", "(Ljava/lang/String;)Ljava/lang/Process;",
                              "(Ljava/lang/Object;)Ljava/lang/Object;", "(Ljava/lang/String;)Ljava/lang/Process;")
    m = cw.method("<clinit>", "()V", kit.ACC_STATIC)
    m.invoke("invokestatic", "java/lang/Runtime", "getRuntime", "()Ljava/lang/Runtime;")
    m.u2op("invokedynamic", cw.indy(bsm, "apply", "(Ljava/lang/Runtime;)Ljava/util/function/Function;"))._raw(0)._raw(0)
    m.op("pop").op("return")
    out = findings(cw.to_bytes())
    assert ("runtime_exec", "static_init", 9) in [(f.rule, f.location, f.severity) for f in out]


def test_define_class_in_static_init():
    cw = kit.ClassWriter("a/Loader", super_name="java/lang/ClassLoader")
    m = cw.method("<clinit>", "()V", kit.ACC_STATIC)
    m.op("aconst_null").op("aconst_null").op("aconst_null").iconst(0).iconst(0)
    m.invoke("invokevirtual", "java/lang/ClassLoader", "defineClass", "(Ljava/lang/String;[BII)Ljava/lang/Class;")
    m.op("pop").op("return")
    (f,) = findings(cw.to_bytes())
    assert (f.rule, f.severity) == ("define_class", 6)


def _hits(calls=(), loads=(), built=(), types=(), strings=()):
    facts = MethodFacts({MemberRef(*c) for c in calls}, list(loads), list(built), set(types), set(strings))
    return [(rule, weight) for rule, weight, _ in rules.method_hits(facts)]


def test_each_weight_of_each_method_rule():
    """method_hits branch by branch (the class samples above reach only some of them)."""
    built_url = ClassLoad("forName", False, "java.net.URLClassLoader")
    assert _hits() == []
    assert _hits(calls=[("java/lang/Runtime", "exec", "(Ljava/lang/String;)Ljava/lang/Process;")]) == [
        ("runtime_exec", 3)]
    assert _hits(calls=[("java/lang/Runtime", "getRuntime", "()Ljava/lang/Runtime;")]) == []
    assert _hits(calls=[("java/lang/ProcessBuilder", "start", "()Ljava/lang/Process;")]) == [("process_builder", 3)]
    assert _hits(types=["java/lang/ProcessBuilder"]) == [("process_builder", 3)]
    assert _hits(loads=[ClassLoad("forName", True, "java.lang.Runtime")]) == [("process_builder", 4)]
    assert _hits(loads=[built_url]) == [("url_classloader", 6), ("dynamic_class_load", 2)]
    assert _hits(loads=[ClassLoad("loadClass", True, "java.net.URLClassLoader")]) == [("url_classloader", 4)]
    assert _hits(strings=["java.net.URLClassLoader"]) == [("url_classloader", 4)]
    assert _hits(types=["java/net/URLClassLoader"]) == [("url_classloader", 3)]
    assert _hits(calls=[("java/net/URLClassLoader", "newInstance", "([Ljava/net/URL;)Ljava/net/URLClassLoader;")]) == [
        ("url_classloader", 3)]
    assert _hits(calls=[("java/lang/ClassLoader", "defineClass", "(I)V")]) == [("define_class", 2)]
    assert _hits(calls=[("a/Loader", "defineClass1", "([BII)Ljava/lang/Class;")]) == [("define_class", 2)]
    assert _hits(calls=[("a/Loader", "defineClass", "(I)V")]) == []
    invoke = ("java/lang/reflect/Method", "invoke", "(Ljava/lang/Object;[Ljava/lang/Object;)Ljava/lang/Object;")
    assert _hits(calls=[invoke], loads=[ClassLoad("forName", False, None)]) == [("reflective_invoke", 4)]
    assert _hits(calls=[("java/lang/reflect/Method", "invoke", "()V")],
                 loads=[ClassLoad("forName", False, "a.B")]) == [("reflective_invoke", 4)]
    assert _hits(calls=[invoke]) == []
    for network in (("java/net/URL", "openStream", "()Ljava/io/InputStream;"),
                    ("java/net/http/HttpClient", "send", "()V"), ("java/net/Socket", "connect", "()V")):
        assert _hits(calls=[network]) == [("network", 1)]
    assert _hits(types=["java/net/Socket"]) == [("network", 1)]
    assert _hits(calls=[("java/net/URL", "getHost", "()Ljava/lang/String;")]) == []
