"""The class-file parser: every sample class reads back; malformed bytes end as ClassFormatError."""

import pytest
from indexium_devstack import scankit as kit
from hypothesis import given, settings, strategies as st

from indexium_indexer.scan.bytecode import analyze, instruction_length
from indexium_indexer.scan.classfile import ClassFormatError, argument_slots, modified_utf8, parse_class

SAMPLES = [kit.clean_initializer(), kit.clean_helper(), kit.process_builder_initializer(),
           kit.runtime_exec_method(), kit.update_checker(), kit.constant_reflection(), kit.fractureiser_stage0()]


def test_reads_names_interfaces_and_methods():
    cls = parse_class(kit.clean_initializer("com/example/x"))
    assert cls.name == "com/example/x/CleanMod"
    assert cls.super_name == "java/lang/Object"
    assert cls.interfaces == ("net/fabricmc/api/ModInitializer",)
    assert [m.signature for m in cls.methods] == ["<init>()V", "onInitialize()V"]
    assert cls.major == 61


def test_annotations_on_class_and_method_are_read():
    cw = kit.ClassWriter("a/ForgeMod", annotations=["Lnet/minecraftforge/fml/common/Mod;"])
    cw.method("init", "()V", annotations=["Lnet/minecraftforge/fml/common/Mod$EventHandler;"]).op("return")
    cls = parse_class(cw.to_bytes())
    assert cls.annotations == ("Lnet/minecraftforge/fml/common/Mod;",)
    assert cls.methods[0].annotations == ("Lnet/minecraftforge/fml/common/Mod$EventHandler;",)


@pytest.mark.parametrize("data", SAMPLES)
def test_every_truncation_is_a_class_format_error(data):
    for n in range(0, len(data), 7):
        with pytest.raises(ClassFormatError):
            cls = parse_class(data[:n])
            for m in cls.methods:  # a cut inside code may only show when the code is walked
                analyze(cls, m)


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_random_corruption_never_escapes_as_another_exception(data):
    sample = bytearray(data.draw(st.sampled_from(SAMPLES)))
    for _ in range(data.draw(st.integers(1, 8))):
        sample[data.draw(st.integers(0, len(sample) - 1))] = data.draw(st.integers(0, 255))
    try:
        cls = parse_class(bytes(sample))
        for m in cls.methods:
            analyze(cls, m)
    except ClassFormatError:
        pass


def test_bad_magic_and_bad_tag():
    with pytest.raises(ClassFormatError):
        parse_class(b"\x00" * 64)
    data = bytearray(kit.clean_helper())
    data[10] = 2  # constant-pool tag 2 does not exist
    with pytest.raises(ClassFormatError):
        parse_class(bytes(data))


def test_modified_utf8():
    assert modified_utf8(b"java/lang/String") == "java/lang/String"
    assert modified_utf8(b"a\xc0\x80b") == "a\x00b"


def test_argument_slots():
    assert argument_slots("()V") == (0, "V")
    assert argument_slots("(J[Ljava/lang/String;[[IZ)Ljava/lang/Object;") == (4, "Ljava/lang/Object;")
    with pytest.raises(ClassFormatError):
        argument_slots("(Q)V")


def test_switch_lengths_include_padding():
    # tableswitch at pc 1: 2 bytes of padding, default/low/high, two offsets
    code = bytes([0x00, 0xAA, 0, 0]) + (0).to_bytes(4, "big") + (0).to_bytes(4, "big") + (1).to_bytes(4, "big") + bytes(8)
    assert instruction_length(code, 1) == 3 + 12 + 8
    with pytest.raises(ClassFormatError):
        instruction_length(bytes([0xFE]), 0)
