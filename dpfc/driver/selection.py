"""What a compile schedules: the DPFs ``--dpf`` needs, and the arrays ``--bindings`` fixes.

* :func:`scheduled_functions`: ``--dpf NAME`` schedules that DPF and the DPFs it shares
  unpinned arrays with, transitively (their bindings depend on each other); a name the
  module does not have is :class:`UnknownDpfError`;
* :func:`object_bindings`: the arrays that other modules' objects bound (by
  module-qualified name) are fixed before scheduling, so a module compiled against another
  module's object binds a shared array where the other did; a conflicting ``@pin`` is
  DPF5221.
"""

from __future__ import annotations

from collections.abc import Sequence

from dpfc.catalog import codes
from dpfc.codegen import qualified
from dpfc.diagnostics import Diagnostic, DiagnosticError
from dpfc.ir import Module
from dpfc.objfile import ObjectFile


class UnknownDpfError(KeyError):
    """``--dpf NAME`` names no DPF of the module (``available``: the DPFs it has)."""

    def __init__(self, name: str, available: Sequence[str]) -> None:
        super().__init__(name)
        self.name = name
        self.available = tuple(available)


def scheduled_functions(module: Module, only: str | None) -> set[str]:
    """The DPFs to schedule for ``--dpf only``: it and every DPF that shares an unpinned
    array with it, transitively (all of them without ``only``)."""
    names = {f.name for f in module.functions}
    if only is None:
        return names
    if only not in names:
        raise UnknownDpfError(only, [f.name for f in module.functions])
    uses = {
        f.name: {i.symbol for i in f.instrs() if i.symbol in module.arrays}
        for f in module.functions
    }
    unpinned = {name for name, decl in module.arrays.items() if decl.pin is None}
    group = {only}
    frontier = [only]
    while frontier:
        shared = uses[frontier.pop()] & unpinned
        for other, arrays in uses.items():
            if other not in group and arrays & shared:
                group.add(other)
                frontier.append(other)
    return group


def object_bindings(
    module: Module, objects: Sequence[ObjectFile]
) -> tuple[dict[str, tuple[int, int]], dict[str, str]]:
    """IR array name -> (EU, lane) for the arrays of ``module`` that ``objects`` bind, and
    who bound each (for diagnostics). A pinned array bound elsewhere is DPF5221."""
    bindings: dict[str, tuple[int, int]] = {}
    bound_by: dict[str, str] = {}
    by_symbol = {
        binding.name: (binding, obj.path)
        for obj in objects
        for dpf in obj.dpfs
        for binding in dpf.program.arrays
    }
    for name, decl in module.arrays.items():
        found = by_symbol.get(qualified(module.name, name))
        if found is None:
            continue
        binding, path = found
        where = (binding.eu, binding.lane)
        if decl.pin is not None and decl.pin != where:
            raise DiagnosticError(
                Diagnostic(
                    codes.BINDING_CONFLICT,
                    f"array `{binding.name}` is pinned to EU{decl.pin[0]} lane {decl.pin[1]}, "
                    f"but {path} binds it to EU{where[0]} lane {where[1]}",
                    decl.span,
                    hint="one array has one place on a switch: change the @pin or compile "
                    "the other module again",
                )
            )
        bindings[name] = where
        bound_by[name] = path
    return bindings, bound_by
