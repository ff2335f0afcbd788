"""The scheduling problem of one DPF, independent of any solver.

:func:`dpfc.schedule.problem.build.build_problem` turns an optimised, verified IR function
into a :class:`Problem`; the Z3 encoding (:mod:`dpfc.schedule.z3`), the greedy list
scheduler (:mod:`dpfc.schedule.greedy`) and the checker (:mod:`dpfc.schedule.check`) all read
only this description.

The IR's CFG is turned into a **tree of paths** (:class:`TreeNode`): join blocks are
duplicated into each predecessor, so that every root-to-leaf path is one run of the DPF and
every tree node is the part of one or more paths that has not yet split. SwitchVM runs one
bundle per EU *per path*, so this is the shape its code has anyway. Booleans exist on the
machine only as branches: a ``select``/``zext`` of a condition, or a branch on ``&&``, ``||``
or ``^`` of conditions, becomes branches here (each compare is one :class:`Branch`).

Everything a path computes is an :class:`Operation` with a dense integer id:

* **inputs** (``PARAM``, ``PEEK``, ``META``, ``RAND``) are produced by the prolog;
* **constants** (``CONST``) are produced by ``LOAD_IMM`` into a B register (in any EU), used
  as a branch or steering immediate, or found in any register the prolog leaves
  uninitialised (those hold 0 at run time, so ``CONST 0`` is free at EU0 entry);
* **ALU** ops (``A[i] = A[i] op B[i]``), **HASH** (``A[k] = crc_k(A[k])``, lane fixed by the
  op) and **MEM** ops (address ``A[i]``, data ``B[i]``, result into ``B[i]``).

Constants are unique by value (one operation per distinct word). An operation is *owned* by
one tree node: a memory operation must run exactly once on every path through its owner
and in an EU where the path has already left the owner's parent (after the parent's branch);
a pure operation (ALU, HASH) may run earlier, in the bundle of any ancestor (speculation is
harmless: it only writes a register).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from enum import Enum

from dpfc.diagnostics import Span
from dpfc.ir import ActionSpans
from dpfc.isa import AluOp, CtrlOp, MemOp
from dpfc.target import TargetProfile


class Kind(Enum):
    PARAM = "param"  # stack word `index` (popped by the prolog)
    PEEK = "peek"  # the stack word below the parameters (kept)
    META = "meta"  # switch metadata field `index` (profile metadata index)
    RAND = "rand"  # a random word; `index` numbers the draws 0, 1, ...
    CONST = "const"  # the word `value`
    ALU = "alu"  # `alu` on operands (x, y), or (x,) for NEG
    HASH = "hash"  # crc of lane `lane` of operands[0]
    MEM = "mem"  # `mem` on `array`: operands (address,) for LOAD, (address, data) otherwise


INPUT_KINDS = frozenset({Kind.PARAM, Kind.PEEK, Kind.META, Kind.RAND})

# ALU ops where A op B == B op A: the scheduler may put either operand in A.
COMMUTATIVE = frozenset({AluOp.ADD, AluOp.AND, AluOp.OR, AluOp.XOR, AluOp.MIN, AluOp.MAX})


@dataclass(frozen=True)
class Operation:
    """One value-producing (or, for STORE, effect-only) operation of the problem."""

    id: int
    kind: Kind
    owner: int  # tree node id; inputs and constants belong to the root (0)
    operands: tuple[int, ...] = ()  # operation ids
    index: int = 0  # PARAM position, META field index, RAND draw number
    value: int = 0  # CONST word
    alu: AluOp | None = None
    lane: int | None = None  # HASH: the lane whose CRC it is (hash<k>)
    mem: MemOp | None = None
    array: str | None = None
    name: str = ""  # what to call it in listings: a source name, or "%N"
    span: Span | None = None

    @property
    def has_result(self) -> bool:
        """STORE is the only operation without a result (it leaves B[i] as it was)."""
        return self.mem is not MemOp.STORE

    @property
    def is_pure(self) -> bool:
        return self.kind in (Kind.ALU, Kind.HASH)

    @property
    def commutative(self) -> bool:
        return self.alu in COMMUTATIVE


@dataclass(frozen=True)
class Branch:
    """The end of a non-leaf tree node: ``op`` (a conditional CtrlOp) on operands ``x``,
    ``y`` (operation ids; a CONST may become an immediate); ``taken`` and ``not_taken`` are
    the child tree nodes."""

    op: CtrlOp
    x: int
    y: int
    taken: int
    not_taken: int
    span: Span | None = None


@dataclass(frozen=True)
class Exit:
    """The end of a path: the epilog. ``push`` lists operation ids, the first ends on top
    of the stack; ``steer_value`` is an operation id (a CONST <= 0xFFFF may be an
    immediate); ``chain`` is the qualified DPF name the epilog's NEXT_PC names."""

    push: tuple[int, ...] = ()
    steer: str = "pass"
    steer_value: int | None = None
    chain: str | None = None
    drop_code: bool = False
    span: Span | None = None
    # Where each action was written (debug lines only: not part of the problem's identity,
    # so the schedule cache's key, the repr, does not change when a statement moves).
    actions: ActionSpans = field(default_factory=ActionSpans, compare=False, repr=False)


