"""Optimised SSA IR -> the scheduling :class:`~dpfc.schedule.problem.Problem` of one DPF.

Contract: the input is a verified, optimised IR function (``DEFAULT_PIPELINE`` has run: no
loops, no MUL by a constant). The output is the tree of paths the scheduler places, or a
user diagnostic (DPF6001-6008) for what SwitchVM cannot run.

* **Tree of paths.** The CFG is walked from the entry; Jumps continue the current tree node,
  so a join block is copied into every path that reaches it and its φs take the value of the
  predecessor on that path. Nodes are numbered in preorder (taken subtree first).
* **Booleans become branches.** A condition is kept symbolic (a compare, ``and``/``or``/
  ``xor``/``select`` of conditions, or a constant) until something needs it: a ``br`` turns
  it into a decision tree of :class:`~.tree.Branch` nodes (``≤ ≥ ≠`` are the strict compares
  with the targets swapped, docs/isa.md item 6); a word ``select``/``zext`` of a condition splits
  the node there, and each child continues the code with its own value.
* **Operations.** Inputs and constants are shared by all paths (constants unique by value);
  a pure operation identical to one on an ancestor node is reused (so code copied into
  several paths does not multiply work the parent could do once); memory operations are
  never merged: each path runs its own copy exactly once.

This module walks the CFG (φs, jumps, branches, exits), checks the epilog (DPF6004), the
arrays' pins (DPF6005) and the prolog (DPF6006), and assembles the Problem. The pieces it
drives live beside it: :mod:`.state` (the operations and nodes built so far, DPF6003),
:mod:`.instructions` (one instruction -> operations, DPF6001/6002/6007/6008) and
:mod:`.conditions` (symbolic conditions, what a path knows, decision trees).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from dpfc.catalog import codes
from dpfc.diagnostics import Diagnostic, DiagnosticError, Note
from dpfc.ir import MEMORY_OPS, Br, Exit, Function, Instr, Jump, Module, Op
from dpfc.schedule.problem.canonical import canonical_order
from dpfc.schedule.problem.conditions import Cont, Value, Walk, branch_on
from dpfc.schedule.problem.instructions import record_instr
from dpfc.schedule.problem.materialise import materialise_constants
from dpfc.schedule.problem.state import BuildState
from dpfc.schedule.problem.tree import ArrayInfo, Kind, Problem, TreeNode
from dpfc.schedule.problem.tree import Exit as ProblemExit
from dpfc.target import TargetProfile


def _walk_code(
    state: BuildState, node: int, label: str, index: int, pred: str | None, walk: Walk
) -> None:
    """Continue the code at ``label``[``index``:] in tree node ``node``."""
    while True:
        block = state.function.block(label)
        if index == 0:
            state.node_label[node].append(label)
            for instr in block.instrs:
                if instr.op is Op.PHI:
                    if pred is None or pred not in instr.incoming:
                        raise AssertionError(f"phi in {label} without an incoming {pred}")
                    arg = instr.args[instr.incoming.index(pred)]
                    walk.env[id(instr)] = walk.env[id(arg)]
        for position in range(index, len(block.instrs)):
            instr = block.instrs[position]
            if instr.op is Op.PHI:
                continue
            split = record_instr(state, node, instr, walk)
            if split is not None:
                cond, if_true, if_false = split

                def resume(
                    value: Value,
                    at: int = position,
                    i: Instr = instr,
                    where: str = label,
                    came_from: str | None = pred,
                ) -> Cont:
                    def go(child: int, w: Walk) -> None:
                        w.env[id(i)] = value
                        _walk_code(state, child, where, at + 1, came_from, w)

                    return go

                branch_on(state, node, cond, resume(if_true), resume(if_false), walk, instr.span)
                return
        term = block.term
        if isinstance(term, Jump):
            pred, label, index = label, term.target, 0
            continue
        if isinstance(term, Br):
            cond = walk.cond(term.cond)
            here = label

            def to(target: str, came_from: str = here) -> Cont:
                def go(child: int, w: Walk) -> None:
                    _walk_code(state, child, target, 0, came_from, w)

                return go

            branch_on(state, node, cond, to(term.then), to(term.orelse), walk, term.span)
            return
        assert isinstance(term, Exit)
        _record_exit(state, node, term, walk)
        return


def _record_exit(state: BuildState, node: int, term: Exit, walk: Walk) -> None:
    push = tuple(walk.word(v) for v in term.push)
    if len(push) > state.profile.max_push:
        raise DiagnosticError(
            Diagnostic(
                codes.SCHEDULE_TOO_MANY_PUSHES,
                f"this epilog pushes {len(push)} words but PUSH takes at most "
                f"{state.profile.max_push} registers on {state.profile.name}",
                term.actions.push or term.span,
            )
        )
    steer_value = walk.word(term.steer_value) if term.steer_value is not None else None
    state.node_end[node] = ProblemExit(
        push, term.steer, steer_value, term.chain, term.drop_code, term.span, term.actions
    )


def _arrays(state: BuildState) -> dict[str, ArrayInfo]:
    out: dict[str, ArrayInfo] = {}
    for name, decl in state.module.arrays.items():
        pin, by = decl.pin, "pin"
        if pin is None and name in state.bindings:
            pin, by = state.bindings[name], state.bound_by.get(name, "an earlier DPF")
        if pin is not None and (pin[0] >= state.profile.num_eus or pin[1] >= state.profile.lanes):
            raise DiagnosticError(
                Diagnostic(
                    codes.SCHEDULE_PIN_RANGE,
                    f"array `{name}` is pinned to EU{pin[0]} lane {pin[1]}, but "
                    f"{state.profile.name} has {state.profile.num_eus} EUs x "
                    f"{state.profile.lanes} lanes",
                    decl.span,
                    hint="change the @pin, or compile for a larger profile",
                )
            )
        out[name] = ArrayInfo(name, decl.mapping, decl.size, pin, decl.span, by)
    return out


def _reserved(state: BuildState, arrays: Mapping[str, ArrayInfo]) -> dict[tuple[int, int], str]:
    """The places of the module's other arrays that a DPF of this one's pipeline accesses,
    where they are pinned or already bound (see :attr:`Problem.reserved`)."""
    pipeline = state.function.attrs.get("pipeline", "ingress")
    mine = {i.symbol for i in state.function.instrs() if i.op in MEMORY_OPS}
    theirs: set[str] = set()
    for function in state.module.functions:
        if function is not state.function and function.attrs.get("pipeline", "ingress") == pipeline:
            theirs |= {i.symbol or "" for i in function.instrs() if i.op in MEMORY_OPS}
    out: dict[tuple[int, int], str] = {}
    for name in sorted(theirs - mine):
        info = arrays.get(name)
        if info is not None and info.pin is not None:
            out.setdefault(info.pin, name)
    return out


def _assemble(state: BuildState) -> Problem:
    """Walk the function from its entry and assemble the Problem (the prolog check last)."""
    root = state.new_node(None, state.function.span)
    _walk_code(state, root, state.function.blocks[0].label, 0, None, Walk({}, {}))
    nodes = []
    for node, end in enumerate(state.node_end):
        assert end is not None
        nodes.append(
            TreeNode(
                node,
                state.node_parent[node],
                tuple(state.node_ops[node]),
                end,
                "+".join(state.node_label[node]),
            )
        )
    inputs = [o for o in state.ops if o.kind in (Kind.META, Kind.RAND, Kind.PEEK)]
    needed = state.function.params + len(inputs)
    if needed > state.profile.registers:
        # At the first word beyond the registers: the parameters come first (in order).
        beyond = needed - state.profile.registers
        at = inputs[-beyond].span if len(inputs) >= beyond else None
        raise DiagnosticError(
            Diagnostic(
                codes.SCHEDULE_PROLOG_REGISTERS,
                f"the prolog of DPF `{state.function.name}` must load {needed} words (stack "
                f"parameters, metadata, random words) but has {state.profile.registers} "
                "registers",
                at or state.function.span,
                notes=(
                    Note(f"{state.function.params} stack parameters", state.function.span),
                    *(Note(f"`{o.name}` is loaded by the prolog too", o.span) for o in inputs),
                ),
                hint="pass fewer parameters; pop the rest in a chained DPF",
            )
        )
    attrs = state.function.attrs
    arrays = _arrays(state)
    return Problem(
        module=state.module.name,
        name=state.function.name,
        profile=state.profile,
        params=state.function.params,
        placement=attrs.get("placement", "packet"),
        app_id=state.module.app_id,
        ops=tuple(state.ops),
        nodes=tuple(nodes),
        arrays=arrays,
        span=state.function.span,
        pipeline=attrs.get("pipeline", "ingress"),
        reserved=_reserved(state, arrays),
    )


def build_problem(
    module: Module,
    function: Function,
    profile: TargetProfile,
    *,
    bindings: Mapping[str, tuple[int, int]] | None = None,
    bound_by: Mapping[str, str] | None = None,
    booleans: str = "branch",
) -> Problem:
    """The scheduling problem of ``function`` on ``profile`` (see the module docstring).

    ``bindings`` (array -> (EU, lane)) are the arrays earlier DPFs of the module bound; they
    become pins, attributed to ``bound_by[array]``. ``booleans``: a word select/zext of a
    condition becomes branches ("branch") or ALU operations ("alu", :mod:`.boolwords`).
    Raises DiagnosticError (DPF60xx)."""
    state = BuildState(module, function, profile, bindings or {}, bound_by or {}, booleans)
    problem = _assemble(state)
    problem = replace(problem, booleans=booleans, value_conditions=state.value_conditions)
    return materialise_constants(canonical_order(problem))
