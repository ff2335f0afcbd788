"""The engines the simulator benchmarks time, by name: a registry, so that a new engine (the
llvmlite JIT of issue 14, when it exists) adds a column of figures by registering itself.

An :class:`Engine` turns a configured simulator switch (code installed, memory mapped, the
control plane's tables filled) into a function that runs one frame arriving on a port;
the benchmark times that function over the workload's frames. ``missing`` says why the
engine cannot run here (None: it can); a missing engine becomes a ``skipped`` line in the
table and in ``results.json``, never a figure.

Today one engine is registered: ``interpreter``, the pure-Python simulator
(:meth:`dpfc.backends.sim.Switch.process`). bmv2 is not an engine of this registry: it
runs the generated P4 program on its own switch process (:mod:`dpfc.bench.p4`), and
:func:`bmv2_missing` says whether its toolchain is installed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from dpfc.backends.p4.bmv2 import ToolchainMissing, find_toolchain
from dpfc.backends.sim import Switch

Processor = Callable[[bytes, int], object]


def _always_available() -> str | None:
    return None


@dataclass(frozen=True)
class Engine:
    name: str
    description: str
    processor: Callable[[Switch], Processor]
    missing: Callable[[], str | None] = _always_available


ENGINES: dict[str, Engine] = {}


def register(engine: Engine) -> None:
    """Add ``engine`` (a second registration under the same name replaces the first)."""
    ENGINES[engine.name] = engine


def _interpret(switch: Switch) -> Processor:
    return switch.process


register(Engine("interpreter", "the pure-Python simulator (Switch.process)", _interpret))


def bmv2_missing() -> str | None:
    """Why bmv2 rows cannot be measured here, or None when p4c and simple_switch exist."""
    try:
        find_toolchain()
    except ToolchainMissing as missing:
        return str(missing)
    return None


__all__ = ["ENGINES", "Engine", "Processor", "bmv2_missing", "register"]
