"""Completeness: every DPF that fits compiles, in no more EUs than a schedule known to exist.

Hypothesis draws a *schedule* first — random placed bundles on tofino1 (4 EUs of 4 lanes):
in each EU every lane's A register may be replaced by a selector (a MOV from any register
or the lane's HASH), up to two B registers may get a LOAD_IMM constant (the profile's two
immediates per bundle), and any lane may run an ALU operation on its selected A and B — and
derives the DPF that schedule computes (the prolog POPs eight parameters into A0..A3,
B0..B3; the epilog pushes all eight registers). The schedule obeys the machine's rules by
construction (selectors read EU-entry values, the ALU reads the selected ones, its result
replaces A[i]), so the DPF fits in that many EUs. The compiler must accept it, in no more
EUs (its optimisations only ever remove work).
"""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import example, given, settings
from hypothesis import strategies as st

from dpfc.diagnostics import DiagnosticError, SourceFile
from dpfc.driver import CompileOptions, compile_source
from dpfc.schedule import ScheduleOptions

LANES = 4
OPERATORS = ["{} + {}", "{} - {}", "{} & {}", "{} | {}", "{} ^ {}", "min({}, {})", "max({}, {})"]
# The EU count is what is asserted: bundles and instructions are not lowered here.
OPTIONS = CompileOptions(schedule=ScheduleOptions(secondary=False, needed_eus=False))


@dataclass(frozen=True)
class PlacedProgram:
    source: str
    eus: int  # EUs of the schedule it was derived from


@st.composite
def placed_programs(draw: st.DrawFn) -> PlacedProgram:
    eus = draw(st.integers(min_value=1, max_value=4))
    regs = [f"p{i}" for i in range(LANES)] + [f"q{i}" for i in range(LANES)]  # A0.., B0..
    lets: list[str] = []

    def named(expression: str) -> str:
        lets.append(f"    let v{len(lets)} = {expression};")
        return f"v{len(lets) - 1}"

    for _ in range(eus):
        entry = list(regs)
        selected = list(regs)
        for lane in range(LANES):
            kind = draw(st.sampled_from(["keep", "keep", "mov", "hash"]))
            if kind == "mov":
                selected[lane] = entry[draw(st.integers(0, 2 * LANES - 1))]
            elif kind == "hash":
                selected[lane] = named(f"hash<{lane}>({entry[lane]})")
        for lane in draw(st.lists(st.integers(0, LANES - 1), max_size=2, unique=True)):
            selected[LANES + lane] = str(draw(st.integers(0, 0xFFFF)))
        after = list(selected)
        for lane in range(LANES):
            if draw(st.booleans()):
                pattern = draw(st.sampled_from(OPERATORS))
                after[lane] = named(pattern.format(selected[lane], selected[LANES + lane]))
        regs = after
    params = ", ".join(
        f"{p}: u32" for p in [f"p{i}" for i in range(LANES)] + [f"q{i}" for i in range(LANES)]
    )
    body = "\n".join(lets)
    source = f"module placed;\ndpf placed({params}) {{\n{body}\n    push({', '.join(regs)});\n}}\n"
    return PlacedProgram(source, eus)


# `p1 & 0` folds to 0 and `hash<1>` of it to a constant that needed a third immediate,
# until the lane's HASH of 0 was offered again (.materialise).
HASH_OF_FOLDED_ZERO = PlacedProgram(
    "module placed;\ndpf placed(p0: u32, p1: u32, p2: u32, p3: u32, q0: u32, q1: u32, q2: u32, "
    "q3: u32) {\n    let v0 = p0 + 2;\n    let v1 = p1 & 0;\n    let v2 = p2 + q2;\n"
    "    let v3 = p3 + q3;\n    let v4 = hash<1>(v1);\n    let v5 = v2 + q2;\n"
    "    push(v0, v4, v5, v3, 4, 0, q2, 1);\n}\n",
    eus=2,
)


@settings(max_examples=300, deadline=None)
@given(program=placed_programs())
@example(program=HASH_OF_FOLDED_ZERO)
def test_every_dpf_derived_from_a_schedule_compiles_in_no_more_eus(program: PlacedProgram) -> None:
    try:
        compiled = compile_source(SourceFile("placed.dpf", program.source), OPTIONS)
    except DiagnosticError as exc:
        raise AssertionError(
            f"a DPF that fits in {program.eus} EUs was rejected:\n{program.source}\n"
            + "\n".join(f"{d.code} {d.message}" for d in exc.diagnostics)
        ) from None
    (unit,) = compiled.units
    assert unit.result.schedule.eus_used <= program.eus, program.source
