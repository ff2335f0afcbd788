"""The tutorial's running example end to end: a DPF compiled from source runs in the
simulator from its object, with no assembly and nothing placed by hand.

* ``examples/scenarios/flow_guard.toml``: ``flow_guard.dpf`` compiled with ``dpfc compile -o
  flow_guard.dpfo`` and installed from that object (its array mapped where the object
  places it, the tenant's token from the object, the DPF named by its short name): alice's
  flow passes 3 packets and loses 3, bob's passes 2 (golden report).
* ``examples/scenarios/flow_guard_chain.toml``: the guard chained to ``tally.dpf``, both
  linked by ``dpfc link`` into one image for a switch of two pipes (golden report); the
  image reads back (``dpfc disasm``), each DPF's prolog at its own slot.
* Scenario tenants with several app ids (``app_ids``), and the scenario mistakes around
  them; a missing object names the command that writes it.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from dpfc.backends.scenario import ScenarioError, load_scenario
from dpfc.catalog import codes
from dpfc.cli.main import main
from dpfc.link import read_image
from dpfc.target import BUILTIN_PROFILES
from tests.conftest import ROOT, assert_golden

SCENARIOS = ROOT / "examples" / "scenarios"
GOLDEN = ROOT / "tests" / "golden" / "run"


def dpfc(where: Path, *args: str) -> Result:
    """``dpfc ARGS`` in directory ``where`` (as the tutorial runs it: relative paths)."""
    cwd = Path.cwd()
    try:
        os.chdir(where)
        result = CliRunner().invoke(main, list(args), prog_name="dpfc")
    finally:
        os.chdir(cwd)
    assert "Traceback" not in result.output + result.stderr, result.output + result.stderr
    assert result.exit_code == 0, f"dpfc {' '.join(args)}: exit {result.exit_code}\n{result.stderr}"
    return result


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory as the tutorial's reader has it: ``examples/`` and the compiled objects."""
    where = tmp_path_factory.mktemp("flow_guard")
    (where / "examples").symlink_to(ROOT / "examples")
    for name in ("flow_guard", "flow_guard_chain", "tally"):
        dpfc(where, "compile", f"examples/dpf/{name}.dpf", "-o", f"{name}.dpfo")
    dpfc(
        where,
        "link", "flow_guard_chain.dpfo", "tally.dpfo", "--tenant", "7", "--pipes", "2",
        "--place", "flow_guard_chain.flow_guard=0", "--place", "tally.tally=1",
        "-o", "guard.dpfimg",
    )  # fmt: skip
    for name in ("flow_guard", "flow_guard_chain"):
        shutil.copy(SCENARIOS / f"{name}.toml", where / f"{name}.toml")
    return where


