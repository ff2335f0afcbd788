"""Translation validation: the placed machine code of a DPF equals its IR, for every input.

Contract: :func:`validate` proves with Z3 that a compiled DPF's machine program does what
its IR does (the IR as lowered from source, before any optimisation: the proof then covers
every pass, the boolean forms, materialised constants and the schedule at once). Both run
symbolically on the same inputs (:mod:`.machine`, :mod:`.ir`); for every pair of an IR
path and a machine path, no input may take both and see a difference in: the outgoing
stack, the steering action and value (the low 16 bits the switch uses, for the actions
that take one), the chain (the PC the linker gave its target), the header kept or removed,
every lane memory after the pass (every word written, and where), or a fault of the
machine (the IR has none). The answer is a :class:`Validation`: ``proved``; ``refuted``
with an input that shows the difference (a compiler bug); or ``unknown`` with Z3's reason.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from dpfc.ir import Module, Op
from dpfc.isa import PC, SelectorKind
from dpfc.machine import PLACEHOLDER, MachineProgram
from dpfc.schedule import Schedule

from .bitvec import Term, Words
from .ir import IRPath, ir_paths, memory_name, rand_names
from .machine import Path, symbolic_paths

VALUED = ("forward", "multicast", "set_port")


@dataclass(frozen=True)
class Validation:
    dpf: str
    verdict: str  # "proved" | "refuted" | "unknown"
    pairs: int  # (IR path, machine path) pairs decided
    reason: str = ""
    counterexample: dict[str, int] = field(default_factory=dict)

    @property
    def proved(self) -> bool:
        return self.verdict == "proved"


def _differs(w: Words, ir: IRPath, m: Path, chains: Mapping[str, PC]) -> Term:
    true = w.true()
    if m.fault is not None or m.decision is None:
        return true
    d = m.decision
    if len(d.stack) != len(ir.stack) or d.steering != ir.steer or d.hdr_mod != ir.drop_code:
        return true
    if ir.chain is None and d.next_pc is not None:
        return true
    if ir.chain is not None and (
        not isinstance(d.next_pc, PC) or chains.get(ir.chain) != d.next_pc
    ):
        return true
    parts = [a.ne(b) for a, b in zip(d.stack, ir.stack, strict=True)]
    if ir.steer in VALUED:
        value = ir.steer_value if ir.steer_value is not None else w.const(0)
        parts.append(value.bits(15, 0).ne(d.value.bits(15, 0)))
    for where in sorted(set(ir.memories) | set(m.memories)):
        start = w.memory(memory_name(where))
        parts.append(ir.memories.get(where, start).ne(m.memories.get(where, start)))
    return w.any_of(parts)


def draw_order(schedule: Schedule) -> tuple[int, ...]:
    """For each RAND load of the prolog (register order: the order of the draws), the index
    of the IR ``rand`` instruction whose word it holds."""
    problem = schedule.problem
    return tuple(
        problem.ops[load.op].index
        for load in schedule.prolog
        if load.kind is SelectorKind.RAND and load.op is not None
    )


def validate(
    module: Module,
    name: str,
    program: MachineProgram,
    bindings: Mapping[str, tuple[int, int]],
    rand_order: Sequence[int],
    chains: Mapping[str, PC],
) -> Validation:
    """Prove ``program`` equals DPF ``name`` of ``module`` (module docstring); ``bindings``
    are the schedule's array -> (EU, lane), ``rand_order`` its prolog draws, ``chains`` the
    PC of each chain target."""
    w = Words()
    function = module.function(name)
    depth = function.params + any(i.op is Op.PEEK for i in function.instrs())
    rands = rand_names(function, rand_order)
    ir = ir_paths(w, module, name, program.profile, bindings, rands)
    machine = symbolic_paths(w, program, depth)
    pairs = 0
    for p in ir:
        for m in machine:
            pairs += 1
            answer = w.example(p.condition.land(m.condition).land(_differs(w, p, m, chains)))
            if answer.verdict == "found":
                return Validation(name, "refuted", pairs, "", dict(answer.counterexample))
            if answer.verdict == "unknown":
                return Validation(name, "unknown", pairs, answer.reason)
    return Validation(name, "proved", pairs)


def validate_unlinked(
    module: Module, name: str, module_name: str, program: MachineProgram, schedule: Schedule
) -> Validation:
    """:func:`validate` for ``program`` as code generation wrote it, before a linker: each
    chain's NEXT_PC is the placeholder of its relocation (the IR names a chain within its
    module unqualified, a relocation qualified)."""
    chains = {r.target: PLACEHOLDER for r in program.relocations}
    chains |= {t.removeprefix(module_name + "."): PLACEHOLDER for t in list(chains)}
    return validate(module, name, program, schedule.bindings, draw_order(schedule), chains)


__all__ = ["Validation", "draw_order", "validate", "validate_unlinked"]
