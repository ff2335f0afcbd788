"""The profile's ``shift_amounts``: the field (TOML, ``problems()``, fingerprint, ``dpfc
target``) and the run-time fault of a shift by an amount the ALU lacks, the same in the
simulator and its JIT (docs/isa.md §6 item 4, docs/simulator.md R14).

Each run sends a real packet whose in-packet code POPs A0..A3, B0..B3, runs one EU and
PUSHes every register; the expected words are written out here, not taken from
:mod:`dpfc.isa.semantics`.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner

from dpfc.backends.jit import JitSwitch, missing
from dpfc.backends.sim import PassResult, Switch
from dpfc.cli.main import main
from dpfc.encoding import SwitchVMHeader
from dpfc.isa.bundle import CodeImage
from dpfc.isa.opcodes import AluOp
from dpfc.packet.build import PacketSpec, build_packet
from dpfc.packet.wire import parse_packet
from dpfc.target import BUILTIN_PROFILES, TargetError, TargetProfile, profile_from_toml
from tests.shift_code import PK0, shift_code

TOFINO1 = BUILTIN_PROFILES["tofino1"]
TOFINO_FIT = replace(TOFINO1, name="tofino_fit", shift_amounts=(1, 2, 4, 8, 16, 24))
TENANT = 7
OUT_PORT = 3
L = TOFINO1.lanes


# -- the field -------------------------------------------------------------------------------
def test_the_paper_profiles_shift_by_every_amount() -> None:
    # tofino1_fit and tofino2_fit shift by 1, 2, 4, 8, 16 only (tests/test_fit_profiles.py)
    for profile in (BUILTIN_PROFILES[name] for name in ("tofino1", "tofino2", "bmv2")):
        assert profile.shift_amounts == tuple(range(1, 32))
        assert not profile.shifts_restricted
        assert all(profile.shifts_by(amount) for amount in range(64))


def test_toml_shift_amounts() -> None:
    profile = profile_from_toml('base = "tofino2"\nshift_amounts = [1, 2, 4, 8, 16, 24]\n')
    assert profile.shift_amounts == (1, 2, 4, 8, 16, 24)
    assert profile.shifts_restricted
    implemented = [amount for amount in range(64) if profile.shifts_by(amount)]
    # 0 always runs; B & 31 is the amount, so 33 is 1 and 56 is 24
    assert implemented == [0, 1, 2, 4, 8, 16, 24, 32, 33, 34, 36, 40, 48, 56]
    assert profile.num_eus == 8


def test_no_shift_amount_at_all_is_a_profile() -> None:
    profile = profile_from_toml("shift_amounts = []\n")
    assert profile.shift_amounts == ()
    assert [a for a in range(32) if profile.shifts_by(a)] == [0]


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("shift_amounts = [0, 1]", "shift_amounts must be 1..31 (0 always shifts), got 0"),
        ("shift_amounts = [1, 32]", "shift_amounts must be 1..31 (0 always shifts), got 32"),
        ("shift_amounts = [4, 2]", "shift_amounts must be sorted, without duplicates"),
        ("shift_amounts = [2, 2]", "shift_amounts must be sorted, without duplicates"),
        ("shift_amounts = 3", "`shift_amounts` must be a list of integers"),
        ('shift_amounts = ["1"]', "`shift_amounts` must be a list of integers"),
        ("shift_amounts = [true]", "`shift_amounts` must be a list of integers"),
    ],
)
def test_bad_shift_amounts_are_target_errors(text: str, fragment: str) -> None:
    with pytest.raises(TargetError) as info:
        profile_from_toml(text)
    assert fragment in str(info.value)


def test_problems_name_bad_amounts() -> None:
    with pytest.raises(TargetError, match="got -1"):
        replace(TOFINO1, shift_amounts=(-1, 2))


def test_the_fingerprint_keeps_builtins_and_tells_restricted_profiles_apart() -> None:
    # the digest of every field but the description, as before shift_amounts (and
    # code_format and max_code_options, tests/test_target.py) existed: the fingerprints
    # objects and images of built-in profiles record stay
    fields = {k: v for k, v in dataclasses.asdict(TOFINO1).items() if k != "description"}
    del fields["shift_amounts"], fields["code_format"], fields["max_code_options"]
    text = json.dumps(fields, sort_keys=True, default=lambda e: e.value)
    assert TOFINO1.fingerprint() == hashlib.sha256(text.encode()).hexdigest()[:16]
    assert replace(TOFINO1, shift_amounts=tuple(range(1, 32))).fingerprint() == (
        TOFINO1.fingerprint()
    )
    assert replace(TOFINO_FIT, name="tofino1").fingerprint() != TOFINO1.fingerprint()
    assert replace(TOFINO_FIT, name="tofino1", shift_amounts=(1, 2)).fingerprint() != (
        replace(TOFINO_FIT, name="tofino1").fingerprint()
    )


def test_dpfc_target_prints_the_amounts(tmp_path: Path) -> None:
    path = tmp_path / "fit.toml"
    path.write_text("shift_amounts = [1, 2, 4, 8, 16, 24]\n", encoding="utf-8")
    runner = CliRunner()
    restricted = runner.invoke(main, ["target", str(path)])
    assert restricted.exit_code == 0, restricted.output
    assert "  shift amounts: 1, 2, 4, 8, 16, 24\n" in restricted.output
    full = runner.invoke(main, ["target", "tofino1"])
    assert "  shift amounts: 1..31 (all)\n" in full.output


# -- the fault -------------------------------------------------------------------------------
def new_switch(profile: TargetProfile) -> Switch:
    switch = Switch("s1", profile, pipes=1, switch_id=1, seed=0)
    switch.control.authorize(TENANT)
    switch.control.set_default_port(OUT_PORT)
    return switch


def frame(code: CodeImage, stack: list[int], profile: TargetProfile) -> bytes:
    header = SwitchVMHeader(app_id=0, dpf_ptr=PK0, gas=8, stack=tuple(stack), code=code)
    return build_packet(PacketSpec(TENANT, header, payload=b"inner"), profile).frame


DEOPTS: list[int] = []  # the JIT's hand-overs to the interpreter, per run_both


def run_both(
    profile: TargetProfile, code: CodeImage, stack: list[int]
) -> tuple[PassResult, PassResult | None, Switch, Switch]:
    """The packet on the simulator, and on the JIT of a twin switch (None without one)."""
    sim = new_switch(profile)
    result = sim.process(frame(code, stack, profile), 0)
    twin = new_switch(profile)
    if missing() is not None:
        return result, None, sim, twin
    jit = JitSwitch(twin)
    native = jit.process(frame(code, stack, profile), 0)
    DEOPTS.append(jit.deopts)
    return result, native, sim, twin


def pushed(result: PassResult, profile: TargetProfile) -> tuple[int, ...]:
    assert result.verdict == "pass", result.reason
    header = parse_packet(result.outputs[0][1], profile).header
    assert header is not None
    return header.stack[: 2 * L]


# A0..A3 = 0x80000001, B0..B3 = the amounts
def stack_for(*amounts: int) -> list[int]:
    return [0x8000_0001] * L + [*amounts, *([0] * (L - len(amounts)))]


@pytest.mark.parametrize("amount", [0, 1, 4, 24, 32, 36, 0xFFFF_FFE8])
def test_implemented_amounts_shift(amount: int) -> None:
    code = shift_code({0: AluOp.LSH, 1: AluOp.RSH}, L)
    sim, jit, _, _ = run_both(TOFINO_FIT, code, stack_for(amount, amount))
    bits = amount & 31
    expected_left = (0x8000_0001 << bits) & 0xFFFF_FFFF
    expected_right = 0x8000_0001 >> bits
    assert pushed(sim, TOFINO_FIT)[:2] == (expected_left, expected_right)
    if jit is not None:
        assert pushed(jit, TOFINO_FIT) == pushed(sim, TOFINO_FIT)
        assert DEOPTS[-1] == 0  # the native code ran it


@pytest.mark.parametrize(("op", "amount"), [(AluOp.LSH, 12), (AluOp.RSH, 3), (AluOp.LSH, 45)])
def test_an_amount_the_alu_lacks_faults_the_packet(op: AluOp, amount: int) -> None:
    code = shift_code({2: op}, L)
    sim, jit, sim_switch, jit_switch = run_both(TOFINO_FIT, code, stack_for(0, 0, amount))
    bits = amount & 31
    reason = (
        f"DPF fault: EU0 lane 2: {op.name} by {bits} (B2 = {amount:#x}): the ALU shifts only "
        "by 1, 2, 4, 8, 16, 24"
    )
    assert (sim.verdict, sim.reason, sim.outputs) == ("drop", reason, [])
    stats = sim_switch.control.stats(TENANT)
    assert (stats.faults, stats.dropped) == (1, 1)
    (report,) = sim_switch.pipes[0].reports
    assert (report.kind, report.detail) == ("fault", reason.removeprefix("DPF fault: "))
    if jit is not None:
        assert DEOPTS[-1] == 1  # the native code handed the fault to the interpreter
        assert (jit.verdict, jit.reason, jit.outputs) == (sim.verdict, sim.reason, sim.outputs)
        assert jit.executed == sim.executed
        assert jit_switch.control.stats(TENANT) == stats
        assert [(r.kind, r.detail) for r in jit_switch.pipes[0].reports] == [
            (report.kind, report.detail)
        ]


def test_the_same_shift_runs_on_a_profile_with_every_amount() -> None:
    code = shift_code({2: AluOp.LSH}, L)
    sim, jit, _, _ = run_both(TOFINO1, code, stack_for(0, 0, 12))
    assert pushed(sim, TOFINO1)[2] == (0x8000_0001 << 12) & 0xFFFF_FFFF
    if jit is not None:
        assert pushed(jit, TOFINO1) == pushed(sim, TOFINO1)


def test_a_faulting_eu_changes_no_memory() -> None:
    """The check comes before the EU's ALUs and memory units: lane 0's LOAD of the same EU
    does not run (no unmapped report), as a shift in lane 3 faults."""
    code = shift_code({3: AluOp.LSH}, L, memory=True)
    sim, jit, sim_switch, jit_switch = run_both(TOFINO_FIT, code, stack_for(0, 0, 0, 5))
    assert sim.verdict == "drop"
    assert [r.kind for r in sim_switch.pipes[0].reports] == ["fault"]
    assert sim_switch.control.stats(TENANT).unmapped == 0
    if jit is not None:
        assert jit.reason == sim.reason
        assert [r.kind for r in jit_switch.pipes[0].reports] == ["fault"]
