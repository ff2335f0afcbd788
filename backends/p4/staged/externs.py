"""What each register action of a lane memory does, for every architecture.

Contract: :data:`REGISTER_ACTIONS` names the four register actions of a lane memory and
the memory opcodes each serves (Tofino allows four ``RegisterAction`` s per register, so
two opcodes share one where they can and the opcode decides inside it);
:func:`register_writes` is the one definition of what an action writes back: statements
that update ``value`` (the word as it was) from the opcode and the lane's data. TNA runs
them inside the ``RegisterAction`` (:mod:`.tna`), v1model between the register's read and
its write (:mod:`.v1model`), so both memories hold the same words.
"""

from __future__ import annotations

from collections.abc import Callable

from dpfc.backends.p4.lang import Assign, Expr, If, Stmt, mux
from dpfc.isa import MemOp

WORD = "bit<32>"
INDEX = "bit<16>"

# The register actions of a lane memory and the opcodes each serves (the op decides inside
# the action where two share one: Tofino allows four RegisterActions per register).
REGISTER_ACTIONS: tuple[tuple[str, tuple[MemOp, ...]], ...] = (
    ("store", (MemOp.STORE,)),
    ("add", (MemOp.LOAD, MemOp.FAADD)),
    ("logic", (MemOp.FAAND, MemOp.FAOR)),
    ("order", (MemOp.FAMAX, MemOp.FAMIN)),
)

MinMax = Callable[[Expr, Expr], Expr]


def register_writes(
    action: str, op: Expr, value: Expr, data: Expr, maximum: MinMax, minimum: MinMax
) -> list[Stmt]:
    """What register action ``action`` makes of ``value`` (the word read) for opcode ``op``
    and the lane's ``data`` (LOAD leaves it)."""
    bodies: dict[str, list[Stmt]] = {
        "store": [Assign(value, data)],
        "add": [If(op.eq(int(MemOp.FAADD)), [Assign(value, value + data)])],
        "logic": [
            If(
                op.eq(int(MemOp.FAAND)),
                [Assign(value, value & data)],
                [Assign(value, value | data)],
            )
        ],
        "order": [
            Assign(
                value,
                mux(op.eq(int(MemOp.FAMAX)), maximum(value, data), minimum(value, data)),
            )
        ],
    }
    return bodies[action]
