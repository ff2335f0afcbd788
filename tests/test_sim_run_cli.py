"""``dpfc run SCENARIO``: the example scenarios, every option, and the scenario error corpus.

* The example scenarios (``examples/scenarios/``) print exactly their golden reports
  (``tests/golden/run/``), as text, with ``--trace``, and agree with ``--json``; the
  egress scenario runs an egress DPF on every multicast copy.
* ``--out-dir`` writes one deterministic pcap per host, readable with ``read_pcap``;
  ``--pcap --from`` sends extra frames; ``--trace-file`` moves the traces to a file.
* Every feature of the schema is exercised end to end (forwarding to hosts, multicast,
  constants, default DPFs by name, pipe subsets, JSON scenarios, JSON objects).
* Every file of ``tests/run_errors/`` is one mistake: exit 1, the golden stderr next to it,
  never a traceback. ``DPFC_BLESS=1`` rewrites goldens; read the diffs before committing.
"""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from dpfc.backends.scenario import ScenarioError, load_scenario
from dpfc.cli.main import main
from dpfc.driver import CompileOptions, compile_source
from dpfc.encoding import SwitchVMHeader
from dpfc.isa.bundle import PC
from dpfc.objfile import write_object
from dpfc.packet import PacketSpec, build_packet, parse_packet, read_pcap, write_pcap
from dpfc.target import BUILTIN_PROFILES
from tests.conftest import ROOT, Invoke, assert_golden, dpfc_in

SCENARIOS = ROOT / "examples" / "scenarios"
GOLDEN = ROOT / "tests" / "golden" / "run"
ERRORS = ROOT / "tests" / "run_errors"
CORPUS = sorted(p for p in ERRORS.iterdir() if p.is_file() and p.suffix != ".stderr")
EXPECT = re.compile(r"^# expect (DPF\d{4}): \S")
ERROR_HEAD = re.compile(r"^(?P<file>[^:\s]+)(?::\d+:\d+)?: error\[(?P<code>DPF\d{4})\]: ")
TOFINO1 = BUILTIN_PROFILES["tofino1"]


@pytest.fixture
def run(monkeypatch: pytest.MonkeyPatch) -> Invoke:
    """``dpfc ARGS...`` from the repository root (paths in the output stay relative)."""
    return dpfc_in(ROOT, monkeypatch)


def ok(result: Result) -> Result:
    assert result.exit_code == 0, f"exit {result.exit_code}\n{result.stderr}\n{result.exception!r}"
    assert "Traceback" not in result.output + result.stderr
    return result


