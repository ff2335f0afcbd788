"""Traces at the source level: each stage's DPF and bundle, source lines, variables.

* The variables a trace names hold those variables' values: the tutorial's guard
  (``src``/``port`` are the stack words, ``flow`` the CRC of their XOR masked to 8 bits,
  ``before`` the counter before the packet, both pushed) and the KVS cache-get (``i`` is
  ``tuple``'s index bits, ``key`` and ``v0..v2`` are what it pushes), computed here
  independently of the compiler.
* Every stage of compiled code is found, in-switch and in-packet, ingress and egress; a
  code slot two DPFs share is told apart by the prolog the pass ran.
* What is not known is shown as machine code: a pcap frame's own in-packet code, an image
  whose objects cannot be read; an object of debug version 1 has source lines but no
  ``vars``; an image's object compiled again from changed source is not used.
* ``--trace``, ``--trace-file`` and ``--json`` print the same annotated traces.
"""

from __future__ import annotations

import binascii
import json
import re
import shutil
from dataclasses import replace
from pathlib import Path

from click.testing import CliRunner

from dpfc.backends.scenario import Scenario, load_scenario
from dpfc.backends.sim import PacketTrace, render_trace
from dpfc.cli.main import main
from dpfc.driver import CompileOptions, compile_source
from dpfc.link import LinkInput, LinkOptions, image_bytes, link
from dpfc.objfile import write_object
from dpfc.packet import write_pcap
from dpfc.target import BUILTIN_PROFILES
from tests.conftest import ROOT

TOFINO1 = BUILTIN_PROFILES["tofino1"]
DPF = ROOT / "examples" / "dpf"
SCENARIOS = ROOT / "examples" / "scenarios"

ONE_SWITCH = """\
target = "tofino1"

[[switches]]
name = "tor"

[[hosts]]
name = "alice"
ip = "10.0.0.1"
switch = "tor"
port = 0

[[hosts]]
name = "server"
ip = "10.0.0.9"
switch = "tor"
port = 2

[[config]]
switch = "tor"
routes = { alice = 0, server = 2 }
"""


def traces(scenario: Scenario) -> list[PacketTrace]:
    scenario.network.run(trace=True)
    found = [r.result.trace for r in scenario.network.records]
    assert all(t is not None for t in found)
    return [t for t in found if t is not None]


def rendered(scenario: Scenario) -> list[str]:
    sources = scenario.trace_sources()
    return [render_trace(trace, sources) for trace in traces(scenario)]


def variables(text: str) -> list[dict[str, int]]:
    """The ``vars`` lines of a rendered trace, in order: name -> value."""
    out = []
    for line in text.splitlines():
        if line.strip().startswith("vars "):
            pairs = re.findall(r"([\w.]+)=(0x[0-9a-f]+) \(", line)
            out.append({name: int(value, 16) for name, value in pairs})
    return out


def stage_heads(text: str) -> list[str]:
    return [
        line.strip() for line in text.splitlines() if re.match(r"\s*(prolog|eu\d+|epilog) @", line)
    ]


def pushed(text: str) -> list[int]:
    match = re.search(r"PUSH ([^;]*?)\s*(;|$)", text, re.M)
    assert match is not None
    return [int(v.split("=")[1], 16) for v in match.group(1).split(", ")]


