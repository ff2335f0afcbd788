"""The stage-structured SwitchVM program (dpfc.backends.p4.staged).

* the stage plan: 2 stages per EU + permissions, prolog, epilog and steering; a profile
  whose pipeline is too short is refused with the count;
* the generated TNA program: deterministic; every table pinned to the stage the plan gives
  its unit; no table with more actions than Tofino gives one container (32); at most four
  RegisterActions per register; the parser's bundle starts for every stage;
* p4c-barefoot (when found; skipped with the reason otherwise) compiles the Tofino-1 fit
  profile with no error into at most 12 stages, and the control plane's entries (the fixed
  ones and a sample of code slots) name only tables, keys, actions and parameters of the
  compiler's BF-RT schema.
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pytest

from dpfc.backends.p4 import ToolchainMissing
from dpfc.backends.p4.barefoot import compile_tna, find_barefoot
from dpfc.backends.p4.bfrt_names import check_script, read_bfrt_json
from dpfc.backends.p4.lang import Block, Implementation, Table
from dpfc.backends.p4.staged import PlanError, StagePlan, generate
from dpfc.backends.p4.staged.bfrt import bfrt_calls
from dpfc.backends.p4.staged.entries import eu_entries, fixed_entries, prolog_entries
from dpfc.backends.p4.staged.program import program
from dpfc.isa import PC, AluOp, Bundle, Control, CtrlOp, MemOp, Register, Selector, SelectorKind
from dpfc.target import BUILTIN_PROFILES, TargetProfile

MAX_ACTIONS = 32
TAKEN, NOT_TAKEN = PC(False, 1), PC(True, 0)
SAMPLE_EU = Bundle(
    (
        Selector(Register.a(0), SelectorKind.HASH),
        Selector(Register.b(0), SelectorKind.LOAD_IMM, value=5),
        Selector(Register.b(1), SelectorKind.MOV, source=Register.a(1)),
    ),
    (AluOp.LSH, AluOp.ADD),
    (MemOp.FAADD, MemOp.STORE),
    Control(CtrlOp.BSGT, TAKEN, Register.b(1), Register.a(0), NOT_TAKEN),
)
SAMPLE_PROLOG = Bundle(
    (
        Selector(Register.a(0), SelectorKind.POP),
        Selector(Register.a(1), SelectorKind.LOAD_MD, value=0),
        Selector(Register.b(0), SelectorKind.RAND),
    ),
    (AluOp.NOP, AluOp.NOP),
    (MemOp.NOP, MemOp.NOP),
    Control(CtrlOp.JMP, TAKEN),
)  # tofino_limits: actions of one table writing one container


def fit(num_eus: int = 4, stages: int = 12) -> TargetProfile:
    """The built-in fit profile of that many EUs (tofino1_fit: 4, tofino2_fit: 8)."""
    profile = BUILTIN_PROFILES["tofino1_fit" if num_eus == 4 else "tofino2_fit"]
    assert (profile.num_eus, profile.hardware_stages) == (num_eus, stages)
    return profile


def tables(profile: TargetProfile) -> list[Table]:
    ingress = next(
        d for d in program(profile).decls if isinstance(d, Block) and d.name == "Ingress"
    )
    return [d for d in ingress.locals if isinstance(d, Table)]


def stage_of(table: Table) -> int:
    (note,) = table.annotations
    found = re.fullmatch(r"@stage\((\d+)\)", note)
    assert found is not None, note
    return int(found.group(1))


def test_the_plan_gives_each_eu_two_stages_between_the_frame_stages() -> None:
    plan = StagePlan.for_profile(fit())
    assert (plan.permissions, plan.prolog, plan.epilog, plan.steering) == (0, 1, 10, 11)
    assert [(plan.select(k), plan.execute(k)) for k in range(4)] == [
        (2, 3),
        (4, 5),
        (6, 7),
        (8, 9),
    ]
    assert plan.stages == 12
    assert StagePlan.for_profile(fit(8, 20)).stages == 20
    assert plan.registers == ("a0", "a1", "b0", "b1")
    assert [plan.register_code(r) for r in plan.registers] == [0x00, 0x01, 0x10, 0x11]


def test_a_pipeline_too_short_is_refused_with_the_count() -> None:
    with pytest.raises(PlanError, match=r"5 EUs need 14 stages .* the pipeline has 12"):
        StagePlan.for_profile(replace(fit(), num_eus=5))


def test_the_program_is_deterministic() -> None:
    assert generate(fit()) == generate(fit())
    assert "#include <t2na.p4>" in generate(fit(8, 20), chip=2)


def test_every_table_sits_in_the_stage_of_its_unit() -> None:
    profile = fit()
    plan = StagePlan.for_profile(profile)
    placed = {t.name: stage_of(t) for t in tables(profile)}
    assert max(placed.values()) == plan.stages - 1
    for k in range(plan.num_eus):
        for r in plan.registers:
            assert placed[plan.selector(k, r)] == plan.select(k)
        for i in range(plan.lanes):
            assert placed[plan.direct(k, i)] == placed[plan.segment(k, i)] == plan.select(k)
            assert placed[plan.memory(k, i)] == placed[plan.alu(k, i)] == plan.execute(k)
        assert placed[plan.compare(k)] == placed[plan.code(k)] == plan.select(k)
        assert placed[plan.branch(k)] == plan.execute(k)
    assert placed["permissions"] == plan.permissions
    assert placed["prolog_code"] == plan.prolog
    assert placed["epilog_code"] == plan.epilog
    assert placed["forwarding"] == plan.steering


def test_no_table_has_more_actions_than_a_container_allows() -> None:
    for table in tables(fit()):
        assert len(table.actions) <= MAX_ACTIONS, table.name


def test_each_lane_memory_has_four_register_actions() -> None:
    ingress = next(d for d in program(fit()).decls if isinstance(d, Block) and d.name == "Ingress")
    per_register: dict[str, int] = {}
    for decl in ingress.locals:
        if isinstance(decl, Implementation) and decl.type.startswith("RegisterAction"):
            register = decl.args[0].p4()
            per_register[register] = per_register.get(register, 0) + 1
    assert len(per_register) == 4 * 2  # an array per EU and lane
    assert set(per_register.values()) == {4}


def test_the_parser_starts_a_bundle_for_every_stage() -> None:
    text = generate(fit())
    starts = re.findall(r"0xFB([0-9A-F]{2}): parse_(\w+)_head;", text)
    assert starts == [
        ("00", "pro"),
        ("08", "eu0"),
        ("10", "eu1"),
        ("18", "eu2"),
        ("20", "eu3"),
        ("F8", "ep"),
    ]


@pytest.mark.slow
def test_the_tofino1_fit_program_compiles_into_12_stages(tmp_path: Path) -> None:
    try:
        barefoot = find_barefoot()
    except ToolchainMissing as missing:
        pytest.skip(f"p4c-barefoot not run: {missing}")
    source = tmp_path / "switchvm.p4"
    source.write_text(generate(fit()))
    run = compile_tna(barefoot, source, "tofino", tmp_path / "out")
    assert run.errors == ()
    assert run.resources is not None
    assert run.resources.stages <= 12
    # every table, key, action and parameter the control plane writes is the compiler's
    assert run.bfrt_json is not None
    profile = fit()
    plan = StagePlan.for_profile(profile)
    entries = fixed_entries(profile, plan) + eu_entries(profile, plan, 2, 7, SAMPLE_EU)
    entries += prolog_entries(profile, plan, 3, SAMPLE_PROLOG)
    script = "\n".join(bfrt_calls(entries, "switchvm"))
    assert check_script(script, read_bfrt_json(run.bfrt_json), "switchvm") == []
