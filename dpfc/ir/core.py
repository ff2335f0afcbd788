"""The SSA IR of a DPF: a small closed set of ISA-level operations on 32-bit words.

A :class:`Module` holds the tenant arrays (:class:`ArrayDecl`) and the DPFs
(:class:`Function`). A function is a list of basic blocks; the entry block comes first and
control flow is acyclic (loops were unrolled): every block ends in a :class:`Br` (two-way
branch on a ``bool`` value), a :class:`Jump`, or an :class:`Exit` that carries the epilog
(values to PUSH, the steering action, the chain target, HDR_MOD). Each :class:`Instr` is
also the SSA value it defines (like LLVM): it is defined once, in a block that dominates its
uses, and a :data:`Op.PHI` at the top of a join block chooses among predecessors' values.

The operations mirror what SwitchVM's units can do (docs/isa.md) plus compare/select/phi,
so that scheduling is a placement problem, not a translation one:

==========  ==============================  =========================================
group       ops                              notes
==========  ==============================  =========================================
inputs      CONST PARAM PEEK RAND META      PARAM k = stack[k] (popped); PEEK =
                                            stack[params] (kept); META names a field
ALU         ADD SUB AND OR XOR SHL SHR       SHR logical, shifts use b & 31; MIN/MAX
            NEG MIN MAX MUL                  unsigned; MUL only until strength
                                            reduction (one operand constant)
selector    HASH                             HASH k = CRC of lane k (profile)
compare     EQ NE ULT ULE UGT UGE SLT SLE    -> bool; TEST a, b = (a & b) != 0
            SGT SGE TEST
bool        AND OR XOR on bools, SELECT,     ZEXT bool -> 0/1 word
            ZEXT
memory      LOAD STORE FETCH_ADD FETCH_AND   ``array`` names an ArrayDecl; fetch ops
            FETCH_OR FETCH_MAX FETCH_MIN     return the old word
ssa         PHI                              ``incoming`` = predecessor block labels
==========  ==============================  =========================================

The IR is mutable (passes rewrite it in place or build new functions); :mod:`.text` prints
and parses it, :mod:`.verify` checks its invariants, :mod:`.interp` runs it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

from dpfc.diagnostics import Span


class Ty(Enum):
    WORD = "w32"
    BOOL = "i1"


class Op(Enum):
    CONST = "const"
    PARAM = "param"
    PEEK = "peek"
    RAND = "rand"
    META = "meta"
    ADD = "add"
    SUB = "sub"
    AND = "and"
    OR = "or"
    XOR = "xor"
    SHL = "shl"
    SHR = "shr"
    NEG = "neg"
    MIN = "min"
    MAX = "max"
    MUL = "mul"
    HASH = "hash"
    EQ = "eq"
    NE = "ne"
    ULT = "ult"
    ULE = "ule"
    UGT = "ugt"
    UGE = "uge"
    SLT = "slt"
    SLE = "sle"
    SGT = "sgt"
    SGE = "sge"
    TEST = "test"
    SELECT = "select"
    ZEXT = "zext"
    LOAD = "load"
    STORE = "store"
    FETCH_ADD = "fetch_add"
    FETCH_AND = "fetch_and"
    FETCH_OR = "fetch_or"
    FETCH_MAX = "fetch_max"
    FETCH_MIN = "fetch_min"
    PHI = "phi"


BINARY_WORD_OPS = frozenset(
    {Op.ADD, Op.SUB, Op.AND, Op.OR, Op.XOR, Op.SHL, Op.SHR, Op.MIN, Op.MAX, Op.MUL}
)
COMPARE_OPS = frozenset(
    {Op.EQ, Op.NE, Op.ULT, Op.ULE, Op.UGT, Op.UGE, Op.SLT, Op.SLE, Op.SGT, Op.SGE, Op.TEST}
)
FETCH_OPS = frozenset({Op.FETCH_ADD, Op.FETCH_AND, Op.FETCH_OR, Op.FETCH_MAX, Op.FETCH_MIN})
MEMORY_OPS = frozenset({Op.LOAD, Op.STORE}) | FETCH_OPS
INPUT_OPS = frozenset({Op.CONST, Op.PARAM, Op.PEEK, Op.RAND, Op.META})
# Ops whose result depends on more than their operands, or that change state: never
# removed, duplicated or merged by a pass (RAND draws a new word each time).
SIDE_EFFECT_OPS = frozenset({Op.STORE, Op.RAND}) | FETCH_OPS
WORD_MASK = 0xFFFF_FFFF
# The fixed operand count of each op (PHI: one value per incoming label, at least one;
# checked apart), for the text reader and the verifier.
ARITY: dict[Op, int] = {
    Op.CONST: 0,
    Op.PARAM: 0,
    Op.PEEK: 0,
    Op.RAND: 0,
    Op.META: 0,
    Op.NEG: 1,
    Op.HASH: 1,
    Op.ZEXT: 1,
    Op.SELECT: 3,
    Op.LOAD: 1,
    Op.STORE: 2,
    **{op: 2 for op in BINARY_WORD_OPS | COMPARE_OPS | FETCH_OPS},
}


@dataclass(eq=False)
class Instr:
    """One operation, and the SSA value it defines (``ty`` is None for STORE).

    ``imm``: the CONST value, the PARAM index or the HASH function index. ``symbol``: the
    array of a memory op, or the metadata field of META. ``incoming``: for PHI, the label
    of the predecessor block each argument comes from. Identity is object identity.
    """

    op: Op
    args: list[Instr] = field(default_factory=list)
    ty: Ty | None = Ty.WORD
    imm: int | None = None
    symbol: str | None = None
    incoming: list[str] = field(default_factory=list)
    span: Span | None = None
    hint: str | None = None  # a source name, used by the printer's comments

    def __repr__(self) -> str:
        return f"<Instr {self.op.value} at {id(self):#x}>"


@dataclass(eq=False)
class Br:
    cond: Instr
    then: str
    orelse: str
    span: Span | None = None


@dataclass(eq=False)
class Jump:
    target: str
    span: Span | None = None


@dataclass(frozen=True)
class ActionSpans:
    """Where each action of an epilog was written: the ``push(...)``, steering, ``chain``
    and ``drop_code()`` statements (the first of several ``push`` statements), for the
    debug lines of the epilog's instructions. None where the action has no statement."""

    push: Span | None = None
    steer: Span | None = None
    chain: Span | None = None
    drop_code: Span | None = None


