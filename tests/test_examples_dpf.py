"""The paper's applications in the DPF language (examples/dpf/) check cleanly and compile to
the optimised IR recorded in tests/golden/examples_ir/ (``DPFC_BLESS=1`` to update).

Also runs each example's DPFs through the AST evaluator and the IR interpreter (before and
after the pipeline) on a few hand-written scenarios from the paper, so the examples are
known to do what their comments say.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from dpfc.cli.main import main
from dpfc.diagnostics import SourceFile
from dpfc.driver import check_source
from dpfc.ir.interp import Inputs, Outcome, run_function
from dpfc.isa.semantics import hash_word
from dpfc.lower import lower_program
from dpfc.oracle import evaluate
from dpfc.passes import run_pipeline
from dpfc.syntax import parse_module
from dpfc.target.profile import BUILTIN_PROFILES
from tests.conftest import ROOT, assert_golden

EXAMPLES = sorted((ROOT / "examples" / "dpf").glob("*.dpf"))
STDLIB = sorted((ROOT / "stdlib").glob("*.dpf"))
GOLDEN = ROOT / "tests" / "golden" / "examples_ir"


def test_every_app_of_the_paper_has_an_example() -> None:
    names = {p.stem for p in EXAMPLES}
    expected = {"counter", "kvs", "count_min", "lb1", "lb2", "lb3", "paxos", "telemetry"}
    assert expected <= names


@pytest.mark.parametrize("path", EXAMPLES + STDLIB, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_example_parses(path: Path) -> None:
    parse_module(SourceFile(str(path), path.read_text(encoding="utf-8")))


@pytest.mark.parametrize("path", EXAMPLES + STDLIB, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_example_checks_cleanly(path: Path) -> None:
    result = CliRunner().invoke(main, ["check", str(path)], prog_name="dpfc")
    assert result.exit_code == 0, result.output
    assert "error" not in result.output
    assert "warning" not in result.output


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_example_optimised_ir_golden(path: Path) -> None:
    result = CliRunner().invoke(main, ["compile", str(path), "--emit", "opt-ir"], prog_name="dpfc")
    assert result.exit_code == 0, result.output
    assert_golden(GOLDEN / f"{path.stem}.ir", result.output)


# -- behaviour: the paper's scenarios, through the oracle, the IR and the optimised IR --------

VALID = 0x8000_0000


def _run_all(example: str, dpf: str, **inputs: object) -> Outcome:
    """Run ``dpf`` of examples/dpf/``example``.dpf three ways; they must agree."""
    checked = check_source(ROOT / "examples" / "dpf" / f"{example}.dpf")
    lowered = lower_program(checked)
    optimised = lower_program(checked)
    run_pipeline(optimised, verify=True)
    given = Inputs(**inputs)  # type: ignore[arg-type]
    expected = evaluate(checked, dpf, given)
    assert run_function(lowered, dpf, given) == expected
    assert run_function(optimised, dpf, given) == expected
    return expected


def _hash(lane: int, value: int) -> int:
    profile = BUILTIN_PROFILES["tofino1"]
    return hash_word(profile.hash_for_lane(lane), value)


def test_counter_counts_and_reports_the_old_value() -> None:
    out = _run_all("counter", "counter", stack=[3, 9], memory={"counters": {3: 5}})
    assert out.stack == (3, 5, 9)
    assert out.memory == {"counters": {3: 6}}
    assert (out.steer, out.chain, out.drop_code) == ("pass", None, False)


def test_cache_get_hit_returns_the_value_to_the_sender() -> None:
    memory = {
        "index": {42: VALID | 7},
        "values0": {7: 0xA},
        "values1": {7: 0xB},
        "values2": {7: 0xC},
        "hits": {7: 2},
    }
    out = _run_all("kvs", "cache_get", stack=[42], memory=memory)
    assert out.stack == (42, 0xA, 0xB, 0xC)
    assert (out.steer, out.drop_code, out.chain) == ("return_to_sender", True, None)
    assert out.memory["hits"] == {7: 3}


def test_cache_get_miss_chains_to_count_min() -> None:
    out = _run_all("kvs", "cache_get", stack=[42], memory={"index": {42: 7}})
    assert out.stack == (42,)
    assert (out.steer, out.chain, out.drop_code) == ("pass", "count_min.count_min", False)


def test_cache_put_invalidates_and_chains_to_the_empty_dpf() -> None:
    out = _run_all("kvs", "cache_put", stack=[42], memory={"index": {42: VALID | 7}})
    assert out.memory == {"index": {42: 7}}
    assert (out.stack, out.chain) == ((42,), "empty")


def test_cache_update_installs_and_acknowledges() -> None:
    stack = [42, VALID | 7, 0xA, 0xB, 0xC]
    out = _run_all("kvs_update", "cache_update", stack=stack, memory={})
    assert out.stack == (42, 7)
    assert out.memory == {
        "kvs.index": {42: VALID | 7},
        "kvs.values0": {7: 0xA},
        "kvs.values1": {7: 0xB},
        "kvs.values2": {7: 0xC},
    }
    assert (out.steer, out.drop_code) == ("return_to_sender", True)


def test_count_min_counts_in_three_rows_and_reports_the_minimum() -> None:
    key = 0xC0FFEE
    slots = [_hash(lane, key) & 0x3FF for lane in range(3)]
    memory = {f"countmin.row{r}": {slots[r]: 10 + 3 * r} for r in range(3)}
    memory["countmin.row1"][slots[1]] = 4
    out = _run_all("count_min", "count_min", stack=[key], memory=memory)
    assert out.stack == (key, 4)
    assert out.drop_code
    expected = {f"countmin.row{r}": {slots[r]: 10 + 3 * r + 1} for r in range(3)}
    expected["countmin.row1"] = {slots[1]: 5}
    assert out.memory == expected


def test_lb1_forwards_to_the_hashed_bucket() -> None:
    out = _run_all("lb1", "lb1", stack=[0x1234], memory={})
    bucket = _hash(0, 0x1234) & 7
    assert (out.stack, out.steer, out.steer_value) == ((bucket,), "forward", bucket)


def test_lb2_sends_batches_of_1024_round_robin() -> None:
    out = _run_all("lb2", "lb2", stack=[], memory={"packets": {0: 9 * 1024 + 5}})
    assert (out.steer, out.steer_value) == ("forward", 1)
    assert out.memory == {"packets": {0: 9 * 1024 + 6}}


def test_lb3_client_picks_the_less_loaded_of_two_random_servers() -> None:
    loads = {"loads_a": {5: 90, 3: 10}, "loads_b": {5: 90, 3: 10}}
    busy = _run_all("lb3", "lb3_client", memory=loads, rand=[8 + 5, 3])
    assert (busy.steer, busy.steer_value) == ("forward", 3)
    idle = _run_all("lb3", "lb3_client", memory=loads, rand=[3, 5])
    assert (idle.steer, idle.steer_value) == ("forward", 3)


def test_lb3_server_stores_its_load_in_both_copies() -> None:
    out = _run_all("lb3", "lb3_server", stack=[6, 77], memory={})
    assert out.stack == (6, 77)
    assert out.memory == {"loads_a": {6: 77}, "loads_b": {6: 77}}


def test_paxos_leader_sequences_and_multicasts_to_the_acceptors() -> None:
    out = _run_all("paxos", "leader", stack=[0xBEEF], memory={"sequence": {0: 7}})
    assert out.stack == (7, 0, 0xBEEF)
    assert (out.steer, out.steer_value, out.chain) == ("multicast", 1, "acceptor")


def test_paxos_acceptor_drops_stale_rounds_and_accepts_fresh_ones() -> None:
    stale = _run_all("paxos", "acceptor", stack=[4, 2, 99], memory={"rounds": {4: 3}})
    assert stale.steer == "drop"
    assert stale.memory == {"rounds": {4: 3}}
    fresh = _run_all("paxos", "acceptor", stack=[4, 5, 99], memory={"rounds": {4: 3}})
    assert (fresh.stack, fresh.steer, fresh.steer_value) == ((4, 5, 99), "multicast", 1)
    assert fresh.memory == {"rounds": {4: 5}, "values": {4: 99}, "vrounds": {4: 5}}


def test_telemetry_keeps_the_maximum_hop_latency() -> None:
    meta = {"queue_depth": 100, "ingress_port": 3, "switch_id": 17, "timestamp": 5000}
    latency = 100 * 8 + 400
    worse = _run_all("telemetry", "max_hop_latency", stack=[50, 1], meta=meta)
    assert worse.stack == (latency, 17)
    assert worse.memory == {"worst_by_port": {3: latency}, "last_report": {3: 5000}}
    better = _run_all("telemetry", "max_hop_latency", stack=[9999, 1], meta=meta)
    assert better.stack == (9999, 1)
