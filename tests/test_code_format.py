"""Format version 2 of the in-packet code runs exactly as version 1 runs.

For random runnable in-packet programs (every stage holds one or two bundles and every PC
names one of them, so the code runs from the prolog to the epilog; bundles drawn by
:mod:`tests.strategies`) on every profile of :mod:`tests.strategies` and on its copy with
``code_format = 2`` (docs/encoding.md §9), one packet with the same input stack, memory and
RAND word goes through a fresh simulated switch, and through the llvmlite JIT on an
identical twin (:func:`tests.sim_harness.run_compiled`, which holds the JIT's pass,
counters and memory to the interpreter's). What the switch does is the same in both
versions: verdict, reason, output port, the output stack and pointer (decoded from the
outgoing frame), whether the code is still carried, the return to the sender, and every
mapped memory word.

Two differences are the format's and are left out: the packet's length (a program that
reads the ``packet_length`` metadata sees the larger version-2 frame), and an outgoing
header that fits 252 bytes in version 1 but not in the larger version 2 (the switch
drops it, as it must).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import replace

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from dpfc.backends.jit import missing as jit_missing
from dpfc.ir.interp import Inputs
from dpfc.isa.bundle import Bundle, CodeImage
from dpfc.isa.opcodes import SelectorKind
from dpfc.isa.placement import check_image
from dpfc.machine import program_from_image
from dpfc.machine.program import MachineProgram
from dpfc.target import TargetProfile
from tests.sim_harness import ArraySpec, SimOutcome, run_compiled
from tests.strategies import (
    PROFILE_NAMES,
    PROFILES,
    TAGGED_PROFILES,
    draw_bundle,
    draw_epilog,
    fits,
    words,
)

JIT = jit_missing() is None
# Every (EU, lane) maps words 0..WORDS_MAPPED-1 (the strategies' boundary words 0..256 among
# them: an unmapped access is reported, which the JIT leaves to the interpreter); the first
# INITIAL_WORDS hold random values.
WORDS_MAPPED = 260
INITIAL_WORDS = 4
OUTCOMES: Counter[str] = Counter()


@st.composite
def runnable_programs(draw: st.DrawFn) -> MachineProgram:
    """In-packet code with one or two bundles in every stage, every PC in the packet."""
    profile = draw(st.sampled_from([PROFILES[name] for name in PROFILE_NAMES]))
    counts = [draw(st.integers(1, 2)) for _ in range(profile.num_eus + 2)]
    epilogs = counts[-1]
    image = CodeImage(
        tuple(
            draw_bundle(draw, profile, prolog=True, next_count=counts[1], switch=False)
            for _ in range(counts[0])
        ),
        tuple(
            tuple(
                draw_bundle(
                    draw, profile, next_count=counts[eu + 2], epilog_count=epilogs, switch=False
                )
                for _ in range(counts[eu + 1])
            )
            for eu in range(profile.num_eus)
        ),
        tuple(
            draw_epilog(draw, profile, prolog_count=counts[0], switch=False) for _ in range(epilogs)
        ),
    )
    assume(check_image(image, profile) == [])
    program = program_from_image(image, profile, app_id=draw(words()))
    assume(fits(program.header(), TAGGED_PROFILES[profile.name]))
    return program


def _reads_packet_length(program: MachineProgram) -> bool:
    field = program.profile.metadata_by_name("packet_length")
    if field is None:
        return False
    return any(
        sel.kind is SelectorKind.LOAD_MD and sel.value == field.index
        for placed in program.bundles
        if isinstance(placed.bundle, Bundle)
        for sel in placed.bundle.selectors
    )


def _arrays(profile: TargetProfile) -> list[ArraySpec]:
    return [
        ArraySpec(f"m{eu}_{lane}", WORDS_MAPPED, eu, lane)
        for eu in range(profile.num_eus)
        for lane in range(profile.lanes)
    ]


def _too_large(outcome: SimOutcome) -> bool:
    """The switch dropped the packet because its outgoing options exceed Geneve's limit."""
    return outcome.verdict == "drop" and "252" in outcome.reason


@pytest.fixture(scope="module", autouse=True)
def _print_outcomes() -> Iterator[None]:
    yield
    print("\nformat 2 against format 1, outcomes:", dict(OUTCOMES.most_common()))


@given(runnable_programs(), st.data())
def test_a_format_2_packet_runs_as_its_format_1_packet(
    program: MachineProgram, data: st.DataObject
) -> None:
    profile = program.profile
    assume(not _reads_packet_length(program))
    arrays = _arrays(profile)
    stack = data.draw(st.lists(words(), max_size=profile.stack_max_depth))
    memory = {
        spec.name: {index: data.draw(words()) for index in range(INITIAL_WORDS)} for spec in arrays
    }
    inputs = Inputs(stack=tuple(stack), memory=memory, rand=(data.draw(words()),))
    tagged = replace(program, profile=TAGGED_PROFILES[profile.name])
    # the JIT compiles every new program (about 0.1 s): one example in eight runs through it,
    # the others through the interpreter (the JIT's own version-2 parser is also pinned by
    # tests/test_jit.py on the bench workloads)
    jit = JIT and data.draw(st.integers(0, 7)) == 0
    first = run_compiled(program, arrays, inputs, jit=jit)
    second = run_compiled(tagged, arrays, inputs, jit=jit)
    assume(first is not None and second is not None)  # the code and stack fit a packet
    assert first is not None and second is not None
    same = ["verdict", "reason", "port", "stack", "dpf_ptr", "code_present", "returned"]
    if _too_large(second):  # the reason gives the sizes, which differ
        assume(_too_large(first))
        same.remove("reason")
    assert {k: getattr(second, k) for k in same} == {k: getattr(first, k) for k in same}
    assert second.memory == first.memory
    OUTCOMES[first.verdict if first.verdict != "drop" else first.reason.split(":")[0]] += 1
    assert second.code_bytes >= first.code_bytes
