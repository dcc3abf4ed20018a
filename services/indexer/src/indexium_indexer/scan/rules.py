"""Detection rules over parsed class files: what is flagged, and how much it weighs where it sits.

A finding's severity is ``base weight x location factor``. A file is suspicious
when one finding reaches ``threshold`` (``INDEXIUM_SCAN_SUSPICIOUS_SCORE``, 6):
``ProcessBuilder`` in a mod initialiser (3 x 3) is, an update checker opening a
URL in an ordinary method (1 x 1) is recorded but is not.

| rule | base | what |
|---|---|---|
| ``fractureiser_stage0`` | 10 | static method reached from ``<clinit>`` that builds strings from byte/char arrays, loads a class by a run-time name, constructs it reflectively, calls ``Method.invoke`` and involves ``java.net.URL``/``URLClassLoader`` |
| ``url_classloader`` | 3 / 4 / 6 | ``new URLClassLoader`` or ``URLClassLoader.newInstance`` (3); looked up by a constant name (4); by a name built at run time (6) |
| ``runtime_exec`` | 3 | ``java.lang.Runtime.exec`` (also as a method reference) |
| ``process_builder`` | 3 | ``new ProcessBuilder`` / ``ProcessBuilder.start`` |
| ``reflective_invoke`` | 4 | ``Method.invoke`` in a method that loads a class by a name built at run time |
| ``dynamic_class_load`` | 2 | ``Class.forName``/``loadClass`` on a name built at run time, without ``invoke`` |
| ``define_class`` | 2 | ``ClassLoader.defineClass`` and friends (``Lookup.defineClass``, ``Unsafe.defineAnonymousClass`` ...) |
| ``network`` | 1 | ``URL.openConnection``/``openStream``, ``java.net.Socket``, ``java.net.http.HttpClient.send`` |

| location | factor | where |
|---|---|---|
| ``static_init`` | 3 | ``<clinit>``: runs when the class is loaded |
| ``mod_initializer`` | 3 | Fabric/Quilt ``ModInitializer``-style entrypoints, the constructor of a Forge/NeoForge ``@Mod`` class and its ``@EventHandler`` methods, Bukkit/Bungee ``onEnable``/``onLoad`` |
| ``called_from_init`` | 2 | a method of the same class reached from one of the above |
| ``method`` | 1 | anywhere else |

Bump :data:`RULESET_VERSION` whenever a rule or weight changes: stored results made
with an older rule set are then not reused.
"""

from __future__ import annotations

import collections
import re
from bisect import bisect_right
from collections.abc import Iterable
from dataclasses import dataclass

from . import classfile
from .bytecode import MethodFacts, analyze
from .classfile import ClassFile, MemberRef, Method

try:  # hot_methods in C for classes parse_class made (_fastwalk.c, built by `make env`)
    from . import _fastwalk
except ImportError:
    _fastwalk = None

RULESET_VERSION = 2  # 2: define_class through defineClass0/defineClass1 reaches the rule (the prefilter skipped it)
DEFAULT_THRESHOLD = 6

FACTORS = {"static_init": 3, "mod_initializer": 3, "called_from_init": 2, "method": 1}

_DEFINE_NAMES = {"defineClass", "defineHiddenClass", "defineAnonymousClass", "defineClass0", "defineClass1"}

# What each rule needs in the constant pool: a class can match a rule only if its pool holds
# one of the rule's markers as an exact Utf8 entry (tag 1, u2 length, the bytes). Every fact a
# rule reads comes from the pool: a call's owner and name (Methodref -> Class/NameAndType ->
# Utf8, also through method handles), a type (Class -> Utf8), a string (String -> Utf8), a
# class loaded by name (only through a call named forName/loadClass). So a class holding none
# of any rule's markers cannot match any rule, and the walk skips it unparsed (has_needles).
# A rule that starts reading something new must declare it here (tests/unit/scan/test_prefilter.py).
RULE_MARKERS: dict[str, tuple[str, ...]] = {
    "fractureiser_stage0": ("java/lang/reflect/Method",),  # Method.invoke (and forName/loadClass, URL)
    "url_classloader": ("java/net/URLClassLoader", "java.net.URLClassLoader", "forName", "loadClass"),
    "runtime_exec": ("java/lang/Runtime",),
    "process_builder": ("java/lang/ProcessBuilder", "java.lang.ProcessBuilder", "java.lang.Runtime",
                        "forName", "loadClass"),
    "reflective_invoke": ("forName", "loadClass"),
    "dynamic_class_load": ("forName", "loadClass"),
    "define_class": tuple(sorted(_DEFINE_NAMES)),
    "network": ("java/net/URL", "java/net/Socket", "java/net/http/HttpClient"),
}

