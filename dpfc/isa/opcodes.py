"""The SwitchVM instruction set as data: one row per instruction.

Each :class:`InstructionSpec` names the mnemonic, the unit that executes it (which decides
the section it may appear in), its numeric code inside that unit's field of the encoding,
its operand classes and its semantics. The encoder, decoder, assembler, disassembler,
checker and (later) the scheduler and simulator all derive from :data:`INSTRUCTIONS`;
``docs/isa.md`` is the prose form of the same table and of every decision behind it.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum, IntEnum


class Unit(Enum):
    """Where an instruction executes; it decides the section it may appear in."""

    PROLOG = "prolog"  # prolog selectors: initialise registers
    SELECTOR = "selector"  # EU stage 1: register selection (MOV, HASH, LOAD_IMM, LOAD_CONST)
    ALU = "alu"  # EU stage 2: one per lane, A[i] = A[i] op B[i]
    MEMORY = "memory"  # EU stage 2: one per lane, address A[i], data B[i]
    CONTROL = "control"  # EU: one branch unit per EU
    EPILOG = "epilog"  # epilog: PUSH, FWD, NEXT_PC, HDR_MOD


class Section(Enum):
    PROLOG = "prolog"
    EU = "eu"
    EPILOG = "epilog"


UNIT_SECTION: dict[Unit, Section] = {
    Unit.PROLOG: Section.PROLOG,
    Unit.SELECTOR: Section.EU,
    Unit.ALU: Section.EU,
    Unit.MEMORY: Section.EU,
    Unit.CONTROL: Section.EU,
    Unit.EPILOG: Section.EPILOG,
}


class SelectorKind(IntEnum):
    """3-bit ``kind`` of a selector entry (prolog and EU selectors share the code space)."""

    MOV = 0
    HASH = 1
    LOAD_IMM = 2
    LOAD_CONST = 3
    POP = 4
    PEEK = 5
    LOAD_MD = 6
    RAND = 7


PROLOG_KINDS = frozenset(
    {SelectorKind.POP, SelectorKind.PEEK, SelectorKind.LOAD_MD, SelectorKind.RAND}
)
EU_SELECTOR_KINDS = frozenset(
    {SelectorKind.MOV, SelectorKind.HASH, SelectorKind.LOAD_IMM, SelectorKind.LOAD_CONST}
)


class AluOp(IntEnum):
    """4-bit per-lane ALU opcode; 0 is the default nop ("All fields have a default nop")."""

    NOP = 0
    ADD = 1
    SUB = 2
    AND = 3
    OR = 4
    XOR = 5
    LSH = 6
    RSH = 7
    NEG = 8
    MIN = 9
    MAX = 10


class MemOp(IntEnum):
    """4-bit per-lane memory opcode; 0 is nop."""

    NOP = 0
    LOAD = 1
    STORE = 2
    FAADD = 3
    FAAND = 4
    FAOR = 5
    FAMAX = 6
    FAMIN = 7


class CtrlOp(IntEnum):
    """4-bit branch-unit opcode. JMP (0) is the default: go to PC_TAKEN."""

    JMP = 0
    HALT = 1
    BEQ = 2
    BSET = 3
    BLT = 4
    BGT = 5
    BSLT = 6
    BSGT = 7

    @property
    def conditional(self) -> bool:
        return self not in (CtrlOp.JMP, CtrlOp.HALT)


class EpilogOp(IntEnum):
    """Epilog instructions; not a field code (the epilog bundle has one field per op)."""

    PUSH = 0
    FWD = 1
    NEXT_PC = 2
    HDR_MOD = 3


class OperandClass(Enum):
    """Operand classes of Table 1: A/B registers, R = either, immediates and names."""

    A = "A"
    B = "B"
    R = "R"
    IMM32 = "imm32"  # 32-bit immediate
    CONST_INDEX = "const"  # index into the tenant's constant table
    MD_NAME = "md"  # metadata field name or index
    REG_OR_IMM = "R|imm32"  # branch operand
    LABEL = "label"  # a PC: label, @switch:N or @packet:N
    STEERING = "steering"  # steering action name [, value]
    REG_LIST = "R,..."  # PUSH list
    LABEL_OR_REG = "label|R"  # NEXT_PC source


@dataclass(frozen=True)
class InstructionSpec:
    mnemonic: str
    unit: Unit
    code: int
    operands: tuple[OperandClass, ...]
    semantics: str
    paper: str  # where the paper defines it

    @property
    def section(self) -> Section:
        return UNIT_SECTION[self.unit]


_A, _B, _R = OperandClass.A, OperandClass.B, OperandClass.R

INSTRUCTIONS: tuple[InstructionSpec, ...] = (
    # Prolog (§3.4): "These instructions are the only ones available in Prolog."
    InstructionSpec("POP", Unit.PROLOG, SelectorKind.POP, (_R,), "R = stack.pop()", "Table 1"),
    InstructionSpec("PEEK", Unit.PROLOG, SelectorKind.PEEK, (_R,), "R = stack.peek()", "Table 1"),
    InstructionSpec(
        "LOAD_MD",
        Unit.PROLOG,
        SelectorKind.LOAD_MD,
        (_R, OperandClass.MD_NAME),
        "R = MD[md_idx]",
        "Table 1, §3.4",
    ),
    InstructionSpec("RAND", Unit.PROLOG, SelectorKind.RAND, (_R,), "R = rng.get()", "Table 1"),
    # EU selectors (stage 1)
    InstructionSpec("MOV", Unit.SELECTOR, SelectorKind.MOV, (_R, _R), "R1 = R2", "Table 1, §3.6"),
    InstructionSpec(
        "HASH", Unit.SELECTOR, SelectorKind.HASH, (_A,), "A[i] = hash_i(A[i])", "Table 1"
    ),
    InstructionSpec(
        "LOAD_IMM",
        Unit.SELECTOR,
        SelectorKind.LOAD_IMM,
        (_B, OperandClass.IMM32),
        "B = imm",
        "Table 1",
    ),
    InstructionSpec(
        "LOAD_CONST",
        Unit.SELECTOR,
        SelectorKind.LOAD_CONST,
        (_B, OperandClass.CONST_INDEX),
        "B = const_tbl[imm]",
        "Table 1",
    ),
    # ALU (stage 2): lane-local, A[i] = A[i] op B[i]
    InstructionSpec("ADD", Unit.ALU, AluOp.ADD, (_A, _B), "A = A + B (mod 2^32)", "Table 1"),
    InstructionSpec("SUB", Unit.ALU, AluOp.SUB, (_A, _B), "A = A - B (mod 2^32)", "Table 1"),
    InstructionSpec("AND", Unit.ALU, AluOp.AND, (_A, _B), "A = A & B", "Table 1"),
    InstructionSpec("OR", Unit.ALU, AluOp.OR, (_A, _B), "A = A | B", "Table 1"),
    InstructionSpec("XOR", Unit.ALU, AluOp.XOR, (_A, _B), "A = A ^ B", "Table 1"),
    InstructionSpec("LSH", Unit.ALU, AluOp.LSH, (_A, _B), "A = A << (B & 31)", "Table 1"),
    InstructionSpec("RSH", Unit.ALU, AluOp.RSH, (_A, _B), "A = A >> (B & 31), logical", "Table 1"),
    InstructionSpec("NEG", Unit.ALU, AluOp.NEG, (_A,), "A = -A (mod 2^32)", "Table 1"),
    InstructionSpec("MIN", Unit.ALU, AluOp.MIN, (_A, _B), "A = min(A, B), unsigned", "Table 1"),
    InstructionSpec("MAX", Unit.ALU, AluOp.MAX, (_A, _B), "A = max(A, B), unsigned", "Table 1"),
    # Memory (stage 2): address A[i], data B[i]
    InstructionSpec("LOAD", Unit.MEMORY, MemOp.LOAD, (_B, _A), "B = mem[A]", "Table 1, §3.6.1"),
    InstructionSpec("STORE", Unit.MEMORY, MemOp.STORE, (_A, _B), "mem[A] = B", "Table 1, §3.6.1"),
    InstructionSpec(
        "FAADD", Unit.MEMORY, MemOp.FAADD, (_B, _A), "t = mem[A]; mem[A] = t + B; B = t", "Table 1"
    ),
    InstructionSpec(
        "FAAND", Unit.MEMORY, MemOp.FAAND, (_B, _A), "t = mem[A]; mem[A] = t & B; B = t", "Table 1"
    ),
    InstructionSpec(
        "FAOR", Unit.MEMORY, MemOp.FAOR, (_B, _A), "t = mem[A]; mem[A] = t | B; B = t", "Table 1"
    ),
    InstructionSpec(
        "FAMAX",
        Unit.MEMORY,
        MemOp.FAMAX,
        (_B, _A),
        "t = mem[A]; mem[A] = max(t, B) unsigned; B = t",
        "Table 1",
    ),
    InstructionSpec(
        "FAMIN",
        Unit.MEMORY,
        MemOp.FAMIN,
        (_B, _A),
        "t = mem[A]; mem[A] = min(t, B) unsigned; B = t",
        "Table 1 ('FAMID', OCR)",
    ),
    # Control (one per EU)
    InstructionSpec("JMP", Unit.CONTROL, CtrlOp.JMP, (OperandClass.LABEL,), "goto taken", "App. D"),
    InstructionSpec(
        "HALT",
        Unit.CONTROL,
        CtrlOp.HALT,
        (OperandClass.LABEL,),
        "skip the remaining EUs; run the epilog at taken",
        "App. D",
    ),
    *(
        InstructionSpec(
            op.name,
            Unit.CONTROL,
            op,
            (
                OperandClass.REG_OR_IMM,
                OperandClass.REG_OR_IMM,
                OperandClass.LABEL,
                OperandClass.LABEL,
            ),
            f"goto ({pred}) ? taken : not_taken",
            "App. D",
        )
        for op, pred in (
            (CtrlOp.BEQ, "x == y"),
            (CtrlOp.BSET, "(x & y) != 0"),
            (CtrlOp.BLT, "x < y, unsigned"),
            (CtrlOp.BGT, "x > y, unsigned"),
            (CtrlOp.BSLT, "x < y, signed"),
            (CtrlOp.BSGT, "x > y, signed"),
        )
    ),
    # Epilog (§3.5)
    InstructionSpec(
        "PUSH",
        Unit.EPILOG,
        EpilogOp.PUSH,
        (OperandClass.REG_LIST,),
        "stack.push(R...) -- first listed ends on top",
        "Table 1, §3.5",
    ),
    InstructionSpec(
        "FWD",
        Unit.EPILOG,
        EpilogOp.FWD,
        (OperandClass.STEERING,),
        "steer the packet (action [, value])",
        "Table 1, §3.5",
    ),
    InstructionSpec(
        "NEXT_PC",
        Unit.EPILOG,
        EpilogOp.NEXT_PC,
        (OperandClass.LABEL_OR_REG,),
        "pkt.dpf_ptr = R | pc",
        "Table 1, §3.6.2",
    ),
    InstructionSpec(
        "HDR_MOD", Unit.EPILOG, EpilogOp.HDR_MOD, (), "drop the code header", "Table 1, §3.5"
    ),
)

BY_MNEMONIC: dict[str, InstructionSpec] = {spec.mnemonic: spec for spec in INSTRUCTIONS}
SELECTOR_SPECS: dict[SelectorKind, InstructionSpec] = {
    SelectorKind(s.code): s for s in INSTRUCTIONS if s.unit in (Unit.PROLOG, Unit.SELECTOR)
}
ALU_SPECS: dict[AluOp, InstructionSpec] = {
    AluOp(s.code): s for s in INSTRUCTIONS if s.unit is Unit.ALU
}
MEM_SPECS: dict[MemOp, InstructionSpec] = {
    MemOp(s.code): s for s in INSTRUCTIONS if s.unit is Unit.MEMORY
}
CTRL_SPECS: dict[CtrlOp, InstructionSpec] = {
    CtrlOp(s.code): s for s in INSTRUCTIONS if s.unit is Unit.CONTROL
}
UNARY_ALU_OPS = frozenset({AluOp.NEG})
