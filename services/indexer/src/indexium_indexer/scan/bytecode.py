"""Walk one method's bytecode and report what it calls and which strings it builds.

A single linear pass with a small abstract operand stack (JVMS chapter 6): enough
to see *constants* flowing into calls, without a verifier or control-flow graph.

* ``ldc "x"`` is a constant string; anything else reaching ``Class.forName`` /
  ``ClassLoader.loadClass`` is a string built at run time.
* ``new String(new byte[]{106, 97, ...})`` (and ``char[]``) is decoded when every
  element is a constant, which is how fractureiser's stage 0 hid its class names.
* At an unconditional jump, return or throw the stack is forgotten (the next
  instruction is reached from elsewhere); at an exception handler it holds one
  unknown value. A local variable assigned two different values becomes unknown,
  so a constant assigned on one path never hides a built string on another.

Values are deliberately coarse: ``None`` is "unknown, one slot"; ``WIDE`` is an
unknown long/double. Every malformed input raises :class:`ClassFormatError`.
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass, field

from .classfile import ClassFile, ClassFormatError, MemberRef, Method, argument_slots

try:  # _quick's walk in C for code whose every step is ordinary (_fastwalk.c, built by `make env`)
    from ._fastwalk import quick_facts as _c_quick
except ImportError:  # not built: _quick alone
    _c_quick = None

# Whether analyze tries the C walk of _quick first (tests set it to False to compare the two).
FAST_QUICK = _c_quick is not None

WIDE = object()  # an unknown long or double
_MULTI = object()  # a local variable assigned more than one value
MAX_ARRAY = 4096  # longest constant array we model (class names and URLs are far shorter)
MAX_RECORDED = 256  # per method, for each kind of fact

T_CHAR, T_BYTE = 5, 8


class Const:
    __slots__ = ("kind", "value")

    def __init__(self, kind: str, value):
        self.kind, self.value = kind, value  # kind: int | str | class | other


class Arr:
    """A byte[] or char[] whose length is known; elements are ints or None (unknown)."""

    __slots__ = ("elem", "values")

    def __init__(self, elem: str, values: list | None):
        self.elem, self.values = elem, values


class NewObj:
    """An object from ``new``; a String gets ``value`` (None = unknown) when its constructor runs."""

    __slots__ = ("cls", "built", "value")

    def __init__(self, cls: str):
        self.cls, self.built, self.value = cls, False, None


class RtStr:
    """A string produced at run time (by a call); ``value`` when we could decode it."""

    __slots__ = ("value",)

    def __init__(self, value: str | None = None):
        self.value = value


@dataclass(frozen=True, slots=True)
class ClassLoad:
    """A ``Class.forName``/``loadClass`` call: its name argument and whether that was a constant."""

    via: str  # forName | loadClass
    constant: bool
    value: str | None  # the name when known (constant, or decoded from an array)


@dataclass(slots=True)
class MethodFacts:
    calls: set[MemberRef] = field(default_factory=set)  # invoke* targets and lambda/method-ref handles
    loads: list[ClassLoad] = field(default_factory=list)
    built_strings: list[str | None] = field(default_factory=list)  # new String(byte[]/char[])
    types: set[str] = field(default_factory=set)  # new, anewarray, multianewarray, ldc Class
    strings: set[str] = field(default_factory=set)  # ldc string constants


# ---- instruction lengths (JVMS 6.5); 0 = variable or invalid ------------------------------------

_LEN = bytearray(256)
for _op in range(0x00, 0xCA):
    _LEN[_op] = 1
for _op in (0x10, 0x12, 0x15, 0x16, 0x17, 0x18, 0x19, 0x36, 0x37, 0x38, 0x39, 0x3A, 0xA9, 0xBC):
    _LEN[_op] = 2
for _op in (0x11, 0x13, 0x14, 0x84, *range(0x99, 0xA9), 0xB2, 0xB3, 0xB4, 0xB5, 0xB6, 0xB7, 0xB8,
            0xBB, 0xBD, 0xC0, 0xC1, 0xC6, 0xC7):
    _LEN[_op] = 3
_LEN[0xC5] = 4
for _op in (0xB9, 0xBA, 0xC8, 0xC9):
    _LEN[_op] = 5
for _op in (0xAA, 0xAB, 0xC4):  # tableswitch, lookupswitch, wide
    _LEN[_op] = 0

# ---- stack effects of the instructions that need no special handling -----------------------------
# (entries popped, pushed: 0 nothing, 1 unknown one-slot value, 2 unknown long/double)

_EFFECT: list[tuple[int, int] | None] = [None] * 256


def _fx(ops, pops: int, push: int) -> None:
    for op in ops:
        _EFFECT[op] = (pops, push)


_fx([0x00], 0, 0)
_fx([0x01, 0x0B, 0x0C, 0x0D], 0, 1)
_fx([0x09, 0x0A, 0x0E, 0x0F, 0x14], 0, 2)
_fx([0x17, *range(0x22, 0x26)], 0, 1)  # fload
_fx([0x16, 0x18, *range(0x1E, 0x22), *range(0x26, 0x2A)], 0, 2)  # lload, dload
_fx([0x2E, 0x30, 0x32, 0x33, 0x34, 0x35], 2, 1)
_fx([0x2F, 0x31], 2, 2)
_fx([0x4F, 0x50, 0x51, 0x52, 0x53, 0x56], 3, 0)
_fx([0x57], 1, 0)
for _base in (0x62, 0x66, 0x6A, 0x6E, 0x72):  # fadd.. frem
    _fx([_base], 2, 1)
for _base in (0x61, 0x63, 0x65, 0x67, 0x69, 0x6B, 0x6D, 0x6F, 0x71, 0x73):  # long/double arithmetic
    _fx([_base], 2, 2)
_fx([0x75, 0x77], 1, 2)
_fx([0x76], 1, 1)
_fx([0x79, 0x7B, 0x7D, 0x7F, 0x81, 0x83], 2, 2)
_fx([0x85, 0x87, 0x8A, 0x8C, 0x8D, 0x8F], 1, 2)
_fx([0x86, 0x88, 0x89, 0x8B, 0x8E, 0x90], 1, 1)
_fx(range(0x94, 0x99), 2, 1)
_fx(range(0x99, 0x9F), 1, 0)
_fx(range(0x9F, 0xA7), 2, 0)
_fx([0xA8, 0xC9], 0, 1)  # jsr pushes a return address
_fx([0xB3], 1, 0)
_fx([0xB5], 2, 0)
_fx([0xBE, 0xC1], 1, 1)
_fx([0xC2, 0xC3, 0xC6, 0xC7], 1, 0)
_fx([0xC0], 0, 0)  # checkcast leaves the (same) reference

_END_OF_BLOCK = frozenset({0xA7, 0xC8, 0xA9, 0xAA, 0xAB, *range(0xAC, 0xB2), 0xBF})
_INT_BINOPS = {0x60: lambda a, b: a + b, 0x64: lambda a, b: a - b, 0x68: lambda a, b: a * b,
               0x78: lambda a, b: a << (b & 31), 0x7A: lambda a, b: a >> (b & 31),
               0x7E: lambda a, b: a & b, 0x80: lambda a, b: a | b, 0x82: lambda a, b: a ^ b}

_STRING_CTOR_ARRAYS = ("([B", "([C")


def _to_i32(v: int) -> int:
    v &= 0xFFFFFFFF
    return v - (1 << 32) if v & 0x80000000 else v


def _u2(code: bytes, at: int) -> int:
    return (code[at] << 8) | code[at + 1]


def _s4(code: bytes, at: int) -> int:
    return int.from_bytes(code[at : at + 4], "big", signed=True)


def instruction_length(code: bytes, pc: int) -> int:
    op = code[pc]
    n = _LEN[op]
    if n:
        return n
    if op == 0xC4:  # wide
        if pc + 1 >= len(code):
            raise ClassFormatError("truncated wide instruction")
        return 6 if code[pc + 1] == 0x84 else 4
    if op in (0xAA, 0xAB):
        base = pc + 1 + ((4 - (pc + 1) % 4) % 4)
        if base + 12 > len(code):
            raise ClassFormatError("truncated switch")
        if op == 0xAA:
            low, high = _s4(code, base + 4), _s4(code, base + 8)
            if high < low or high - low > 65535:
                raise ClassFormatError("bad tableswitch bounds")
            return base + 12 + 4 * (high - low + 1) - pc
        npairs = _s4(code, base + 4)
        if not 0 <= npairs <= 65535:
            raise ClassFormatError("bad lookupswitch size")
        return base + 8 + 8 * npairs - pc
    raise ClassFormatError(f"invalid opcode 0x{op:02x}")


def _decode(arr: Arr, charset: str) -> str | None:
    if arr.values is None or any(v is None for v in arr.values):
        return None
    if arr.elem == "C":
        return "".join(chr(v & 0xFFFF) for v in arr.values)
    raw = bytes(v & 0xFF for v in arr.values)
    return raw.decode(charset if charset in ("utf-8", "latin-1", "ascii") else "utf-8", "replace")


def _as_string(value) -> tuple[bool, str | None]:
    """(is a constant, known value) of an argument expected to be a String."""
    if isinstance(value, Const):
        return value.kind == "str", value.value if value.kind == "str" else None
    if isinstance(value, NewObj):
        return False, value.value
    if isinstance(value, RtStr):
        return False, value.value
    return False, None


class _Walker:
    def __init__(self, cls: ClassFile, method: Method):
        self.pool = cls.pool
        self.cls = cls
        self.method = method
        self.facts = MethodFacts()
        self.stack: list = []
        self.locals: dict[int, object] = {}

    # --- stack helpers ------------------------------------------------------------------------
    def pop(self, n: int = 1) -> list:
        stack = self.stack
        if n <= 0:
            return []
        if len(stack) >= n:
            out = stack[-n:]
            del stack[-n:]
            return out
        out = [None] * (n - len(stack)) + stack
        stack.clear()
        return out

    def pop1(self):
        return self.stack.pop() if self.stack else None

    def push(self, value) -> None:
        if len(self.stack) < 1024:
            self.stack.append(value)

    def store(self, index: int, value) -> None:
        old = self.locals.get(index, self)
        if old is self:
            self.locals[index] = value
        elif old is not value:
            self.locals[index] = _MULTI

    def load(self, index: int):
        value = self.locals.get(index)
        return None if value is _MULTI else value

    # --- the walk -------------------------------------------------------------------------------
    def run(self) -> MethodFacts:
        code = self.method.code or b""
        handlers = set(self.method.handlers)
        special = _SPECIAL
        pc, end = 0, len(code)
        while pc < end:
            if pc in handlers:
                self.stack = [None]  # the caught exception
            op = code[pc]
            length = instruction_length(code, pc)
            if pc + length > end:
                raise ClassFormatError("instruction runs past the end of the code")
            effect = _EFFECT[op]
            if effect is not None:
                pops, push = effect
                if pops:
                    self.pop(pops)
                if push:
                    self.push(WIDE if push == 2 else None)
            else:
                handler = special[op]
                if handler is None:
                    raise ClassFormatError(f"invalid opcode 0x{op:02x}")
                handler(self, op, code, pc)
            if op in _END_OF_BLOCK:
                self.stack = []
            pc += length
        return self.facts

    # --- instructions the stack-effect table cannot express (one handler each, see _SPECIAL) -----
    def _iconst(self, op: int, code: bytes, pc: int) -> None:  # iconst_m1..iconst_5
        self.push(Const("int", op - 0x03))

    def _bipush(self, op: int, code: bytes, pc: int) -> None:
        self.push(Const("int", code[pc + 1] - 256 if code[pc + 1] > 127 else code[pc + 1]))

    def _sipush(self, op: int, code: bytes, pc: int) -> None:
        self.push(Const("int", int.from_bytes(code[pc + 1 : pc + 3], "big", signed=True)))

    def _ldc(self, op: int, code: bytes, pc: int) -> None:  # ldc, ldc_w
        index = code[pc + 1] if op == 0x12 else _u2(code, pc + 1)
        kind, value = self.pool.ldc(index)
        if kind == "str" and len(self.facts.strings) < MAX_RECORDED:
            self.facts.strings.add(value)  # type: ignore[arg-type]
        elif kind == "class":
            self.facts.types.add(value)  # type: ignore[arg-type]
        self.push(Const(kind, value))

    def _load(self, op: int, code: bytes, pc: int) -> None:  # iload, aload
        self.push(self.load(code[pc + 1]))

    def _iload_n(self, op: int, code: bytes, pc: int) -> None:
        self.push(self.load(op - 0x1A))

    def _aload_n(self, op: int, code: bytes, pc: int) -> None:
        self.push(self.load(op - 0x2A))

    def _store(self, op: int, code: bytes, pc: int) -> None:  # istore, astore
        self.store(code[pc + 1], self.pop1())

    def _istore_n(self, op: int, code: bytes, pc: int) -> None:
        self.store(op - 0x3B, self.pop1())

    def _astore_n(self, op: int, code: bytes, pc: int) -> None:
        self.store(op - 0x4B, self.pop1())

    def _store_untracked(self, op: int, code: bytes, pc: int) -> None:  # lstore, fstore, dstore
        self.pop1()
        self.store(code[pc + 1], _MULTI)

    def _store_untracked_n(self, op: int, code: bytes, pc: int) -> None:  # lstore_0..dstore_3
        self.pop1()
        self.store((op - 0x3F) % 4, _MULTI)

    def _small_array_store(self, op: int, code: bytes, pc: int) -> None:  # bastore, castore
        arr, index, value = self.pop(3)
        if isinstance(arr, Arr) and arr.values is not None:
            if isinstance(index, Const) and index.kind == "int" and 0 <= index.value < len(arr.values):
                known = isinstance(value, Const) and value.kind == "int"
                arr.values[index.value] = value.value if known else None
            else:
                arr.values = None  # an unknown index may have written anywhere

    def _pop2(self, op: int, code: bytes, pc: int) -> None:
        if self.pop1() is not WIDE:
            self.pop1()

    def _dup(self, op: int, code: bytes, pc: int) -> None:
        top = self.pop1()
        self.push(top)
        self.push(top)

    def _dup_x1(self, op: int, code: bytes, pc: int) -> None:
        a, b = self.pop(2)
        self.stack += [b, a, b]

    def _dup_x2(self, op: int, code: bytes, pc: int) -> None:
        top = self.pop1()
        below = [self.pop1()] if self.stack and self.stack[-1] is WIDE else self.pop(2)
        self.stack += [top, *below, top]

    def _dup2(self, op: int, code: bytes, pc: int) -> None:
        top = self.pop1()
        if top is WIDE:
            self.stack += [top, top]
        else:
            below = self.pop1()
            self.stack += [below, top, below, top]

    def _dup2_x(self, op: int, code: bytes, pc: int) -> None:  # dup2_x1, dup2_x2: rare; keep the depth roughly right
        self.stack += [None, None]

    def _swap(self, op: int, code: bytes, pc: int) -> None:
        a, b = self.pop(2)
        self.stack += [b, a]

    def _int_binop(self, op: int, code: bytes, pc: int) -> None:
        b, a = self.pop1(), self.pop1()
        if isinstance(a, Const) and isinstance(b, Const) and a.kind == b.kind == "int":
            self.push(Const("int", _to_i32(_INT_BINOPS[op](a.value, b.value))))
        else:
            self.push(None)

    def _int_binop_unknown(self, op: int, code: bytes, pc: int) -> None:  # idiv, irem, iushr
        self.pop(2)
        self.push(None)

    def _ineg(self, op: int, code: bytes, pc: int) -> None:
        a = self.pop1()
        self.push(Const("int", _to_i32(-a.value)) if isinstance(a, Const) and a.kind == "int" else None)

    def _int_narrow(self, op: int, code: bytes, pc: int) -> None:  # i2b, i2c, i2s
        a = self.pop1()
        if isinstance(a, Const) and a.kind == "int":
            v = a.value & (0xFF if op == 0x91 else 0xFFFF)
            if op != 0x92 and v & (0x80 if op == 0x91 else 0x8000):
                v -= 0x100 if op == 0x91 else 0x10000
            self.push(Const("int", v))
        else:
            self.push(None)

    def _iinc(self, op: int, code: bytes, pc: int) -> None:
        self.store(code[pc + 1], _MULTI)

    def _get_field(self, op: int, code: bytes, pc: int) -> None:  # getstatic, getfield
        if op == 0xB4:
            self.pop1()
        ref = self.pool.member(_u2(code, pc + 1))
        self.push(WIDE if ref.descriptor in ("J", "D") else None)

    def _invoke(self, op: int, code: bytes, pc: int) -> None:  # invokevirtual..invokeinterface
        self.invoke(op, self.pool.member(_u2(code, pc + 1)))

    def _invokedynamic(self, op: int, code: bytes, pc: int) -> None:
        self.invokedynamic(_u2(code, pc + 1))

    def _new(self, op: int, code: bytes, pc: int) -> None:
        name = self.pool.class_name(_u2(code, pc + 1))
        self.facts.types.add(name)
        self.push(NewObj(name))

    def _newarray(self, op: int, code: bytes, pc: int) -> None:
        count = self.pop1()
        atype = code[pc + 1]
        if atype in (T_BYTE, T_CHAR):
            known = isinstance(count, Const) and count.kind == "int" and 0 <= count.value <= MAX_ARRAY
            self.push(Arr("B" if atype == T_BYTE else "C", [0] * count.value if known else None))
        else:
            self.push(None)

    def _anewarray(self, op: int, code: bytes, pc: int) -> None:
        self.pop1()
        self.facts.types.add(self.pool.class_name(_u2(code, pc + 1)))
        self.push(None)

    def _multianewarray(self, op: int, code: bytes, pc: int) -> None:
        self.facts.types.add(self.pool.class_name(_u2(code, pc + 1)))
        self.pop(code[pc + 3])
        self.push(None)

    def _wide(self, op: int, code: bytes, pc: int) -> None:
        inner = code[pc + 1]
        index = _u2(code, pc + 2)
        if inner in (0x15, 0x19):
            self.push(self.load(index))
        elif inner in (0x16, 0x18):
            self.push(WIDE)
        elif inner == 0x17:
            self.push(None)
        elif inner in (0x36, 0x3A):
            self.store(index, self.pop1())
        elif inner in (0x37, 0x38, 0x39):
            self.pop1()
            self.store(index, _MULTI)
        elif inner == 0x84:
            self.store(index, _MULTI)
        elif inner != 0xA9:
            raise ClassFormatError(f"invalid wide opcode 0x{inner:02x}")

    def _end_of_block(self, op: int, code: bytes, pc: int) -> None:
        pass  # returns, throws and jumps: run() resets the stack after them

    # --- calls ------------------------------------------------------------------------------------
    def invoke(self, op: int, ref: MemberRef) -> None:
        facts = self.facts
        facts.calls.add(ref)
        n_args, returns = argument_slots(ref.descriptor)
        args = self.pop(n_args)
        receiver = self.pop1() if op != 0xB8 else None
        owner, name, desc = ref.owner, ref.name, ref.descriptor
        result = WIDE if returns in ("J", "D") else None
        if name == "<init>" and isinstance(receiver, NewObj):
            receiver.built = True
            if owner == "java/lang/String" and desc.startswith(_STRING_CTOR_ARRAYS) and isinstance(args[0], Arr):
                charset = "utf-8"
                if len(args) > 1 and isinstance(args[-1], Const) and args[-1].kind == "str":
                    charset = str(args[-1].value).lower().replace("_", "-")
                receiver.value = _decode(args[0], charset)
                if len(facts.built_strings) < MAX_RECORDED:
                    facts.built_strings.append(receiver.value)
            returns = "V"
        elif name in ("forName", "loadClass") and desc.startswith("(Ljava/lang/String;") and (
            owner == "java/lang/Class" or name == "loadClass"
        ):
            constant, value = _as_string(args[0])
            if len(facts.loads) < MAX_RECORDED:
                facts.loads.append(ClassLoad(name, constant, value))
        elif owner == "java/util/Base64$Decoder" and name == "decode" and desc == "(Ljava/lang/String;)[B":
            constant, value = _as_string(args[0])
            result = self._base64(value) if value is not None else None
        if returns == "Ljava/lang/String;":
            result = RtStr()
        if returns != "V":
            self.push(result)

    @staticmethod
    def _base64(text: str):
        try:
            raw = base64.b64decode(text, validate=False)
        except (binascii.Error, ValueError):
            return None
        return Arr("B", list(raw)) if len(raw) <= MAX_ARRAY else None

    def invokedynamic(self, index: int) -> None:
        bsm_index, _name, descriptor = self.pool.invoke_dynamic(index)
        n_args, returns = argument_slots(descriptor)
        self.pop(n_args)
        if 0 <= bsm_index < len(self.cls.bootstrap_methods):
            handle, bsm_args = self.cls.bootstrap_methods[bsm_index]
            for arg in bsm_args:  # e.g. LambdaMetafactory's implementation method: Runtime::exec
                if self.pool.tag(arg) == 15:
                    self.facts.calls.add(self.pool.method_handle(arg))
        if returns == "Ljava/lang/String;":
            self.push(RtStr())  # string concatenation
        elif returns != "V":
            self.push(WIDE if returns in ("J", "D") else None)


# The handler of each opcode whose effect on the stack is not a plain (pops, pushes) of
# _EFFECT; None for the invalid ones.
_SPECIAL: list = [None] * 256


def _handle(ops, handler) -> None:
    for op in ops:
        assert _EFFECT[op] is None and _SPECIAL[op] is None, f"opcode 0x{op:02x} handled twice"
        _SPECIAL[op] = handler


_handle(range(0x02, 0x09), _Walker._iconst)
_handle([0x10], _Walker._bipush)
_handle([0x11], _Walker._sipush)
_handle([0x12, 0x13], _Walker._ldc)
_handle([0x15, 0x19], _Walker._load)
_handle(range(0x1A, 0x1E), _Walker._iload_n)
_handle(range(0x2A, 0x2E), _Walker._aload_n)
_handle([0x36, 0x3A], _Walker._store)
_handle(range(0x3B, 0x3F), _Walker._istore_n)
_handle(range(0x4B, 0x4F), _Walker._astore_n)
_handle([0x37, 0x38, 0x39], _Walker._store_untracked)
_handle(range(0x3F, 0x4B), _Walker._store_untracked_n)
_handle([0x54, 0x55], _Walker._small_array_store)
_handle([0x58], _Walker._pop2)
_handle([0x59], _Walker._dup)
_handle([0x5A], _Walker._dup_x1)
_handle([0x5B], _Walker._dup_x2)
_handle([0x5C], _Walker._dup2)
_handle([0x5D, 0x5E], _Walker._dup2_x)
_handle([0x5F], _Walker._swap)
_handle(_INT_BINOPS, _Walker._int_binop)
_handle([0x6C, 0x70, 0x7C], _Walker._int_binop_unknown)
_handle([0x74], _Walker._ineg)
_handle([0x91, 0x92, 0x93], _Walker._int_narrow)
_handle([0x84], _Walker._iinc)
_handle([0xB2, 0xB4], _Walker._get_field)
_handle(range(0xB6, 0xBA), _Walker._invoke)
_handle([0xBA], _Walker._invokedynamic)
_handle([0xBB], _Walker._new)
_handle([0xBC], _Walker._newarray)
_handle([0xBD], _Walker._anewarray)
_handle([0xC5], _Walker._multianewarray)
_handle([0xC4], _Walker._wide)
_handle(_END_OF_BLOCK, _Walker._end_of_block)

# Calls whose *arguments* matter: only methods making one need the stack model.
_VALUE_SENSITIVE = frozenset({"forName", "loadClass", "<init>", "decode"})


def _quick(cls: ClassFile, method: Method) -> MethodFacts | None:
    """Calls, types and constants without modelling the stack; None if values matter here."""
    code, pool = method.code or b"", cls.pool
    facts = MethodFacts()
    pc, end = 0, len(code)
    lengths = _LEN
    while pc < end:
        op = code[pc]
        n = lengths[op] or instruction_length(code, pc)
        if pc + n > end:
            raise ClassFormatError("instruction runs past the end of the code")
        if 0xB6 <= op <= 0xB9:
            ref = pool.member(_u2(code, pc + 1))
            if ref.name in _VALUE_SENSITIVE and (ref.name != "<init>" or (
                    ref.owner == "java/lang/String" and ref.descriptor.startswith(_STRING_CTOR_ARRAYS))):
                return None
            facts.calls.add(ref)
        elif op == 0xBB or op == 0xBD or op == 0xC5:
            facts.types.add(pool.class_name(_u2(code, pc + 1)))
        elif op == 0x12 or op == 0x13:
            kind, value = pool.ldc(code[pc + 1] if op == 0x12 else _u2(code, pc + 1))
            if kind == "str" and len(facts.strings) < MAX_RECORDED:
                facts.strings.add(value)  # type: ignore[arg-type]
            elif kind == "class":
                facts.types.add(value)  # type: ignore[arg-type]
        elif op == 0xBA:
            return None  # rare enough: let the walker resolve bootstrap arguments
        pc += n
    return facts


def analyze(cls: ClassFile, method: Method) -> MethodFacts:
    """Facts about one method's code (empty for abstract and native methods)."""
    if not method.code:
        return MethodFacts()
    if FAST_QUICK:
        pool = cls.pool
        found = _c_quick(method.code, pool._data, pool._tags, pool._offsets, MemberRef, _LEN, MAX_RECORDED)
        if found is not None:  # else something not ordinary: _quick below decides, as without C
            calls, types, strings = found
            return MethodFacts(calls, [], [], types, strings)
    try:
        quick = _quick(cls, method)
        return quick if quick is not None else _Walker(cls, method).run()
    except ClassFormatError:
        raise
    except (IndexError, ValueError) as exc:
        raise ClassFormatError(f"malformed code in {method.name} ({type(exc).__name__})") from None
