"""The program both shift tests run: every register popped, one EU of shifts, all pushed."""

from __future__ import annotations

from dpfc.isa.bundle import PC, Bundle, CodeImage, Control, EpilogBundle, Register, Selector
from dpfc.isa.opcodes import AluOp, CtrlOp, MemOp, SelectorKind

PK0 = PC(True, 0)


def shift_code(ops: dict[int, AluOp], lanes: int, memory: bool = False) -> CodeImage:
    """POP every A then every B register; one EU of ``ops`` by lane (and, with ``memory``, a
    LOAD in lane 0); HALT to an epilog that PUSHes every register."""
    registers = [Register.a(i) for i in range(lanes)] + [Register.b(i) for i in range(lanes)]
    pop = tuple(Selector(r, SelectorKind.POP) for r in registers)
    prolog = Bundle(pop, (AluOp.NOP,) * lanes, (MemOp.NOP,) * lanes, Control(CtrlOp.JMP, PK0))
    eu = Bundle(
        (),
        tuple(ops.get(lane, AluOp.NOP) for lane in range(lanes)),
        ((MemOp.LOAD if memory else MemOp.NOP),) + (MemOp.NOP,) * (lanes - 1),
        Control(CtrlOp.HALT, PK0),
    )
    return CodeImage((prolog,), ((eu,),), (EpilogBundle(push=tuple(registers)),))
