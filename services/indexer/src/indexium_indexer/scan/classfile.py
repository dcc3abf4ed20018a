"""Java class files as data (JVMS chapter 4): constant pool, class header, methods, code.

Pure functions over ``bytes``; nothing is executed or loaded. Every number read
from the file is bounds-checked, and any malformed input ends as
:class:`ClassFormatError` (never ``IndexError``/``struct.error``).

Only what the scanner needs is kept: names, interfaces, annotation *types* (values
are skipped), each method's access flags, name, descriptor, bytecode and the start
of its exception handlers, and the class's ``BootstrapMethods`` (lambdas and string
concatenation point at methods through them).
"""

from __future__ import annotations

import struct
from bisect import bisect_left
from dataclasses import dataclass, field

try:  # the same reading in C for the classes that pass the prefilter (_fastwalk.c, built by `make env`)
    from ._fastwalk import class_pool as _c_pool, class_rest as _c_rest
except ImportError:  # not built: _parse alone
    _c_pool = _c_rest = None

# Whether parse_class tries the C reading first (tests set it to False to compare the two).
FAST_PARSE = _c_pool is not None

MAGIC = 0xCAFEBABE

# Constant-pool tags (JVMS 4.4).
UTF8, INTEGER, FLOAT, LONG, DOUBLE = 1, 3, 4, 5, 6
CLASS, STRING, FIELDREF, METHODREF, INTERFACE_METHODREF, NAME_AND_TYPE = 7, 8, 9, 10, 11, 12
METHOD_HANDLE, METHOD_TYPE, DYNAMIC, INVOKE_DYNAMIC, MODULE, PACKAGE = 15, 16, 17, 18, 19, 20

# Bytes after the tag, for fixed-size entries.
_FIXED = {INTEGER: 4, FLOAT: 4, LONG: 8, DOUBLE: 8, CLASS: 2, STRING: 2, FIELDREF: 4, METHODREF: 4,
          INTERFACE_METHODREF: 4, NAME_AND_TYPE: 4, METHOD_HANDLE: 3, METHOD_TYPE: 2, DYNAMIC: 4,
          INVOKE_DYNAMIC: 4, MODULE: 2, PACKAGE: 2}

_STEPS = bytes(_FIXED.get(t, 0) for t in range(256))  # the same, indexed by tag (0: unknown)

ACC_STATIC = 0x0008
ACC_INTERFACE = 0x0200

# The attributes the parser reads; every other attribute is skipped by its length.
_ATTRIBUTES = frozenset({b"Code", b"RuntimeVisibleAnnotations", b"RuntimeInvisibleAnnotations", b"BootstrapMethods"})

_U2 = struct.Struct(">H")
_U4 = struct.Struct(">I")
_I4 = struct.Struct(">i")
_HEADER = struct.Struct(">IHHH")  # magic, minor, major, constant_pool_count
_MEMBER = struct.Struct(">HHHH")  # access, name, descriptor, attributes_count
_ATTR = struct.Struct(">HI")  # name index, length


class ClassFormatError(ValueError):
    """The bytes are not a class file we can read."""


@dataclass(frozen=True, slots=True)
class MemberRef:
    owner: str  # internal form: java/lang/Runtime
    name: str
    descriptor: str


class Method:
    """A method; its name and descriptor are decoded only when asked for."""

    __slots__ = ("access", "_pool", "_name_index", "_desc_index", "_name", "_descriptor", "code", "handlers",
                 "annotations", "code_at")

    @property
    def name_index(self) -> int:
        return self._name_index

    def __init__(self, access: int, pool: ConstantPool, name_index: int, desc_index: int,
                 code: bytes | None = None, handlers: tuple[int, ...] = (), annotations: tuple[str, ...] = ()):
        count = pool.count  # fail now on a bad index, not later
        if not (0 < name_index < count and 0 < desc_index < count):
            raise ClassFormatError(f"constant-pool index {name_index if not 0 < name_index < count else desc_index}"
                                   " out of range")
        self.access, self._pool, self._name_index, self._desc_index = access, pool, name_index, desc_index
        self._name: str | None = None
        self._descriptor: str | None = None
        self.code = code  # the Code attribute's bytecode; None for abstract/native methods
        self.code_at = -1  # where ``code`` starts in the class file's bytes (set by the parser)
        self.handlers = handlers  # handler_pc of every exception-table entry
        self.annotations = annotations  # annotation type descriptors, visible and invisible

    @property
    def name(self) -> str:
        if self._name is None:
            self._name = self._pool.utf8(self._name_index)
        return self._name

    @property
    def descriptor(self) -> str:
        if self._descriptor is None:
            self._descriptor = self._pool.utf8(self._desc_index)
        return self._descriptor

    @property
    def is_static(self) -> bool:
        return bool(self.access & ACC_STATIC)

    @property
    def signature(self) -> str:
        return self.name + self.descriptor


