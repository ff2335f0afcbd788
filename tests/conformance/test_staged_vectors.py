"""Every conformance vector on the stage-structured program (v1model, on bmv2) against the
simulator, both with the profile :data:`~.staged_target.STAGED` (tofino1's shape in the
staged program's format).

Each vector runs on the simulator and on a simple_switch running the staged program,
deployed through its control plane; the outcomes (the frames that leave, ports and bytes,
and the memory words: :func:`~.harness.golden`) must be equal, but for :data:`RANDOM`:
RAND words come from bmv2's generator, so those vectors must give as many frames, of the
same lengths.
"""

from __future__ import annotations

import pytest

from tests.conformance.harness import Vector, expected_counts, golden, run_vector
from tests.conformance.staged_target import STAGED, StagedTarget
from tests.conformance.targets import SimTarget
from tests.conformance.vectors import vectors

pytestmark = pytest.mark.slow
VECTORS = vectors()
# RAND words (prolog_rand pushes them, lb3's client picks a server by one)
RANDOM = {"prolog_rand", "app_lb3_client"}


@pytest.mark.parametrize("vector", VECTORS, ids=[v.name for v in VECTORS])
def test_staged_vector(staged: StagedTarget, vector: Vector) -> None:
    expected = golden(run_vector(SimTarget(STAGED), vector))
    staged.reset()
    run = run_vector(staged, vector, expected_counts(expected))
    if vector.name in RANDOM:
        want = run_vector(SimTarget(STAGED), vector).outputs
        shape = [sorted(len(frame) for _, frame in out) for out in run.outputs]
        assert shape == [sorted(len(frame) for _, frame in out) for out in want]
    else:
        assert golden(run) == expected


def test_the_lists_name_vectors() -> None:
    names = {v.name for v in VECTORS}
    assert names >= RANDOM
