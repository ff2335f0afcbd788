"""The IR verifier: checks every invariant of :mod:`dpfc.ir.core` (run between passes in tests).

Contract: ``verify_module(module, profile=None, machine=False)`` returns the diagnostics of
every violated invariant (an empty list for valid IR) and never raises; ``verify_or_raise``
raises :class:`~dpfc.diagnostics.DiagnosticError` with the errors. Unreachable blocks are a
warning (DPF5323); everything else is an error. The checks, in order (docs/ir.md lists them
with their codes):

* module: array declarations are sane, DPF names unique;
* CFG: the function has blocks, labels are unique, every successor exists, the entry block
  has no predecessors, the CFG is acyclic (networkx ``DiGraph``; cycles are DPF5390, the
  code the ``unroll`` pass uses for the same fault);
* SSA: each :class:`~dpfc.ir.core.Instr` appears once; every operand is defined in the
  function, on an earlier line (what the text reader requires) and in a block that
  dominates the use (networkx, through :mod:`dpfc.ir.cfg`); a phi argument's definition dominates
  the end of the corresponding predecessor; phis open their block and name exactly its
  predecessors;
* ops: operand counts, operand and result types, immediates, array and metadata names
  (table-driven from core's op sets); ``machine=True`` also rejects MUL (strength reduction
  must have removed it);
* terminators: ``br`` on a bool; pushed and steering values are words; the steering action
  exists (``profile.steering``, else the default list) and has a value exactly when it
  takes one;
* the RMT rule: at most one memory op per array on any entry-to-exit path (two ops conflict
  when one's block reaches the other's, or they share a block); both are named.

Structural faults (missing successors, duplicate labels, cycles) stop the checks of a
function after the CFG stage, since dominance means nothing on such a graph.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dpfc.diagnostics import Diagnostic, DiagnosticError, Note, Severity, Span
from dpfc.ir.cfg import Digraph
from dpfc.ir.core import (
    BINARY_WORD_OPS,
    COMPARE_OPS,
    FETCH_OPS,
    MEMORY_OPS,
    WORD_MASK,
    Block,
    Br,
    Exit,
    Function,
    Instr,
    Module,
    Op,
    Ty,
)
from dpfc.ir.parser import ARITY, DUPLICATE_LABEL, DUPLICATE_NAME, OPERAND_COUNT
from dpfc.target.profile import (
    DEFAULT_METADATA,
    DEFAULT_STEERING,
    SteeringAction,
    TargetProfile,
)

EMPTY_FUNCTION = "DPF5320"
UNKNOWN_LABEL = "DPF5321"
ENTRY_TARGET = "DPF5322"
UNREACHABLE = "DPF5323"
INSTR_TWICE = "DPF5324"
UNDEFINED_OPERAND = "DPF5325"
NOT_DOMINATED = "DPF5326"
PHI_POSITION = "DPF5327"
PHI_INCOMING = "DPF5328"
TYPE_ERROR = "DPF5329"
BAD_IMMEDIATE = "DPF5330"
UNKNOWN_ARRAY = "DPF5331"
UNKNOWN_META = "DPF5332"
UNKNOWN_STEER = "DPF5333"
STEER_VALUE = "DPF5334"
RMT_RULE = "DPF5335"
MACHINE_MUL = "DPF5336"
BAD_ARRAY = "DPF5337"
CYCLE = "DPF5390"  # shared with the unroll pass (dpfc/passes/unroll.py)

DEFAULT_HASH_LANES = 4
_SAME_TYPE_OPS = frozenset({Op.AND, Op.OR, Op.XOR})
_WORD_ARGS_OPS = (BINARY_WORD_OPS - _SAME_TYPE_OPS) | COMPARE_OPS | FETCH_OPS | {Op.NEG, Op.HASH}


def verify_module(
    module: Module, profile: TargetProfile | None = None, *, machine: bool = False
) -> list[Diagnostic]:
    """Every invariant violation of ``module`` (errors and warnings), in a stable order."""
    out: list[Diagnostic] = []
    for array in module.arrays.values():
        if array.mapping not in ("direct", "segment") or array.size <= 0:
            out.append(
                Diagnostic(
                    BAD_ARRAY,
                    f"array `@{array.name}`: mapping must be direct or segment and the size "
                    f"positive (found {array.mapping} {array.size})",
                    array.span,
                )
            )
    seen: dict[str, Function] = {}
    for function in module.functions:
        first = seen.setdefault(function.name, function)
        if first is not function:
            out.append(
                Diagnostic(
                    DUPLICATE_NAME,
                    f"DPF `@{function.name}` is defined twice",
                    function.span,
                    notes=_note("first defined here", first.span),
                )
            )
        out.extend(_FunctionVerifier(module, function, profile, machine).run())
    return out


def verify_function(
    module: Module,
    function: Function,
    profile: TargetProfile | None = None,
    *,
    machine: bool = False,
) -> list[Diagnostic]:
    """The diagnostics of one function of ``module`` (arrays come from the module)."""
    return _FunctionVerifier(module, function, profile, machine).run()


def verify_or_raise(
    module: Module, profile: TargetProfile | None = None, *, machine: bool = False
) -> None:
    """Raise DiagnosticError with the errors of :func:`verify_module` (warnings pass)."""
    errors = [
        d for d in verify_module(module, profile, machine=machine) if d.severity is Severity.ERROR
    ]
    if errors:
        raise DiagnosticError(errors)


def _note(message: str, span: Span | None) -> tuple[Note, ...]:
    return (Note(message, span),)


@dataclass(frozen=True)
class _Site:
    """Where an instruction sits: its block, its index there, its line in print order."""

    block: str
    index: int
    line: int


class _FunctionVerifier:
    def __init__(
        self, module: Module, function: Function, profile: TargetProfile | None, machine: bool
    ) -> None:
        self.module = module
        self.function = function
        self.machine = machine
        self.metadata = {m.name for m in (profile.metadata if profile else DEFAULT_METADATA)}
        steering = profile.steering if profile else DEFAULT_STEERING
        self.steering: dict[str, SteeringAction] = {s.name: s for s in steering}
        self.hash_lanes = len(profile.hash_functions) if profile else DEFAULT_HASH_LANES
        self.out: list[Diagnostic] = []
        self.names: dict[int, str] = {}
        self.sites: dict[int, _Site] = {}
        self.blocks: dict[str, Block] = {}

    # -- reporting ------------------------------------------------------------------------

    def error(
        self,
        code: str,
        message: str,
        span: Span | None,
        notes: tuple[Note, ...] = (),
        severity: Severity = Severity.ERROR,
        hint: str | None = None,
    ) -> None:
        prefix = f"`@{self.function.name}`: " if span is None else ""
        self.out.append(Diagnostic(code, prefix + message, span, severity, notes, hint))

    def show(self, instr: Instr) -> str:
        """``%3 = add`` / ``store @a`` as the printer would start the line."""
        name = self.names.get(id(instr), "%?")
        text = instr.op.value if instr.symbol is None else f"{instr.op.value} @{instr.symbol}"
        if instr.op is Op.META:
            text = f"meta {instr.symbol}"
        return text if instr.ty is None else f"{name} = {text}"

    def where(self, instr: Instr) -> str:
        """The instruction and its block, for the subject of a message."""
        site = self.sites.get(id(instr))
        block = f" in block `{site.block}`" if site else ""
        return f"`{self.show(instr)}`{block}"

    def ref(self, value: Instr) -> str:
        """A value as an operand: its printed name (``%3``)."""
        return f"`{self.names.get(id(value), '%?')}`"

    # -- driver ---------------------------------------------------------------------------

    def run(self) -> list[Diagnostic]:
        function = self.function
        if not function.blocks:
            self.error(EMPTY_FUNCTION, f"DPF `@{function.name}` has no blocks", function.span)
            return self.out
        for instr in function.instrs():
            self.names.setdefault(id(instr), f"%{len(self.names)}")
        graph = self.check_cfg()
        self.check_instr_sites()
        for block in function.blocks:
            for instr in block.instrs:
                self.check_op(instr)
            self.check_terminator(block)
        if graph is None:
            return self.out
        reachable = {function.blocks[0].label} | graph.descendants(function.blocks[0].label)
        for block in function.blocks:
            if block.label not in reachable and self.blocks.get(block.label) is block:
                self.error(
                    UNREACHABLE,
                    f"block `{block.label}` is unreachable from the entry",
                    block.term.span,
                    severity=Severity.WARNING,
                )
        self.check_ssa(graph, reachable)
        self.check_rmt(graph, reachable)
        return self.out

    # -- CFG ------------------------------------------------------------------------------

    def check_cfg(self) -> Digraph | None:
        """The CFG, or None when it is malformed (reported)."""
        ok = True
        for block in self.function.blocks:
            first = self.blocks.setdefault(block.label, block)
            if first is not block:
                self.error(
                    DUPLICATE_LABEL,
                    f"block label `{block.label}` is used twice in `@{self.function.name}`",
                    block.term.span,
                )
                ok = False
        graph = Digraph(self.blocks)
        for block in self.function.blocks:
            for successor in block.successors():
                if successor not in self.blocks:
                    self.error(
                        UNKNOWN_LABEL,
                        f"block `{block.label}` jumps to `{successor}`, which is not a block "
                        f"of `@{self.function.name}`",
                        block.term.span,
                    )
                    ok = False
                else:
                    graph.add_edge(block.label, successor)
        entry = self.function.blocks[0].label
        preds = graph.predecessors(entry)
        if preds:
            self.error(
                ENTRY_TARGET,
                f"the entry block `{entry}` is the target of `{preds[0]}` (the entry "
                "block has no predecessors)",
                self.blocks[preds[0]].term.span,
            )
            ok = False
        cycle = graph.find_cycle()
        if cycle is not None:
            path = " -> ".join([*cycle, cycle[0]])
            self.error(
                CYCLE,
                f"control flow of `@{self.function.name}` has a cycle: {path}",
                self.blocks[cycle[0]].term.span or self.function.span,
                hint="loops are unrolled by the lowering; the IR must be acyclic",
            )
            ok = False
        return graph if ok else None

    def check_instr_sites(self) -> None:
        line = 0
        for block in self.function.blocks:
            for index, instr in enumerate(block.instrs):
                site = _Site(block.label, index, line)
                line += 1
                if id(instr) in self.sites:
                    self.error(
                        INSTR_TWICE,
                        f"{self.where(instr)} appears twice: at position {index} of block "
                        f"`{block.label}` too (an instruction is defined once)",
                        instr.span,
                    )
                    continue
                self.sites[id(instr)] = site
            line += 1  # the terminator's line

    # -- ops ------------------------------------------------------------------------------

    def check_op(self, instr: Instr) -> None:
        op = instr.op
        what = self.where(instr)
        if op is Op.PHI:
            if not instr.args or len(instr.args) != len(instr.incoming):
                self.error(
                    OPERAND_COUNT,
                    f"{what} has {len(instr.args)} values for {len(instr.incoming)} incoming "
                    "labels (one value per predecessor, at least one)",
                    instr.span,
                )
        elif len(instr.args) != ARITY[op]:
            self.error(
                OPERAND_COUNT,
                f"{what} takes {ARITY[op]} operand(s), found {len(instr.args)}",
                instr.span,
            )
            return
        if self.machine and op is Op.MUL:
            self.error(
                MACHINE_MUL,
                f"{what}: MUL is not a machine op (strength reduction must have removed it)",
                instr.span,
            )
        self.check_fields(instr, what)
        self.check_types(instr, what)

    def check_fields(self, instr: Instr, what: str) -> None:
        op = instr.op
        if op in MEMORY_OPS:
            if instr.symbol not in self.module.arrays:
                self.error(
                    UNKNOWN_ARRAY,
                    f"{what} names `@{instr.symbol}`, which is not a declared array",
                    instr.span,
                )
        elif op is Op.META:
            if instr.symbol not in self.metadata:
                known = ", ".join(sorted(self.metadata))
                self.error(
                    UNKNOWN_META,
                    f"{what}: unknown metadata field `{instr.symbol}` (known: {known})",
                    instr.span,
                )
        elif instr.symbol is not None:
            self.error(
                BAD_IMMEDIATE, f"{what} takes no array or field name (`{instr.symbol}`)", instr.span
            )
        imm = instr.imm
        if op is Op.CONST:
            limit = 1 if instr.ty is Ty.BOOL else WORD_MASK
            if imm is None or not 0 <= imm <= limit:
                self.error(
                    BAD_IMMEDIATE, f"{what}: constant {imm} is not in 0..{limit:#x}", instr.span
                )
        elif op is Op.PARAM:
            if imm is None or not 0 <= imm < self.function.params:
                self.error(
                    BAD_IMMEDIATE,
                    f"{what}: parameter index {imm} is not below the parameter count "
                    f"{self.function.params}",
                    instr.span,
                )
        elif op is Op.HASH and (imm is None or not 0 <= imm < self.hash_lanes):
            self.error(
                BAD_IMMEDIATE,
                f"{what}: hash function index {imm} is not in 0..{self.hash_lanes - 1}",
                instr.span,
            )

    def check_types(self, instr: Instr, what: str) -> None:
        op = instr.op
        args = instr.args
        expected_args: list[Ty | None]
        result: Ty | None
        if op is Op.STORE:
            expected_args, result = [Ty.WORD, Ty.WORD], None
        elif op is Op.CONST:
            expected_args, result = [], instr.ty if instr.ty is not None else Ty.WORD
        elif op in _SAME_TYPE_OPS:
            first = args[0].ty if args[0].ty is not None else Ty.WORD
            expected_args, result = [first, first], first
        elif op in COMPARE_OPS:
            expected_args, result = [Ty.WORD, Ty.WORD], Ty.BOOL
        elif op in _WORD_ARGS_OPS:
            expected_args, result = [Ty.WORD] * len(args), Ty.WORD
        elif op is Op.SELECT:
            arm = instr.ty if instr.ty is not None else Ty.WORD
            expected_args, result = [Ty.BOOL, arm, arm], arm
        elif op is Op.ZEXT:
            expected_args, result = [Ty.BOOL], Ty.WORD
        elif op is Op.LOAD:
            expected_args, result = [Ty.WORD], Ty.WORD
        elif op is Op.PHI:
            arm = instr.ty if instr.ty is not None else Ty.WORD
            expected_args, result = [arm] * len(args), arm
        else:  # PARAM PEEK RAND META
            expected_args, result = [], Ty.WORD
        if instr.ty is not result:
            self.error(
                TYPE_ERROR,
                f"{what} has type {_ty(instr.ty)}, expected {_ty(result)}",
                instr.span,
            )
        for position, (arg, ty) in enumerate(zip(args, expected_args, strict=False), 1):
            if arg.ty is not ty:
                self.error(
                    TYPE_ERROR,
                    f"{what}: operand {position} ({self.ref(arg)}) is {_ty(arg.ty)}, "
                    f"expected {_ty(ty)}",
                    instr.span,
                )

    def check_terminator(self, block: Block) -> None:
        term = block.term
        span = term.span
        if isinstance(term, Br):
            if term.cond.ty is not Ty.BOOL:
                self.error(
                    TYPE_ERROR,
                    f"the branch of block `{block.label}` tests {self.ref(term.cond)}, "
                    f"which is {_ty(term.cond.ty)} (expected i1)",
                    span,
                )
            return
        if not isinstance(term, Exit):
            return
        for value in term.push:
            if value.ty is not Ty.WORD:
                self.error(
                    TYPE_ERROR,
                    f"block `{block.label}` pushes {self.ref(value)}, which is "
                    f"{_ty(value.ty)} (only w32 words are pushed)",
                    span,
                )
        action = self.steering.get(term.steer)
        if action is None:
            known = ", ".join(self.steering)
            self.error(
                UNKNOWN_STEER,
                f"block `{block.label}` steers with unknown action `{term.steer}` (known: {known})",
                span,
            )
        elif action.takes_value and term.steer_value is None:
            self.error(STEER_VALUE, f"steering action `{term.steer}` needs a value", span)
        elif not action.takes_value and term.steer_value is not None:
            self.error(STEER_VALUE, f"steering action `{term.steer}` takes no value", span)
        steer_value = term.steer_value
        if steer_value is not None and steer_value.ty is not Ty.WORD:
            self.error(
                TYPE_ERROR,
                f"the steering value {self.ref(steer_value)} is {_ty(steer_value.ty)}, "
                "expected w32",
                span,
            )

    # -- SSA ------------------------------------------------------------------------------

    def check_ssa(self, graph: Digraph, reachable: set[str]) -> None:
        entry = self.function.blocks[0].label
        idom = graph.immediate_dominators(entry)
        preds = {label: set(graph.predecessors(label)) for label in self.blocks}

        def dominates(a: str, b: str) -> bool:
            while True:
                if a == b:
                    return True
                parent = idom.get(b, b)
                if parent == b:
                    return False
                b = parent

        line = 0
        for block in self.function.blocks:
            seen_other = False
            for instr in block.instrs:
                if instr.op is Op.PHI:
                    if seen_other:
                        self.error(
                            PHI_POSITION,
                            f"{self.where(instr)} follows a non-phi instruction (phis open "
                            "their block)",
                            instr.span,
                        )
                    self.check_phi(instr, block, preds[block.label], reachable, dominates)
                else:
                    seen_other = True
                    for arg in instr.args:
                        self.check_use(arg, instr, block, line, reachable, dominates)
                line += 1
            term_user = f"the terminator of block `{block.label}`"
            for value in _terminator_values(block):
                self.check_use(value, term_user, block, line, reachable, dominates)
            line += 1

    def check_phi(
        self,
        phi: Instr,
        block: Block,
        preds: set[str],
        reachable: set[str],
        dominates: Any,
    ) -> None:
        what = self.where(phi)
        incoming = phi.incoming
        if len(set(incoming)) != len(incoming) or set(incoming) != preds:
            expected = (
                f"the predecessors of `{block.label}` are [{', '.join(sorted(preds))}]"
                if preds
                else f"`{block.label}` has no predecessors"
            )
            self.error(
                PHI_INCOMING,
                f"{what} names blocks [{', '.join(incoming)}]; {expected} (one entry each)",
                phi.span,
            )
        for arg, label in zip(phi.args, incoming, strict=False):
            site = self.sites.get(id(arg))
            if site is None:
                self.error(
                    UNDEFINED_OPERAND,
                    f"{what} reads a value that is not defined in `@{self.function.name}`",
                    phi.span,
                )
                continue
            if label not in preds or label not in reachable:
                continue
            if not dominates(site.block, label):
                self.error(
                    NOT_DOMINATED,
                    f"{what} takes {self.ref(arg)} from `{label}`, but its block "
                    f"`{site.block}` does not dominate `{label}`",
                    phi.span,
                    _note("defined here", arg.span),
                )

    def check_use(
        self,
        value: Instr,
        user: Instr | str,
        block: Block,
        line: int,
        reachable: set[str],
        dominates: Any,
    ) -> None:
        user_text = user if isinstance(user, str) else self.where(user)
        span = user.span if isinstance(user, Instr) else block.term.span
        site = self.sites.get(id(value))
        if site is None:
            self.error(
                UNDEFINED_OPERAND,
                f"{user_text} reads a value that is not defined in `@{self.function.name}` "
                f"({value.op.value})",
                span,
            )
            return
        if site.line >= line:
            self.error(
                NOT_DOMINATED,
                f"{user_text} reads {self.ref(value)}, which is defined later",
                span,
                _note("defined here", value.span),
            )
            return
        crosses = block.label in reachable and site.block != block.label
        if crosses and not dominates(site.block, block.label):
            self.error(
                NOT_DOMINATED,
                f"{user_text} reads {self.ref(value)}, but its block `{site.block}` does "
                f"not dominate `{block.label}`",
                span,
                _note("defined here", value.span),
            )

    # -- the RMT rule ---------------------------------------------------------------------

    def check_rmt(self, graph: Digraph, reachable: set[str]) -> None:
        order = {label: i for i, label in enumerate(graph.topological_order())}
        below = {label: graph.descendants(label) for label in reachable}
        by_array: dict[str, list[tuple[int, int, str, Instr]]] = {}
        for block in self.function.blocks:
            if block.label not in reachable:
                continue
            for index, instr in enumerate(block.instrs):
                if instr.op in MEMORY_OPS and instr.symbol is not None:
                    key = (order[block.label], index, block.label, instr)
                    by_array.setdefault(instr.symbol, []).append(key)
        for array, ops in by_array.items():
            ops.sort(key=lambda item: (item[0], item[1]))
            for later_pos, (_, _, later_block, later) in enumerate(ops):
                for _, _, earlier_block, earlier in ops[:later_pos]:
                    if earlier_block == later_block or later_block in below[earlier_block]:
                        self.error(
                            RMT_RULE,
                            f"array `@{array}` is accessed twice on one path: "
                            f"{self.where(earlier)} and {self.where(later)} (at most one "
                            "memory access per array per path)",
                            later.span,
                            _note("the other access", earlier.span),
                        )
                        break


def _terminator_values(block: Block) -> list[Instr]:
    term = block.term
    if isinstance(term, Br):
        return [term.cond]
    if isinstance(term, Exit):
        return [*term.push, *([term.steer_value] if term.steer_value is not None else [])]
    return []


def _ty(ty: Ty | None) -> str:
    return "no value" if ty is None else ty.value