_HOT_OWNERS = {"java/lang/Runtime", "java/lang/ProcessBuilder", "java/net/URLClassLoader", "java/net/URL",
               "java/net/Socket", "java/net/http/HttpClient", "java/lang/reflect/Method"}
_HOT_NAMES = {"forName", "loadClass", *_DEFINE_NAMES}
_HOT_TYPES = {"java/lang/ProcessBuilder", "java/net/URLClassLoader", "java/net/Socket", "java/net/URL",
              "[Ljava/net/URL;"}
_HOT_STRINGS = {"java.net.URLClassLoader", "java.lang.ProcessBuilder", "java.lang.Runtime"}

# The entries searched for: every rule's markers, and every constant hot_methods looks up.
_NEEDLE_NAMES = tuple(sorted({m for markers in RULE_MARKERS.values() for m in markers}
                             | _HOT_OWNERS | _HOT_NAMES | _HOT_TYPES | _HOT_STRINGS))
NEEDLES = tuple(b"\x01" + len(n).to_bytes(2, "big") + n.encode() for n in _NEEDLE_NAMES)
# The same names for the C walk, with the sets of hot_methods they go to (1 owner, 2 type, 4 name, 8 string).
C_NEEDLES = [(n.encode(), (n in _HOT_OWNERS) | (n in _HOT_TYPES) << 1 | (n in _HOT_NAMES) << 2
              | (n in _HOT_STRINGS) << 3) for n in _NEEDLE_NAMES]
if _fastwalk is not None:
    _fastwalk.set_needles(C_NEEDLES)
_NEEDLE_RE = re.compile(  # one pass, alternatives grouped by length: ~10x faster than any(n in data)
    b"\x01\x00(?:" + b"|".join(
        re.escape(bytes((length,))) + b"(?:" + b"|".join(re.escape(n.encode()) for n in _NEEDLE_NAMES
                                                         if len(n) == length) + b")"
        for length in sorted({len(n) for n in _NEEDLE_NAMES})
    ) + b")"
)

_FABRIC_ENTRYPOINTS = {
    "net/fabricmc/api/ModInitializer": "onInitialize",
    "net/fabricmc/api/ClientModInitializer": "onInitializeClient",
    "net/fabricmc/api/DedicatedServerModInitializer": "onInitializeServer",
    "net/fabricmc/loader/api/entrypoint/PreLaunchEntrypoint": "onPreLaunch",
    "org/quiltmc/qsl/base/api/entrypoint/ModInitializer": "onInitialize",
    "org/quiltmc/qsl/base/api/entrypoint/client/ClientModInitializer": "onInitializeClient",
    "org/quiltmc/qsl/base/api/entrypoint/server/DedicatedServerModInitializer": "onInitializeServer",
    "org/quiltmc/loader/api/entrypoint/PreLaunchEntrypoint": "onPreLaunch",
}
_MOD_ANNOTATIONS = {"Lnet/minecraftforge/fml/common/Mod;", "Lnet/neoforged/fml/common/Mod;",
                    "Lcpw/mods/fml/common/Mod;"}
_EVENT_HANDLER_ANNOTATIONS = {"Lnet/minecraftforge/fml/common/Mod$EventHandler;",
                              "Lcpw/mods/fml/common/Mod$EventHandler;"}
_PLUGIN_SUPERS = {"org/bukkit/plugin/java/JavaPlugin", "net/md_5/bungee/api/plugin/Plugin"}
_PLUGIN_METHODS = {"onEnable", "onLoad"}

