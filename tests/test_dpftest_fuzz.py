"""Any test file gives results or errors, never a traceback (``dpfc.backends.testing``).

Hypothesis writes test files of cases whose keys and values are drawn from the valid ones
and from near misses (wrong types, unknown names, out-of-range numbers, misspelt keys):
reading one raises the scenario reader's ``ScenarioError`` or returns its cases, and every
case runs to a result — pass, fail or error — on the simulator and through the device path,
whatever it holds. A device that fails (its connection lost) makes the case an error too.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dpfc.backends.scenario import ScenarioError
from dpfc.backends.testing import SimDevice, Target, load_test_file, run_case
from dpfc.backends.testing.spec import VERDICTS
from dpfc.driver import compile_source
from dpfc.objfile import write_object
from dpfc.switch import TENANT_COUNTERS
from dpfc.target import BUILTIN_PROFILES
from tests.conftest import ROOT

WORDS = st.one_of(st.integers(-2, 2**33), st.sampled_from([0, 1, 5, 4095, 4096, 2**32 - 1]))
WORD = st.one_of(st.integers(0, 9), st.sampled_from([4095, 2**32 - 1]))
NAMES = st.sampled_from(
    ["counter", "counter.counter", "countr", "@switch:0", "@packet:0", "none", "@bogus",
     "counters", "counter.counters", "counters@0", "counters@3", "eu0.lane0", "eu9.lane0",
     "egress.eu0.lane0", "pass", "drop", "forwrd", "packet", "switch", "executed", "bogus"]
)  # fmt: skip
SCALARS = st.one_of(WORDS, NAMES, st.booleans())
VALUES = st.one_of(
    SCALARS,
    st.lists(SCALARS, max_size=3),
    st.dictionaries(st.one_of(NAMES, st.sampled_from(["5", "0x10", "99999"])), WORDS, max_size=2),
)
DPFS = st.sampled_from(["counter", "counter.counter", "@switch:0", "countr", "none"])
MEMORY = st.dictionaries(
    st.sampled_from(["counters", "counter.counters", "counters@0", "eu0.lane0", "nope"]),
    st.one_of(
        st.dictionaries(st.sampled_from(["0", "5", "4095", "4096"]), WORD, max_size=2),
        st.lists(WORD, max_size=2),
    ),
    max_size=2,
)
# each key with values of its type, mostly valid ones (names, ranges)
PACKET = {
    "dpf": DPFS, "egress": DPFS, "code": DPFS, "stack": st.lists(WORD, max_size=3),
    "app_id": WORD, "gas": st.integers(0, 300), "payload": st.sampled_from(["", "x" * 40]),
    "tenant": st.sampled_from([7, 7, 9]), "port": st.sampled_from([0, 1, 3, 15, 16]),
    "timestamp": WORD, "queue_depth": WORD, "packet_length": st.sampled_from([100, 108, 500]),
}  # fmt: skip
EXPECT = {
    "verdict": st.sampled_from(VERDICTS), "reason": st.sampled_from(["passed", "no route", ""]),
    "passes": st.lists(st.sampled_from(VERDICTS), max_size=2), "frames": st.integers(0, 2),
    "port": st.one_of(st.integers(0, 3), st.lists(st.integers(0, 3), max_size=2)),
    "to": st.sampled_from(["none", "server"]), "stack": st.lists(WORD, max_size=3),
    "dpf": st.sampled_from(["@switch:0", "none"]), "egress": st.sampled_from(["none"]),
    "outputs": st.lists(st.fixed_dictionaries({"port": st.integers(0, 3)}), max_size=2),
    "memory": MEMORY, "counters": st.dictionaries(st.sampled_from(TENANT_COUNTERS), st.integers(0, 3), max_size=2),
    "reports": st.lists(st.sampled_from(["unauthorized", "refused"]), max_size=1),
}  # fmt: skip


def tables(fields: dict[str, Any], wrong: bool) -> st.SearchStrategy[dict[str, Any]]:
    """Tables of some of ``fields`` with values of their type; ``wrong``: also values of
    any type and misspelt keys."""
    keys = st.lists(st.sampled_from(sorted(fields)), max_size=4, unique=True)
    value = {k: st.one_of(fields[k], VALUES) if wrong else fields[k] for k in fields}
    table = keys.flatmap(lambda chosen: st.fixed_dictionaries({k: value[k] for k in chosen}))
    if not wrong:
        return table
    misspelt = st.dictionaries(st.sampled_from(["prot", "verdit", "stak"]), WORDS, max_size=1)
    return st.builds(lambda t, m: {**t, **m}, table, st.one_of(st.just({}), misspelt))


def cases(wrong: bool) -> st.SearchStrategy[list[dict[str, Any]]]:
    case = {
        **PACKET,
        "name": st.sampled_from(["a case", "b"]),
        "placement": st.sampled_from(["packet", "switch"]),
        "memory": MEMORY,
        "tenants": st.lists(st.fixed_dictionaries({"id": st.sampled_from([7, 9])}), max_size=1),
        "expect": tables(EXPECT, wrong),
        "packets": st.lists(tables({**PACKET, "expect": tables(EXPECT, wrong)}, wrong), max_size=2),
    }
    return st.lists(tables(case, wrong), max_size=3)


CASES = st.booleans().flatmap(cases)


@pytest.fixture(scope="module")
def directory(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory holding the counter example's object (compiled once)."""
    path = tmp_path_factory.mktemp("fuzz")
    module = compile_source(ROOT / "examples" / "dpf" / "counter.dpf")
    (path / "counter.dpfo").write_bytes(write_object(module.object()))
    return path


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(cases=CASES)
def test_any_test_file_gives_results_or_errors(
    directory: Path, cases: list[dict[str, Any]]
) -> None:
    data = {"tenant": 7, "code": "counter.dpfo", "default_port": 1, "cases": cases}
    path = directory / "case.json"
    path.write_text(json.dumps(data))
    try:
        test = load_test_file(path)
    except ScenarioError as exc:
        assert exc.code.startswith("DPF") and exc.message
        return
    device = SimDevice(BUILTIN_PROFILES["tofino1"])
    for target in (Target(), Target(device=device)):
        for case in test.cases:
            result = run_case(test, case, target)
            assert result.status in ("pass", "fail", "error", "skip")
            assert (result.error is not None) == (result.status == "error")


class Unplugged(SimDevice):
    """A device whose connection is gone."""

    name = "bmv2://unplugged"

    def send(self, port: int, frame: bytes, *, expect: int) -> list[tuple[int, bytes]]:
        raise ConnectionResetError("the switch went away")


def test_a_failing_device_makes_the_case_an_error(directory: Path) -> None:
    path = directory / "unplugged.json"
    data = {"tenant": 7, "code": "counter.dpfo", "cases": [{"dpf": "counter", "stack": [1]}]}
    path.write_text(json.dumps(data))
    test = load_test_file(path)
    device = Unplugged(BUILTIN_PROFILES["tofino1"])
    result = run_case(test, test.cases[0], Target(device=device))
    assert result.status == "error" and isinstance(result.error, ScenarioError)
    assert (
        "bmv2://unplugged failed: ConnectionResetError: the switch went away"
        in result.error.message
    )
