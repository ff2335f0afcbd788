"""Exact semantics of the SwitchVM ISA (dpfc.isa.semantics) against straightforward oracles.

Boundary values for every ALU and memory op, exhaustive branch truth tables on the boundary
values plus a property over random 32-bit pairs, CRC-32 known answers, and completeness of
the instruction table (every mnemonic of the issue, in the right section).
"""

from __future__ import annotations

import binascii
import itertools
import zlib
from collections.abc import Callable

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dpfc.isa import (
    ALU_SPECS,
    BY_MNEMONIC,
    CTRL_SPECS,
    INSTRUCTIONS,
    MEM_SPECS,
    SELECTOR_SPECS,
    AluOp,
    CtrlOp,
    MemOp,
    Section,
    SelectorKind,
    Unit,
    alu,
    branch_taken,
    crc32,
    hash_word,
    memory,
    to_signed,
)
from dpfc.isa.semantics import compare_vector, writes_b, writes_memory
from dpfc.target.parts import CRC32_FAMILY, HASH_FUNCTIONS, HashFunction

M = 0xFFFF_FFFF
BOUNDARY = (0, 1, 2, 0x7FFF_FFFF, 0x8000_0000, 0x8000_0001, 0xFFFF_FFFE, 0xFFFF_FFFF)
SHIFTS = (0, 1, 31, 32, 33, 63, 0xFFFF_FFFF)
WORDS = st.one_of(st.sampled_from(BOUNDARY), st.integers(0, M))


def signed(value: int) -> int:
    return value - (1 << 32) if value >= 1 << 31 else value


# -- ALU ---------------------------------------------------------------------------------------
ALU_ORACLE = {
    AluOp.NOP: lambda a, b: a,
    AluOp.ADD: lambda a, b: (a + b) % 2**32,
    AluOp.SUB: lambda a, b: (a - b) % 2**32,
    AluOp.AND: lambda a, b: a & b,
    AluOp.OR: lambda a, b: a | b,
    AluOp.XOR: lambda a, b: a ^ b,
    AluOp.LSH: lambda a, b: (a * 2 ** (b % 32)) % 2**32,
    AluOp.RSH: lambda a, b: a // 2 ** (b % 32),
    AluOp.NEG: lambda a, b: (2**32 - a) % 2**32,
    AluOp.MIN: lambda a, b: a if a <= b else b,
    AluOp.MAX: lambda a, b: a if a >= b else b,
}


def test_alu_oracle_covers_every_opcode() -> None:
    assert set(ALU_ORACLE) == set(AluOp)


@pytest.mark.parametrize("op", list(AluOp), ids=lambda op: op.name)
def test_alu_on_boundary_values(op: AluOp) -> None:
    for a, b in itertools.product(BOUNDARY, BOUNDARY + SHIFTS):
        result = alu(op, a, b)
        assert 0 <= result <= M
        assert result == ALU_ORACLE[op](a, b), (op.name, hex(a), hex(b))


@given(st.sampled_from(list(AluOp)), WORDS, WORDS)
def test_alu_matches_the_oracle(op: AluOp, a: int, b: int) -> None:
    assert alu(op, a, b) == ALU_ORACLE[op](a, b)


