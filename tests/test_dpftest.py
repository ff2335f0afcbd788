"""``dpfc test``: the example test files, a golden of failing expectations, every option,
and the test-file error corpus.

* Every example DPF (``examples/dpf/*.dpf``, ``examples/scenarios/*.dpf``) has a test file
  in ``examples/tests/`` that installs it, and every test file there passes on the
  simulator, on the JIT (where llvmlite runs) and through the device path on a simulated
  switch (``--switch sim://``: cases a device cannot hold are skipped, none fails).
* ``tests/dpftest/wrong.toml`` holds deliberately wrong expectations: exit 1, and the text,
  JSON and JUnit XML are golden files (``tests/golden/dpftest/``).
* Inputs reach the DPF (switch metadata: ``tests/dpftest/metadata.toml``), ``--trace``
  prints the traces of the failing cases only and ``--trace-all`` of every case, a file that
  cannot be read does not stop the others.
* Every file of ``tests/dpftest_errors/`` is one mistake: exit 1, its golden stderr (with
  the file's line), never a traceback. ``DPFC_BLESS=1`` rewrites goldens.
"""

from __future__ import annotations

import gc
import json
import re
import warnings
from pathlib import Path
from xml.etree import ElementTree

import pytest
from click.testing import CliRunner, Result

from dpfc.backends import jit as native
from dpfc.backends.scenario import ScenarioError, load_scenario
from dpfc.backends.testing.build import TEST_KEYS
from dpfc.backends.testing.spec import CASE_KEYS, EXPECT_KEYS, OUTPUT_KEYS, PACKET_KEYS
from dpfc.cli.main import main
from dpfc.driver import CompileOptions, compile_source
from dpfc.switch import TENANT_COUNTERS, Destination
from tests.conftest import ROOT, Invoke, assert_golden, dpfc_in

EXAMPLES = ROOT / "examples" / "tests"
WRONG = "tests/dpftest/wrong.toml"
GOLDEN = ROOT / "tests" / "golden" / "dpftest"
ERRORS = ROOT / "tests" / "dpftest_errors"
CORPUS = sorted(ERRORS.glob("*.toml"))
EXPECT = re.compile(r"^# expect (DPF\d{4}): \S")
SUMMARY = re.compile(r"^(\d+) cases?: (\d+) passed")


@pytest.fixture
def run(monkeypatch: pytest.MonkeyPatch) -> Invoke:
    """``dpfc ARGS...`` from the repository root (paths in the output stay relative)."""
    return dpfc_in(ROOT, monkeypatch)


def clean(result: Result, code: int) -> Result:
    assert result.exit_code == code, f"exit {result.exit_code}\n{result.stdout}\n{result.stderr}"
    assert "Traceback" not in result.output and "internal compiler error" not in result.stderr
    return result


# -- the examples ---------------------------------------------------------------------------------


def example_dpfs() -> list[tuple[Path, Path]]:
    """Every example DPF and the test file it must have."""
    examples = ROOT / "examples"
    dpfs = [*(examples / "dpf").glob("*.dpf"), *(examples / "scenarios").glob("*.dpf")]
    assembly = [*(examples / "asm").glob("*.dpfasm"), *(examples / "scenarios").glob("*.dpfasm")]
    return sorted(
        [(path, EXAMPLES / f"{path.stem}.toml") for path in dpfs]
        + [(path, EXAMPLES / "asm" / f"{path.stem}.toml") for path in assembly]
    )


@pytest.mark.parametrize(("dpf", "test_file"), example_dpfs(), ids=lambda p: p.name)
def test_every_example_dpf_has_a_test_file_that_installs_it(dpf: Path, test_file: Path) -> None:
    assert test_file.exists(), f"{dpf.name} has no test file {test_file.relative_to(ROOT)}"
    named = re.findall(r'"([^"]+\.dpf(?:asm)?)"', test_file.read_text())
    assert any((test_file.parent / name).resolve() == dpf.resolve() for name in named)


@pytest.mark.parametrize("engine", ["sim", "jit"])
def test_every_example_test_passes(run: Invoke, engine: str) -> None:
    if engine == "jit" and native.missing() is not None:
        pytest.skip(f"the JIT does not run here: {native.missing()}")
    args = ("--jit",) if engine == "jit" else ()
    result = clean(run("test", "examples/tests", *args, "--json"), 0)
    data = json.loads(result.stdout)
    summary = data["summary"]
    assert summary["pass"] >= 70 and summary["files"] == len(example_dpfs())
    assert summary["fail"] == summary["error"] == summary["skip"] == 0
    assert data["target"] == engine
    if engine == "jit":  # the JIT ran passes natively, not only handed them over
        native_passes = sum(
            c.get("jit", {}).get("native", 0) for f in data["files"] for c in f["cases"]
        )
        assert native_passes > 50


