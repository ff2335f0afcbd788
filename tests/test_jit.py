"""The llvmlite JIT (dpfc.backends.jit) gives what the interpreter gives.

* Every conformance vector (tests/conformance/vectors.py) through a :class:`JitSwitch`
  gives the golden bytes and memory the simulator gives (the same files bmv2 is held to).
* Batches of the benchmark workloads: every result (verdict, reason, outputs, bundles run,
  egress pointer), every counter, every lane-memory word, the packet count, the reports and
  the RAND state equal the interpreter's on a twin switch, including batches that mix
  packets the native path runs with packets it hands to the interpreter (malformed,
  unauthorized, unmapped, foreign tenants).
* The same in-packet code format version 2 (a tofino1 copy with ``code_format = 2``): every
  workload frame runs natively, with the interpreter's results and bytes.
* A table change made between batches is seen by the next batch (the control plane's
  generation), and every ControlPlane method is classified as a table change or not.
* ``dpfc run --jit`` reports what ``--no-jit`` reports on every example scenario.

Random compiled programs are compared in tests/test_compile_differential.py (the first
packet of every compiled DPF, through tests/sim_harness.py).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner

from dpfc.backends.jit import JitSwitch, missing
from dpfc.backends.sim import Network, PassResult, Switch, passes_until_done
from dpfc.backends.sim.control import READS, TABLE_CHANGES, ControlPlane
from dpfc.bench import workloads as w
from dpfc.cli.main import main
from dpfc.target import BUILTIN_PROFILES
from tests.conformance.harness import expected_counts, golden, run_vector
from tests.conformance.targets import Frames, SimTarget
from tests.conformance.vectors import vectors

pytestmark = pytest.mark.skipif(missing() is not None, reason=f"no JIT here: {missing()}")

PROFILE = BUILTIN_PROFILES["tofino1"]
VECTORS = vectors()
HERE = Path(__file__).resolve().parent / "conformance" / "vectors"
COUNTS = {"native": 0, "interpreted": 0}


class JitTarget(SimTarget):
    name = "jit"

    def reset(self) -> None:
        super().reset()
        self.jit = JitSwitch(self.switch)

    def send(self, port: int, frame: bytes, *, expect: int = 1, timeout: float = 3.0) -> Frames:
        del expect, timeout
        return sorted(passes_until_done(self._counted_pass, frame, port))

    def _counted_pass(self, frame: bytes, port: int) -> PassResult:
        before = self.jit.deopts
        result = self.jit.process(frame, port)
        COUNTS["interpreted" if self.jit.deopts > before else "native"] += 1
        return result


@pytest.mark.parametrize("vector", VECTORS, ids=[v.name for v in VECTORS])
def test_vector_on_the_jit(vector: object) -> None:
    expected = (HERE / f"{vector.name}.json").read_text()  # type: ignore[attr-defined]
    run = run_vector(JitTarget(PROFILE), vector, expected_counts(expected))  # type: ignore[arg-type]
    assert golden(run) == expected


def test_most_vector_packets_ran_natively() -> None:
    """Not a vacuous comparison: the native path ran most packets of the vectors above."""
    if COUNTS["native"] + COUNTS["interpreted"] == 0:
        pytest.skip("run with the vector tests")
    assert COUNTS["native"] > 2 * COUNTS["interpreted"], COUNTS


Setup = Callable[[], tuple[Network, Switch, list[bytes]]]
WORKLOADS: dict[str, Setup] = {
    "counter": lambda: w.counter(PROFILE),
    "counter_packet": lambda: w.counter(PROFILE, "packet"),
    "cache_hits": lambda: w.cache_get(PROFILE, hits=True),
    "cache_misses": lambda: w.cache_get(PROFILE, hits=False),
    "lb3": lambda: w.lb3(PROFILE),
    "lb3_switch": lambda: w.lb3(PROFILE, "switch"),
    "paxos": lambda: w.paxos_acceptor(PROFILE, "switch"),
    "tenants": lambda: w.tenants(PROFILE, 50),
}


def _state(switch: Switch) -> object:
    pipe = switch.pipes[0]
    return (
        {tenant: vars(stats) for tenant, stats in pipe.stats.items()},
        [bytes(m.words) if m._words is not None else None for m in pipe.all_lanes()],
        pipe.packets_seen,
        [switch_rng.getrandbits(32) for switch_rng in switch.rngs],
        list(pipe.reports),
    )


def _hostile(frames: list[bytes]) -> list[bytes]:
    """The workload's frames with packets the native path must hand over mixed in."""
    good = frames[0]
    out: list[bytes] = []
    for index, frame in enumerate(frames * 3):
        out.append(frame)
        if index % 5 == 0:
            out.append(good[:40])  # truncated: malformed
        if index % 7 == 0:
            vni_at = 14 + 20 + 8 + 4
            out.append(good[:vni_at] + b"\x00\x09\x99" + good[vni_at + 3 :])  # no entry
        if index % 11 == 0:
            out.append(good[:-1] + bytes([good[-1] ^ 0xFF]))  # inner byte: still runs
    return out


