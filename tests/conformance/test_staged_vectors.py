"""Every conformance vector on the stage-structured program (v1model, on bmv2) against the
simulator, both with the profile :data:`~.staged_target.STAGED` (tofino1's shape in the
staged program's format).

Each vector runs on the simulator and on a simple_switch running the staged program,
deployed through its control plane; the outcomes (the frames that leave, ports and bytes,
and the memory words: :func:`~.harness.golden`) must be equal. What the program does not
run as the simulator does is listed with what happens instead, and the test checks that
it happens (a vector that starts to pass fails until its entry goes):

* :data:`REFUSED`: the deployment is refused before anything changes (the code);
* :data:`DROPPED`: in-packet code the program does not run: every packet is dropped;
* :data:`RANDOM`: RAND words, bmv2's generator: as many frames, of the same lengths.
"""

from __future__ import annotations

import pytest

from dpfc.switch import SwitchRefused
from tests.conformance.harness import Vector, expected_counts, golden, run_vector
from tests.conformance.staged_target import STAGED, StagedTarget
from tests.conformance.targets import SimTarget
from tests.conformance.vectors import vectors

pytestmark = pytest.mark.slow
VECTORS = vectors()
EGRESS = "DPF4022"  # no egress pipeline
UNSUPPORTED = "DPF4023"
REFUSED = {
    "egress_after_ingress_multicast": EGRESS,
    "egress_in_packet": EGRESS,
    "egress_in_switch": EGRESS,
    "egress_steering_refused": EGRESS,
    "header_fields_egress": EGRESS,
    "egress_next_pc_drop": EGRESS,
    "app_telemetry": EGRESS,
    "header_fields_default_dpf": UNSUPPORTED,  # LOAD_MD of an inner header field
    "header_fields_switch": UNSUPPORTED,
    "perm_default_dpf": UNSUPPORTED,
    "perm_pass_unauthorized": UNSUPPORTED,
    "app_flow_lb": UNSUPPORTED,  # LOAD_MD of inner header fields
}
DROPPED = {
    "header_fields_packet": "in-packet LOAD_MD of an inner header field",
}
# RAND words (prolog_rand pushes them, lb3's client picks a server by one)
RANDOM = {"prolog_rand", "app_lb3_client"}


@pytest.mark.parametrize("vector", VECTORS, ids=[v.name for v in VECTORS])
def test_staged_vector(staged: StagedTarget, vector: Vector) -> None:
    expected = golden(run_vector(SimTarget(STAGED), vector))
    staged.reset()
    if vector.name in REFUSED:
        with pytest.raises(SwitchRefused) as denied:
            run_vector(staged, vector)
        assert denied.value.code == REFUSED[vector.name], denied.value
        return
    # a dropped packet gives nothing to wait for (bmv2's receive would wait its timeout)
    counts = [0] * len(vector.packets) if vector.name in DROPPED else expected_counts(expected)
    run = run_vector(staged, vector, counts)
    if vector.name in DROPPED:
        assert all(out == [] for out in run.outputs)
    elif vector.name in RANDOM:
        want = run_vector(SimTarget(STAGED), vector).outputs
        shape = [sorted(len(frame) for _, frame in out) for out in run.outputs]
        assert shape == [sorted(len(frame) for _, frame in out) for out in want]
    else:
        assert golden(run) == expected


def test_the_lists_name_vectors() -> None:
    names = {v.name for v in VECTORS}
    listed = [*REFUSED, *DROPPED, *RANDOM]
    assert set(listed) <= names
    assert len(listed) == len(set(listed))
