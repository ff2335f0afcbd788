"""The tables of the :class:`~dpfc.schedule.problem.Problem` that :mod:`.build` is building.

Contract: :class:`BuildState` owns what one ``build_problem`` call accumulates: the
operations (ids are their positions), the tree nodes (parent, owned operations, end, labels,
depth, the branches on the path to them), the shared inputs and constants (unique by key),
the IR numbering used for names, and the counter of conditions used as words. It creates
operations and nodes in the order it is asked to, so the order of the callers fixes every
id; a path deeper than the profile's EUs, or a tree over the node cap, is DPF6003.

Not responsible for walking the IR (:mod:`.build`), translating instructions
(:mod:`.instructions`), conditions and branches (:mod:`.conditions`), or assembling the
final Problem and its prolog/array checks (:mod:`.build`).
"""

from __future__ import annotations

from collections.abc import Mapping

from dpfc.catalog import codes
from dpfc.diagnostics import Diagnostic, DiagnosticError, Note, Span
from dpfc.ir import Function, Instr, Module, Op
from dpfc.schedule.problem.tree import Branch, Kind, Operation
from dpfc.schedule.problem.tree import Exit as ProblemExit
from dpfc.target import TargetProfile


class BuildState:
    """The operations and tree nodes of one DPF's problem, as built so far."""

    def __init__(
        self,
        module: Module,
        function: Function,
        profile: TargetProfile,
        bindings: Mapping[str, tuple[int, int]],
        bound_by: Mapping[str, str],
        booleans: str = "branch",
    ) -> None:
        self.module = module
        self.booleans = booleans  # a word select/zext of a condition: "branch" | "alu"
        self.value_conditions = 0  # ... how many the DPF has
        self.function = function
        self.profile = profile
        self.bindings = bindings
        self.bound_by = bound_by
        self.ops: list[Operation] = []
        self.node_parent: list[int | None] = []
        self.node_ops: list[list[int]] = []
        self.node_end: list[Branch | ProblemExit | None] = []
        self.node_label: list[list[str]] = []
        self.node_depth: list[int] = []
        self.node_branches: list[list[Span | None]] = []
        self.shared: dict[tuple[object, ...], int] = {}  # inputs and constants
        numbered = [i for b in function.blocks for i in b.instrs]
        self.number = {id(instr): n for n, instr in enumerate(numbered)}
        rands = [i for i in numbered if i.op is Op.RAND]
        self.rand_index = {id(instr): n for n, instr in enumerate(rands)}
        # Cap the tree: a DPF whose paths cannot fit the EUs is rejected (DPF6003) long
        # before this, but the cap also bounds the work on pathological programs.
        self.max_nodes = 2 ** (profile.num_eus + 2)

    # -- operations ------------------------------------------------------------------------
    def _new_op(self, **fields: object) -> int:
        op_id = len(self.ops)
        self.ops.append(Operation(id=op_id, **fields))  # type: ignore[arg-type]
        return op_id

    def shared_op(self, key: tuple[object, ...], **fields: object) -> int:
        if key not in self.shared:
            self.shared[key] = self._new_op(owner=0, **fields)
        return self.shared[key]

    def const(self, value: int) -> int:
        return self.shared_op(("const", value), kind=Kind.CONST, value=value, name=_hex(value))

    def name(self, instr: Instr) -> str:
        return instr.hint or f"%{self.number.get(id(instr), '?')}"

    def owned(self, node: int, **fields: object) -> int:
        """A new operation that only ``node`` (and its subtree) runs."""
        op_id = self._new_op(owner=node, **fields)
        self.node_ops[node].append(op_id)
        return op_id

    # -- nodes -----------------------------------------------------------------------------
    def new_node(self, parent: int | None, span: Span | None) -> int:
        node = len(self.node_ops)
        if node >= self.max_nodes:
            raise DiagnosticError(self._too_many_paths(span))
        self.node_parent.append(parent)
        self.node_ops.append([])
        self.node_end.append(None)
        self.node_label.append([])
        depth = 0 if parent is None else self.node_depth[parent] + 1
        self.node_depth.append(depth)
        branches = [] if parent is None else [*self.node_branches[parent], span]
        self.node_branches.append(branches)
        if depth > self.profile.num_eus:
            raise DiagnosticError(self._too_many_paths(span, node))
        return node

    def _too_many_paths(self, span: Span | None, node: int | None = None) -> Diagnostic:
        spans = self.node_branches[node] if node is not None else []
        notes = tuple(Note("a two-way branch on this path", s) for s in spans if s is not None)
        return Diagnostic(
            codes.SCHEDULE_TOO_MANY_BRANCHES,
            f"a path of DPF `{self.function.name}` needs more two-way branches than "
            f"{self.profile.name} has EUs ({self.profile.num_eus}; one branch unit per EU)",
            span or self.function.span,
            notes=notes[:8],
            hint="simplify the conditions, split the DPF with `chain`, or use a profile with "
            "more EUs",
        )


def _hex(value: int) -> str:
    return str(value) if value < 256 else f"{value:#x}"