def test_the_examples_through_the_device_path(run: Invoke) -> None:
    """``--switch sim://``: each case deployed on a switch through the control protocol, as
    on bmv2; cases a device cannot hold are skipped with the reason, the others pass."""
    result = clean(run("test", "examples/tests", "--switch", "sim://", "-q"), 0)
    assert "FAIL" not in result.stdout
    summary = SUMMARY.match(result.stdout.splitlines()[-1])
    assert summary is not None and int(summary.group(2)) >= 35
    assert "skipped" in result.stdout.splitlines()[-1]
    verbose = clean(run("test", "examples/tests/kvs.toml", "--switch", "sim://"), 0)
    assert "skipped: switch sw has 2 pipes; a device runs one" in verbose.stdout


def test_switch_metadata_reaches_the_dpf(run: Invoke) -> None:
    result = clean(run("test", "tests/dpftest/metadata.toml"), 0)
    assert result.stdout.endswith("6 cases: 6 passed (1 file, on sim)\n")


# -- failing expectations ---------------------------------------------------------------------


def test_wrong_expectations_exit_1_with_a_diff_per_field(run: Invoke) -> None:
    result = clean(run("test", WRONG), 1)
    assert result.stderr == ""
    assert_golden(GOLDEN / "wrong.txt", result.stdout)
    assert result.stdout.splitlines()[0].startswith("PASS ")
    assert "    expected [0x5, 0x1]\n    got      [0x5, 0x0]\n" in result.stdout
    assert result.stdout.endswith("4 cases: 1 passed, 3 failed (1 file, on sim)\n")


def test_wrong_expectations_as_json_and_junit(run: Invoke, tmp_path: Path) -> None:
    report = tmp_path / "junit.xml"
    result = clean(run("test", WRONG, "--json", "--junit-xml", str(report)), 1)
    assert_golden(GOLDEN / "wrong.json", result.stdout)
    data = json.loads(result.stdout)
    (file,) = data["files"]
    assert [c["status"] for c in file["cases"]] == ["pass", "fail", "fail", "fail"]
    stack = file["cases"][1]["packets"][0]["mismatches"][2]
    assert (stack["what"], stack["expected"], stack["got"], stack["line"]) == (
        "stack",
        [5, 1],
        [5, 0],
        25,
    )
    assert_golden(GOLDEN / "wrong.xml", report.read_text())
    suites = ElementTree.parse(report).getroot()
    assert (suites.get("tests"), suites.get("failures"), suites.get("errors")) == ("4", "3", "0")
    failures = suites.findall("./testsuite/testcase/failure")
    assert len(failures) == 3 and "expected drop" in (failures[0].text or "")
    assert f"wrote {report}" in result.stderr


def test_trace_shows_the_failing_cases_only(run: Invoke) -> None:
    traced = clean(run("test", WRONG, "--trace"), 1).stdout
    blocks = traced.split("\nFAIL ")
    assert "| pass 1 (packet 1)" not in blocks[0]  # the passing case
    assert all("    | pass 1 (packet 1) at sw pipe 0 port 0" in block for block in blocks[1:])
    assert "    |   prolog @switch:0 in " in blocks[1]  # with the DPF it belongs to
    every = clean(run("test", WRONG, "--trace-all"), 1).stdout
    assert "    |   prolog @switch:0 in " in every.split("\nFAIL ")[0]
    quiet = clean(run("test", WRONG, "-q"), 1).stdout
    assert not quiet.startswith("PASS") and quiet.count("FAIL ") == 3


def test_a_bad_file_does_not_stop_the_others(run: Invoke) -> None:
    result = clean(
        run("test", "tests/dpftest_errors/002_unknown_top_key.toml", "examples/tests/tally.toml"), 1
    )
    assert "PASS examples/tests/tally.toml" in result.stdout
    assert result.stdout.endswith("2 cases: 2 passed, 1 file not read (2 files, on sim)\n")
    assert "error[DPF4102]" in result.stderr


def test_usage_errors(run: Invoke) -> None:
    clean(run("test"), 1)
    assert "--packet-in" in clean(run("test", WRONG, "--switch", "bmv2://127.0.0.1:9"), 1).stderr
    assert (
        "bmv2://HOST:PORT or sim://" in clean(run("test", WRONG, "--switch", "tcp://x"), 1).stderr
    )
    assert (
        "does not go with --switch"
        in clean(run("test", WRONG, "--switch", "sim://", "--trace"), 1).stderr
    )
    assert "without test files" in clean(run("test", "docs"), 1).stderr


# -- the error corpus ---------------------------------------------------------------------------


@pytest.mark.parametrize("path", CORPUS, ids=[p.name for p in CORPUS])
def test_error_corpus(path: Path, cli: CliRunner, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ERRORS)
    result = clean(cli.invoke(main, ["test", path.name], prog_name="dpfc"), 1)
    assert_golden(path.with_suffix(".stderr"), result.stderr)
    expect = EXPECT.match(path.read_text().splitlines()[0])
    assert expect is not None, f"{path.name} must start with `# expect DPFxxxx: why`"
    assert f"error[{expect.group(1)}]" in result.stderr
    last = result.stdout.splitlines()[-1]
    assert last.endswith("1 file not read (1 file, on sim)") or "1 error" in last