@pytest.mark.parametrize(
    ("op", "a", "b", "expected"),
    [
        (AluOp.ADD, 0xFFFF_FFFF, 1, 0),  # 32-bit wrap
        (AluOp.ADD, 0x7FFF_FFFF, 1, 0x8000_0000),
        (AluOp.ADD, 0xFFFF_FFFF, 0xFFFF_FFFF, 0xFFFF_FFFE),
        (AluOp.SUB, 0, 1, 0xFFFF_FFFF),
        (AluOp.SUB, 0x8000_0000, 1, 0x7FFF_FFFF),
        (AluOp.NEG, 0, 0, 0),
        (AluOp.NEG, 1, 0, 0xFFFF_FFFF),
        (AluOp.NEG, 0x8000_0000, 0, 0x8000_0000),
        (AluOp.LSH, 1, 0, 1),
        (AluOp.LSH, 1, 1, 2),
        (AluOp.LSH, 1, 31, 0x8000_0000),
        (AluOp.LSH, 1, 32, 1),  # shift amount is B & 31
        (AluOp.LSH, 1, 33, 2),
        (AluOp.LSH, 0xFFFF_FFFF, 4, 0xFFFF_FFF0),
        (AluOp.RSH, 0x8000_0000, 0, 0x8000_0000),
        (AluOp.RSH, 0x8000_0000, 1, 0x4000_0000),  # logical, not arithmetic
        (AluOp.RSH, 0x8000_0000, 31, 1),
        (AluOp.RSH, 0x8000_0000, 32, 0x8000_0000),
        (AluOp.RSH, 0x8000_0000, 33, 0x4000_0000),
        (AluOp.MIN, 0xFFFF_FFFF, 0, 0),  # unsigned: -1 is the largest word
        (AluOp.MIN, 0x8000_0000, 0x7FFF_FFFF, 0x7FFF_FFFF),
        (AluOp.MAX, 0xFFFF_FFFF, 0, 0xFFFF_FFFF),
        (AluOp.MAX, 0x8000_0000, 0x7FFF_FFFF, 0x8000_0000),
        (AluOp.AND, 0xF0F0_F0F0, 0xFF00_FF00, 0xF000_F000),
        (AluOp.OR, 0xF0F0_F0F0, 0x0F0F_0F0F, 0xFFFF_FFFF),
        (AluOp.XOR, 0xFFFF_FFFF, 0x8000_0001, 0x7FFF_FFFE),
        (AluOp.NOP, 0x1234_5678, 0x9ABC_DEF0, 0x1234_5678),
    ],
)
def test_alu_known_answers(op: AluOp, a: int, b: int, expected: int) -> None:
    assert alu(op, a, b) == expected


def test_neg_ignores_b() -> None:
    for a, b in itertools.product(BOUNDARY, BOUNDARY):
        assert alu(AluOp.NEG, a, b) == alu(AluOp.NEG, a, 0)


def test_to_signed_is_twos_complement() -> None:
    assert [to_signed(v) for v in (0, 1, 0x7FFF_FFFF, 0x8000_0000, 0xFFFF_FFFF)] == [
        0,
        1,
        2**31 - 1,
        -(2**31),
        -1,
    ]
    assert to_signed(0x1_0000_0001) == 1  # only the low 32 bits count


# -- memory --------------------------------------------------------------------------------
MEM_ORACLE: dict[MemOp, Callable[[int, int], tuple[int, int | None]]] = {
    # op: (new memory word, value written to B or None)
    MemOp.NOP: lambda old, data: (old, None),
    MemOp.LOAD: lambda old, data: (old, old),
    MemOp.STORE: lambda old, data: (data, None),
    MemOp.FAADD: lambda old, data: ((old + data) % 2**32, old),
    MemOp.FAAND: lambda old, data: (old & data, old),
    MemOp.FAOR: lambda old, data: (old | data, old),
    MemOp.FAMAX: lambda old, data: (old if old >= data else data, old),
    MemOp.FAMIN: lambda old, data: (old if old <= data else data, old),
}


def test_memory_oracle_covers_every_opcode() -> None:
    assert set(MEM_ORACLE) == set(MemOp)


@pytest.mark.parametrize("op", list(MemOp), ids=lambda op: op.name)
def test_memory_on_boundary_values(op: MemOp) -> None:
    for old, data in itertools.product(BOUNDARY, BOUNDARY):
        assert memory(op, old, data) == MEM_ORACLE[op](old, data), (op.name, old, data)


@given(st.sampled_from(list(MemOp)), WORDS, WORDS)
def test_memory_matches_the_oracle(op: MemOp, old: int, data: int) -> None:
    assert memory(op, old, data) == MEM_ORACLE[op](old, data)


@pytest.mark.parametrize("op", [MemOp.FAADD, MemOp.FAAND, MemOp.FAOR, MemOp.FAMAX, MemOp.FAMIN])
def test_atomics_return_the_old_value(op: MemOp) -> None:
    for old, data in itertools.product(BOUNDARY, BOUNDARY):
        _, returned = memory(op, old, data)
        assert returned == old


