"""Random compiled programs give the same bytes and memory on bmv2 as on the simulator.

Programs are :mod:`tests.dpf_programs`' random well-typed DPFs (with a second DPF to chain
to), compiled by dpfc, linked and deployed to both targets; each gets :data:`PACKETS`
packets with random stacks after its arrays are filled with random words. Hypothesis runs
with a fixed seed (``derandomize``), :data:`PROGRAMS` programs: at least 500 packets per
run. Programs that read ``meta.timestamp`` are skipped — the simulator takes it from its
caller, bmv2 from its clock (docs/p4.md, "Differences"); ``queue_depth`` is 0 in both
ingresses.
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, reject, settings

from dpfc.diagnostics import DiagnosticError
from tests.conformance.harness import expected_counts, golden, program_vector, run_vector
from tests.conformance.targets import Bmv2Target, SimTarget
from tests.dpf_programs import GeneratedProgram, programs

PROGRAMS = 30
PACKETS = 17
RUN = {"programs": 0, "packets": 0}


@settings(
    max_examples=PROGRAMS,
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
@given(program=programs())
def test_random_programs_agree(bmv2: Bmv2Target, program: GeneratedProgram) -> None:
    if "meta.timestamp" in program.source:
        reject()
    vector = program_vector(program, PACKETS)
    sim = SimTarget(bmv2.profile)
    try:
        expected = golden(run_vector(sim, vector))
    except DiagnosticError:
        reject()  # the compiler refused it (the differential tests check how)
    bmv2.reset()
    got = golden(run_vector(bmv2, vector, expected_counts(expected)))
    assert got == expected, program.source
    RUN["programs"] += 1
    RUN["packets"] += PACKETS


def test_random_runs_covered_enough_packets(bmv2: Bmv2Target) -> None:
    """Runs after the property (file order): at least 500 packets went through both."""
    print(f"random conformance: {RUN['programs']} programs, {RUN['packets']} packets")
    assert RUN["packets"] >= 500