def test_error_corpus_locates_its_errors() -> None:
    """Every error of the corpus but a TOML syntax error at the end of the file and one
    about the file as a whole names its line (file:line:col)."""
    located = [
        p for p in CORPUS if re.match(r"^\S+:\d+:\d+: error", p.with_suffix(".stderr").read_text())
    ]
    assert len(located) >= len(CORPUS) - 2


def test_a_bmv2_switch_without_the_tools_or_the_switch_is_a_user_error(run: Invoke) -> None:
    args = ("test", WRONG, "--switch", "bmv2://127.0.0.1:9", "--packet-in", "ipc:///nowhere")
    with warnings.catch_warnings():
        # the Thrift library leaves the socket of a refused connection to the collector
        warnings.simplefilter("ignore", ResourceWarning)
        stderr = clean(run(*args), 1).stderr
        gc.collect()
    assert "not found on PATH" in stderr or "cannot reach simple_switch at 127.0.0.1:9" in stderr


# -- what dpfc test adds to scenarios and the compile driver -----------------------------------


def test_the_compile_driver_overrides_a_placement() -> None:
    source = ROOT / "examples" / "dpf" / "counter.dpf"
    moved = compile_source(source, CompileOptions(placements={"counter": "packet"})).object()
    kept = compile_source(source, CompileOptions(placements={"other": "packet"})).object()
    assert [d.program.placement.value for d in moved.dpfs] == ["packet"]
    assert [d.program.placement.value for d in kept.dpfs] == ["switch"]


SCENARIO = """
target = "tofino1"
[[switches]]
name = "tor"
[[hosts]]
name = "a"
ip = "10.0.0.1"
switch = "tor"
port = 0
[[config]]
switch = "tor"
[[config.code]]
file = "{file}"
tenant = 7
placement = {placement}
[[config.tenants]]
id = 7
forwarding = {{ 0 = 5 }}
"""


def test_scenarios_take_a_placement_and_a_port_as_destination(tmp_path: Path) -> None:
    counter = ROOT / "examples" / "dpf" / "counter.dpf"
    path = tmp_path / "s.toml"
    path.write_text(SCENARIO.format(file=counter, placement='{ counter = "packet" }'))
    scenario = load_scenario(path)
    (dpf,) = {id(d): d for _, d in scenario.dpfs.values()}.values()
    assert dpf.placement == "packet" and dpf.in_packet_options is not None
    pipe = scenario.network.switches["tor"].pipes[0]
    assert pipe.forwarding[7][0] == Destination(port=5)
    path.write_text(SCENARIO.format(file=counter, placement='{ countr = "packet" }'))
    with pytest.raises(ScenarioError, match='has no DPF named "countr"'):
        load_scenario(path)
    assembly = ROOT / "examples" / "asm" / "counter.dpfasm"
    path.write_text(SCENARIO.format(file=assembly, placement='{ counter = "packet" }'))
    with pytest.raises(ScenarioError, match="is compiled already"):
        load_scenario(path)


# -- docs/testing.md ------------------------------------------------------------------------------

DOC = (ROOT / "docs" / "testing.md").read_text()


def blocks(kind: str) -> list[list[str]]:
    """The lines of the page's fenced blocks of ``kind`` (``""``: plain fences)."""
    found: list[list[str]] = []
    current: list[str] | None = None
    fence = ""
    for line in DOC.splitlines():
        if line.startswith("```") and current is None:
            current, fence = [], line[3:].strip()
        elif line.startswith("```"):
            if fence == kind:
                found.append(current or [])
            current = None
        elif current is not None:
            current.append(line)
    return found


def test_the_page_shows_what_dpfc_test_prints(run: Invoke) -> None:
    consoles = blocks("console")
    assert consoles
    for block in consoles:
        command, expected = block[0], block[1:]
        assert command.startswith("$ dpfc ")
        result = run(*command[len("$ dpfc ") :].split())
        assert result.stdout.splitlines() == expected
    plain = blocks("")
    assert any(
        b[0].startswith("FAIL ") and "\n".join(b) in (GOLDEN / "wrong.txt").read_text()
        for b in plain
    )
    errors = [b for b in plain if b and "error[" in b[0]]
    assert errors and all(
        "\n".join(b) + "\n" == (ERRORS / b[0].split(":")[0]).with_suffix(".stderr").read_text()
        for b in errors
    )


def test_the_page_names_every_key() -> None:
    keys = {*TEST_KEYS, *CASE_KEYS, *PACKET_KEYS, *EXPECT_KEYS, *OUTPUT_KEYS, *TENANT_COUNTERS}
    missing = sorted(k for k in keys if f"`{k}`" not in DOC)
    assert missing == []
