"""What a pass is: a named, documented rewrite of one :class:`~dpfc.ir.core.Function`.

Every pass module defines ``PASS = FunctionPass(name, summary, run)``: ``run`` rewrites a
function in place and returns whether it changed anything. The manager
(:mod:`dpfc.passes.manager`) applies a pass to every function of a module.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from dpfc.ir import Function, Module


@dataclass(frozen=True)
class FunctionPass:
    name: str
    summary: str  # one line, shown by ``dpfc opt --list-passes``
    run_function: Callable[[Function], bool]

    def run(self, module: Module) -> bool:
        changed = False
        for function in module.functions:
            changed |= self.run_function(function)
        return changed