_DEFINE_OWNERS = {"java/lang/ClassLoader", "java/security/SecureClassLoader", "java/net/URLClassLoader",
                  "java/lang/invoke/MethodHandles$Lookup", "sun/misc/Unsafe", "jdk/internal/misc/Unsafe"}
_URL_TYPES = {"java/net/URL", "[Ljava/net/URL;", "java/net/URLClassLoader"}
_NETWORK_CALLS = {("java/net/URL", "openConnection"), ("java/net/URL", "openStream"),
                  ("java/net/http/HttpClient", "send"), ("java/net/http/HttpClient", "sendAsync")}
_REFLECT_CONSTRUCT = {("java/lang/Class", "getConstructor"), ("java/lang/Class", "getDeclaredConstructor"),
                      ("java/lang/reflect/Constructor", "newInstance"), ("java/lang/Class", "newInstance")}
_METHOD_INVOKE = MemberRef("java/lang/reflect/Method", "invoke",
                           "(Ljava/lang/Object;[Ljava/lang/Object;)Ljava/lang/Object;")


@dataclass(frozen=True, slots=True)
class Finding:
    rule: str
    severity: int
    location: str  # static_init | mod_initializer | called_from_init | method | archive | file
    path: str = ""  # entry inside the jar; nested jars joined with "!/"
    class_name: str | None = None  # dotted, as Java prints it
    method: str | None = None  # name + descriptor
    detail: str = ""


def has_needles(data: bytes) -> bool:
    """Cheap pre-filter over raw class bytes (see ``NEEDLES``)."""
    return _NEEDLE_RE.search(data) is not None


def initializer_methods(cls: ClassFile) -> set[str]:
    """Signatures (name + descriptor) of the methods a mod loader calls to start the mod."""
    out: set[str] = set()
    entry_names = {_FABRIC_ENTRYPOINTS[i] for i in cls.interfaces if i in _FABRIC_ENTRYPOINTS}
    is_mod = bool(_MOD_ANNOTATIONS.intersection(cls.annotations))
    is_plugin = cls.super_name in _PLUGIN_SUPERS
    by_class = bool(entry_names or is_mod or is_plugin)
    for m in cls.methods:
        if m.annotations and _EVENT_HANDLER_ANNOTATIONS.intersection(m.annotations):
            out.add(m.signature)
        elif by_class and (m.name in entry_names or (is_plugin and m.name in _PLUGIN_METHODS)
                           or m.name == "<init>"):  # the loader instantiates the entrypoint class
            out.add(m.signature)
    return out