@pytest.mark.parametrize("name", sorted(WORKLOADS))
def test_batches_equal_the_interpreter(name: str) -> None:
    _, native_switch, frames = WORKLOADS[name]()
    _, twin, _ = WORKLOADS[name]()
    jit = JitSwitch(native_switch)
    sent = _hostile(frames)
    batch = jit.run_batch(sent, 0)
    for index, frame in enumerate(sent):
        mine, theirs = batch.result(index), twin.process(frame, 0)
        assert (mine.tenant, mine.verdict, mine.reason) == (
            theirs.tenant,
            theirs.verdict,
            theirs.reason,
        )
        assert mine.outputs == theirs.outputs and mine.recirculated == theirs.recirculated
        assert mine.executed == theirs.executed and mine.egress_ptr == theirs.egress_ptr
    assert _state(native_switch) == _state(twin)
    assert jit.native >= len(frames) * 3


FORMAT_2 = replace(PROFILE, code_format=2)
FORMAT_2_WORKLOADS: dict[str, Setup] = {
    "counter_packet": lambda: w.counter(FORMAT_2, "packet"),
    "cache_hits": lambda: w.cache_get(FORMAT_2, hits=True),
    "cache_misses": lambda: w.cache_get(FORMAT_2, hits=False),
    "lb3": lambda: w.lb3(FORMAT_2),
    "paxos": lambda: w.paxos_acceptor(FORMAT_2, "switch"),
}


@pytest.mark.parametrize("name", sorted(FORMAT_2_WORKLOADS))
def test_format_2_batches_run_natively_as_the_interpreter(name: str) -> None:
    """In-packet code format version 2 (header, stack, code options; tagged bundles): the
    native path parses, runs and deparses it without the interpreter, with its bytes."""
    _, native_switch, frames = FORMAT_2_WORKLOADS[name]()
    _, twin, _ = FORMAT_2_WORKLOADS[name]()
    jit = JitSwitch(native_switch)
    batch = jit.run_batch(frames, 0)
    for index, frame in enumerate(frames):
        mine, theirs = batch.result(index), twin.process(frame, 0)
        assert (mine.verdict, mine.reason, mine.outputs) == (
            theirs.verdict,
            theirs.reason,
            theirs.outputs,
        )
    assert _state(native_switch) == _state(twin)
    assert (jit.native, jit.deopts) == (len(frames), 0)


def test_a_table_change_between_batches_is_seen() -> None:
    _, switch, frames = w.counter(PROFILE)
    jit = JitSwitch(switch)
    assert jit.run_batch(frames[:1], 0).result(0).verdict == "pass"
    switch.control.set_default_port(None)
    switch.control.set_route(bytes([10, 0, 0, 2]), 5)
    result = jit.run_batch(frames[:1], 0).result(0)
    assert result.outputs[0][0] == 5
    assert jit.compilations == 1  # tables are data: a route needs no new code


def test_every_control_plane_method_is_classified() -> None:
    public = {
        n for n, _ in inspect.getmembers(ControlPlane, inspect.isfunction) if not n.startswith("_")
    }
    assert public == set(TABLE_CHANGES) | set(READS)
    assert not set(TABLE_CHANGES) & set(READS)


