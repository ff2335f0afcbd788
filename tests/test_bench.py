"""Smoke test of ``python -m dpfc.bench sim``: it runs and prints its table (no timings checked)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from dpfc.bench import cache_setup, counter_setup, format_table, simulator_rows
from dpfc.bench.__main__ import main
from dpfc.bench.compile import compile_rows, format_compile_table
from dpfc.bench.link import link_rows
from dpfc.target import BUILTIN_PROFILES
from tests.conftest import ROOT


def test_bench_prints_the_table(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sim", "--packets", "3", "--runs", "1"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("SwitchVM simulator throughput: tofino1")
    assert lines[1].split() == ["DPF", "placement", "case", "switch.process", "Network", "loop"]
    rows = [line.split()[:3] for line in lines[3:]]
    assert rows == [
        ["counter", "in-switch", "per-ID"],
        ["cache_get", "in-packet", "hits"],
        ["cache_get", "in-packet", "misses"],
    ]
    assert all(line.count("pkt/s") == 2 for line in lines[3:])


def test_bench_module_runs_as_a_program() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "dpfc.bench", "sim", "--packets", "2", "--runs", "1"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert "cache_get" in result.stdout


def test_bench_rejects_zero_packets(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["sim", "--packets", "0"])
    assert info.value.code == 2
    assert "at least 1" in capsys.readouterr().err


def test_bench_workloads_do_what_they_say() -> None:
    """The benchmark measures the intended paths: counts, hits returned, misses passed."""
    profile = BUILTIN_PROFILES["tofino1"]
    _, switch, frames = counter_setup(profile)
    assert switch.process(frames[3], 0).verdict == "pass"
    assert switch.control.read_memory(7, 0, 0, 3) == [1]
    _, switch, frames = cache_setup(profile, hits=True)
    assert {switch.process(f, 0).verdict for f in frames} == {"return_to_sender"}
    _, switch, frames = cache_setup(profile, hits=False)
    assert {switch.process(f, 0).verdict for f in frames} == {"pass"}
    rows = simulator_rows(packets=2, runs=1)
    assert len(rows) == 3 and all(r.process_pps > 0 and r.network_pps > 0 for r in rows)
    assert "pkt/s" in format_table(rows, packets=2, runs=1)


def test_compile_bench_prints_its_table(tmp_path: Path) -> None:
    (tmp_path / "counter.dpf").write_text((ROOT / "examples/dpf/counter.dpf").read_text())
    rows = compile_rows(runs=1, directory=tmp_path)
    assert [(r.dpf, r.eus, r.greedy_eus, r.proof) for r in rows] == [("counter", 1, 1, "one EU")]
    (tmp_path / "deep.dpf").write_text(
        "module deep;\nsegment array a: u32[4];\nsegment array b: u32[4];\n"
        "segment array c: u32[4];\ndpf f(x: u32) { push(c[b[a[x]]]); }\n"
    )
    rows = compile_rows(runs=1, directory=tmp_path)
    assert rows[1].module == "deep" and rows[1].error == "DPF6026"
    table = format_compile_table(rows, runs=1)
    assert table.splitlines()[1].split()[:3] == ["module", "DPF", "compile"]
    assert "1 DPFs in 1 modules compiled, 1 modules rejected (deep)" in table
    assert "EU count proven minimal: 1/1; greedy fewer EUs than the result: never" in table
    markdown = format_compile_table(rows, runs=1, markdown=True)
    assert markdown.startswith("| module | DPF |")


def test_link_bench_links_distinct_dpfs_and_prints_its_table(
    capsys: pytest.CaptureFixture[str],
) -> None:
    rows, image, size, peak = link_rows(dpfs=12, tenants=3, runs=1)
    assert [r.step for r in rows] == ["link", "write bytes", "read bytes"]
    assert len(image.dpfs) == 12 and len(image.memory) == 3 and size > 0 and peak > 0
    # each DPF's prolog and first EU bundle are its own; the rest is shared by all twelve
    assert sum(1 for c in image.code if c.refs == 12) == 4
    assert main(["link", "--dpfs", "6", "--tenants", "2", "--runs", "1"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("dpfc link: 6 distinct DPFs of 2 tenants, tofino1")
    assert "peak memory of one link" in out
