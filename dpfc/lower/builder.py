"""The function being built: unique block labels, blocks, instructions, exits.

Contract: a :class:`FunctionBuilder` owns one :class:`~dpfc.ir.core.Function` under
construction. It gives blocks labels unique in the function (``join1``, ``join1_2``...),
appends instructions to the block of a :class:`~dpfc.lower.paths.State` (creating that block
first when the state hangs off a :class:`~dpfc.lower.paths.PendingEdge`), masks constants to
a word and ends a state's block with the :class:`~dpfc.ir.core.Exit` of its epilog.

Not responsible for what is emitted (:mod:`dpfc.lower.expressions`, :mod:`dpfc.lower.lower`)
nor for branches and joins between blocks (:mod:`dpfc.lower.lower`).
"""

from __future__ import annotations

from dpfc import ir
from dpfc.diagnostics import Span
from dpfc.ir import Instr, Op, Ty
from dpfc.lower.paths import PendingEdge, State

WORD_MASK = 0xFFFF_FFFF


class FunctionBuilder:
    """Emits into ``function``; every block it creates is appended to the function."""

    def __init__(self, function: ir.Function) -> None:
        self.function = function
        self.used_labels: set[str] = set()

    def label(self, base: str) -> str:
        label, k = base, 1
        while label in self.used_labels:
            k += 1
            label = f"{base}_{k}"
        self.used_labels.add(label)
        return label

    def new_block(self, base: str) -> ir.Block:
        block = ir.Block(self.label(base))
        self.function.blocks.append(block)
        return block

    def open(self, state: State) -> ir.Block:
        """The block code of ``state`` goes to, creating it for a pending edge."""
        if state.block is None:
            edge = state.edge
            assert edge is not None
            block = self.new_block(edge.label)
            self.patch(edge, block.label)
            state.block, state.edge = block, None
        return state.block

    @staticmethod
    def patch(edge: PendingEdge, label: str) -> None:
        """Point the pending branch edge at the block ``label``."""
        if edge.then_side:
            edge.br.then = label
        else:
            edge.br.orelse = label

    def emit(self, state: State, instr: Instr) -> Instr:
        self.open(state).instrs.append(instr)
        return instr

    def const(
        self, state: State, value: int, span: Span, ty: Ty = Ty.WORD, hint: str | None = None
    ) -> Instr:
        return self.emit(
            state, Instr(Op.CONST, [], ty, imm=value & WORD_MASK, span=span, hint=hint)
        )

    def op(
        self, state: State, op: Op, args: list[Instr], span: Span, ty: Ty | None = Ty.WORD
    ) -> Instr:
        return self.emit(state, Instr(op, args, ty, span=span))

    def finish(self, state: State, span: Span) -> None:
        """End the paths of ``state`` with the exit of their epilog, located at ``span``."""
        block = self.open(state)
        epilog = state.epilog
        block.term = ir.Exit(
            push=list(epilog.push),
            steer=epilog.steer or "pass",
            steer_value=epilog.steer_value,
            chain=epilog.chain,
            drop_code=epilog.drop_code,
            span=span,
            actions=epilog.actions,
        )
