"""The engines the simulator benchmarks time, by name: a registry, so that a new engine (the
llvmlite JIT, when it is installed) adds a column of figures by registering itself.

An :class:`Engine` prepares, for a configured simulator switch (code installed, memory
mapped, the control plane's tables filled) and a workload's frames, a run of N packets
arriving on port 0 (:data:`~dpfc.bench.timing.Prepare`); the benchmark times the run. ``missing`` says why the
engine cannot run here (None: it can); a missing engine becomes a ``skipped`` line in the
table and in ``results.json``, never a figure.

Two engines are registered: ``interpreter``, the pure-Python simulator
(:meth:`dpfc.backends.sim.Switch.process`, one call per packet), and ``jit``, the llvmlite
JIT (:class:`dpfc.backends.jit.JitSwitch`: the packets packed into one buffer before the
clock starts, then one ``run_packed`` call), missing where llvmlite cannot run. bmv2 is not an engine of this registry: it
runs the generated P4 program on its own switch process (:mod:`dpfc.bench.p4`), and
:func:`bmv2_missing` says whether its toolchain is installed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from weakref import WeakKeyDictionary

from dpfc.backends import jit
from dpfc.backends.p4 import ToolchainMissing, find_toolchain
from dpfc.backends.sim import Switch

from .timing import Prepare, Run, round_robin


def _always_available() -> str | None:
    return None


@dataclass(frozen=True)
class Engine:
    name: str
    description: str
    prepare: Prepare
    missing: Callable[[], str | None] = _always_available


ENGINES: dict[str, Engine] = {}


def register(engine: Engine) -> None:
    """Add ``engine`` (a second registration under the same name replaces the first)."""
    ENGINES[engine.name] = engine


def _interpret(switch: Switch, frames: list[bytes], packets: int) -> Run:
    process = switch.process
    count = len(frames)

    def run() -> None:
        for index in range(packets):
            process(frames[index % count], 0)

    return run


# One JitSwitch per switch: the warm-up and the timed runs share its compiled code.
_JITS: WeakKeyDictionary[Switch, jit.JitSwitch] = WeakKeyDictionary()


def _native(switch: Switch, frames: list[bytes], packets: int) -> Run:
    native = _JITS.get(switch)
    if native is None:
        native = _JITS[switch] = jit.JitSwitch(switch)
    packed = jit.Packed(round_robin(frames, packets))
    native.pipe(0)  # compile the tables and code memory now, not on the clock

    def run() -> None:
        native.run_packed(packed, 0)

    return run


register(Engine("interpreter", "the pure-Python simulator (Switch.process)", _interpret))
register(
    Engine(
        "jit",
        "the llvmlite JIT (JitSwitch.run_packed over one buffer)",
        _native,
        jit.missing,
    )
)


def bmv2_missing() -> str | None:
    """Why bmv2 rows cannot be measured here, or None when p4c and simple_switch exist."""
    try:
        find_toolchain()
    except ToolchainMissing as missing:
        return str(missing)
    return None


__all__ = ["ENGINES", "Engine", "bmv2_missing", "register"]