@pytest.mark.parametrize(
    ("op", "old", "data", "expected"),
    [
        (MemOp.FAADD, 0xFFFF_FFFF, 1, (0, 0xFFFF_FFFF)),  # wraps, returns the old word
        (MemOp.FAADD, 41, 1, (42, 41)),
        (MemOp.FAMAX, 0x7FFF_FFFF, 0x8000_0000, (0x8000_0000, 0x7FFF_FFFF)),  # unsigned
        (MemOp.FAMIN, 0x7FFF_FFFF, 0x8000_0000, (0x7FFF_FFFF, 0x7FFF_FFFF)),
        (MemOp.STORE, 5, 0xFFFF_FFFF, (0xFFFF_FFFF, None)),
        (MemOp.LOAD, 0x8000_0000, 3, (0x8000_0000, 0x8000_0000)),
    ],
)
def test_memory_known_answers(
    op: MemOp, old: int, data: int, expected: tuple[int, int | None]
) -> None:
    assert memory(op, old, data) == expected


def test_which_memory_ops_write_memory_and_b() -> None:
    assert {op for op in MemOp if writes_memory(op)} == set(MemOp) - {MemOp.NOP, MemOp.LOAD}
    assert {op for op in MemOp if writes_b(op)} == set(MemOp) - {MemOp.NOP, MemOp.STORE}
    for op in MemOp:
        _, returned = memory(op, 7, 9)
        assert (returned is not None) == writes_b(op)


# -- branches --------------------------------------------------------------------------------
BRANCH_ORACLE: dict[CtrlOp, Callable[[int, int], bool]] = {
    CtrlOp.JMP: lambda x, y: True,
    CtrlOp.HALT: lambda x, y: True,
    CtrlOp.BEQ: lambda x, y: x == y,
    CtrlOp.BSET: lambda x, y: (x & y) != 0,
    CtrlOp.BLT: lambda x, y: x < y,
    CtrlOp.BGT: lambda x, y: x > y,
    CtrlOp.BSLT: lambda x, y: signed(x) < signed(y),
    CtrlOp.BSGT: lambda x, y: signed(x) > signed(y),
}


def test_branch_oracle_covers_every_opcode() -> None:
    assert set(BRANCH_ORACLE) == set(CtrlOp)
    assert {op for op in CtrlOp if op.conditional} == set(CtrlOp) - {CtrlOp.JMP, CtrlOp.HALT}


@pytest.mark.parametrize("op", list(CtrlOp), ids=lambda op: op.name)
def test_branch_truth_table_on_boundary_values(op: CtrlOp) -> None:
    table = {(x, y): branch_taken(op, x, y) for x, y in itertools.product(BOUNDARY, BOUNDARY)}
    expected = {(x, y): BRANCH_ORACLE[op](x, y) for x, y in table}
    assert table == expected


@given(st.sampled_from(list(CtrlOp)), WORDS, WORDS)
def test_branch_matches_the_oracle(op: CtrlOp, x: int, y: int) -> None:
    assert branch_taken(op, x, y) is BRANCH_ORACLE[op](x, y)


@pytest.mark.parametrize(
    ("op", "x", "y", "taken"),
    [
        (CtrlOp.BLT, 1, 1, False),  # strict
        (CtrlOp.BGT, 1, 1, False),
        (CtrlOp.BSLT, 5, 5, False),
        (CtrlOp.BSGT, 0x8000_0000, 0x8000_0000, False),
        (CtrlOp.BLT, 0x7FFF_FFFF, 0x8000_0000, True),  # unsigned
        (CtrlOp.BSLT, 0x7FFF_FFFF, 0x8000_0000, False),  # signed: INT_MAX > INT_MIN
        (CtrlOp.BSGT, 0x7FFF_FFFF, 0x8000_0000, True),
        (CtrlOp.BSLT, 0xFFFF_FFFF, 0, True),  # -1 < 0
        (CtrlOp.BLT, 0xFFFF_FFFF, 0, False),  # 2^32-1 > 0
        (CtrlOp.BSGT, 0, 0xFFFF_FFFF, True),
        (CtrlOp.BSLT, 0xFFFF_FFFE, 0xFFFF_FFFF, True),  # -2 < -1
        (CtrlOp.BSET, 0x8000_0000, 0x8000_0000, True),
        (CtrlOp.BSET, 0x7FFF_FFFF, 0x8000_0000, False),
        (CtrlOp.BSET, 0, 0, False),
        (CtrlOp.BEQ, 0, 0, True),
        (CtrlOp.BEQ, 0xFFFF_FFFF, 0x7FFF_FFFF, False),
    ],
)
def test_branch_known_answers(op: CtrlOp, x: int, y: int, taken: bool) -> None:
    assert branch_taken(op, x, y) is taken


