"""``dpfc run --summary`` and ``dpfc run``'s schedule cache.

* ``--summary`` prints a few lines however many packets ran (golden, the wall-clock seconds
  masked), and says what the full report says: the same verdicts, counters and hosts; its
  per-port frames in and out add up to the passes and transmissions; its faults group the
  pipes' reports. ``--json --summary`` is the same data, without the per-packet part.
* The ``.dpf`` files of a scenario are scheduled through the schedule cache ``dpfc compile``
  uses: a second run asks no scheduler, and prints the same; ``--no-cache`` neither reads
  nor writes it.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from dpfc.cli.main import main
from dpfc.schedule import search as search_module
from dpfc.schedule.greedy.scheduler import greedy_schedule
from tests.conftest import ROOT, Invoke, assert_golden, dpfc_in

GOLDEN = ROOT / "tests" / "golden" / "run"
COUNTER = "examples/scenarios/counter.toml"
KVS = "examples/scenarios/kvs.toml"
SECONDS = re.compile(r"loaded in \d+\.\d\d s, ran in \d+\.\d\d s")


@pytest.fixture
def run(monkeypatch: pytest.MonkeyPatch) -> Invoke:
    dpfc = dpfc_in(ROOT, monkeypatch)

    def invoke(*args: str) -> Result:
        result = dpfc(*args)
        assert result.exit_code == 0, result.output
        return result

    return invoke


def _json(result: Result) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(result.stdout)
    return data


def test_summary_golden(run: Invoke) -> None:
    text = run("run", COUNTER, "--summary").stdout
    assert SECONDS.search(text), text
    assert_golden(
        GOLDEN / "counter_summary.txt", SECONDS.sub("loaded in [...], ran in [...]", text)
    )
    assert "packet 1 from" not in text  # no per-packet report


def test_summary_agrees_with_the_full_report(run: Invoke) -> None:
    full = _json(run("run", KVS, "--json"))
    short = _json(run("run", KVS, "--json", "--summary"))
    assert "packets" not in short and "reports" not in short
    for key in ("scenario", "target", "seed", "switches", "hosts", "memory", "tenants", "summary"):
        assert short[key] == full[key], key
    passes = [p for packet in full["packets"] for p in packet["passes"]]
    assert sum(port["in"] for port in short["ports"]) == len(passes)
    outputs = sum(len(p["outputs"]) for p in passes)
    assert sum(port["out"] for port in short["ports"]) == outputs
    for port in short["ports"]:
        entered = [p for p in passes if (p["switch"], p["port"]) == (port["switch"], port["port"])]
        assert port["in"] == len(entered)
    assert short["time"]["simulated_ns"] == 100 * full["summary"]["passes"]
    assert short["time"]["run_seconds"] >= 0 and short["time"]["load_seconds"] >= 0


def test_summary_groups_the_reports(run: Invoke) -> None:
    full = _json(run("run", COUNTER, "--json"))
    short = _json(run("run", COUNTER, "--json", "--summary"))
    (report,) = full["reports"]  # an unauthorized tenant's packet
    assert short["faults"] == [
        {"switch": "tor", "kind": report["kind"], "count": 1, "first": report["detail"]}
    ]
    text = run("run", COUNTER, "--summary").stdout
    assert f"  tor {report['kind']}: 1, first: {report['detail']}\n" in text


def test_summary_takes_traces_to_a_file_only(run: Invoke, tmp_path: Path) -> None:
    refused = CliRunner().invoke(main, ["run", COUNTER, "--summary", "--trace"])
    assert refused.exit_code == 1 and "use --trace-file" in refused.stderr
    trace = tmp_path / "t.txt"
    run("run", COUNTER, "--summary", "--trace-file", str(trace))
    assert "FAADD" in trace.read_text()


def test_run_schedules_through_the_cache(
    run: Invoke, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DPFC_CACHE_DIR", str(tmp_path / "cache"))
    calls: list[str] = []
    real = greedy_schedule  # the search runs it for every DPF the cache does not hold

    def counting(*args: Any, **kwargs: Any) -> Any:
        calls.append("scheduled")
        return real(*args, **kwargs)

    monkeypatch.setattr(search_module, "greedy_schedule", counting)
    uncached = run("run", KVS, "--no-cache").stdout
    assert calls and not (tmp_path / "cache").exists()
    calls.clear()
    first = run("run", KVS).stdout
    assert calls
    assert any((tmp_path / "cache").glob("*.json"))
    calls.clear()
    second = run("run", KVS).stdout
    assert calls == []  # every schedule came from the cache
    assert first == second == uncached