def test_a_bad_port_is_refused_as_the_interpreter_refuses_it() -> None:
    _, switch, frames = w.counter(PROFILE)
    with pytest.raises(ValueError, match="has no port 99"):
        JitSwitch(switch).process(frames[0], 99)


# the tutorial's flow_guard scenarios read objects the tutorial writes first (test_tutorial)
SCENARIOS = sorted(
    p
    for p in (Path(__file__).resolve().parent.parent / "examples" / "scenarios").glob("*.toml")
    if not p.stem.startswith("flow_guard")
)


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[p.stem for p in SCENARIOS])
def test_dpfc_run_reports_the_same_with_the_jit(scenario: Path) -> None:
    """`dpfc run --jit` (every switch's passes through a JitSwitch) reports exactly what
    the interpreter reports: verdicts, frames, counters, reports."""
    runner = CliRunner()
    interpreted = runner.invoke(main, ["run", str(scenario), "--json", "--no-jit"])
    native = runner.invoke(main, ["run", str(scenario), "--json", "--jit"])
    assert interpreted.exit_code == 0, interpreted.output
    assert native.exit_code == 0 and native.output == interpreted.output


def _looped(setup: Setup, batched: bool, looped: bool) -> tuple[Network, Switch, JitSwitch | None]:
    """The workload's network; ``looped``: with a cable from port 3 back into port 4 of the
    same pipe and the server's address routed to port 3, so that every frame loops until
    the hop limit and queue depths change while a batch would run."""
    network, switch, frames = setup()
    if looped:
        network.connect("s1", 3, "s1", 4)
        switch.control.set_route(bytes([10, 0, 0, 2]), 3)
    engine = None
    if batched:
        engine = JitSwitch(switch)
        network.set_processor("s1", engine.process, batch=engine.run_frames)
    for frame in frames * 5:
        network.send("client", frame)
    return network, switch, engine


@pytest.mark.parametrize("looped", [False, True], ids=["straight", "looped"])
@pytest.mark.parametrize("name", ["counter", "lb3_switch", "paxos"])
def test_the_network_loop_in_batches_equals_the_interpreter(name: str, looped: bool) -> None:
    """Network.run with JitSwitch.run_frames (batches of the queue's head, each pass with
    its own timestamp and queue depth, stopping after a frame that comes back) gives the
    records, deliveries, counters, memory and reports of the interpreter's loop."""
    ours, mine, engine = _looped(WORKLOADS[name], batched=True, looped=looped)
    theirs, twin, _ = _looped(WORKLOADS[name], batched=False, looped=looped)
    assert ours.run() == theirs.run()
    view = [
        (r.sequence, r.packet, r.port, r.result.verdict, r.result.outputs) for r in ours.records
    ]
    assert view == [
        (r.sequence, r.packet, r.port, r.result.verdict, r.result.outputs) for r in theirs.records
    ]
    assert ours.transmissions == theirs.transmissions and ours.hop_limited == theirs.hop_limited
    assert ours.now_ns == theirs.now_ns
    assert _state(mine) == _state(twin)
    assert engine is not None and engine.native > 0


def test_a_large_run_uses_the_jit_and_a_network_can_go_back() -> None:
    network, switch, frames = w.counter(PROFILE)
    native = JitSwitch(switch)
    network.set_processor("s1", native.process)
    for frame in frames * 4:
        network.send("client", frame)
    network.run(keep=False)
    assert native.native == len(frames) * 4 and native.deopts == 0
    network.set_processor("s1", None)
    assert "s1" not in network.processors


def test_without_llvmlite_dpfc_run_says_so_and_the_interpreter_runs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import dpfc.backends.jit as jit_package

    monkeypatch.setattr(jit_package, "missing", lambda: "llvmlite cannot be imported (test)")
    scenario = str(SCENARIOS[0])
    runner = CliRunner()
    plain = runner.invoke(main, ["run", scenario, "--json", "--no-jit"])
    asked = runner.invoke(main, ["run", scenario, "--json", "--jit"])
    assert asked.exit_code == 0
    assert (
        "dpfc run: --jit: llvmlite cannot be imported (test); the interpreter runs" in asked.output
    )
    assert asked.output.endswith(plain.output)
