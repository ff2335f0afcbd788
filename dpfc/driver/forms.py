"""The forms of a module's IR the scheduler is handed, from one lowering.

The optimised IR is one form of each DPF. Re-association (the ``reassociate`` pass) lowers
expression trees but keeps more values alive at once, which can cost EUs where registers
are scarce; so for every DPF that re-association changed, the scheduler also gets the DPF
optimised without it and keeps the better (:func:`dpfc.schedule.schedule_module`).

Both forms start from the one lowered IR: :func:`copy_module` takes a copy before the
default pipeline changes the IR in place, and :func:`without_reassociation` optimises the
copy without re-association (and writes its shifts for the profile, as the driver does
for the optimised form: :func:`~dpfc.passes.split_shifts`). A copy has instructions, blocks, terminators and functions of
its own (passes change those in place) and shares what no pass changes: source spans, the
epilog's action spans, names.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from dpfc.ir import Br, Exit, Function, Instr, Jump, Module, Terminator, format_function
from dpfc.passes import DEFAULT_PIPELINE, run_pipeline, split_shifts
from dpfc.target import TargetProfile

WITHOUT_REASSOCIATION = [name for name in DEFAULT_PIPELINE if name != "reassociate"]

Copier = Callable[[Instr], Instr]  # an instruction -> its copy


def copy_module(module: Module) -> Module:
    """A copy of ``module`` that passes can change without changing ``module``."""
    arrays = {name: replace(decl) for name, decl in module.arrays.items()}
    return replace(module, arrays=arrays, functions=[copy_function(f) for f in module.functions])


def copy_function(function: Function) -> Function:
    """A copy of ``function`` with instructions of its own (operands, φ sources and
    terminators point at the copies)."""
    copies: dict[int, Instr] = {}

    def copied(instr: Instr) -> Instr:
        # Created on first use: a φ may name an instruction of a later block.
        found = copies.get(id(instr))
        if found is None:
            found = copies[id(instr)] = replace(instr, args=[], incoming=list(instr.incoming))
        return found

    blocks = []
    for block in function.blocks:
        instrs = [copied(instr) for instr in block.instrs]
        blocks.append(replace(block, instrs=instrs, term=_terminator(block.term, copied)))
    for block in function.blocks:
        for instr in block.instrs:
            copied(instr).args = [copied(arg) for arg in instr.args]
    return replace(function, blocks=blocks, attrs=dict(function.attrs))


def _terminator(term: Terminator, copied: Copier) -> Terminator:
    if isinstance(term, Br):
        return replace(term, cond=copied(term.cond))
    if isinstance(term, Jump):
        return replace(term)
    assert isinstance(term, Exit)
    steer_value = copied(term.steer_value) if term.steer_value is not None else None
    return replace(term, push=[copied(v) for v in term.push], steer_value=steer_value)


def without_reassociation(
    lowered: Module, optimised: Module, profile: TargetProfile
) -> dict[str, Function]:
    """The DPFs of ``optimised`` that re-association changed, optimised without it from
    ``lowered`` (a copy of the lowered IR, changed in place), their shifts written for
    ``profile`` as the optimised form's were."""
    run_pipeline(lowered, WITHOUT_REASSOCIATION)
    # The optimised form's shifts were written without error; a DPF whose shifts this form
    # cannot write keeps the optimised form alone.
    written = [
        f for f in lowered.functions if not split_shifts(replace(lowered, functions=[f]), profile)
    ]
    wanted = {f.name: f for f in optimised.functions}
    return {
        f.name: f
        for f in written
        if f.name in wanted and format_function(f) != format_function(wanted[f.name])
    }
