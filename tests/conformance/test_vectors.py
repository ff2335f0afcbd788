"""Every conformance vector gives its golden output bytes and memory words on the simulator
and on bmv2 (tests/conformance/vectors.py says what the vectors cover).

The golden files are the simulator's outcome (``DPFC_BLESS=1`` rewrites them from it); the
bmv2 run must equal them byte for byte, and the frames sent are kept beside them as pcap
files (``vectors/<name>.pcap``), which ``tcpdump -r`` or scapy read.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from dpfc.packet.layers import read_pcap, write_pcap
from tests.conformance.harness import Target, Vector, expected_counts, golden, run_vector
from tests.conformance.vectors import vectors
from tests.conftest import BLESS, assert_golden

HERE = Path(__file__).resolve().parent / "vectors"
VECTORS = vectors()


@pytest.mark.parametrize("vector", VECTORS, ids=[v.name for v in VECTORS])
def test_vector(target: Target, vector: Vector) -> None:
    expected_file = HERE / f"{vector.name}.json"
    counts = expected_counts(expected_file.read_text()) if expected_file.exists() else None
    run = run_vector(target, vector, counts)
    if target.name == "sim":
        assert_golden(expected_file, golden(run))
        pcap = HERE / f"{vector.name}.pcap"
        if BLESS:
            write_pcap(str(pcap), [frame for _, frame in run.frames])
        assert read_pcap(str(pcap)) == [frame for _, frame in run.frames]
    else:
        assert golden(run) == expected_file.read_text(), f"bmv2 differs from {expected_file}"


def test_the_vectors_cover_the_isa() -> None:
    names = {v.name for v in VECTORS}
    for op in ("add", "sub", "and", "or", "xor", "lsh", "rsh", "neg", "min", "max"):
        assert f"alu_{op}" in names
    for op in ("beq", "bset", "blt", "bgt", "bslt", "bsgt"):
        assert f"branch_{op}" in names
    for op in ("load", "store", "faadd", "faand", "faor", "famax", "famin"):
        assert f"mem_{op}_segment" in names
    for action in ("pass", "drop", "return", "forward_imm", "multicast", "set_port"):
        assert f"steer_{action}" in names
    assert sum(len(v.packets) for v in VECTORS) >= 500
