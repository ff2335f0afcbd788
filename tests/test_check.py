"""Every Violation code of dpfc.isa.check and dpfc.isa.placement, each from a minimal
hand-built bundle or image.

Each case starts from a valid bundle, changes one thing, and expects exactly the one code
(with its ``where`` key and a message naming the problem); the valid bundles produce none.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from dpfc.catalog import codes as code_names
from dpfc.isa.bundle import (
    PC,
    Bundle,
    CodeImage,
    Control,
    EpilogBundle,
    Imm,
    Register,
    Selector,
    Steering,
)
from dpfc.isa.check import Violation, check_bundle, check_epilog, check_pc, check_register
from dpfc.isa.opcodes import AluOp, CtrlOp, MemOp, SelectorKind
from dpfc.isa.placement import check_image, check_stage_bundle
from dpfc.target import BUILTIN_PROFILES
from tests.conftest import ROOT

P = BUILTIN_PROFILES["tofino1"]
A0, A1, A3, B0, B1, B2 = (
    Register.a(0),
    Register.a(1),
    Register.a(3),
    Register.b(0),
    Register.b(1),
    Register.b(2),
)
A4 = Register.a(4)  # tofino1 has 4 lanes: A0..A3
SW0 = PC(False, 0)
NOP_ALU = (AluOp.NOP,) * 4
NOP_MEM = (MemOp.NOP,) * 4


def eu(
    *selectors: Selector,
    alu: tuple[AluOp, ...] = NOP_ALU,
    mem: tuple[MemOp, ...] = NOP_MEM,
    control: Control | None = None,
) -> Bundle:
    return Bundle(selectors, alu, mem, control or Control(CtrlOp.JMP, SW0))


def codes(violations: list[Violation]) -> list[str]:
    return [v.code for v in violations]


def check_eu(bundle: Bundle) -> list[Violation]:
    return check_bundle(bundle, P, prolog=False, next_stage="eu1")


def check_prolog(bundle: Bundle) -> list[Violation]:
    return check_bundle(bundle, P, prolog=True, next_stage="eu0")


VALID_EU = eu(
    Selector(A0, SelectorKind.HASH),
    Selector(A1, SelectorKind.MOV, B2),
    Selector(B0, SelectorKind.LOAD_IMM, None, 0xFFFF_FFFF),
    Selector(B1, SelectorKind.LOAD_CONST, None, 255),
    alu=(AluOp.ADD, AluOp.NEG, AluOp.NOP, AluOp.MAX),
    mem=(MemOp.NOP, MemOp.FAADD, MemOp.STORE, MemOp.LOAD),
    control=Control(CtrlOp.BSGT, PC(True, 3), Imm(0xFFFF_FFFF), Imm(7), PC(False, 4095)),
)
VALID_PROLOG = Bundle(
    (
        Selector(A0, SelectorKind.POP),
        Selector(A1, SelectorKind.PEEK),
        Selector(B0, SelectorKind.RAND),
        Selector(B1, SelectorKind.LOAD_MD, None, 5),
    ),
    NOP_ALU,
    NOP_MEM,
    Control(CtrlOp.JMP, PC(True, 0)),
)
VALID_EPILOG = EpilogBundle(
    push=(A0, B0, A1, B1, A0, B0, A1, B1),  # 2L = 8
    steering=Steering("forward", Imm(0xFFFF)),
    next_pc=PC(False, 4095),
    hdr_mod=True,
)


def test_valid_bundles_produce_no_violation() -> None:
    assert check_eu(VALID_EU) == []
    assert check_prolog(VALID_PROLOG) == []
    assert check_epilog(VALID_EPILOG, P) == []
    assert check_eu(Bundle.empty(4, SW0)) == []
    assert check_prolog(Bundle.empty(4, SW0)) == []
    assert check_epilog(EpilogBundle(), P) == []
    for op in (CtrlOp.HALT, CtrlOp.JMP):
        assert check_eu(eu(control=Control(op, PC(True, 3)))) == []


def test_valid_image_produces_no_violation() -> None:
    image = CodeImage(
        prologs=(dataclasses.replace(VALID_PROLOG, control=Control(CtrlOp.JMP, PC(True, 0))),),
        eus=(
            (eu(control=Control(CtrlOp.BEQ, PC(True, 0), A0, B0, PC(False, 9))),),
            (eu(control=Control(CtrlOp.HALT, PC(True, 0))),),
        ),
        epilogs=(EpilogBundle(next_pc=PC(True, 0)),),
    )
    assert check_image(image, P) == []
    assert check_image(CodeImage(), P) == []


# -- registers and PCs ---------------------------------------------------------------------
def test_dpf1001_register_does_not_exist() -> None:
    [v] = check_register(A4, P, ("x",))
    assert (v.code, v.where) == ("DPF1001", ("x",))
    assert v.message == "register A4 does not exist: tofino1 has 4 lanes (A0..A3, B0..B3)"
    assert codes(check_eu(eu(Selector(A4, SelectorKind.HASH)))) == ["DPF1001"]
    assert codes(check_eu(eu(Selector(A0, SelectorKind.MOV, Register.b(9))))) == ["DPF1001"]
    branch = Control(CtrlOp.BEQ, SW0, A4, A0, SW0)
    assert check_eu(eu(control=branch))[0].where == ("control", "x")
    assert codes(check_epilog(EpilogBundle(push=(A0, A4)), P)) == ["DPF1001"]
    assert check_epilog(EpilogBundle(push=(A0, A4)), P)[0].where == ("push", 1)
    assert codes(check_epilog(EpilogBundle(next_pc=Register.b(4)), P)) == ["DPF1001"]
    assert codes(check_epilog(EpilogBundle(steering=Steering("forward", A4)), P)) == ["DPF1001"]


def test_dpf1002_pc_out_of_range() -> None:
    [v] = check_pc(PC(False, 4096), P, ("control", "taken"), target="eu1")
    assert v.code == "DPF1002"
    assert v.message == "code-memory slot 4096 out of range for eu1: tofino1 allows 0..4095"
    [v] = check_pc(PC(True, 4), P, (), target="eu1")
    assert v.message == "in-packet bundle index 4 out of range for eu1: tofino1 allows 0..3"
    assert codes(check_eu(eu(control=Control(CtrlOp.JMP, PC(False, 4096))))) == ["DPF1002"]
    halt = check_eu(eu(control=Control(CtrlOp.HALT, PC(True, 4))))
    assert codes(halt) == ["DPF1002"] and "for the epilog" in halt[0].message
    branch = Control(CtrlOp.BLT, SW0, A0, B0, PC(False, 5000))
    assert check_eu(eu(control=branch))[0].where == ("control", "not_taken")
    assert codes(check_epilog(EpilogBundle(next_pc=PC(False, 4096)), P)) == ["DPF1002"]


# -- bundle shape and selectors --------------------------------------------------------------
def test_dpf1003_immediate_does_not_fit() -> None:
    sel = Selector(B0, SelectorKind.LOAD_IMM, None, 1 << 32)
    [v] = check_eu(eu(sel))
    assert (v.code, v.message) == ("DPF1003", "immediate 4294967296 does not fit in 32 bits")
    branch = Control(CtrlOp.BEQ, SW0, A0, Imm(-1), SW0)
    assert codes(check_eu(eu(control=branch))) == ["DPF1003"]


def test_dpf1004_wrong_number_of_lanes() -> None:
    [v] = check_eu(Bundle((), (AluOp.NOP,) * 3, NOP_MEM, Control(CtrlOp.JMP, SW0)))
    assert (v.code, v.message) == ("DPF1004", "bundle must have 4 ALU and memory slots")
    assert codes(check_eu(Bundle((), NOP_ALU, (MemOp.NOP,) * 5, Control(CtrlOp.JMP, SW0)))) == [
        "DPF1004"
    ]


def test_dpf1005_register_written_twice() -> None:
    [v] = check_eu(eu(Selector(A0, SelectorKind.HASH), Selector(A0, SelectorKind.MOV, B0)))
    assert (v.code, v.where) == ("DPF1005", ("selector", "A0"))
    assert v.message == "register A0 written by two selectors"


def test_dpf1006_selectors_out_of_order() -> None:
    [v] = check_eu(eu(Selector(B0, SelectorKind.MOV, A0), Selector(A3, SelectorKind.HASH)))
    assert (v.code, v.message) == ("DPF1006", "selectors must be sorted by destination")


def test_dpf1010_eu_units_in_the_prolog() -> None:
    alu = dataclasses.replace(VALID_PROLOG, alu=(AluOp.NOP, AluOp.ADD, AluOp.NOP, AluOp.NOP))
    [v] = check_prolog(alu)
    assert (v.code, v.where) == ("DPF1010", ("alu", 1))
    assert v.message == "ALU op ADD is not allowed in the prolog"
    mem = dataclasses.replace(VALID_PROLOG, mem=(MemOp.LOAD, MemOp.NOP, MemOp.NOP, MemOp.NOP))
    [v] = check_prolog(mem)
    assert (v.code, v.where, v.message) == (
        "DPF1010",
        ("mem", 0),
        "memory op LOAD is not allowed in the prolog",
    )
    for control in (
        Control(CtrlOp.HALT, SW0),
        Control(CtrlOp.BEQ, SW0, A0, A1, SW0),
    ):
        [v] = check_prolog(dataclasses.replace(VALID_PROLOG, control=control))
        assert (v.code, v.where) == ("DPF1010", ("control",))
        assert v.message == f"{control.op.name} is not allowed in the prolog"


def test_dpf1011_too_many_immediates() -> None:
    bundle = eu(
        Selector(B0, SelectorKind.LOAD_IMM, None, 1),
        Selector(B1, SelectorKind.LOAD_IMM, None, 2),
        control=Control(CtrlOp.BEQ, SW0, Imm(3), A0, SW0),
    )
    [v] = check_eu(bundle)
    assert (v.code, v.where) == ("DPF1011", ("immediates",))
    assert v.message == "bundle needs 3 distinct immediates but tofino1 allows 2 per bundle"
    # the same value used three times is one immediate
    shared = eu(
        Selector(B0, SelectorKind.LOAD_IMM, None, 9),
        Selector(B1, SelectorKind.LOAD_IMM, None, 9),
        control=Control(CtrlOp.BEQ, SW0, Imm(9), Imm(10), SW0),
    )
    assert check_eu(shared) == []


def test_dpf1012_selector_kind_in_the_wrong_section() -> None:
    [v] = check_eu(eu(Selector(A0, SelectorKind.POP)))
    assert (v.code, v.message) == ("DPF1012", "POP is only allowed in the prolog")
    for kind in (SelectorKind.PEEK, SelectorKind.RAND):
        assert codes(check_eu(eu(Selector(A0, kind)))) == ["DPF1012"]
    assert codes(check_eu(eu(Selector(A0, SelectorKind.LOAD_MD, None, 0)))) == ["DPF1012"]
    prolog = dataclasses.replace(VALID_PROLOG, selectors=(Selector(A0, SelectorKind.MOV, B0),))
    [v] = check_prolog(prolog)
    assert (v.code, v.message) == ("DPF1012", "MOV is not allowed in the prolog")
    for sel in (
        Selector(A0, SelectorKind.HASH),
        Selector(B0, SelectorKind.LOAD_IMM, None, 1),
        Selector(B0, SelectorKind.LOAD_CONST, None, 1),
    ):
        assert codes(check_prolog(dataclasses.replace(VALID_PROLOG, selectors=(sel,)))) == [
            "DPF1012"
        ]


def test_dpf1013_selector_operands() -> None:
    [v] = check_eu(eu(Selector(A0, SelectorKind.MOV)))
    assert (v.code, v.message) == ("DPF1013", "MOV needs a source register")
    [v] = check_eu(eu(Selector(A0, SelectorKind.HASH, B0)))
    assert (v.code, v.message) == ("DPF1013", "HASH takes no source register")
    [v] = check_eu(eu(Selector(A0, SelectorKind.HASH, None, 3)))
    assert (v.code, v.message) == ("DPF1013", "HASH takes no operand value")
    [v] = check_eu(eu(Selector(A0, SelectorKind.MOV, B0, 3)))
    assert (v.code, v.message) == ("DPF1013", "MOV takes no operand value")
    pop = dataclasses.replace(VALID_PROLOG, selectors=(Selector(A0, SelectorKind.POP, None, 1),))
    assert codes(check_prolog(pop)) == ["DPF1013"]


def test_dpf1014_hash_writes_only_a() -> None:
    [v] = check_eu(eu(Selector(B0, SelectorKind.HASH)))
    assert (v.code, v.message) == ("DPF1014", "HASH writes only A registers, not B0")


def test_dpf1015_loads_write_only_b() -> None:
    [v] = check_eu(eu(Selector(A0, SelectorKind.LOAD_IMM, None, 1)))
    assert (v.code, v.message) == ("DPF1015", "LOAD_IMM writes only B registers, not A0")
    [v] = check_eu(eu(Selector(A1, SelectorKind.LOAD_CONST, None, 1)))
    assert (v.code, v.message) == ("DPF1015", "LOAD_CONST writes only B registers, not A1")


def test_dpf1016_constant_index_out_of_range() -> None:
    [v] = check_eu(eu(Selector(B0, SelectorKind.LOAD_CONST, None, 256)))
    assert v.code == "DPF1016"
    assert v.message == "constant index 256 out of range: tofino1 has 256 constant-table entries"
    small = dataclasses.replace(P, const_table_entries=0)
    bundle = eu(Selector(B0, SelectorKind.LOAD_CONST, None, 0))
    assert codes(check_bundle(bundle, small, prolog=False, next_stage="eu1")) == ["DPF1016"]


def test_dpf1017_unknown_metadata_index() -> None:
    prolog = dataclasses.replace(
        VALID_PROLOG, selectors=(Selector(A0, SelectorKind.LOAD_MD, None, 14),)
    )
    [v] = check_prolog(prolog)  # 0..13 are the built-in fields (13: l4_dst)
    assert (v.code, v.message) == ("DPF1017", "unknown metadata index 14")


def test_dpf1018_branch_operands_and_targets() -> None:
    for control in (
        Control(CtrlOp.BEQ, SW0, A0, None, SW0),
        Control(CtrlOp.BEQ, SW0, None, A0, SW0),
        Control(CtrlOp.BEQ, SW0, A0, A1),
    ):
        [v] = check_eu(eu(control=control))
        assert (v.code, v.where) == ("DPF1018", ("control",))
        assert v.message == "BEQ needs two operands and two targets"
    for control in (
        Control(CtrlOp.JMP, SW0, A0),
        Control(CtrlOp.HALT, SW0, None, Imm(1)),
        Control(CtrlOp.JMP, SW0, None, None, SW0),
    ):
        [v] = check_eu(eu(control=control))
        assert (v.code, v.message) == ("DPF1018", f"{control.op.name} takes only a target")


# -- epilogs -------------------------------------------------------------------------------------
def test_dpf1020_push_beyond_2l() -> None:
    [v] = check_epilog(EpilogBundle(push=(A0,) * 9), P)
    assert (v.code, v.where) == ("DPF1020", ("push",))
    assert v.message == "PUSH of 9 registers exceeds the limit of 2L = 8"


def test_dpf1021_unknown_steering_action() -> None:
    [v] = check_epilog(EpilogBundle(steering=Steering("teleport")), P)
    assert v.code == "DPF1021"
    assert v.message.startswith("unknown steering action `teleport` (known: pass, drop,")


def test_dpf1022_steering_value_presence() -> None:
    [v] = check_epilog(EpilogBundle(steering=Steering("forward")), P)
    assert (v.code, v.message) == ("DPF1022", "steering action `forward` needs a value")
    [v] = check_epilog(EpilogBundle(steering=Steering("drop", Imm(1))), P)
    assert (v.code, v.message) == ("DPF1022", "steering action `drop` takes no value")
    assert codes(check_epilog(EpilogBundle(steering=Steering("pass", A0)), P)) == ["DPF1022"]


def test_dpf1023_steering_value_does_not_fit() -> None:
    [v] = check_epilog(EpilogBundle(steering=Steering("multicast", Imm(0x10000))), P)
    assert (v.code, v.message) == ("DPF1023", "steering value 65536 does not fit in 16 bits")
    assert check_epilog(EpilogBundle(steering=Steering("set_port", Imm(0xFFFF))), P) == []


# -- whole images --------------------------------------------------------------------------------
def test_dpf1030_too_many_eu_stages() -> None:
    image = CodeImage(eus=((eu(),),) * 5)
    [(stage, index, v)] = check_image(image, P)
    assert (stage, index, v.code) == (5, 0, "DPF1030")
    assert v.message == "code for EU4 but tofino1 has 4 EUs"


def test_dpf1031_too_many_bundles_in_a_stage() -> None:
    image = CodeImage(epilogs=(EpilogBundle(),) * 5)
    [(stage, index, v)] = check_image(image, P)
    assert (stage, index, v.code) == (31, 0, "DPF1031")
    assert v.message == "5 in-packet bundles for epilog but tofino1 parses at most 4 per stage"
    [(stage, _, v)] = check_image(CodeImage(eus=((), (eu(),) * 5)), P)
    assert (stage, v.code) == (2, "DPF1031")
    assert "for eu1" in v.message


def test_dpf1033_a_bundle_of_the_wrong_kind_for_its_stage() -> None:
    [v] = check_stage_bundle(31, eu(), P)
    assert (v.code, v.message) == ("DPF1033", "the epilog stage holds epilog bundles")
    [v] = check_stage_bundle(2, EpilogBundle(), P)
    assert (v.code, v.message) == ("DPF1033", "eu1 holds bundles, not epilogs")
    assert check_stage_bundle(0, VALID_PROLOG, P) == []
    assert check_stage_bundle(31, EpilogBundle(), P) == []


def test_dpf1032_in_packet_pc_names_a_missing_bundle() -> None:
    jump_eu0_1 = dataclasses.replace(VALID_PROLOG, control=Control(CtrlOp.JMP, PC(True, 1)))
    image = CodeImage(prologs=(jump_eu0_1,), eus=((eu(),),))
    [(stage, index, v)] = check_image(image, P)
    assert (stage, index, v.code, v.where) == (0, 0, "DPF1032", ("control", "taken"))
    assert v.message == "@packet:1 names no in-packet bundle of eu0 (1 present)"
    # the last EU of a partial image points into an EU stage with no in-packet code
    image = CodeImage(eus=((eu(control=Control(CtrlOp.JMP, PC(True, 0))),),))
    [(stage, _, v)] = check_image(image, P)
    assert (stage, v.code) == (1, "DPF1032")
    assert "of eu1 (0 present)" in v.message
    # HALT names the epilog stage
    image = CodeImage(eus=((eu(control=Control(CtrlOp.HALT, PC(True, 0))),),))
    [(_, _, v)] = check_image(image, P)
    assert "of epilog (0 present)" in v.message
    branch = Control(CtrlOp.BSET, PC(False, 1), A0, A1, PC(True, 2))
    image = CodeImage(eus=((eu(control=branch),), (eu(), eu())))
    [(_, _, v)] = check_image(image, P)
    assert v.where == ("control", "not_taken")
    image = CodeImage(epilogs=(EpilogBundle(next_pc=PC(True, 0)),))
    [(stage, _, v)] = check_image(image, P)
    assert (stage, v.code, v.where) == (31, "DPF1032", ("next_pc",))


def test_last_eu_of_a_full_image_targets_the_epilog() -> None:
    last = eu(control=Control(CtrlOp.JMP, PC(True, 0)))
    full = CodeImage(eus=((eu(),), (eu(),), (eu(),), (last,)), epilogs=(EpilogBundle(),))
    assert check_image(full, P) == []
    assert codes([v for _, _, v in check_image(dataclasses.replace(full, epilogs=()), P)]) == [
        "DPF1032"
    ]


def test_image_bundle_violations_carry_stage_and_index() -> None:
    bad = eu(Selector(B0, SelectorKind.HASH))
    image = CodeImage(eus=((eu(), bad),))
    assert [(s, i, v.code) for s, i, v in check_image(image, P)] == [(1, 1, "DPF1014")]


def test_every_violation_code_has_a_test() -> None:
    """The codes dpfc/isa's modules name (check.py: one bundle; placement.py: a bundle in its
    stage, an in-packet image), read from their sources, are exactly the codes tested here."""
    modules = sorted((ROOT / "dpfc" / "isa").glob("*.py"))
    source = "".join(path.read_text(encoding="utf-8") for path in modules)
    defined = {getattr(code_names, name) for name in re.findall(r"\bcodes\.(\w+)", source)}
    tested = set(re.findall(r"dpf(1\d{3})", Path(__file__).read_text(encoding="utf-8")))
    assert defined == {f"DPF{code}" for code in tested}


@pytest.mark.parametrize("lanes", [1, 2, 3, 15])
def test_lane_count_decides_the_register_file(lanes: int) -> None:
    profile = dataclasses.replace(P, name=f"l{lanes}", lanes=lanes, hash_functions=("crc32",) * 15)
    last = Register.b(lanes - 1)
    assert check_register(last, profile, ()) == []
    assert codes(check_register(Register.b(lanes), profile, ())) == ["DPF1001"]