def hot_methods(cls: ClassFile, data: bytes) -> list[Method]:
    """Methods whose code mentions a constant some rule reads (``data``: the class file's bytes).

    Every rule needs one of these constants in the method it flags, so only these
    methods are walked. Found with byte searches, never by decoding the pool: the
    needle Utf8 entries, the Class/NameAndType/String entries naming them, the
    member references using those, then each method's code for their indices (a
    false match there only costs a walk).
    """
    pool = cls.pool
    if _fastwalk is not None and classfile.FAST_PARSE:  # the same steps in C; None: not parse_class's
        found = _fastwalk.hot_methods(data, pool._data, pool.end, pool._tags, pool._offsets, cls.methods,
                                      cls.bootstrap_methods)
        if found is not None:
            methods = cls.methods
            return [methods[i] for i in found]
    owners, types, names, strings = set(), set(), set(), set()
    for m in _NEEDLE_RE.finditer(data, 0, pool.end):
        index = pool.utf8_at(m.start())
        if index is None:
            continue
        text = m.group()[3:].decode()
        if text in _HOT_OWNERS:
            owners.add(index)
        if text in _HOT_TYPES:
            types.add(index)
        if text in _HOT_NAMES:
            names.add(index)
        if text in _HOT_STRINGS:
            strings.add(index)
    type_classes = pool.find_refs(7, types)  # CLASS
    classes = type_classes | pool.find_refs(7, owners - types)
    nats = pool.find_refs(12, names)  # NAME_AND_TYPE
    refs = pool.find_refs(10, classes) | pool.find_refs(11, classes)
    if nats:
        refs |= pool.find_refs(10, nats, second=True) | pool.find_refs(11, nats, second=True)
    constants = type_classes | pool.find_refs(8, strings)  # new/anewarray/ldc X.class; ldc "..."
    patterns = [i.to_bytes(2, "big") for i in refs | constants]
    patterns += [bytes((0x12, i)) for i in constants if i < 256]
    if refs and cls.bootstrap_methods:  # lambdas and method references: Runtime::exec
        handles = {h for h in pool.indices(15) if pool._u2(pool._offsets[h] + 1) in refs}
        if any(a in handles for _, args in cls.bootstrap_methods for a in args):
            patterns += [i.to_bytes(2, "big") for i in pool.indices(18)]
    if not patterns:
        return []
    unique = set(patterns)
    # A few two-byte patterns (4 on average), searched for over the class file's bytes from
    # the first method's code to the last one's, each hit mapped to the method whose code
    # holds it whole: the same answer as `p in m.code` for every method, in a few C-speed
    # finds instead of a Python loop over methods x patterns.
    with_code, starts, ends = [], [], []
    for m in cls.methods:
        code = m.code
        if code:
            with_code.append(m)
            starts.append(m.code_at)  # increasing: the parser reads the methods in file order
            ends.append(m.code_at + len(code))
    if not with_code:
        return []
    if starts[0] < 0:  # a Method not made by parse_class
        return [m for m in with_code if any(p in m.code for p in unique)]
    region_data = pool._data
    lo, hi = starts[0], ends[-1]
    marked: set[int] = set()
    for p in unique:
        width = len(p)
        at = region_data.find(p, lo, hi)
        while at >= 0:
            i = bisect_right(starts, at) - 1
            if at + width <= ends[i]:
                marked.add(i)
            at = region_data.find(p, at + 1, hi)
    return [with_code[i] for i in sorted(marked)]


def locations(cls: ClassFile, facts: dict[str, MethodFacts] | None = None, *,
              facts_of=None) -> dict[str, str]:
    """Location of every method: static_init, mod_initializer, called_from_init or method.

    ``facts_of(signature)`` (or the ``facts`` dict) gives a method's calls; it is asked
    only for the methods reached from the roots.
    """
    if facts_of is None:
        facts_of = lambda sig: (facts or {}).get(sig, MethodFacts())  # noqa: E731
    where: dict[str, str] = collections.defaultdict(lambda: "method")
    clinit = cls.pool.utf8_indices("<clinit>")
    roots = [m.signature for m in cls.methods if m.name_index in clinit] if clinit else []
    for sig in roots:
        where[sig] = "static_init"
    for sig in initializer_methods(cls):
        where[sig] = "mod_initializer"
        roots.append(sig)
    # Same-class calls, transitively: fractureiser put its payload in a static method
    # called from <clinit>, not in <clinit> itself.
    todo = list(roots)
    while todo:
        sig = todo.pop()
        for ref in facts_of(sig).calls:
            callee = ref.name + ref.descriptor
            if ref.owner == cls.name and where[callee] == "method":
                where[callee] = "called_from_init"
                todo.append(callee)
    return where