@dataclass(slots=True)
class ClassFile:
    major: int
    access: int
    name: str
    super_name: str | None
    interfaces: tuple[str, ...]
    annotations: tuple[str, ...]
    methods: list[Method]
    pool: ConstantPool
    bootstrap_methods: list[tuple[int, tuple[int, ...]]] = field(default_factory=list)


def modified_utf8(raw: bytes) -> str:
    """Decode the JVM's modified UTF-8 (NUL as C0 80, supplementary characters as surrogate pairs)."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw.replace(b"\xc0\x80", b"\x00").decode("utf-8", "surrogatepass" if b"\xed" in raw else "replace")


class ConstantPool:
    """Entry offsets only; names are decoded on first use (most entries are never looked at)."""

    __slots__ = ("_data", "_tags", "_offsets", "_utf8", "_members", "_attr_names", "count", "end")

    def __init__(self, data: bytes, count: int, start: int):
        tags = bytearray(count)
        offsets = [0] * count
        pos, i, end = start, 1, len(data)
        steps = _STEPS
        # The loop every parsed class pays once per constant: bounds are left to IndexError
        # (an index past the end), and the end is checked once after the loop.
        try:
            while i < count:
                tag = data[pos]
                pos += 1
                tags[i] = tag
                offsets[i] = pos
                if tag == UTF8:
                    pos += 2 + ((data[pos] << 8) | data[pos + 1])
                else:
                    size = steps[tag]
                    if not size:
                        raise ClassFormatError(f"unknown constant-pool tag {tag}")
                    pos += size
                    if size == 8 and i + 1 < count:  # LONG, DOUBLE: the only 8-byte ones, two slots
                        i += 1  # the phantom keeps the offsets sorted for entry_at
                        offsets[i] = pos - 8
                i += 1
        except IndexError:
            raise ClassFormatError("truncated constant pool") from None
        if pos > end:
            raise ClassFormatError("truncated constant pool")
        self._read(data, count, tags, offsets, pos)

    @classmethod
    def of(cls, data: bytes, count: int, tags, offsets: list[int], end: int) -> "ConstantPool":
        """The pool of ``data`` whose tags and entry offsets were read already (the C reading)."""
        pool = cls.__new__(cls)
        pool._read(data, count, tags, offsets, end)
        return pool

    def _read(self, data: bytes, count: int, tags, offsets: list[int], end: int) -> None:
        self._data, self.count = data, count
        self._tags, self._offsets = tags, offsets
        self._utf8: dict[int, str] = {}
        self._members: dict[int, MemberRef] = {}
        self._attr_names: dict[int, str] | None = None
        self.end = end  # where the class header after the pool starts

    def tag(self, index: int) -> int:
        if not 0 < index < self.count:
            raise ClassFormatError(f"constant-pool index {index} out of range")
        return self._tags[index]

    def entry_at(self, position: int, tag: int) -> int | None:
        """The index of the entry of ``tag`` whose tag byte is at ``position``, if one is."""
        i = bisect_left(self._offsets, position + 1, 1)
        if i < self.count and self._offsets[i] == position + 1 and self._tags[i] == tag:
            return i
        return None

    def find_refs(self, tag: int, targets: set[int], *, second: bool = False) -> set[int]:
        """Entries of ``tag`` whose first (or ``second``) u2 field is one of ``targets``.

        A byte search over the pool instead of a loop over its entries: C speed.
        """
        found: set[int] = set()
        data, end = self._data, self.end
        for target in targets:
            needle = target.to_bytes(2, "big")
            if not second:
                needle = bytes((tag,)) + needle
            at = data.find(needle, 0, end)
            while at >= 0:
                start = at - 3 if second else at
                i = self.entry_at(start, tag) if start >= 0 else None
                if i is not None:
                    found.add(i)
                at = data.find(needle, at + 1, end)
        return found

    def utf8_indices(self, text: str) -> set[int]:
        """Indices of the Utf8 entries holding exactly ``text`` (ASCII), found by a byte
        search: comparing indices beats decoding every method's name."""
        raw = text.encode("ascii")
        needle = bytes((UTF8,)) + len(raw).to_bytes(2, "big") + raw
        found, data, end = set(), self._data, self.end
        at = data.find(needle, 0, end)
        while at >= 0:
            i = self.entry_at(at, UTF8)
            if i is not None:
                found.add(i)
            at = data.find(needle, at + 1, end)
        return found

    def utf8_at(self, position: int) -> int | None:
        return self.entry_at(position, UTF8)

    def indices(self, *tags: int) -> list[int]:
        """Indices of every entry with one of ``tags``."""
        wanted = set(tags)
        return [i for i, t in enumerate(self._tags) if t in wanted]

    def _u2(self, at: int) -> int:
        return (self._data[at] << 8) | self._data[at + 1]

    def _expect(self, index: int, *tags: int) -> int:
        if self.tag(index) not in tags:
            raise ClassFormatError(f"constant {index} has tag {self._tags[index]}, expected {tags}")
        return self._offsets[index]

    def attribute_name(self, index: int) -> str:
        """An attribute's name when it is one the parser acts on, else ``""`` (still checked to be
        a Utf8 entry). Compared as raw bytes: decoding every attribute name of every method
        was a tenth of the parse."""
        known = self._attr_names
        if known is None:
            known = self._attr_names = {}
        name = known.get(index)
        if name is None:
            at = self._expect(index, UTF8)
            raw = self._data[at + 2 : at + 2 + self._u2(at)]
            name = known[index] = raw.decode() if raw in _ATTRIBUTES else ""
        return name

    def utf8(self, index: int) -> str:
        cached = self._utf8.get(index)
        if cached is None:
            # _expect and _u2 written out: every name a parsed class uses comes through here.
            if not (0 < index < self.count and self._tags[index] == UTF8):
                self._expect(index, UTF8)  # raises, naming what is wrong
            at, data = self._offsets[index], self._data
            cached = modified_utf8(data[at + 2 : at + 2 + ((data[at] << 8) | data[at + 1])])
            self._utf8[index] = cached
        return cached

    def class_name(self, index: int) -> str:
        if not (0 < index < self.count and self._tags[index] == CLASS):
            self._expect(index, CLASS)  # raises
        at, data = self._offsets[index], self._data
        return self.utf8((data[at] << 8) | data[at + 1])

    def string(self, index: int) -> str:
        return self.utf8(self._u2(self._expect(index, STRING)))

    def integer(self, index: int) -> int:
        return _I4.unpack_from(self._data, self._expect(index, INTEGER))[0]

    def name_and_type(self, index: int) -> tuple[str, str]:
        at = self._expect(index, NAME_AND_TYPE)
        return self.utf8(self._u2(at)), self.utf8(self._u2(at + 2))

    def member(self, index: int) -> MemberRef:
        """A Fieldref, Methodref or InterfaceMethodref."""
        ref = self._members.get(index)
        if ref is None:
            at = self._expect(index, FIELDREF, METHODREF, INTERFACE_METHODREF)
            name, descriptor = self.name_and_type(self._u2(at + 2))
            ref = MemberRef(self.class_name(self._u2(at)), name, descriptor)
            self._members[index] = ref
        return ref

    def invoke_dynamic(self, index: int) -> tuple[int, str, str]:
        """(bootstrap method index, name, descriptor) of an InvokeDynamic/Dynamic constant."""
        at = self._expect(index, INVOKE_DYNAMIC, DYNAMIC)
        return (self._u2(at), *self.name_and_type(self._u2(at + 2)))

    def method_handle(self, index: int) -> MemberRef:
        at = self._expect(index, METHOD_HANDLE)
        return self.member(self._u2(at + 1))

    def ldc(self, index: int) -> tuple[str, object]:
        """What ``ldc`` pushes: ('str', text) | ('int', value) | ('class', name) | ('other', None)."""
        tag = self.tag(index)
        if tag == STRING:
            return "str", self.string(index)
        if tag == INTEGER:
            return "int", self.integer(index)
        if tag == CLASS:
            return "class", self.class_name(index)
        return "other", None


