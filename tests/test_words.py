"""In-switch instruction words (dpfc.encoding.words): layouts, sizes, known answers, errors.

The round-trip property (decode_slot . encode_slot = id, for every profile and stage kind)
is in tests/test_roundtrip.py; here the words are compared with bit strings written out from
the documented field order, and malformed words are rejected with their specific error.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dpfc.encoding import (
    DecodeError,
    StageKind,
    decode_slot,
    encode_slot,
    slot_bits,
    slot_bytes,
    slot_layout,
)
from dpfc.isa.bundle import PC, Bundle, Control, EpilogBundle, Imm, Register, Selector, Steering
from dpfc.isa.opcodes import AluOp, CtrlOp, MemOp, SelectorKind
from dpfc.target import BUILTIN_PROFILES, TargetProfile
from tests.strategies import DUO, PROFILES, TRIO, profiles

TOFINO1 = BUILTIN_PROFILES["tofino1"]
A0, A1, B0, B1 = Register.a(0), Register.a(1), Register.b(0), Register.b(1)


def bits(*fields: tuple[int, int]) -> bytes:
    """Pack (value, width) fields most-significant first, zero-padded to whole bytes."""
    text = "".join(format(value, f"0{width}b") for value, width in fields)
    assert all(len(format(v, "b")) <= w for v, w in fields)
    text += "0" * (-len(text) % 8)
    return int(text, 2).to_bytes(len(text) // 8, "big")


# -- layouts and sizes -----------------------------------------------------------------------
def expected_bits(kind: StageKind, p: TargetProfile) -> int:
    """Field widths of docs/encoding.md, written out per stage kind."""
    selectors = 2 * p.lanes * (1 + 3 + 8)
    if kind is StageKind.PROLOG:
        return 16 + selectors
    if kind is StageKind.EU:
        return 4 + 8 + 8 + 16 + 16 + selectors + 4 * p.lanes * 2 + 32 * p.immediates_per_bundle
    return 5 + 5 * p.max_push + 3 + 1 + 16 + 2 + 16 + 1


@pytest.mark.parametrize("name", sorted(PROFILES))
@pytest.mark.parametrize("kind", list(StageKind), ids=lambda k: k.value)
def test_slot_sizes(name: str, kind: StageKind) -> None:
    p = PROFILES[name]
    layout = slot_layout(kind, p)
    assert len({f.name for f in layout}) == len(layout), "duplicate field names"
    assert all(f.width > 0 for f in layout)
    assert slot_bits(kind, p) == sum(f.width for f in layout) == expected_bits(kind, p)
    assert slot_bytes(kind, p) == (expected_bits(kind, p) + 7) // 8


def test_tofino1_slot_sizes() -> None:
    sizes = {kind.value: slot_bytes(kind, TOFINO1) for kind in StageKind}
    assert sizes == {"prolog": 14, "eu": 31, "epilog": 11}
    assert slot_bits(StageKind.EU, TOFINO1) == 244  # 4 padding bits in the last byte


def test_layout_field_order() -> None:
    eu = [f.name for f in slot_layout(StageKind.EU, DUO)]
    assert eu[:5] == ["ctrl_op", "ctrl_x", "ctrl_y", "pc_taken", "pc_not_taken"]
    assert eu[5:8] == ["sel_A0_valid", "sel_A0_kind", "sel_A0_operand"]
    assert eu[-7:] == ["alu_0", "alu_1", "mem_0", "mem_1", "imm_0", "imm_1", "imm_2"]
    prolog = [f.name for f in slot_layout(StageKind.PROLOG, DUO)]
    assert prolog[0] == "pc_taken" and not any(n.startswith(("alu", "imm")) for n in prolog)
    epilog = [f.name for f in slot_layout(StageKind.EPILOG, DUO)]
    assert epilog == [
        "n_push",
        "push_0",
        "push_1",
        "push_2",
        "push_3",
        "steer_action",
        "steer_src",
        "steer_value",
        "next_pc_src",
        "next_pc",
        "hdr_mod",
    ]


# -- known answers -------------------------------------------------------------------------------
def epilog_word(
    p: TargetProfile,
    push: list[int],
    action: int = 0,
    src: int = 0,
    value: int = 0,
    next_src: int = 0,
    next_pc: int = 0,
    hdr_mod: int = 0,
) -> bytes:
    slots = [*push, *[0] * (p.max_push - len(push))]
    return bits(
        (len(push), 5),
        *((code, 5) for code in slots),
        (action, 3),
        (src, 1),
        (value, 16),
        (next_src, 2),
        (next_pc, 16),
        (hdr_mod, 1),
    )


@pytest.mark.parametrize(
    ("bundle", "fields"),
    [
        (EpilogBundle(), {"push": []}),
        (EpilogBundle(push=(A0, B0)), {"push": [0x00, 0x10]}),
        (EpilogBundle(push=(B1,), hdr_mod=True), {"push": [0x11], "hdr_mod": 1}),
        (
            EpilogBundle(steering=Steering("forward", Imm(7))),
            {"push": [], "action": 3, "value": 7},
        ),
        (
            EpilogBundle(steering=Steering("multicast", B1)),
            {"push": [], "action": 4, "src": 1, "value": 0x11},
        ),
        (EpilogBundle(steering=Steering("drop")), {"push": [], "action": 1}),
        (
            EpilogBundle(next_pc=PC(True, 1)),
            {"push": [], "next_src": 1, "next_pc": 0x8001},
        ),
        (
            EpilogBundle(next_pc=PC(False, 63)),
            {"push": [], "next_src": 1, "next_pc": 63},
        ),
        (EpilogBundle(next_pc=A1), {"push": [], "next_src": 2, "next_pc": 0x01}),
    ],
)
def test_epilog_word_known_answers(bundle: EpilogBundle, fields: dict[str, Any]) -> None:
    expected = epilog_word(DUO, **fields)
    assert len(expected) == slot_bytes(StageKind.EPILOG, DUO) == 8
    assert encode_slot(StageKind.EPILOG, bundle, DUO) == expected
    assert decode_slot(StageKind.EPILOG, expected, DUO) == bundle


def test_epilog_word_literal_bytes() -> None:
    word = encode_slot(StageKind.EPILOG, EpilogBundle(push=(A0, B0)), DUO)
    assert word.hex() == "1020000000000000"  # n_push=2 | A0=00000 | B0=10000 | zeros


def test_prolog_word_known_answer() -> None:
    bundle = Bundle(
        (
            Selector(A0, SelectorKind.POP),
            Selector(B1, SelectorKind.LOAD_MD, None, 17),
        ),
        (AluOp.NOP,) * 2,
        (MemOp.NOP,) * 2,
        Control(CtrlOp.JMP, PC(False, 5)),
    )
    expected = bits(
        (5, 16),  # pc_taken
        (1, 1),
        (SelectorKind.POP, 3),
        (0, 8),  # A0
        (0, 12),  # A1: not valid
        (0, 12),  # B0: not valid
        (1, 1),
        (SelectorKind.LOAD_MD, 3),
        (17, 8),  # B1
    )
    assert encode_slot(StageKind.PROLOG, bundle, DUO) == expected
    assert decode_slot(StageKind.PROLOG, expected, DUO) == bundle


def test_eu_word_known_answer() -> None:
    bundle = Bundle(
        (
            Selector(A1, SelectorKind.MOV, B0),
            Selector(B0, SelectorKind.LOAD_IMM, None, 0xDEADBEEF),
            Selector(B1, SelectorKind.LOAD_IMM, None, 0x12345678),
        ),
        (AluOp.ADD, AluOp.MAX),
        (MemOp.NOP, MemOp.FAMIN),
        Control(CtrlOp.BSLT, PC(True, 1), Imm(0x12345678), A1, PC(False, 9)),
    )
    expected = bits(
        (CtrlOp.BSLT, 4),
        (0x81, 8),  # x: immediate slot 1
        (0x01, 8),  # y: A1
        (0x8001, 16),
        (9, 16),
        (0, 12),  # A0
        (1, 1),
        (SelectorKind.MOV, 3),
        (0x10, 8),  # A1 = B0
        (1, 1),
        (SelectorKind.LOAD_IMM, 3),
        (0, 8),  # B0 = imm slot 0
        (1, 1),
        (SelectorKind.LOAD_IMM, 3),
        (1, 8),  # B1 = imm slot 1
        (AluOp.ADD, 4),
        (AluOp.MAX, 4),
        (MemOp.NOP, 4),
        (MemOp.FAMIN, 4),
        (0xDEADBEEF, 32),
        (0x12345678, 32),
        (0, 32),
    )
    assert encode_slot(StageKind.EU, bundle, DUO) == expected
    assert decode_slot(StageKind.EU, expected, DUO) == bundle


def test_prolog_word_ignores_nothing_it_was_given() -> None:
    """A prolog slot has no ALU/memory/branch fields: its bundle decodes back with nops/JMP."""
    bundle = Bundle((), (AluOp.NOP,) * 3, (MemOp.NOP,) * 3, Control(CtrlOp.JMP, PC(True, 2)))
    word = encode_slot(StageKind.PROLOG, bundle, TRIO)
    assert decode_slot(StageKind.PROLOG, word, TRIO) == bundle


# -- malformed words -----------------------------------------------------------------------------
def decode_error(kind: StageKind, word: bytes, p: TargetProfile = DUO) -> DecodeError:
    with pytest.raises(DecodeError) as info:
        decode_slot(kind, word, p)
    return info.value


@pytest.mark.parametrize("kind", list(StageKind), ids=lambda k: k.value)
def test_wrong_length(kind: StageKind) -> None:
    size = slot_bytes(kind, DUO)
    for length in (0, size - 1, size + 1):
        error = decode_error(kind, bytes(length))
        assert error.code == "DPF3050"
        assert error.message == f"{kind.value} slot must be {size} bytes, got {length}"


def test_padding_bits_set() -> None:
    word = bytearray(slot_bytes(StageKind.EU, TOFINO1))
    word[-1] = 0x01  # 244 bits: the low 4 bits of the last byte are padding
    error = decode_error(StageKind.EU, bytes(word), TOFINO1)
    assert (error.code, error.message) == ("DPF3051", "padding bits of the slot are set")


def test_unknown_alu_opcode() -> None:
    fields = [(0, 4 + 8 + 8 + 16 + 16 + 48), (15, 4), (0, 4 + 8 + 96)]
    error = decode_error(StageKind.EU, bits(*fields))
    assert error.code == "DPF3016"


def test_unknown_control_opcode() -> None:
    error = decode_error(StageKind.EU, bits((9, 4), (0, 208)))
    assert error.code == "DPF3016"


def test_unknown_steering_action() -> None:
    error = decode_error(StageKind.EPILOG, epilog_word(DUO, [], action=7))
    assert (error.code, error.message) == ("DPF3017", "unknown steering action code 7")


def test_push_beyond_2l() -> None:
    word = bits((5, 5), (0, 59))
    error = decode_error(StageKind.EPILOG, word)
    assert (error.code, error.message) == ("DPF3018", "PUSH of 5 registers exceeds 2L = 4")


def test_next_pc_source_3() -> None:
    error = decode_error(StageKind.EPILOG, epilog_word(DUO, [], next_src=3))
    assert (error.code, error.message) == ("DPF3019", "invalid NEXT_PC source 3")


def test_decoded_words_obey_the_checker() -> None:
    """The decoder is strict: a word holding an illegal bundle is rejected by check.py."""
    word = bits((0, 16), (1, 1), (SelectorKind.LOAD_IMM, 3), (0, 8), (0, 36))
    error = decode_error(StageKind.PROLOG, word)
    assert (error.code, error.message) == (
        "DPF1012",
        "prolog slot: LOAD_IMM is not allowed in the prolog",
    )
    hash_b0 = bits((0, 4 + 8 + 8 + 16 + 16 + 24), (1, 1), (SelectorKind.HASH, 3), (0, 8 + 12))
    hash_b0 += bytes(slot_bytes(StageKind.EU, DUO) - len(hash_b0))
    error = decode_error(StageKind.EU, hash_b0)
    assert (error.code, error.message) == (
        "DPF1014",
        "eu slot: HASH writes only A registers, not B0",
    )
    push_a2 = epilog_word(DUO, [0x02])
    error = decode_error(StageKind.EPILOG, push_a2)
    assert error.code == "DPF1001"


def test_non_canonical_words_are_rejected() -> None:
    """Unused fields must be zero, so every bundle has exactly one word."""
    junk_in_invalid_selector = bits((0, 16), (0, 1), (SelectorKind.RAND, 3), (0, 8), (0, 36))
    error = decode_error(StageKind.PROLOG, junk_in_invalid_selector)
    assert error.code == "DPF3052"
    value_without_action = epilog_word(DUO, [], action=0, value=5)
    assert decode_error(StageKind.EPILOG, value_without_action).code == "DPF3052"
    unused_push_slot = bits((1, 5), (0, 5), (3, 5), (0, 49))
    assert decode_error(StageKind.EPILOG, unused_push_slot).code == "DPF3052"
    not_taken_of_jmp = bits((CtrlOp.JMP, 4), (0, 8 + 8 + 16), (7, 16), (0, 160))
    assert decode_error(StageKind.EU, not_taken_of_jmp).code == "DPF3052"


def test_branch_operand_names_a_missing_immediate() -> None:
    one_imm = dataclasses.replace(DUO, name="one", immediates_per_bundle=1)
    word = bits((CtrlOp.BEQ, 4), (0x81, 8), (0, 8), (0, 32 + 48 + 16), (0, 32))
    error = decode_error(StageKind.EU, word, one_imm)
    assert error.code == "DPF3014"


@given(st.data(), profiles(), st.sampled_from(list(StageKind)))
def test_any_word_decodes_or_is_a_decode_error(
    data: st.DataObject, p: TargetProfile, kind: StageKind
) -> None:
    """Arbitrary bytes never crash the decoder; what decodes re-encodes to the same word."""
    size = slot_bytes(kind, p)
    word = data.draw(st.binary(min_size=size, max_size=size))
    try:
        bundle = decode_slot(kind, word, p)
    except DecodeError as error:
        assert error.code.startswith(("DPF30", "DPF10")), error  # format or checker rule
        return
    assert encode_slot(kind, bundle, p) == word  # canonical