def report(run: Invoke, *args: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(ok(run("run", "--json", *args)).stdout)
    return data


COUNTER = "examples/scenarios/counter.toml"
CACHE_GET = "examples/scenarios/cache_get.toml"


# -- the example scenarios ----------------------------------------------------------------------


@pytest.mark.parametrize("name", ["counter", "cache_get", "kvs", "egress"])
def test_example_scenario_golden(run: Invoke, name: str) -> None:
    result = ok(run("run", f"examples/scenarios/{name}.toml"))
    assert result.stderr == ""
    assert_golden(GOLDEN / f"{name}.txt", result.stdout)


def test_counter_trace_golden(run: Invoke) -> None:
    result = ok(run("run", "--trace", COUNTER))
    assert_golden(GOLDEN / "counter_trace.txt", result.stdout)
    # the trace shows the FAADD of every executed pass, with the count before the packet
    faadds = re.findall(r"FAADD \[A0=0x3 -> phys \d+\] B0=0x1 old=(0x\w+)", result.stdout)
    assert faadds == ["0x0", "0x1", "0x2"]


def test_kvs_trace_golden(run: Invoke) -> None:
    """Compiled code: each stage names its DPF and bundle, each instruction its source line,
    each stage the variables its registers hold; in-packet code (cache_get, from the
    linked image) and in-switch code (the sketch pipe) alike."""
    result = ok(run("run", "--trace", "examples/scenarios/kvs.toml"))
    assert_golden(GOLDEN / "kvs_trace.txt", result.stdout)
    assert "prolog @packet:0 in kvs.cache_get (entry)" in result.stdout
    assert "; examples/scenarios/../dpf/kvs.dpf:37: let tuple = index[key];" in result.stdout


def test_egress_trace_golden(run: Invoke) -> None:
    """Each multicast copy runs the egress DPF in the egress of its port's pipe."""
    result = ok(run("run", "--trace", "examples/scenarios/egress.toml"))
    assert_golden(GOLDEN / "egress_trace.txt", result.stdout)
    data = report(run, "examples/scenarios/egress.toml")
    (first, second) = data["packets"]
    (entry,) = first["passes"]
    assert [(e["pipe"], e["port"], e["verdict"]) for e in entry["egress"]] == [
        (0, 1, "pass"),
        (1, 17, "pass"),
    ]
    stacks = [o["frame"]["stack"] for o in second["passes"][0]["outputs"]]
    assert stacks == [[1, 1], [17, 1]]  # the port, and the copies that left by it before
    assert [(w["pipeline"], w["values"]) for w in data["memory"]] == [
        ("egress", [2]),
        ("egress", [2]),
    ]


def test_counter_counts_per_id(run: Invoke) -> None:
    data = report(run, COUNTER)
    stacks = [
        entry["outputs"][0]["frame"]["stack"]
        for packet in data["packets"]
        for entry in packet["passes"]
        if entry["outputs"]
    ]
    assert stacks == [[3, 0], [3, 1], [3, 2], [5, 0], [5, 1]]
    assert data["memory"][0]["values"] == [0, 0, 0, 3, 0, 2, 0, 0]
    assert data["hosts"] == {"client": 0, "server": 5}
    unauthorized = data["packets"][-1]["passes"][0]
    assert (unauthorized["verdict"], unauthorized["tenant"]) == ("drop", 9)
    assert [r["kind"] for r in data["reports"]] == ["unauthorized"]
    assert data["tenants"] == [
        {"switch": "tor", "tenant": 7, "stats": {"packets": 5, "executed": 5, "passed": 5}}
    ]


def test_cache_get_hits_return_and_misses_reach_the_server(run: Invoke) -> None:
    data = report(run, CACHE_GET)
    values = {100: (0x6F6E6531, 0x6F6E6532, 0x6F6E6533), 200: (0x74776F31, 0x74776F32, 0x74776F33)}
    for packet in data["packets"]:
        first = packet["passes"][0]
        key = int(packet["summary"].split("stack [")[1].rstrip("]"), 16)
        frame = first["outputs"][0]["frame"]
        if key in (100, 200, 300):
            assert first["verdict"] == "return_to_sender"
            assert first["outputs"][0]["to"] == "client"
            assert frame["code_bundles"] == 0 and frame["dpf"] == "none"  # HDR_MOD
            assert frame["stack"][0] == key
            if key in values:
                assert tuple(frame["stack"][1:]) == values[key]
        else:  # the miss crosses the cable into pipe 1, which runs @switch:1
            assert first["outputs"][0]["to"] == "kvs:16"
            assert frame["dpf"] == "@switch:1" and frame["stack"] == [key]
            second = packet["passes"][1]
            assert (second["pipe"], second["verdict"]) == (1, "pass")
            assert second["outputs"][0]["to"] == "server"
    memory = {watch["label"]: watch["values"] for watch in data["memory"]}
    assert memory == {"hits": [1, 2, 1], "misses of key 400": [2], "misses of key 500": [1]}
    assert data["summary"]["verdicts"] == {"pass": 6, "return_to_sender": 4}
    assert data["summary"]["reports"] == 0


def test_the_kvs_scenario_runs_the_compiled_and_linked_sources(run: Invoke) -> None:
    """kvs.toml names .dpf sources and arrays: compiled, linked and deployed, the arrays
    where the compiler placed them; misses chain to count-min on pipe 1 (its estimate of
    key 400 grows by one per request)."""
    data = report(run, "examples/scenarios/kvs.toml")
    outcomes = []
    for packet in data["packets"]:
        last = packet["passes"][-1]["outputs"][0]
        outcomes.append((last["to"], last["frame"]["stack"]))
    assert outcomes == [
        ("client", [100, 0x6F6E6531, 0x6F6E6532, 0x6F6E6533]),
        ("client", [200, 0x74776F31, 0x74776F32, 0x74776F33]),
        ("client", [200, 0x74776F31, 0x74776F32, 0x74776F33]),
        ("server", [400, 0]),
        ("server", [400, 1]),
        ("server", [400, 2]),
    ]
    assert data["memory"][0]["values"] == [1, 2, 0]  # the hit counters of tuples 1..3


def test_json_and_text_agree(run: Invoke) -> None:
    data = report(run, CACHE_GET)
    text = ok(run("run", CACHE_GET)).stdout
    summary = data["summary"]
    assert f"{summary['packets']} packets, {summary['passes']} passes" in text
    for packet in data["packets"]:
        for entry in packet["passes"]:
            assert f"pass {entry['sequence']} at {entry['switch']} pipe {entry['pipe']}" in text


def test_runs_are_deterministic(run: Invoke) -> None:
    first = ok(run("run", "--trace", CACHE_GET)).stdout
    assert first == ok(run("run", "--trace", CACHE_GET)).stdout


# -- options -------------------------------------------------------------------------------------


def test_out_dir_writes_one_pcap_per_host(run: Invoke, tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = ok(run("run", CACHE_GET, "--out-dir", str(out)))
    assert f"wrote {out / 'client.pcap'} (" in result.stderr  # stderr: stdout is the report
    client, server = read_pcap(str(out / "client.pcap")), read_pcap(str(out / "server.pcap"))
    assert (len(client), len(server)) == (4, 3)
    for frame in client:
        parsed = parse_packet(frame, TOFINO1)
        assert parsed.ip_dst == bytes([10, 0, 0, 1])  # return-to-sender swapped the addresses
        assert parsed.header is not None and parsed.header.code.is_empty()
    stacks = [parse_packet(f, TOFINO1).header.stack for f in server]  # type: ignore[union-attr]
    assert stacks == [(400,), (400,), (500,)]
    again = tmp_path / "again"
    ok(run("run", CACHE_GET, "--out-dir", str(again)))
    for name in ("client.pcap", "server.pcap"):
        assert (out / name).read_bytes() == (again / name).read_bytes()


def test_pcap_from_host_adds_frames(run: Invoke, tmp_path: Path) -> None:
    header = SwitchVMHeader(dpf_ptr=PC(False, 0), stack=(3,))
    frame = build_packet(PacketSpec(7, header), TOFINO1).frame
    pcap = tmp_path / "more.pcap"
    write_pcap(str(pcap), [frame, frame])
    data = report(run, COUNTER, "--pcap", str(pcap), "--from", "client")
    assert data["summary"]["packets"] == 8
    assert data["packets"][-1]["origin"] == f"{pcap} #2"
    assert data["memory"][0]["values"][3] == 5  # three from the scenario, two from the pcap


def test_pcap_needs_from(run: Invoke, tmp_path: Path) -> None:
    result = run("run", COUNTER, "--pcap", str(tmp_path / "x.pcap"))
    assert result.exit_code == 1
    assert "--pcap FILE and --from HOST go together" in result.stderr
    result = run("run", COUNTER, "--pcap", str(tmp_path / "x.pcap"), "--from", "client")
    assert result.exit_code == 1 and "cannot read" in result.stderr
    assert "Traceback" not in result.stderr


def test_trace_file(run: Invoke, tmp_path: Path) -> None:
    traces = tmp_path / "trace.txt"
    result = ok(run("run", COUNTER, "--trace-file", str(traces)))
    assert "    | " not in result.stdout
    text = traces.read_text()
    assert text.count("packet ") == 6 and "FAADD" in text
    assert result.stdout == ok(run("run", COUNTER)).stdout


def test_max_passes_reports_an_unsettled_network(run: Invoke) -> None:
    result = run("run", CACHE_GET, "--max-passes", "3")
    assert result.exit_code == 1
    assert "error[DPF4109]" in result.stderr and "did not settle within 3 passes" in result.stderr
    assert "not processed" in result.stdout


def test_json_diagnostics_format(run: Invoke) -> None:
    result = run("--diagnostics-format", "json", "run", "tests/run_errors/003_pipes_string.toml")
    assert result.exit_code == 1
    [diagnostic] = json.loads(result.stderr)
    assert diagnostic["code"] == "DPF4104"
    assert diagnostic["message"] == 'switches[0].pipes: expected an integer, got "two"'


# -- the schema, end to end ------------------------------------------------------------------------

STEER_ASM = """\
.dpf steer
.placement packet

prolog start:
    POP A0
    JMP add

eu0 add:
    LOAD_CONST B0, 1
    ADD A0, B0
    BEQ A0, 1, to_one, to_group     ; the branch sees the EU-entry A0: the input

eu1 to_one:
    HALT one

eu1 to_group:
    HALT group

epilog one:
    PUSH A0
    FWD forward, 1

epilog group:
    PUSH A0
    FWD multicast, 2
"""

STEER_SCENARIO = """\
seed = 3
links = [["s1:3", "s2:1"]]

[[switches]]
name = "s1"
pipes = 2
ports_per_pipe = 4

[[switches]]
name = "s2"

[[hosts]]
name = "a"
ip = "10.0.0.1"
switch = "s1"
port = 0

[[hosts]]
name = "b"
ip = "10.0.0.2"
mac = "02:00:00:00:00:bb"
switch = "s1"
port = 5

[[hosts]]
name = "c"
ip = "10.0.0.3"
switch = "s2"
port = 0

[[config]]
switch = "s1"
pipes = [0]
routes = { "10.0.0.3" = 3, b = 5 }

[[config.code]]
file = "COUNTER"
name = "count"
prolog_slot = 7

[[config.tenants]]
id = 5
constants = { 1 = 10 }
forwarding = { 1 = "b" }
multicast = { 2 = ["b", { host = "c" }, { port = 2 }] }
default_dpf = "count"
unauthorized = "pass"
app_id = 0x77
memory = [{ kind = "segment", eu = 0, lane = 0, size = 8 }]

[[config]]
switch = "s2"
routes = { c = 0 }
tenants = [{ id = 5, unauthorized = "pass" }]  # app id 0: the DPF is not run here

[[packets]]
from = "a"
to = "b"
tenant = 5
code = "steer.dpfasm"
app_id = 0x77
stack = [1]

[[packets]]
from = "a"
to = "b"
tenant = 5
code = "steer.dpfasm"
app_id = 0x77
stack = [2]

[[packets]]
from = "a"
to = "c"
tenant = 5
app_id = 0x77
stack = [4]
payload = "default DPF"

[[packets]]
from = "a"
to = "c"
tenant = 5
code = "steer.dpfasm"
app_id = 0x78
stack = [1]
"""


@pytest.fixture
def steer(tmp_path: Path) -> Path:
    (tmp_path / "steer.dpfasm").write_text(STEER_ASM)
    counter = str(ROOT / "examples" / "asm" / "counter.dpfasm")
    path = tmp_path / "steer.toml"
    path.write_text(STEER_SCENARIO.replace("COUNTER", counter))
    return path


def test_forwarding_multicast_constants_default_dpf(run: Invoke, steer: Path) -> None:
    data = report(run, str(steer))
    one, group, default, wrong_app = data["packets"]
    # stack 1 + constant 10 = 11: forward to virtual destination 1 = host b (its port, its MAC)
    [entry] = one["passes"]
    assert entry["verdict"] == "forward"
    assert [(o["port"], o["to"], o["frame"]["stack"]) for o in entry["outputs"]] == [(5, "b", [11])]
    # stack 2 + 10 = 12: multicast group 2 = b, c (through the route to s2), port 2 (unwired)
    first = group["passes"][0]
    assert first["verdict"] == "multicast"
    assert [(o["port"], o["to"]) for o in first["outputs"]] == [(5, "b"), (3, "s2:1"), (2, "")]
    on_s2 = group["passes"][1]
    assert (on_s2["switch"], on_s2["verdict"]) == ("s2", "pass")
    assert "does not match" in on_s2["reason"]  # other app id: passed unexecuted
    assert on_s2["outputs"][0]["to"] == "c"
    # no DPF pointer: the default DPF (the counter, installed at slot 7 under the name count)
    assert default["passes"][0]["outputs"][0]["frame"]["stack"] == [4, 0]
    assert default["passes"][0]["outputs"][0]["frame"]["dpf"] == "none"
    # a wrong app id with unauthorized = pass travels on unexecuted
    assert wrong_app["passes"][0]["verdict"] == "pass"
    assert "does not match" in wrong_app["passes"][0]["reason"]
    assert data["hosts"] == {"a": 0, "b": 2, "c": 3}
    assert data["summary"]["unconnected"] == 1
    s1 = next(t for t in data["tenants"] if t["switch"] == "s1")
    assert s1["stats"]["unauthorized"] == 1 and s1["stats"]["multicast"] == 1


def test_scenario_api_builds_the_network(steer: Path) -> None:
    scenario = load_scenario(steer)
    network = scenario.network
    assert list(network.switches) == ["s1", "s2"]
    assert [p.id for p in scenario.packets] == [1, 2, 3, 4] and len(network.queue) == 4
    s1 = network.switches["s1"].control
    assert scenario.dpfs["count"][1].entry == 7
    assert s1.permissions(5, pipe=0) is not None and s1.permissions(5, pipe=1) is None
    assert network.hosts["b"].mac == bytes.fromhex("0200000000bb")
    assert network.hosts["a"].mac == bytes([2, 0, 10, 0, 0, 1])  # derived from the address
    network.run()
    assert len(network.hosts["b"].received) == 2


def test_json_scenario_equals_toml(run: Invoke, steer: Path, tmp_path: Path) -> None:
    data = tomllib.loads(steer.read_text())
    as_json = tmp_path / "steer.json"
    as_json.write_text(json.dumps(data))
    from_toml, from_json = report(run, str(steer)), report(run, str(as_json))
    from_toml.pop("scenario"), from_json.pop("scenario")
    assert from_toml == from_json


def test_object_code(run: Invoke, tmp_path: Path) -> None:
    obj = tmp_path / "counter.dpfo"
    ok(run("asm", "examples/asm/counter.dpfasm", "-o", str(obj)))
    text = (SCENARIOS / "counter.toml").read_text().replace("../asm/counter.dpfasm", str(obj))
    scenario = tmp_path / "counter.toml"
    scenario.write_text(text)
    from_object, from_asm = report(run, str(scenario)), report(run, COUNTER)
    assert from_object["packets"] == from_asm["packets"]
    assert from_object["memory"] == from_asm["memory"]


def test_image_code(run: Invoke, tmp_path: Path) -> None:
    """A scenario may install an image dpfc link wrote: the counter linked for tenant 7,
    its prolog pinned at slot 0, runs as the assembly installed by the scenario does."""
    obj, image = tmp_path / "counter.dpfo", tmp_path / "counter.dpfimg"
    ok(run("asm", "examples/asm/counter.dpfasm", "-o", str(obj)))
    ok(run("link", f"{obj}@7", "--entry", "counter=0", "-o", str(image)))
    text = (SCENARIOS / "counter.toml").read_text()
    text = text.replace('file = "../asm/counter.dpfasm"\nprolog_slot = 0', f'file = "{image}"')
    assert str(image) in text
    scenario = tmp_path / "counter.toml"
    scenario.write_text(text)
    from_image, from_asm = report(run, str(scenario)), report(run, COUNTER)
    assert from_image["packets"] == from_asm["packets"]
    assert from_image["memory"] == from_asm["memory"]


def test_scenario_errors_carry_file_and_code(tmp_path: Path) -> None:
    path = tmp_path / "x.toml"
    path.write_text('[[switches]]\nname = "s1"\npipes = "two"\n')
    with pytest.raises(ScenarioError) as info:
        load_scenario(path)
    assert (info.value.file, info.value.code) == (str(path), "DPF4104")
    assert info.value.message == 'switches[0].pipes: expected an integer, got "two"'


# -- the error corpus ------------------------------------------------------------------------------


@pytest.mark.parametrize("path", CORPUS, ids=[p.name for p in CORPUS])
def test_error_corpus(path: Path, cli: CliRunner, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ERRORS)
    result = cli.invoke(main, ["run", path.name], prog_name="dpfc")
    assert result.exit_code == 1, f"exit {result.exit_code}\n{result.output}"
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert result.stdout == ""
    assert "Traceback" not in result.stderr and "internal compiler error" not in result.stderr
    assert_golden(path.with_suffix(".stderr"), result.stderr)
    first = path.read_text().splitlines()[0] if path.suffix == ".toml" else ""
    expect = EXPECT.match(first)
    if path.suffix == ".toml":
        assert expect is not None, f"{path.name} must start with `# expect DPFxxxx: why`"
        assert f"error[{expect.group(1)}]" in result.stderr


def test_corpus_is_large_and_covers_every_scenario_code() -> None:
    assert len(CORPUS) >= 25
    codes = set()
    for path in CORPUS:
        match = ERROR_HEAD.match(path.with_suffix(".stderr").read_text())
        if match is not None:
            codes.add(match.group("code"))
    assert {f"DPF41{n:02}" for n in range(9)} <= codes


def test_unlinked_chaining_code_is_refused_in_packets(run: Invoke, tmp_path: Path) -> None:
    """An object's in-packet DPF that chains holds a placeholder NEXT_PC until it is linked:
    a packet may not carry it (it would run the placeholder silently)."""
    get = compile_source(ROOT / "examples/dpf/kvs.dpf", CompileOptions(only="cache_get"))
    (tmp_path / "get.dpfo").write_bytes(write_object(get.object()))
    text = (SCENARIOS / "cache_get.toml").read_text()
    text = text.replace("../asm/cache_get.dpfasm", str(tmp_path / "get.dpfo"))
    text = text.replace(
        'file = "miss_counter.dpfasm"', f'file = "{SCENARIOS / "miss_counter.dpfasm"}"'
    )
    scenario = tmp_path / "kvs.toml"
    scenario.write_text(text)
    result = run("run", str(scenario))
    assert result.exit_code == 1
    assert "error[DPF4105]" in result.stderr and "chains to count_min.count_min" in result.stderr


def test_a_code_file_that_is_not_utf8_is_located(run: Invoke, tmp_path: Path) -> None:
    text = (SCENARIOS / "counter.toml").read_text(encoding="utf-8")
    (tmp_path / "counter.toml").write_text(
        text.replace('file = "../asm/counter.dpfasm"', 'file = "bad.dpfasm"'), encoding="utf-8"
    )
    (tmp_path / "bad.dpfasm").write_bytes(b"prolog:\n    POP A0\xff\n")
    result = run("run", str(tmp_path / "counter.toml"))
    assert result.exit_code == 1, result.output
    assert f"{tmp_path / 'bad.dpfasm'}:2:11: error[DPF0002]: not UTF-8 text" in result.stderr
    assert "Traceback" not in result.stderr