def parse_class(data: bytes) -> ClassFile:
    """Parse a class file. Raises :class:`ClassFormatError` on anything malformed."""
    data = bytes(data)
    if FAST_PARSE:
        cls = _parse_fast(data)
        if cls is not None:
            return cls
    try:
        return _parse(data)
    except ClassFormatError:
        raise
    except (IndexError, struct.error, ValueError) as exc:
        raise ClassFormatError(f"malformed class file ({type(exc).__name__})") from None


def _parse_fast(data: bytes) -> ClassFile | None:
    """The class as _parse reads it, the structure read in C; None where the C reading
    stops short (anything _parse raises on, names that are not ASCII): _parse then runs and
    raises with its own message. Per class that names a rule's API, the method table was
    most of the parse: ~3 us a method in Python."""
    head = _c_pool(data)
    if head is None:
        return None
    count, tags, offsets, end = head
    pool = ConstantPool.of(data, count, tags, offsets, end)
    rest = _c_rest(data, pool, Method, count, tags, offsets, end)
    if rest is None:
        return None
    major, access, name, super_name, interfaces, methods, method_annotations, annotations, bootstrap = rest
    for i, types in method_annotations:
        methods[i].annotations = tuple(types)
    return ClassFile(major, access, name, super_name, interfaces, tuple(annotations), methods, pool, bootstrap)