@dataclass(frozen=True)
class TreeNode:
    id: int
    parent: int | None
    ops: tuple[int, ...]  # operations owned by this node, in program order
    end: Branch | Exit
    label: str = ""  # the IR block(s) it came from, for listings

    @property
    def children(self) -> tuple[int, ...]:
        return (self.end.taken, self.end.not_taken) if isinstance(self.end, Branch) else ()

    @property
    def is_leaf(self) -> bool:
        return isinstance(self.end, Exit)


@dataclass(frozen=True)
class ArrayInfo:
    name: str
    mapping: str  # "direct" | "segment"
    size: int
    pin: tuple[int, int] | None  # (EU, lane) fixed by @pin or by an earlier DPF of the module
    span: Span | None = None
    pinned_by: str = "pin"  # "pin" (source attribute) or the DPF whose schedule bound it


@dataclass(frozen=True)
class Problem:
    """One DPF to schedule on ``profile``. ``nodes[0]`` is the root; nodes are numbered in
    preorder (a parent before its children, taken subtree before not-taken subtree)."""

    module: str
    name: str  # the DPF's name
    profile: TargetProfile
    params: int  # stack words the prolog must POP
    placement: str  # "packet" | "switch"
    app_id: int | None
    ops: tuple[Operation, ...]
    nodes: tuple[TreeNode, ...]
    arrays: dict[str, ArrayInfo] = field(default_factory=dict)
    span: Span | None = None
    pipeline: str = "ingress"  # "ingress" | "egress"
    # Optional ALU operations that compute a constant's word (:mod:`.materialise`): op id
    # -> the CONST op id. Nothing names them as an operand; where one runs, the register
    # it writes holds that constant (the value the schedule tracks is the CONST).
    same_word: dict[int, int] = field(default_factory=dict)
    # How a word select/zext of a condition was built: "branch" (paths) or "alu"
    # (:mod:`.boolwords`), and how many such conditions the DPF has.
    booleans: str = "branch"
    value_conditions: int = 0
    # (EU, lane) -> the array of the module that holds it and that this DPF does not access
    # (another DPF of its pipeline does; pinned, or bound by a DPF scheduled earlier): no
    # array of this DPF may be bound there, or the linker would find two arrays of one
    # tenant in one lane (DPF7004).
    reserved: dict[tuple[int, int], str] = field(default_factory=dict)

    def op(self, op_id: int) -> Operation:
        return self.ops[op_id]

    def ancestors(self, node: int) -> Iterator[int]:
        """``node`` and its ancestors, nearest first."""
        current: int | None = node
        while current is not None:
            yield current
            current = self.nodes[current].parent

    def is_ancestor(self, ancestor: int, node: int) -> bool:
        """True if ``ancestor`` is ``node`` or one of its ancestors."""
        return ancestor in self.ancestors(node)

    def leaves(self) -> list[int]:
        return [n.id for n in self.nodes if n.is_leaf]

    def path(self, leaf: int) -> list[int]:
        """The tree nodes from the root to ``leaf``."""
        return list(reversed(list(self.ancestors(leaf))))

    def const_ids(self) -> dict[int, int]:
        """Constant word -> operation id."""
        return {o.value: o.id for o in self.ops if o.kind is Kind.CONST}

    def branch_depth(self, node: int) -> int:
        """Branches on the way from the root to ``node`` (its own end not counted)."""
        return sum(1 for _ in self.ancestors(node)) - 1
