"""The benchmark suite (``python -m dpfc.bench``) runs, prints its tables and writes
``results.json``; its workloads take the paths they are named after. Tiny packet counts
only, and no timing is ever asserted."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from dpfc.backends.p4.bmv2 import ToolchainMissing, compile_program, find_toolchain
from dpfc.backends.sim import Network, Switch
from dpfc.bench import workloads
from dpfc.bench.__main__ import main
from dpfc.bench.compile import SETS, compile_rows, format_compile_table
from dpfc.bench.engines import ENGINES, Engine
from dpfc.bench.link import link_rows
from dpfc.bench.p4 import ONE_TABLE_P4, one_table_baseline
from dpfc.bench.progress import Progress
from dpfc.packet import build_frame, build_inner
from dpfc.target import BUILTIN_PROFILES
from tests.conftest import ROOT

PROFILE = BUILTIN_PROFILES["tofino1"]
ROW_KEYS = {"suite", "what", "engine", "packets", "runs", "unit", "median", "min", "max"}
SIM_ROWS = [
    "counter, in-switch",
    "counter, in-packet",
    "cache_get hits, in-packet",
    "cache_get misses, in-packet",
    "lb3, in-packet",
    "lb3, in-switch",
    "paxos acceptor, in-packet",
    "paxos acceptor, in-switch",
    "counter, 1 tenant",
    "counter, 5 tenants",
    "counter, in-switch, Network loop",
    "cache_get hits, in-packet, Network loop",
]
SMALL = ["--packets", "3", "--runs", "1"]
# each workload row on each registered engine (the interpreter, then the JIT), then the
# interpreter's Network-loop rows
ENGINE_ROWS = [(what, engine) for what in SIM_ROWS[:-2] for engine in ("interpreter", "jit")] + [
    (what, "interpreter") for what in SIM_ROWS[-2:]
]


@pytest.fixture
def no_p4(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """p4c-bm2-ss and simple_switch are nowhere to be found."""
    empty = tmp_path / "no-p4"
    empty.mkdir()
    monkeypatch.setenv("DPFC_P4_PREFIX", str(empty))
    monkeypatch.setenv("PATH", str(empty))


@pytest.fixture
def one_example(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """The compile benchmark's examples are just counter.dpf (no Z3 time in the tests)."""
    directory = tmp_path / "examples" / "dpf"
    directory.mkdir(parents=True)
    (directory / "counter.dpf").write_text((ROOT / "examples/dpf/counter.dpf").read_text())
    monkeypatch.setitem(SETS, "examples", directory)
    return directory


def _results(path: Path) -> dict[str, Any]:
    document = json.loads(path.read_text())
    assert isinstance(document, dict)
    assert {"schema", "command", "date", "machine", "results", "skipped"} <= set(document)
    machine = document["machine"]
    assert {"cpu", "cores", "load_average", "python", "libraries"} <= set(machine)
    assert len(machine["load_average"]) == 3 and "z3-solver" in machine["libraries"]
    assert all(set(row) == ROW_KEYS for row in document["results"])
    return document


def _table_rows(out: str) -> list[tuple[str, str]]:
    """(what, engine) of each row of a results table (columns split on two spaces)."""
    rows = []
    for line in out.splitlines():
        cells = [c for c in line.split("  ") if c]
        if len(cells) == 8 and cells[-1] in ("pkt/s", "s"):
            rows.append((cells[0].strip(), cells[1].strip()))
    return rows


def test_sim_workloads_take_the_paths_they_are_named_after() -> None:
    expected = {
        "counter, in-switch": "pass",
        "counter, in-packet": "pass",
        "cache_get hits": "return_to_sender",
        "cache_get misses": "pass",
        "lb3": "forward",
        "paxos acceptor": "multicast",
        "tenants": "pass",
        "eu chain": "pass",
        "installed": "return_to_sender",
    }
    setups: dict[str, Callable[[], tuple[Network, Switch, list[bytes]]]] = {
        "counter, in-switch": lambda: workloads.counter(PROFILE),
        "counter, in-packet": lambda: workloads.counter(PROFILE, "packet"),
        "cache_get hits": lambda: workloads.cache_get(PROFILE, hits=True),
        "cache_get misses": lambda: workloads.cache_get(PROFILE, hits=False),
        "lb3": lambda: workloads.lb3(PROFILE, "switch"),
        "paxos acceptor": lambda: workloads.paxos_acceptor(PROFILE),
        "tenants": lambda: workloads.tenants(PROFILE, 300),
        "eu chain": lambda: workloads.eu_chain(PROFILE, 4),
        "installed": lambda: workloads.installed(PROFILE, 5),
    }
    for name, setup in setups.items():
        _, switch, frames = setup()
        verdicts = Counter(switch.process(f, 0).verdict for f in frames)
        assert set(verdicts) == {expected[name]}, name
    _, switch, frames = workloads.counter(PROFILE)
    switch.process(frames[3], 0)
    assert switch.control.read_memory(7, 0, 0, 3) == [1]
    # the many-tenant frames come from tenants spread over the whole range
    _, switch, frames = workloads.tenants(PROFILE, 300)
    assert len(frames) == workloads.FRAME_SAMPLE
    assert switch.control.stats(300).packets == 0
    switch.process(frames[-1], 0)
    assert switch.control.stats(300).packets == 1
    # every EU of the chain counts
    _, switch, frames = workloads.eu_chain(PROFILE, 3)
    switch.process(frames[2], 0)
    assert [switch.control.read_memory(7, eu, 0, 2)[0] for eu in range(3)] == [1, 1, 1]