def _parse(data: bytes) -> ClassFile:
    if len(data) < _HEADER.size:
        raise ClassFormatError("too short for a class file")
    magic, _minor, major, cp_count = _HEADER.unpack_from(data, 0)
    if magic != MAGIC:
        raise ClassFormatError("bad magic")
    pool = ConstantPool(data, cp_count, _HEADER.size)
    pos = pool.end
    access, this_index, super_index, n_interfaces = struct.unpack_from(">HHHH", data, pos)
    pos += 8
    interfaces = tuple(pool.class_name(_U2.unpack_from(data, pos + 2 * i)[0]) for i in range(n_interfaces))
    pos += 2 * n_interfaces
    name = pool.class_name(this_index)
    super_name = pool.class_name(super_index) if super_index else None

    (n_fields,) = _U2.unpack_from(data, pos)
    pos += 2
    for _ in range(n_fields):
        _acc, _name, _desc, n_attrs = _MEMBER.unpack_from(data, pos)
        pos = _skip_attributes(data, pos + _MEMBER.size, n_attrs)

    (n_methods,) = _U2.unpack_from(data, pos)
    pos += 2
    methods = []
    append, method_at = methods.append, _method
    for _ in range(n_methods):
        method, pos = method_at(data, pos, pool)
        append(method)

    annotations: list[str] = []
    bootstrap: list[tuple[int, tuple[int, ...]]] = []
    (n_attrs,) = _U2.unpack_from(data, pos)
    pos += 2
    for _ in range(n_attrs):
        attr_name, length, body, pos = _attribute(data, pos, pool)
        if attr_name in ("RuntimeVisibleAnnotations", "RuntimeInvisibleAnnotations"):
            annotations += _annotation_types(data, body, body + length, pool)
        elif attr_name == "BootstrapMethods":
            bootstrap = _bootstrap_methods(data, body, body + length)
    if pos > len(data):
        raise ClassFormatError("truncated class file")
    return ClassFile(major, access, name, super_name, interfaces, tuple(annotations), methods, pool, bootstrap)


def _attribute(data: bytes, pos: int, pool: ConstantPool) -> tuple[str, int, int, int]:
    name_index, length = _ATTR.unpack_from(data, pos)
    body = pos + _ATTR.size
    if body + length > len(data):
        raise ClassFormatError("attribute runs past the end of the file")
    return pool.attribute_name(name_index), length, body, body + length


def _skip_attributes(data: bytes, pos: int, count: int) -> int:
    for _ in range(count):
        _name, length = _ATTR.unpack_from(data, pos)
        pos += _ATTR.size + length
        if pos > len(data):
            raise ClassFormatError("attribute runs past the end of the file")
    return pos


