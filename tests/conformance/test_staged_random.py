"""Random compiled programs give the same bytes and memory on the stage-structured program
(v1model, on bmv2) as on the simulator, both with :data:`~.staged_target.STAGED`.

As tests/conformance/test_random.py, on the staged program: 30 random
well-typed DPFs (:mod:`tests.dpf_programs`, with a second DPF to chain to) compiled for the
profile, linked, deployed to both, :data:`PACKETS` packets each (hypothesis, fixed seed).
Programs whose words the two cannot agree on are left out, each for its reason:
``meta.timestamp`` (the clocks differ) and RAND words (bmv2's generator).
"""

from __future__ import annotations

import pytest
from hypothesis import given, reject

from tests.conformance.harness import RANDOM_PROGRAMS, agrees_with_simulator, program_vector
from tests.conformance.staged_target import StagedTarget
from tests.dpf_programs import GeneratedProgram, programs

pytestmark = pytest.mark.slow
PACKETS = 17
RUN = {"programs": 0, "packets": 0}
LEFT_OUT = ("meta.timestamp", "rand(")


@RANDOM_PROGRAMS
@given(program=programs())
def _agree(staged: StagedTarget, program: GeneratedProgram) -> None:
    if any(text in program.source for text in LEFT_OUT):
        reject()
    agrees_with_simulator(staged, program_vector(program, PACKETS))
    RUN["programs"] += 1
    RUN["packets"] += PACKETS


def test_random_programs_agree_on_the_staged_program(staged: StagedTarget) -> None:
    """Every example of the property, then: at least 500 packets went through both."""
    _agree(staged)
    print(f"random conformance (staged): {RUN['programs']} programs, {RUN['packets']} packets")
    assert RUN["packets"] >= 500