def test_sim_prints_a_row_per_workload_and_writes_results(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], no_p4: None
) -> None:
    out_file = tmp_path / "bench" / "results.json"
    args = ["--results", str(out_file), "sim", *SMALL, "--many-tenants", "5"]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert out.startswith("SwitchVM simulator throughput (pkt/s): tofino1")
    assert _table_rows(out) == ENGINE_ROWS
    assert "skipped: bmv2: " in out and "not found" in out
    document = _results(out_file)
    assert document["command"] == "sim"
    rows = document["results"]
    assert isinstance(rows, list) and [(r["what"], r["engine"]) for r in rows] == ENGINE_ROWS
    assert all(r["packets"] == 3 and r["runs"] == 1 and r["unit"] == "pkt/s" for r in rows)
    assert all(0 < r["min"] <= r["median"] <= r["max"] for r in rows)
    assert document["skipped"] == [
        {"suite": "sim", "what": "bmv2", "reason": document["skipped"][0]["reason"]}
    ]


def test_a_registered_engine_gets_its_own_rows_and_a_missing_one_is_skipped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """How the JIT will slot in: one more registered engine, one more row per workload."""
    monkeypatch.setitem(
        ENGINES, "twin", Engine("twin", "the interpreter again", ENGINES["interpreter"].prepare)
    )
    monkeypatch.setitem(
        ENGINES,
        "absent",
        Engine("absent", "not here", ENGINES["interpreter"].prepare, lambda: "no such thing"),
    )
    args = ["--results", str(tmp_path / "r.json"), "sim", *SMALL, "--many-tenants", "2"]
    assert main([*args, "--no-bmv2"]) == 0
    out = capsys.readouterr().out
    engines = Counter(engine for _, engine in _table_rows(out))
    assert engines == {"interpreter": 12, "jit": 10, "twin": 10}
    assert "skipped: absent: no such thing" in out
    assert main([*args, "--no-bmv2", "--engine", "twin"]) == 0
    assert {engine for _, engine in _table_rows(capsys.readouterr().out)} == {"twin"}