@given(WORDS, WORDS)
def test_le_ge_ne_are_expressed_with_swapped_targets(x: int, y: int) -> None:
    """There is no BLE/BGE/BNE: `BGT x, y, else, then` takes `then` exactly when x <= y."""

    def goes_to_second_target(op: CtrlOp) -> bool:
        return not branch_taken(op, x, y)

    assert goes_to_second_target(CtrlOp.BGT) is (x <= y)  # LE
    assert goes_to_second_target(CtrlOp.BLT) is (x >= y)  # GE
    assert goes_to_second_target(CtrlOp.BEQ) is (x != y)  # NE
    assert goes_to_second_target(CtrlOp.BSGT) is (signed(x) <= signed(y))  # signed LE
    assert goes_to_second_target(CtrlOp.BSLT) is (signed(x) >= signed(y))  # signed GE
    assert goes_to_second_target(CtrlOp.BSET) is (x & y == 0)  # bits clear
    # and exactly one of <, ==, > holds, for both orders
    for lt, gt in ((CtrlOp.BLT, CtrlOp.BGT), (CtrlOp.BSLT, CtrlOp.BSGT)):
        outcomes = [branch_taken(lt, x, y), branch_taken(CtrlOp.BEQ, x, y), branch_taken(gt, x, y)]
        assert outcomes.count(True) == 1


def test_compare_vector_is_app_d_comparator() -> None:
    assert compare_vector(5, 3) == (1, 6, 2, 0, 0)
    assert compare_vector(3, 5) == (1, 6, 0, 0, 0)
    assert compare_vector(0x8000_0000, 1) == (0, 0x8000_0001, 0x7FFF_FFFF, 1, 0)


# -- hashing -----------------------------------------------------------------------------------
@pytest.mark.parametrize("function", CRC32_FAMILY, ids=lambda f: f.name)
def test_crc32_family_check_values(function: HashFunction) -> None:
    assert crc32(function, b"123456789") == function.check


# The CRC catalogue's check values (reveng.sourceforge.io), written out independently of the
# table in dpfc.target.parts.
CATALOGUE_CHECKS = {
    "crc32": 0xCBF43926,
    "crc32c": 0xE3069283,
    "crc32d": 0x87315576,
    "crc32q": 0x3010BF7F,
    "crc32_bzip2": 0xFC891918,
    "crc32_mpeg2": 0x0376E6E7,
    "crc32_posix": 0x765E7680,
    "crc32_xfer": 0xBD0BE338,
}


def test_crc32_family_matches_the_catalogue() -> None:
    assert {f.name: f.check for f in CRC32_FAMILY} == CATALOGUE_CHECKS
    assert set(HASH_FUNCTIONS) == set(CATALOGUE_CHECKS)


def test_crc32_of_nothing_is_init_xor_out() -> None:
    for function in CRC32_FAMILY:
        init = function.init
        if function.reflect_out:
            init = int(f"{init:032b}"[::-1], 2)
        assert crc32(function, b"") == init ^ function.xor_out


@pytest.mark.parametrize(
    "value", [0, 1, 0x7FFF_FFFF, 0x8000_0000, 0xFFFF_FFFF, 0xDEADBEEF, 0x12345678]
)
def test_hash_word_crc32_matches_zlib(value: int) -> None:
    data = value.to_bytes(4, "big")
    function = HASH_FUNCTIONS["crc32"]
    assert hash_word(function, value) == binascii.crc32(data) == zlib.crc32(data)


@given(WORDS)
def test_hash_word_is_crc32_of_big_endian_bytes(value: int) -> None:
    assert hash_word(HASH_FUNCTIONS["crc32"], value) == zlib.crc32(value.to_bytes(4, "big"))