# -- the values of the variables -----------------------------------------------------------------
def test_the_guards_variables_hold_their_values(tmp_path: Path) -> None:
    flows = [(0x0A00_0001, 5000), (0x0A00_0002, 6000), (0xC0A8_0101, 443)]
    packets = "".join(
        f'\n[[packets]]\nfrom = "alice"\nto = "server"\ntenant = 7\ndpf = "flow_guard"\n'
        f"stack = [{src}, {port}]\nrepeat = 2\n"
        for src, port in flows
    )
    (tmp_path / "s.toml").write_text(
        ONE_SWITCH + f'\n[[config.code]]\nfile = "{DPF / "flow_guard.dpf"}"\ntenant = 7\n' + packets
    )
    counts: dict[int, int] = {}
    for number, text in enumerate(rendered(load_scenario(tmp_path / "s.toml"))):
        src, port = flows[number // 2]
        flow = binascii.crc32((src ^ port).to_bytes(4, "big")) & 0xFF
        before = counts.get(flow, 0)
        counts[flow] = before + 1
        expected = {"src": src, "port": port, "flow": flow, "before": before}
        for names in variables(text):
            for name, value in names.items():
                assert value == expected[name], (name, text)
        seen = {name for names in variables(text) for name in names}
        assert seen == set(expected)
        assert pushed(text) == [flow, before + 1]
        assert all(" in flow_guard.flow_guard (" in head for head in stage_heads(text))


def test_the_cache_gets_variables_hold_their_values() -> None:
    scenario = load_scenario(SCENARIOS / "kvs.toml")
    hits = 0
    for text in rendered(scenario):
        if "in kvs.cache_get (" not in text or "exit_n1" not in text:
            continue  # the hits: cache_get's epilog exit_n1 returns the value
        hits += 1
        last = variables(text)[-1]  # what the hit's epilog reads
        tuple_word = next(v["tuple"] for v in variables(text) if "tuple" in v)
        assert last["i"] == tuple_word & 0x7FFF_FFFF
        assert pushed(text) == [last["key"], last["v0"], last["v1"], last["v2"]]
    assert hits >= 2


def test_every_stage_of_compiled_code_is_found() -> None:
    """In-packet and in-switch, ingress and egress, a chain's target in another pipe."""
    for name in ("kvs", "egress"):
        for text in rendered(load_scenario(SCENARIOS / f"{name}.toml")):
            heads = stage_heads(text)
            assert heads and all(" in " in head for head in heads), text
    egress = "".join(rendered(load_scenario(SCENARIOS / "egress.toml")))
    assert "prolog @packet:0 in path.record (entry)" in egress  # in the packet, egress
    assert "epilog @switch:0 in path.fan_out (exit_n0)" in egress  # in the switch, ingress


SHARING = """\
module twins;

@placement(switch)
dpf one(x: u32) {
    push(x + 1);
}

@placement(switch)
dpf two(x: u32) {
    push(x + 2);
}
"""


def test_a_shared_slot_is_named_by_the_dpf_the_pass_ran(tmp_path: Path) -> None:
    (tmp_path / "twins.dpf").write_text(SHARING)
    obj = compile_source(tmp_path / "twins.dpf", CompileOptions(target=TOFINO1)).object()
    image = link([LinkInput(obj, 7)], LinkOptions(profile=TOFINO1))
    shared = [slot for slot in image.code if slot.refs > 1]
    assert shared, "the two DPFs were expected to share a bundle"
    packets = "".join(
        f'\n[[packets]]\nfrom = "alice"\nto = "server"\ntenant = 7\ndpf = "{dpf}"\nstack = [5]\n'
        for dpf in ("twins.one", "twins.two", "twins.one")
    )
    (tmp_path / "s.toml").write_text(
        ONE_SWITCH + '\n[[config.code]]\nfile = "twins.dpf"\ntenant = 7\n' + packets
    )
    texts = rendered(load_scenario(tmp_path / "s.toml"))
    for text, dpf in zip(texts, ("twins.one", "twins.two", "twins.one"), strict=True):
        heads = stage_heads(text)
        assert heads and all(f" in {dpf} (" in head for head in heads), text
    assert [pushed(text) for text in texts] == [[6], [7], [6]]


# -- what is not known ---------------------------------------------------------------------------
def test_a_pcap_frames_own_code_is_machine_code_only(tmp_path: Path) -> None:
    scenario = load_scenario(SCENARIOS / "cache_get.toml")
    assert "prolog @packet:0 in cache_get (get)" in rendered(scenario)[0]
    # the first packet again, from a pcap, in the same network without its [[packets]]:
    # the scenario never read cache-get's code, so its stages are machine code alone
    write_pcap(str(tmp_path / "one.pcap"), [scenario.packets[0].frame])
    source = (SCENARIOS / "cache_get.toml").read_text()
    (tmp_path / "bare.toml").write_text(source[: source.index("[[packets]]")])
    shutil.copy(SCENARIOS / "miss_counter.dpfasm", tmp_path / "miss_counter.dpfasm")
    bare = load_scenario(tmp_path / "bare.toml")
    bare.send_pcap(tmp_path / "one.pcap", "client")
    (text,) = rendered(bare)
    heads = stage_heads(text)
    assert heads[0] == "prolog @packet:0" and not any(" in " in head for head in heads)
    assert ";" not in text and "vars" not in text


def test_an_old_object_has_source_lines_but_no_vars(tmp_path: Path) -> None:
    obj = compile_source(DPF / "flow_guard.dpf", CompileOptions(target=TOFINO1)).object()
    document = json.loads(write_object(obj))
    del document["debug_version"]
    for dpf in document["dpfs"]:
        for bundle in dpf["bundles"]:
            del bundle["registers"]
    (tmp_path / "flow_guard.dpfo").write_text(json.dumps(document))
    shutil.copy(SCENARIOS / "flow_guard.toml", tmp_path / "flow_guard.toml")
    text = rendered(load_scenario(tmp_path / "flow_guard.toml"))[0]
    assert "in flow_guard.flow_guard (eu1_n0)" in text
    assert "flow_guard.dpf:20: let flow = hash<0>(src ^ port) & (FLOWS - 1);" in text
    assert "vars " not in text


def test_an_image_whose_objects_are_gone_or_changed_is_machine_code_only(tmp_path: Path) -> None:
    obj = compile_source(DPF / "flow_guard.dpf", CompileOptions(target=TOFINO1)).object()
    gone = replace(obj, path=str(tmp_path / "gone.dpfo"))
    image = link([LinkInput(gone, 7)], LinkOptions(profile=TOFINO1))
    (tmp_path / "guard.dpfimg").write_bytes(image_bytes(image))
    source = (SCENARIOS / "flow_guard.toml").read_text()
    (tmp_path / "s.toml").write_text(
        source.replace('file = "flow_guard.dpfo"', 'file = "guard.dpfimg"')
    )
    text = rendered(load_scenario(tmp_path / "s.toml"))[0]
    heads = stage_heads(text)
    assert heads and not any(" in " in head for head in heads)
    assert "HASH A0 <- crc32(A0=0xa001389) = 0xbb72456e\n" in text
    # an object compiled again from changed source is not the code the image installed
    changed = tmp_path / "changed.dpf"
    changed.write_text((DPF / "flow_guard.dpf").read_text().replace("LIMIT = 3", "LIMIT = 4"))
    other = compile_source(changed, CompileOptions(target=TOFINO1)).object()
    (tmp_path / "gone.dpfo").write_bytes(write_object(other))
    stale = rendered(load_scenario(tmp_path / "s.toml"))[0]
    assert not any(" in " in head for head in stage_heads(stale))
    # with the object the image was linked from, the same image is traced at the source
    (tmp_path / "gone.dpfo").write_bytes(write_object(gone))
    again = rendered(load_scenario(tmp_path / "s.toml"))[0]
    assert all(" in flow_guard.flow_guard (" in head for head in stage_heads(again))


# -- the command ---------------------------------------------------------------------------------
def test_trace_trace_file_and_json_print_the_same_annotated_traces(tmp_path: Path) -> None:
    runner = CliRunner()
    scenario = str(SCENARIOS / "egress.toml")
    shown = runner.invoke(main, ["run", "--trace", scenario])
    assert shown.exit_code == 0
    in_report = [
        line.removeprefix("    | ")
        for line in shown.stdout.splitlines()
        if line.startswith("    | ")
    ]
    filed = runner.invoke(main, ["run", scenario, "--trace-file", str(tmp_path / "t.txt")])
    assert filed.exit_code == 0
    assert (tmp_path / "t.txt").read_text().splitlines() == in_report
    data = json.loads(runner.invoke(main, ["run", "--json", "--trace", scenario]).stdout)
    from_json = [
        line
        for packet in data["packets"]
        for entry in packet["passes"]
        for line in entry["trace"].splitlines()
    ]
    assert from_json == in_report
    assert any("; " in line and "egress_path.dpf:" in line for line in in_report)