def test_scaling_prints_each_axis_and_draws_the_plot(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("matplotlib", reason="the scaling plot needs matplotlib (dpfc[bench])")
    plot = tmp_path / "scaling.png"
    args = ["--results", str(tmp_path / "r.json"), "scaling", *SMALL]
    assert main([*args, "--max-tenants", "10", "--max-dpfs", "3", "--plot", str(plot)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("How the simulator's cost grows with the work")
    for axis in ("EUs", "tenants", "installed DPFs"):
        assert any(line.strip().startswith(axis + "  engine") for line in out.splitlines())
    assert plot.read_bytes().startswith(b"\x89PNG")
    rows = _results(tmp_path / "r.json")["results"]
    assert isinstance(rows, list)
    points = [
        "EUs = 1", "EUs = 2", "EUs = 3", "EUs = 4", "tenants = 1", "tenants = 10",
        "installed DPFs = 1", "installed DPFs = 3",
    ]  # fmt: skip
    assert [(r["what"], r["engine"]) for r in rows] == [
        (point, engine) for point in points for engine in ("interpreter", "jit")
    ]


def test_scaling_without_matplotlib_reports_the_plot_skipped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib raises
    plot = tmp_path / "scaling.png"
    args = ["--results", str(tmp_path / "r.json"), "scaling", *SMALL, "--max-tenants", "1"]
    assert main([*args, "--max-dpfs", "1", "--plot", str(plot)]) == 0
    assert "skipped: plot: matplotlib is not installed" in capsys.readouterr().out
    assert not plot.exists()
    skipped = _results(tmp_path / "r.json")["skipped"]
    assert isinstance(skipped, list) and [s["what"] for s in skipped] == ["plot"]


def test_p4_without_its_toolchain_is_reported_skipped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], no_p4: None
) -> None:
    with pytest.raises(SystemExit) as info:
        main(["--results", str(tmp_path / "r.json"), "p4", *SMALL])
    assert info.value.code == 1
    captured = capsys.readouterr()
    assert captured.out.startswith("skipped: bmv2: p4c-bm2-ss")
    assert "dpfc.bench p4: bmv2 skipped" in captured.err
    skipped = _results(tmp_path / "r.json")["skipped"]
    assert isinstance(skipped, list) and skipped[0]["suite"] == "p4"


def test_all_runs_every_suite_that_is_present(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], no_p4: None, one_example: Path
) -> None:
    args = ["--results", str(tmp_path / "r.json"), "all", *SMALL, "--many-tenants", "2"]
    args += ["--max-tenants", "2", "--max-dpfs", "2", "--no-plot", "--compile-runs", "1"]
    assert main([*args, "--dpfs", "4", "--tenants", "2"]) == 0
    out = capsys.readouterr().out
    assert "SwitchVM simulator throughput" in out and "cost grows with the work" in out
    assert "Compile time and schedules: tofino1, examples/dpf" in out
    assert "dpfc link: 4 distinct DPFs of 2 tenants" in out
    assert "dpfc start-up (s)" in out
    document = _results(tmp_path / "r.json")
    rows = document["results"]
    assert isinstance(rows, list)
    suites = Counter(r["suite"] for r in rows)
    assert suites == {"sim": 22, "scaling": 16, "compile": 1, "link": 3, "startup": 4}
    compiled = next(r for r in rows if r["suite"] == "compile")
    assert compiled["what"] == "examples/dpf/counter.dpf: counter" and compiled["unit"] == "s"
    assert [s["what"] for s in document["skipped"]] == ["bmv2"]


def test_compile_and_link_write_their_rows(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], one_example: Path
) -> None:
    results = tmp_path / "r.json"
    assert main(["--results", str(results), "compile", "--set", "examples", "--runs", "1"]) == 0
    assert "counter" in capsys.readouterr().out
    rows = _results(results)["results"]
    assert isinstance(rows, list) and [r["engine"] for r in rows] == ["dpfc (tofino1)"]
    assert (
        main(["--results", str(results), "link", "--dpfs", "6", "--tenants", "2", "--runs", "1"])
        == 0
    )
    out = capsys.readouterr().out
    assert out.startswith("dpfc link: 6 distinct DPFs of 2 tenants, tofino1")
    assert "peak memory of one link" in out
    rows = _results(results)["results"]
    assert isinstance(rows, list) and [r["what"].split(":")[0] for r in rows] == [
        "link", "write bytes", "read bytes",
    ]  # fmt: skip


def test_the_progress_bar_is_drawn_on_a_terminal_only() -> None:
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    quiet = io.StringIO()
    bar = Progress(4, quiet)
    bar.start("counter")
    bar.advance()
    bar.close()
    assert quiet.getvalue() == ""
    terminal = Terminal()
    bar = Progress(4, terminal)
    bar.start("counter")
    bar.advance()
    bar.advance()
    bar.start("lb3")
    assert terminal.getvalue().split("\r")[1:] == [
        "[........................]   0/4 counter",
        "[############............]   2/4 lb3    ",
    ]
    bar.close()
    width = len("[........................]   0/4 counter")
    assert terminal.getvalue().endswith("\r" + " " * width + "\r")  # the bar erased