@given(st.binary(max_size=64))
def test_crc32_matches_zlib_on_any_bytes(data: bytes) -> None:
    assert crc32(HASH_FUNCTIONS["crc32"], data) == zlib.crc32(data)


def test_hash_word_uses_only_the_low_32_bits() -> None:
    function = HASH_FUNCTIONS["crc32c"]
    assert hash_word(function, 0x1_0000_0005) == hash_word(function, 5)


# -- the instruction table ---------------------------------------------------------------------
ISSUE_MNEMONICS = {
    "MOV": Section.EU,
    "LOAD_IMM": Section.EU,
    "LOAD_CONST": Section.EU,
    "HASH": Section.EU,
    "ADD": Section.EU,
    "SUB": Section.EU,
    "AND": Section.EU,
    "OR": Section.EU,
    "XOR": Section.EU,
    "LSH": Section.EU,
    "RSH": Section.EU,
    "NEG": Section.EU,
    "MIN": Section.EU,
    "MAX": Section.EU,
    "LOAD": Section.EU,
    "STORE": Section.EU,
    "FAADD": Section.EU,
    "FAAND": Section.EU,
    "FAOR": Section.EU,
    "FAMAX": Section.EU,
    "FAMIN": Section.EU,
    "HALT": Section.EU,
    "JMP": Section.EU,
    "BEQ": Section.EU,
    "BSET": Section.EU,
    "BLT": Section.EU,
    "BGT": Section.EU,
    "BSLT": Section.EU,
    "BSGT": Section.EU,
    "POP": Section.PROLOG,
    "PEEK": Section.PROLOG,
    "LOAD_MD": Section.PROLOG,
    "RAND": Section.PROLOG,
    "PUSH": Section.EPILOG,
    "FWD": Section.EPILOG,
    "NEXT_PC": Section.EPILOG,
    "HDR_MOD": Section.EPILOG,
}
EXPECTED_UNITS = {
    Unit.SELECTOR: {"MOV", "LOAD_IMM", "LOAD_CONST", "HASH"},
    Unit.ALU: {"ADD", "SUB", "AND", "OR", "XOR", "LSH", "RSH", "NEG", "MIN", "MAX"},
    Unit.MEMORY: {"LOAD", "STORE", "FAADD", "FAAND", "FAOR", "FAMAX", "FAMIN"},
    Unit.CONTROL: {"HALT", "JMP", "BEQ", "BSET", "BLT", "BGT", "BSLT", "BSGT"},
    Unit.PROLOG: {"POP", "PEEK", "LOAD_MD", "RAND"},
    Unit.EPILOG: {"PUSH", "FWD", "NEXT_PC", "HDR_MOD"},
}


def test_instruction_table_is_complete_with_sections() -> None:
    assert len(ISSUE_MNEMONICS) == 37
    assert {spec.mnemonic: spec.section for spec in INSTRUCTIONS} == ISSUE_MNEMONICS
    assert len(INSTRUCTIONS) == len(BY_MNEMONIC), "a mnemonic is defined twice"


def test_instruction_units() -> None:
    for unit, mnemonics in EXPECTED_UNITS.items():
        assert {s.mnemonic for s in INSTRUCTIONS if s.unit is unit} == mnemonics, unit


def test_instruction_codes_match_the_enums() -> None:
    assert {op.name for op in ALU_SPECS} == EXPECTED_UNITS[Unit.ALU]
    assert set(ALU_SPECS) == set(AluOp) - {AluOp.NOP}
    assert set(MEM_SPECS) == set(MemOp) - {MemOp.NOP}
    assert set(CTRL_SPECS) == set(CtrlOp)
    assert set(SELECTOR_SPECS) == set(SelectorKind)
    for table in (ALU_SPECS, MEM_SPECS, CTRL_SPECS, SELECTOR_SPECS):
        for code, spec in table.items():
            assert spec.code == code
            assert spec.mnemonic == code.name


def test_every_instruction_documents_semantics_and_source() -> None:
    for spec in INSTRUCTIONS:
        assert spec.semantics, spec.mnemonic
        assert spec.paper, spec.mnemonic