def report(work: Path, scenario: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(dpfc(work, "run", "--json", scenario).stdout)
    return data


@pytest.mark.parametrize("name", ["flow_guard", "flow_guard_chain"])
def test_example_scenario_golden(work: Path, name: str) -> None:
    result = dpfc(work, "run", f"{name}.toml")
    assert result.stderr == ""
    assert_golden(GOLDEN / f"{name}.txt", result.stdout)


def test_chain_trace_golden(work: Path) -> None:
    """The traces of the chain name both DPFs, read from the objects the image names."""
    result = dpfc(work, "run", "--trace", "flow_guard_chain.toml")
    assert_golden(GOLDEN / "flow_guard_chain_trace.txt", result.stdout)
    assert "in tally.tally (entry)" in result.stdout
    assert "; examples/dpf/tally.dpf:16: passed[flow] += 1;" in result.stdout


def _verdicts(data: dict[str, Any]) -> list[list[str]]:
    return [[p["verdict"] for p in packet["passes"]] for packet in data["packets"]]


def test_the_guard_drops_a_flow_after_three_packets(work: Path) -> None:
    data = report(work, "flow_guard.toml")
    assert _verdicts(data) == [["pass"]] * 3 + [["drop"]] * 3 + [["pass"]] * 2
    stacks = [p["passes"][0]["outputs"][0]["frame"]["stack"] for p in data["packets"][:3]]
    assert [count for _flow, count in stacks] == [1, 2, 3]
    assert [w["values"] for w in data["memory"]] == [[6], [2]]
    assert data["hosts"] == {"alice": 0, "bob": 0, "server": 5}


def test_the_chained_tally_counts_what_passed(work: Path) -> None:
    data = report(work, "flow_guard_chain.toml")
    # a packet the guard lets through crosses the cable and runs tally in pipe 1
    assert _verdicts(data) == [["pass", "pass"]] * 3 + [["drop"]] * 3 + [["pass", "pass"]] * 2
    assert [w["values"] for w in data["memory"]] == [[3], [2]]


def test_the_linked_image_reads_back_with_a_prolog_per_dpf(work: Path) -> None:
    """Two DPFs on disjoint pipes whose prologs could share a slot index: each keeps its own
    word (the linker once merged the second into the first's slot, and its image was
    refused by its own reader)."""
    image = read_image(
        (work / "guard.dpfimg").read_bytes(), "guard.dpfimg", BUILTIN_PROFILES["tofino1"]
    )
    entries = {d.symbol: d.entry for d in image.dpfs}
    assert len(set(entries.values())) == 2
    for dpf in image.dpfs:
        assert dpf.entry is not None
        slot = image.slot_at(0, dpf.entry)
        assert slot is not None and f"7:{dpf.symbol}" in slot.users
    assert "tally.tally" in dpfc(work, "disasm", "guard.dpfimg").stdout


def test_a_missing_object_names_the_command_that_writes_it(tmp_path: Path) -> None:
    shutil.copy(SCENARIOS / "flow_guard.toml", tmp_path / "flow_guard.toml")
    with pytest.raises(ScenarioError) as caught:
        load_scenario(tmp_path / "flow_guard.toml")
    assert caught.value.code == "DPF4108"
    assert "dpfc compile FILE.dpf -o" in caught.value.message


# -- several app ids per tenant -----------------------------------------------------------------

KVS_UPDATE = """\
target = "tofino1"

[[switches]]
name = "kvs"

[[hosts]]
name = "client"
ip = "10.0.0.1"
switch = "kvs"
port = 0

[[hosts]]
name = "server"
ip = "10.0.0.2"
switch = "kvs"
port = 1

[[config]]
switch = "kvs"
routes = { client = 0, server = 1 }

[[config.code]]
file = "KVS"
tenant = 42

[[config.code]]
file = "KVS_UPDATE"
tenant = 42

[[config.code]]
file = "COUNT_MIN"
tenant = 42

[[config.tenants]]
id = 42
TOKENS

# install key 500 in tuple 1 with a value, then read it from the cache
[[packets]]
from = "client"
to = "server"
tenant = 42
code = "kvs_update.cache_update"
stack = [500, 0x80000001, 11, 22, 33]

[[packets]]
from = "client"
to = "server"
tenant = 42
code = "kvs.cache_get"
stack = [500]
"""


def _kvs_update(tmp_path: Path, tokens: str) -> Path:
    text = KVS_UPDATE.replace("TOKENS", tokens)
    text = text.replace('"KVS"', json.dumps(str(ROOT / "examples/dpf/kvs.dpf")))
    text = text.replace('"KVS_UPDATE"', json.dumps(str(ROOT / "examples/dpf/kvs_update.dpf")))
    text = text.replace('"COUNT_MIN"', json.dumps(str(ROOT / "examples/dpf/count_min.dpf")))
    path = tmp_path / "kvs_update.toml"
    path.write_text(text)
    return path


@pytest.mark.parametrize(
    "tokens",
    ["app_ids = [0x4b5601, 0x4b5602]", ""],
    ids=["app_ids", "the-image-tokens"],
)
def test_a_tenant_runs_the_apps_of_all_its_tokens(tmp_path: Path, tokens: str) -> None:
    """The KVS switch runs cache_get (token 0x4b5601) and cache_update (0x4b5602) for one
    tenant: both tokens listed, or (no app_id) the tokens the linked code granted."""
    scenario = load_scenario(_kvs_update(tmp_path, tokens))
    control = scenario.network.switches["kvs"].control
    entry = control.permissions(42)
    assert entry is not None and {entry.app_id, *entry.app_ids} == {0x4B5601, 0x4B5602}
    scenario.network.run()
    # both come back: the update's acknowledgement, then the hit with the value installed
    (_ack, reply) = scenario.network.hosts["client"].received
    assert b"\x00\x00\x00\x0b\x00\x00\x00\x16\x00\x00\x00\x21" in reply  # 11, 22, 33


def test_one_token_refuses_the_other_app(tmp_path: Path) -> None:
    """An entry that holds one app's token refuses the other's packets: the switch refuses
    a packet whose token the entry lacks, and a scenario whose entry would leave out the
    token of the tenant's own linked code is refused before it runs (DPF4110)."""
    path = _kvs_update(tmp_path, "")
    path.write_text(
        path.read_text().replace(
            'code = "kvs_update.cache_update"\n', 'code = "kvs_update.cache_update"\napp_id = 7\n'
        )
    )
    scenario = load_scenario(path)
    scenario.network.run()
    assert scenario.network.records[0].result.verdict == "drop"  # the update was refused
    assert scenario.network.hosts["client"].received == []  # so the read missed the cache
    with pytest.raises(ScenarioError) as caught:
        load_scenario(_kvs_update(tmp_path, "app_id = 0x4b5601"))
    assert caught.value.code == codes.SCENARIO_PERMISSION_CONFLICT
    assert "leaves out the token 0x4b5602" in caught.value.message
    assert "(kvs_update.cache_update)" in caught.value.message


@pytest.mark.parametrize(
    ("tokens", "words"),
    [
        ("app_id = 1\napp_ids = [1, 2]", "give app_id or app_ids, not both"),
        ("app_ids = []", "list at least one app id"),
        ('app_ids = ["one"]', "app_ids[0]"),
    ],
    ids=["both", "empty", "not-a-number"],
)
def test_app_ids_mistakes(tmp_path: Path, tokens: str, words: str) -> None:
    with pytest.raises(ScenarioError) as caught:
        load_scenario(_kvs_update(tmp_path, tokens))
    assert words in caught.value.message