@dataclass(eq=False)
class Exit:
    """The end of a path: the epilog. ``steer`` is a steering action name of the profile
    (``pass`` by default); ``steer_value`` its value (forward, multicast, set_port).
    ``span`` is where the path ends (a ``return`` or the DPF's closing brace); ``actions``
    where each action was written."""

    push: list[Instr] = field(default_factory=list)
    steer: str = "pass"
    steer_value: Instr | None = None
    chain: str | None = None  # a DPF name (qualified: ``module.dpf``), resolved by the linker
    drop_code: bool = False
    span: Span | None = None
    actions: ActionSpans = field(default_factory=ActionSpans)


Terminator = Br | Jump | Exit


@dataclass(eq=False)
class Block:
    label: str
    instrs: list[Instr] = field(default_factory=list)
    term: Terminator = field(default_factory=Exit)

    def successors(self) -> list[str]:
        term = self.term
        if isinstance(term, Br):
            return [term.then, term.orelse]
        if isinstance(term, Jump):
            return [term.target]
        return []


@dataclass(eq=False)
class Function:
    """A DPF: ``params`` words are popped from the stack; blocks[0] is the entry."""

    name: str
    params: int
    blocks: list[Block] = field(default_factory=list)
    attrs: dict[str, str] = field(default_factory=dict)  # placement, target, pipeline
    span: Span | None = None

    def block(self, label: str) -> Block:
        for block in self.blocks:
            if block.label == label:
                return block
        raise KeyError(label)

    def instrs(self) -> list[Instr]:
        return [i for b in self.blocks for i in b.instrs]


@dataclass(eq=False)
class ArrayDecl:
    """A tenant array: ``size`` words, direct- or segment-mapped, optionally pinned."""

    name: str
    mapping: str  # "direct" | "segment"
    size: int
    pin: tuple[int, int] | None = None  # (EU, lane)
    signed: bool = False
    span: Span | None = None


@dataclass(eq=False)
class Module:
    name: str
    app_id: int | None = None
    arrays: dict[str, ArrayDecl] = field(default_factory=dict)
    functions: list[Function] = field(default_factory=list)

    def function(self, name: str) -> Function:
        for function in self.functions:
            if function.name == name:
                return function
        raise KeyError(name)


def result_type(op: Op) -> Ty | None:
    """The type an op produces (PHI, SELECT and AND/OR/XOR take their operands' type)."""
    if op is Op.STORE:
        return None
    if op in COMPARE_OPS:
        return Ty.BOOL
    return Ty.WORD