def _method(data: bytes, pos: int, pool: ConstantPool) -> tuple[Method, int]:
    # The hottest loop of the parse (every method of every class that names a rule's API):
    # attributes walked inline, names compared through the pool's per-class cache, the Code
    # attribute's common case (no exception table) read here without a call.
    access, name_index, desc_index, n_attrs = _MEMBER.unpack_from(data, pos)
    pos += 8
    method = Method(access, pool, name_index, desc_index)
    annotations: list[str] | None = None
    size, unpack, u4 = len(data), _ATTR.unpack_from, _U4.unpack_from
    names = pool._attr_names
    if names is None:
        names = pool._attr_names = {}
    for _ in range(n_attrs):
        attr_index, length = unpack(data, pos)
        body = pos + 6
        pos = body + length
        if pos > size:
            raise ClassFormatError("attribute runs past the end of the file")
        attr_name = names.get(attr_index)
        if attr_name is None:
            attr_name = pool.attribute_name(attr_index)
        if not attr_name:
            continue
        if attr_name == "Code":
            (code_length,) = u4(data, body + 4)  # after max_stack, max_locals
            start = body + 8
            code_end = start + code_length
            if code_end + 2 > pos:
                raise ClassFormatError("Code attribute shorter than its code")
            if data[code_end] or data[code_end + 1]:  # an exception table
                method.code, method.handlers = _code(data, body, pos)
            else:
                method.code = data[start:code_end]
            method.code_at = start
        elif attr_name != "BootstrapMethods":  # the two annotation attributes
            if annotations is None:
                annotations = []
            annotations += _annotation_types(data, body, pos, pool)
    if annotations:
        method.annotations = tuple(annotations)
    return method, pos


def _code(data: bytes, pos: int, end: int) -> tuple[bytes, tuple[int, ...]]:
    (code_length,) = _U4.unpack_from(data, pos + 4)  # after max_stack, max_locals
    start = pos + 8
    if start + code_length + 2 > end:
        raise ClassFormatError("Code attribute shorter than its code")
    pos = start + code_length
    n_handlers = (data[pos] << 8) | data[pos + 1]
    if not n_handlers:
        return data[start:pos], ()
    pos += 2
    if pos + 8 * n_handlers > end:
        raise ClassFormatError("truncated exception table")
    handlers = tuple(_U2.unpack_from(data, pos + 8 * i + 4)[0] for i in range(n_handlers))
    return data[start : start + code_length], handlers


def _annotation_types(data: bytes, pos: int, end: int, pool: ConstantPool) -> list[str]:
    (count,) = _U2.unpack_from(data, pos)
    pos += 2
    types = []
    for _ in range(count):
        type_name, pos = _annotation(data, pos, pool, depth=0)
        types.append(type_name)
    if pos > end:
        raise ClassFormatError("annotations run past their attribute")
    return types


def _annotation(data: bytes, pos: int, pool: ConstantPool, depth: int) -> tuple[str, int]:
    type_index, pairs = struct.unpack_from(">HH", data, pos)
    pos += 4
    for _ in range(pairs):
        pos = _element_value(data, pos + 2, pool, depth)
    return pool.utf8(type_index), pos


def _element_value(data: bytes, pos: int, pool: ConstantPool, depth: int) -> int:
    if depth > 64:
        raise ClassFormatError("annotation nesting too deep")
    tag = chr(data[pos])
    pos += 1
    if tag in "BCDFIJSZsc":
        return pos + 2
    if tag == "e":
        return pos + 4
    if tag == "@":
        return _annotation(data, pos, pool, depth + 1)[1]
    if tag == "[":
        (count,) = _U2.unpack_from(data, pos)
        pos += 2
        for _ in range(count):
            pos = _element_value(data, pos, pool, depth + 1)
        return pos
    raise ClassFormatError(f"unknown annotation element tag {tag!r}")


def _bootstrap_methods(data: bytes, pos: int, end: int) -> list[tuple[int, tuple[int, ...]]]:
    (count,) = _U2.unpack_from(data, pos)
    pos += 2
    out = []
    for _ in range(count):
        handle, n_args = struct.unpack_from(">HH", data, pos)
        pos += 4
        out.append((handle, tuple(_U2.unpack_from(data, pos + 2 * i)[0] for i in range(n_args))))
        pos += 2 * n_args
    if pos > end:
        raise ClassFormatError("BootstrapMethods runs past its attribute")
    return out


def argument_slots(descriptor: str) -> tuple[int, str]:
    """(number of arguments, return type) of a method descriptor; long/double count once."""
    if not descriptor.startswith("("):
        raise ClassFormatError(f"bad method descriptor {descriptor!r}")
    close = descriptor.find(")")
    if close < 0:
        raise ClassFormatError(f"bad method descriptor {descriptor!r}")
    i, n = 1, 0
    while i < close:
        c = descriptor[i]
        while c == "[":
            i += 1
            c = descriptor[i]
        if c == "L":
            i = descriptor.index(";", i)
        elif c not in "BCDFIJSZ":
            raise ClassFormatError(f"bad method descriptor {descriptor!r}")
        i += 1
        n += 1
    return n, descriptor[close + 1 :]
