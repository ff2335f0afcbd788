"""The byte layout tables (dpfc.encoding.layouts): one known answer per field.

For each field of each table, the layout with only that field set to a known value packs to
the bytes written out below, computed by hand from docs/encoding.md §2 (and its worked
example, §5), and unpacks back to that value with every other field 0. A reserved field
packs to zeros and reads back from set bits. A few answers go through the real bundle
codecs, and the limits derived from the tables are checked against the numbers the docs
give. Format version 2 (§9) gets the same: its tables and tags, and the worked example's
bytes written out by hand.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from dpfc.asm import assemble_text
from dpfc.encoding import (
    BLOCK_HEAD,
    BRANCH,
    BUNDLE_HEAD,
    BUNDLE_START,
    CODE_OPTION_HEAD,
    EPILOG_HEAD,
    HEADER_OPTION,
    HEADER_OPTION_BYTES,
    IMM_FLAG,
    IMMEDIATE,
    IN_PACKET,
    MAX_BLOCK_BUNDLES,
    OPERAND,
    OPTION_DATA_MAX,
    OPTION_DATA_WORDS,
    OPTION_HEAD,
    OPTIONS_MAX,
    PART_TAG,
    PC_FORMAT,
    REGISTER_BYTE,
    SELECTOR,
    STACK_ENTRIES_PER_OPTION,
    STACK_ENTRY,
    STEER_IMMEDIATE,
    TABLES,
    TAG_ALU,
    TAG_BUNDLE,
    TAG_IMMEDIATES,
    TAG_MEM,
    TAG_NEXT_PC_IMM,
    TAG_NEXT_PC_REG,
    TAG_PADDING,
    TAG_STEER_IMM,
    TAG_STEER_REG,
    TAGGED_TABLES,
    ByteLayout,
    ByteReader,
    decode_options,
    encode_options,
    imm_group,
    op_group,
)
from dpfc.encoding.code import decode_bundle, decode_epilog, encode_bundle, encode_epilog
from dpfc.isa.bundle import PC, Bundle, Control, EpilogBundle, Register, Steering
from dpfc.isa.opcodes import AluOp, CtrlOp, MemOp
from dpfc.target.profile import BUILTIN_PROFILES
from tests.conftest import ROOT

TOFINO1 = BUILTIN_PROFILES["tofino1"]
OP_GROUP_4 = op_group(4)
OP_GROUP_3 = op_group(3)
IMM_GROUP_2 = imm_group(2)

# (layout, field, value, the layout's bytes with only that field set, in hex)
KNOWN: list[tuple[ByteLayout, str, int, str]] = [
    # Geneve option header: class:16 | type:8 | R:3 | length:5
    (OPTION_HEAD, "option_class", 0xFFF0, "fff00000"),
    (OPTION_HEAD, "option_type", 0x03, "00000300"),
    (OPTION_HEAD, "length", 22, "00000016"),  # 88 data bytes (§5: ff f0 02 16)
    # header option: version:4 flags:4 | gas | depth | n_code:4 n_stack:4 | app id | pointers
    (HEADER_OPTION, "version", 1, "100000000000000000000000"),
    (HEADER_OPTION, "flags", 0x9, "090000000000000000000000"),
    (HEADER_OPTION, "gas", 8, "000800000000000000000000"),
    (HEADER_OPTION, "stack_depth", 0x2A, "00002a000000000000000000"),
    (HEADER_OPTION, "n_code_opts", 1, "000000100000000000000000"),
    (HEADER_OPTION, "n_stack_opts", 2, "000000020000000000000000"),
    (HEADER_OPTION, "app_id", 0x004B5601, "00000000004b560100000000"),
    (HEADER_OPTION, "dpf_ptr", 0x8001, "000000000000000080010000"),
    (HEADER_OPTION, "egress_ptr", 0x0102, "000000000000000000000102"),
    (STACK_ENTRY, "value", 0xDEADBEEF, "deadbeef"),
    # PC: in_packet:1 | index:15
    (PC_FORMAT, "in_packet", 1, "8000"),
    (PC_FORMAT, "index", 0x1234, "1234"),
    # operand byte: immediate:1 | index:7; register byte: reserved:3 | register:5
    (OPERAND, "immediate", 1, "80"),
    (OPERAND, "index", 0x13, "13"),
    (REGISTER_BYTE, "register", 0x13, "13"),  # B3
    # code option: n_blocks:8; block header: stage:5 | count-1:3
    (CODE_OPTION_HEAD, "n_blocks", 6, "06"),
    (BLOCK_HEAD, "stage", 31, "f8"),
    (BLOCK_HEAD, "count_minus_one", 1, "01"),  # with stage 31: f9 (§5)
    # bundle header: ctrl_op:4 | n_imm:2 | has_alu:1 | has_mem:1 | n_sel:5 | R:3 | pc_taken:16
    (BUNDLE_HEAD, "ctrl_op", 3, "30000000"),
    (BUNDLE_HEAD, "n_imm", 2, "08000000"),
    (BUNDLE_HEAD, "has_alu", 1, "02000000"),
    (BUNDLE_HEAD, "has_mem", 1, "01000000"),
    (BUNDLE_HEAD, "n_sel", 7, "00380000"),
    (BUNDLE_HEAD, "pc_taken", 0x8001, "00008001"),
    # branch: x:8 | y:8 | pc_not_taken:16
    (BRANCH, "x", 0x10, "10000000"),
    (BRANCH, "y", 0x81, "00810000"),
    (BRANCH, "pc_not_taken", 0x8001, "00008001"),
    # selector: dest:5 | kind:3 | operand:8
    (SELECTOR, "dest", 0x10, "8000"),  # B0
    (SELECTOR, "kind", 2, "0200"),  # LOAD_IMM
    (SELECTOR, "operand", 0x10, "0010"),
    (IMMEDIATE, "value", 0x7FFFFFFF, "7fffffff"),
    # op groups: a nibble per lane, lane 0 high; an odd lane count leaves a reserved nibble
    (OP_GROUP_4, "lane_0", 1, "1000"),
    (OP_GROUP_4, "lane_1", 3, "0300"),
    (OP_GROUP_4, "lane_2", 0xA, "00a0"),
    (OP_GROUP_4, "lane_3", 5, "0005"),
    (OP_GROUP_3, "lane_0", 2, "2000"),
    (OP_GROUP_3, "lane_1", 4, "0400"),
    (OP_GROUP_3, "lane_2", 3, "0030"),
    (IMM_GROUP_2, "imm_0", 1, "0000000100000000"),
    (IMM_GROUP_2, "imm_1", 0x80000000, "0000000080000000"),
    # epilog header: n_push:5 | steer_action:3 | hdr_mod:1 | steer_src:1 | next_pc_src:2 | R:4
    (EPILOG_HEAD, "n_push", 4, "2000"),
    (EPILOG_HEAD, "steer_action", 2, "0200"),
    (EPILOG_HEAD, "hdr_mod", 1, "0080"),
    (EPILOG_HEAD, "steer_src", 1, "0040"),
    (EPILOG_HEAD, "next_pc_src", 2, "0020"),
    (STEER_IMMEDIATE, "value", 0x0102, "0102"),
]

# (layout, the layout's bytes with only its reserved bits set, in hex, their value)
RESERVED: list[tuple[ByteLayout, str, int]] = [
    (OPTION_HEAD, "000000e0", 7),
    (REGISTER_BYTE, "e0", 7),
    (BUNDLE_HEAD, "00070000", 7),
    (OP_GROUP_3, "000f", 15),
    (EPILOG_HEAD, "000f", 15),
]


def _id(case: tuple[ByteLayout, str, int, str]) -> str:
    return f"{case[0].name}.{case[1]}"


@pytest.mark.parametrize("case", KNOWN, ids=_id)
def test_field_known_answer(case: tuple[ByteLayout, str, int, str]) -> None:
    layout, name, value, expected = case
    values = {f.name: 0 for f in layout.fields if not f.reserved}
    values[name] = value
    data = layout.pack(**values)
    assert data.hex() == expected
    unpacked = layout.unpack(bytes.fromhex(expected))
    assert unpacked == {f.name: value if f.name == name else 0 for f in layout.fields}
    assert layout.field(name).read(bytes.fromhex("ff" + expected), 1) == value


@pytest.mark.parametrize("case", RESERVED, ids=lambda case: case[0].name)
def test_reserved_bits_known_answer(case: tuple[ByteLayout, str, int]) -> None:
    layout, with_reserved, value = case
    zeros = {f.name: 0 for f in layout.fields if not f.reserved}
    assert layout.pack(**zeros) == bytes(layout.size)
    assert layout.unpack(bytes.fromhex(with_reserved)) == {
        f.name: value if f.reserved else 0 for f in layout.fields
    }


def test_every_field_has_a_known_answer() -> None:
    covered = {(id(layout), name) for layout, name, _, _ in KNOWN}
    covered |= {(id(layout), "reserved") for layout, _, _ in RESERVED}
    for layout in (*TABLES, OP_GROUP_4, OP_GROUP_3, IMM_GROUP_2):
        for field in layout.fields:
            assert (id(layout), field.name) in covered, f"{layout.name}.{field.name}"


def test_sizes_and_limits_follow_the_docs() -> None:
    sizes = {layout.name: layout.size for layout in TABLES}
    assert sizes == {
        "Geneve option header": 4,
        "SwitchVM header option": 12,
        "stack entry": 4,
        "PC": 2,
        "operand": 1,
        "register": 1,
        "code option": 1,
        "block header": 1,
        "bundle header": 4,
        "branch": 4,
        "selector": 2,
        "immediate": 4,
        "epilog header": 2,
        "steering value": 2,
    }
    assert (OPTION_DATA_WORDS, OPTION_DATA_MAX, OPTIONS_MAX) == (31, 124, 252)
    assert (STACK_ENTRIES_PER_OPTION, HEADER_OPTION_BYTES, MAX_BLOCK_BUNDLES) == (31, 16, 8)
    assert (IMM_FLAG, IN_PACKET) == (0x80, 0x8000)
    assert [op_group(lanes).size for lanes in (1, 2, 3, 4, 15)] == [1, 1, 2, 2, 8]


def test_field_positions() -> None:
    """The positions the P4 decoder slices: byte, and bits within it (7 = the top bit)."""
    n_sel = BUNDLE_HEAD.field("n_sel")
    assert (n_sel.byte, n_sel.high, n_sel.low, n_sel.whole_bytes) == (1, 7, 3, False)
    taken = BUNDLE_HEAD.field("pc_taken")
    assert (taken.byte, taken.nbytes, taken.whole_bytes) == (2, 2, True)
    lane = OP_GROUP_3.field("lane_2")
    assert (lane.byte, lane.high, lane.low) == (1, 7, 4)
    assert BLOCK_HEAD.shift("stage") == 3
    assert HEADER_OPTION.field("egress_ptr").byte == 10


def test_pack_refuses_what_does_not_fit() -> None:
    with pytest.raises(ValueError, match="does not fit in 5 bits"):
        BLOCK_HEAD.pack(stage=32, count_minus_one=0)
    with pytest.raises(KeyError):
        BLOCK_HEAD.pack(stage=1)
    with pytest.raises(KeyError):
        BLOCK_HEAD.pack(stage=1, count_minus_one=0, colour=2)


def test_replace_rewrites_only_the_fields_named() -> None:
    data = bytes.fromhex("aa" + "100801110000000080000102" + "bb")
    again = HEADER_OPTION.replace(data, 1, stack_depth=3, n_stack_opts=2)
    assert again.hex() == "aa" + "100803120000000080000102" + "bb"


# Known answers through the bundle codecs: bundles whose encoding sets one field.
BUNDLES: list[tuple[Bundle | EpilogBundle, str]] = [
    (  # HALT to @switch:0: ctrl_op 1 alone
        Bundle((), (AluOp.NOP,) * 4, (MemOp.NOP,) * 4, Control(CtrlOp.HALT, PC(False, 0))),
        "10000000",
    ),
    (  # JMP @packet:1: pc_taken alone
        Bundle((), (AluOp.NOP,) * 4, (MemOp.NOP,) * 4, Control(CtrlOp.JMP, PC(True, 1))),
        "00008001",
    ),
    (  # one memory op in lane 0: has_mem and its group (§5, EU0 `fetch`, taken @switch:0)
        Bundle(
            (),
            (AluOp.NOP,) * 4,
            (MemOp.LOAD,) + (MemOp.NOP,) * 3,
            Control(CtrlOp.JMP, PC(False, 0)),
        ),
        "010000001000",
    ),
    (EpilogBundle((), Steering("pass", None), None, True), "0080"),  # hdr_mod alone
    (EpilogBundle((), Steering("pass", None), PC(False, 1), False), "00100001"),  # NEXT_PC
    (EpilogBundle((Register.b(3),), Steering("pass", None), None, False), "080013"),  # PUSH B3
]


@pytest.mark.parametrize("case", BUNDLES, ids=lambda case: case[1])
def test_bundle_known_answer(case: tuple[Bundle | EpilogBundle, str]) -> None:
    bundle, expected = case
    reader = ByteReader(bytes.fromhex(expected))
    if isinstance(bundle, EpilogBundle):
        assert encode_epilog(bundle, TOFINO1).hex() == expected
        assert decode_epilog(reader, TOFINO1) == bundle
    else:
        assert encode_bundle(bundle, TOFINO1).hex() == expected
        assert decode_bundle(reader, TOFINO1) == bundle
    assert reader.remaining() == 0


# -- format version 2 (docs/encoding.md §9) ---------------------------------------------------------
TAGGED_PROFILE = replace(TOFINO1, code_format=2)
KNOWN_TAGGED: list[tuple[ByteLayout, str, int, str]] = [
    # bundle start: tag:8 | stage:5 | R:3 (the epilog's stage byte is 31 << 3 = 0xf8)
    (BUNDLE_START, "tag", TAG_BUNDLE, "fb00"),
    (BUNDLE_START, "stage", 31, "00f8"),
    (PART_TAG, "tag", TAG_ALU, "f8"),
]


@pytest.mark.parametrize("case", KNOWN_TAGGED, ids=_id)
def test_tagged_field_known_answer(case: tuple[ByteLayout, str, int, str]) -> None:
    test_field_known_answer(case)


def test_tagged_tables_and_tags() -> None:
    covered = {(id(layout), name) for layout, name, _, _ in KNOWN_TAGGED}
    for layout in TAGGED_TABLES:
        for field in layout.fields:
            assert field.reserved or (id(layout), field.name) in covered
    assert BUNDLE_START.unpack(bytes.fromhex("fb07")) == {"tag": 0xFB, "stage": 0, "reserved": 7}
    tags = (
        TAG_ALU,
        TAG_MEM,
        *TAG_IMMEDIATES,
        TAG_BUNDLE,
        TAG_PADDING,
        TAG_NEXT_PC_IMM,
        TAG_NEXT_PC_REG,
        TAG_STEER_IMM,
        TAG_STEER_REG,
    )
    assert tags == (0xF8, 0xF9, 0xFA, 0xFC, 0xFD, 0xFB, 0xFF, 0xF4, 0xF5, 0xF6, 0xF7)
    # what may follow a selector is a tag whose top five bits are set, as no selector's are
    assert all(tag >> 3 == 0x1F for tag in (TAG_ALU, TAG_MEM, *TAG_IMMEDIATES, TAG_BUNDLE))
    assert SELECTOR.pack(dest=Register.b(14).code, kind=7, operand=0)[0] >> 3 == 0x1E


# §9's worked example: cache_get (stack 0x2a) on tofino1 with code_format = 2, by hand from
# the version-1 bytes of §5: a bundle start before each bundle, a tag before each part; the
# branch's immediate 0x80000000 is slot 0 (y = 0x80), so the LOAD_IMMs name slot 1; the end
# byte closes the code.
CACHE_GET_TAGGED = (
    "fff00103 20080111004b56018000ffff"  # header option: version 2
    "fff00301 0000002a"  # the stack option, right after the header option
    "fff0021a"  # the code option: 26 words
    "fb00 0008800004 00"  # prolog get: POP A0; JMP
    "fb08 01008000 f91000"  # EU0 fetch: memory group
    "fb10 3a388000 10808001 0010081010101800 82018a019201"  # EU1 check: head, branch, sels
    "f83330 fa80000000 fc7fffffff"  # EU1: ALU group, immediate 0 (the branch's), 1
    "fb18 01008000 f91110"  # EU2 hit
    "fb18 10008001"  # EU2 miss: HALT
    "fb20 05108000 82009810 f93000 fa00000001"  # EU3 count_hit
    "fbf8 2280 03131112"  # epilog reply: 4 pushes
    "fbf8 0810 03 f40001"  # epilog to_sketch: PUSH A3, NEXT_PC @switch:1
    "ff"  # the end byte, which makes 104 data bytes (26 words): no padding
).replace(" ", "")


def test_worked_example_in_format_2() -> None:
    path = ROOT / "examples" / "asm" / "cache_get.dpfasm"
    program = assemble_text(path.read_text(encoding="utf-8"), path.name, TAGGED_PROFILE)
    encoded = encode_options(program.header((0x2A,)), TAGGED_PROFILE)
    assert encoded.data.hex() == CACHE_GET_TAGGED
    assert (len(encoded.data), encoded.code_bytes, encoded.stack_bytes) == (132, 108, 8)
    assert decode_options(encoded.data, TAGGED_PROFILE) == program.header((0x2A,))
    v1 = encode_options(program.header((0x2A,)), TOFINO1)
    assert (len(v1.data), v1.code_bytes) == (116, 92)  # §5