def method_hits(facts: MethodFacts) -> list[tuple[str, int, str]]:
    """(rule, base weight, detail) for one method, before location weighting."""
    # The calls' (owner, name) pairs and owners made once: every class that names a rule's API
    # comes here, and a generator per test over the calls was most of this function's time.
    hits: list[tuple[str, int, str]] = []
    refs, loads, types = facts.calls, facts.loads, facts.types
    calls = {(r.owner, r.name) for r in refs}
    owners = {o for o, _ in calls}

    if ("java/lang/Runtime", "exec") in calls:
        hits.append(("runtime_exec", 3, "java.lang.Runtime.exec"))
    if "java/lang/ProcessBuilder" in types or "java/lang/ProcessBuilder" in owners:
        hits.append(("process_builder", 3, "java.lang.ProcessBuilder"))
    elif any(ld.value in ("java.lang.ProcessBuilder", "java.lang.Runtime") for ld in loads):
        hits.append(("process_builder", 4, "process API looked up by name"))

    url_loader_names = [ld for ld in loads if ld.value == "java.net.URLClassLoader"] if loads else []
    if any(not ld.constant for ld in url_loader_names):
        hits.append(("url_classloader", 6, 'Class.forName("java.net.URLClassLoader") on a name built at run time'))
    elif url_loader_names or "java.net.URLClassLoader" in facts.strings:
        hits.append(("url_classloader", 4, "java.net.URLClassLoader looked up by name"))
    elif "java/net/URLClassLoader" in types or "java/net/URLClassLoader" in owners:
        hits.append(("url_classloader", 3, "new java.net.URLClassLoader"))

    if any(r.name in _DEFINE_NAMES and (r.owner in _DEFINE_OWNERS or "[B" in r.descriptor) for r in refs):
        hits.append(("define_class", 2, "defines a class from bytes"))

    dynamic = [ld for ld in loads if not ld.constant] if loads else []
    if dynamic:
        shown = ", ".join(sorted({repr(ld.value) for ld in dynamic if ld.value})) or "an unknown name"
        if _METHOD_INVOKE in refs or ("java/lang/reflect/Method", "invoke") in calls:
            hits.append(("reflective_invoke", 4, f"Method.invoke after loading {shown} built at run time"))
        else:
            hits.append(("dynamic_class_load", 2, f"loads {shown} built at run time"))

    if calls & _NETWORK_CALLS or "java/net/Socket" in types or "java/net/Socket" in owners:
        hits.append(("network", 1, "opens network connections"))
    return hits


def is_stage0(method: Method, facts: MethodFacts, location: str) -> bool:
    """fractureiser stage 0: the whole sequence in one static method run from ``<clinit>``."""
    if location not in ("static_init", "called_from_init") or not facts.built_strings:
        return False  # the cheap conditions first: most methods with a finding fail them
    calls = {(r.owner, r.name) for r in facts.calls}
    urlish = bool(facts.types & _URL_TYPES) or any(
        v and "URLClassLoader" in v for v in [*facts.built_strings, *(ld.value for ld in facts.loads)]
    )
    return (
        location in ("static_init", "called_from_init")
        and (method.is_static or method.name == "<clinit>")
        and bool(facts.built_strings)
        and any(not ld.constant for ld in facts.loads)
        and bool(calls & _REFLECT_CONSTRUCT)
        and ("java/lang/reflect/Method", "invoke") in calls
        and urlish
    )


def scan_class(cls: ClassFile, path: str = "", data: bytes | None = None) -> list[Finding]:
    """Every finding in one parsed class (``data``: its bytes), weighted by location.

    Raises ClassFormatError.
    """
    if data is None:
        data = cls.pool._data
    hot = hot_methods(cls, data)
    if not hot:
        return []
    facts: dict[str, MethodFacts] = {}
    by_sig: dict[str, Method] | None = None

    def facts_of(sig: str) -> MethodFacts:
        nonlocal by_sig
        if sig not in facts:
            if by_sig is None:  # only when a call is followed: most classes never get here
                by_sig = {m.signature: m for m in cls.methods}
            m = by_sig.get(sig)
            facts[sig] = analyze(cls, m) if m is not None else MethodFacts()
        return facts[sig]

    hits_by_method = []
    for m in hot:
        f = analyze(cls, m)  # each method's own code, even if a doctored class repeats a signature
        sig = m.signature  # made once: name + descriptor joined anew on every read
        facts.setdefault(sig, f)
        if h := method_hits(f):
            hits_by_method.append((m, sig, f, h))
    if not hits_by_method:
        return []
    where = locations(cls, facts_of=facts_of)
    class_name = cls.name.replace("/", ".")
    out: list[Finding] = []
    for m, sig, f, hits in hits_by_method:
        location = where[sig]
        factor = FACTORS[location]
        if is_stage0(m, f, location):
            hits.insert(0, ("fractureiser_stage0", 10, "fractureiser stage-0 loader pattern"))
        for rule, base, detail in hits:
            out.append(Finding(rule, base * factor, location, path, class_name, sig, detail))
    return out


def is_suspicious(findings: Iterable[Finding], threshold: int = DEFAULT_THRESHOLD) -> bool:
    return any(f.severity >= threshold for f in findings)
