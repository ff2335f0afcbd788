"""Random compiled programs give the same bytes and memory on bmv2 as on the simulator.

Programs are :mod:`tests.dpf_programs`' random well-typed DPFs (with a second DPF to chain
to), compiled by dpfc, linked and deployed to both targets; each gets :data:`PACKETS`
packets with random stacks after its arrays are filled with random words. Hypothesis runs
with a fixed seed (``derandomize``), 30 programs (``harness.RANDOM_PROGRAMS``): at least 500 packets per
run. Programs that read ``meta.timestamp`` are skipped — the simulator takes it from its
caller, bmv2 from its clock (docs/p4.md, "Differences"); ``queue_depth`` is 0 in both
ingresses.
"""

from __future__ import annotations

from hypothesis import given, reject

from tests.conformance.harness import RANDOM_PROGRAMS, agrees_with_simulator, program_vector
from tests.conformance.targets import Bmv2Target
from tests.dpf_programs import GeneratedProgram, programs

PACKETS = 17
RUN = {"programs": 0, "packets": 0}


@RANDOM_PROGRAMS
@given(program=programs())
def _agree(bmv2: Bmv2Target, program: GeneratedProgram) -> None:
    if "meta.timestamp" in program.source:
        reject()
    agrees_with_simulator(bmv2, program_vector(program, PACKETS))
    RUN["programs"] += 1
    RUN["packets"] += PACKETS


def test_random_programs_agree(bmv2: Bmv2Target) -> None:
    """Every example of the property, then: at least 500 packets went through both (in one
    test, so that parallel workers cannot part the count from the runs)."""
    _agree(bmv2)
    print(f"random conformance: {RUN['programs']} programs, {RUN['packets']} packets")
    assert RUN["packets"] >= 500
