"""The llvmlite JIT of the simulator's ingress pass (docs/simulator.md §8).

:class:`JitSwitch` runs a :class:`dpfc.backends.sim.Switch`'s packets as native code over
batches held in one buffer, with the interpreter's results; :func:`missing` says why it
cannot run here (None: it can).
"""

from __future__ import annotations

from .llvm import missing
from .switch import Batch, JitSwitch, JitUnavailable, Packed

__all__ = ["Batch", "JitSwitch", "JitUnavailable", "Packed", "missing"]