def test_bad_options_and_paths_are_messages(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as info:
        main(["sim", "--packets", "0"])
    assert info.value.code == 2
    assert "--packets must be at least 1" in capsys.readouterr().err
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(SystemExit) as info:
        main(["--results", str(blocker / "r.json"), "link", "--dpfs", "1", "--runs", "1"])
    assert info.value.code == 1
    assert f"cannot write {blocker / 'r.json'}" in capsys.readouterr().err


def test_an_unwritable_plot_and_a_missing_program_are_messages(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("matplotlib", reason="the scaling plot needs matplotlib (dpfc[bench])")
    blocker = tmp_path / "file"
    blocker.write_text("")
    args = ["--results", str(tmp_path / "r.json"), "scaling", *SMALL, "--max-tenants", "1"]
    with pytest.raises(SystemExit) as info:
        main([*args, "--max-dpfs", "1", "--plot", str(blocker / "scaling.png")])
    assert info.value.code == 1
    assert f"cannot write {blocker / 'scaling.png'}" in capsys.readouterr().err
    with pytest.raises(SystemExit) as info:
        main(["p4", "--json", str(tmp_path / "none.json")])
    assert info.value.code == 2
    assert "none.json: no such file" in capsys.readouterr().err


def test_sizes_beyond_the_target_are_its_messages(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["--results", str(tmp_path / "r.json"), "sim", *SMALL, "--no-bmv2"]
    with pytest.raises(SystemExit) as info:
        main([*args, "--many-tenants", "40000"])
    assert info.value.code == 1
    err = capsys.readouterr().err
    assert err.startswith("dpfc.bench sim: ") and "permission table of pipe 0 is full" in err


def test_startup_prints_a_row_per_command(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["--results", str(tmp_path / "r.json"), "startup", "--runs", "1"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("dpfc start-up (s): a fresh process per run, 1 run(s)")
    for what in ("python -c pass", "dpfc --version", "dpfc --help", "dpfc compile --help"):
        assert any(line.startswith(what) and line.endswith("  s") for line in lines), what
    rows = _results(tmp_path / "r.json")["results"]
    assert isinstance(rows, list) and len(rows) == 4
    assert {(r["suite"], r["unit"], r["runs"]) for r in rows} == {("startup", "s", 1)}


def test_bench_module_runs_as_a_program(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "dpfc.bench", "sim", *SMALL, "--many-tenants", "2", "--no-bmv2"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert "cache_get" in result.stdout and result.stderr == ""  # no bar: not a terminal
    assert _results(tmp_path / "bench" / "results.json")["command"] == "sim"


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


def test_link_bench_links_distinct_dpfs() -> None:
    rows, image, size, peak = link_rows(dpfs=12, tenants=3, runs=1)
    assert [r.step for r in rows] == ["link", "write bytes", "read bytes"]
    assert all(r.min_s <= r.seconds <= r.max_s for r in rows)
    assert len(image.dpfs) == 12 and len(image.memory) == 3 and size > 0 and peak > 0
    # each DPF's prolog and first EU bundle are its own; the rest is shared by all twelve
    assert sum(1 for c in image.code if c.refs == 12) == 4


def test_the_one_table_baseline_forwards_every_frame_on_bmv2(tmp_path: Path) -> None:
    """The bmv2 baseline of ``dpfc.bench p4`` is a real one-table program: p4c-bm2-ss
    compiles it, and simple_switch sends each frame out unchanged on the port its one
    table entry names (a frame dropped or rewritten would not be the baseline)."""
    try:
        toolchain = find_toolchain()
    except ToolchainMissing as missing:
        pytest.skip(f"bmv2 not run: {missing}")
    source = tmp_path / "one_table.p4"
    source.write_text(ONE_TABLE_P4, encoding="utf-8")
    program = compile_program(toolchain, source, tmp_path / "one_table.json").json
    frames = [
        build_frame(tenant_id=7, options=b"", inner=build_inner(bytes([n]))) for n in range(5)
    ]
    baseline = one_table_baseline(toolchain, program, frames, runs=1)
    assert (baseline.forwarded, baseline.packets) == (5, 5)
    assert baseline.pps > 0


def test_the_tofino_table_gives_the_figures_or_the_first_error() -> None:
    from dpfc.backends.p4.barefoot import BarefootRun, read_resources
    from dpfc.bench.tofino import TofinoRow, format_tofino_table

    logs = ROOT / "tests" / "golden" / "p4" / "barefoot"
    found = read_resources(logs / "resources.json", logs / "phv.json")
    refused = BarefootRun(
        ("p4c-barefoot",), 12.25, ("/tmp/dpfc-tofino-x/tofino1.p4(6472): error: no varbit",), None
    )
    text = format_tofino_table(
        [
            TofinoRow("tofino1", "tofino", refused),
            TofinoRow("tofino2", "tofino2", BarefootRun(("p4c-barefoot",), 3.0, (), found)),
        ]
    )
    assert "tofino1 on tofino: 12.2 s, refused: tofino1.p4(6472): error: no varbit" in text
    assert "tofino2 on tofino2: 3.0 s, 2 of 3 stages" in text
    assert "  logical tables                    5 /      48   10.4%" in text


def test_tna_needs_tofino_and_an_existing_file(capsys: pytest.CaptureFixture[str]) -> None:
    from dpfc.bench.__main__ import main

    for argv, message in (
        (["p4", "--tna", "x.p4"], "--tna needs --tofino"),
        (["p4", "--tofino", "--tna", "/no/such.p4"], "--tna /no/such.p4: no such file"),
    ):
        with pytest.raises(SystemExit) as stopped:
            main(argv)
        assert stopped.value.code == 2
        assert message in capsys.readouterr().err
