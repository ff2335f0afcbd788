"""The branch unit of an EU as a Tofino stage can hold it: one comparison, then a TCAM.

Contract: :func:`plan_branch` puts a branch's operands in the forms the comparison action
has (immediates always second, the op mirrored when the operands swap; one register
compared with itself rewritten); :func:`compare` gives the three words the comparison action of an EU's first
stage writes for operands ``x`` and ``y`` in a :class:`Form`, and whether its difference is
reversed; :data:`RESOLUTION` is the branch-resolution TCAM of the EU's second stage, its
entries in priority order; :func:`resolve` is their first match. For every control op, form
and operand pair, ``resolve(op, compare(form, x, y))`` is the outcome
:func:`dpfc.isa.semantics.branch_taken` defines (``tests/test_branch_tcam.py``, a property
over random words and the boundary ones). :meth:`Entry.ternary` gives an entry's
(value, mask) per key field, the form a table entry takes.

Why this shape. App. D: "After obtaining the operands they get compared using five
operators (CMP component in Figure 11): bitwise-AND, bitwise-XOR, saturated-subtraction,
sign-operand1, and sign-operand2", then "a branch resolution unit takes the CTRL_OP
data-field ... using a TCAM selection that finds the first matching result". Three words
carry the five outputs: ``x ^ y`` (zero when equal; its top bit set when the signs differ),
``x & y`` and the saturated difference, because with different signs the one with the sign
bit is the larger unsigned word. The comparison is an ALU action, not a gateway: a Tofino
gateway compares two fields for equality only (``tofino_limits.gateway_comparison``).
Tofino refuses action data as the second operand of a saturating subtraction, so when ``y``
is an immediate of the code memory the action computes ``y |-| x`` and the entries read the
difference the other way (``reversed``). Signed and unsigned order, equality and BSET are
then all tests of a word against zero or of one bit: ternary entries.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from dpfc.isa import CtrlOp, Imm, Operand, Register

WORD = 0xFFFF_FFFF
SIGN = 0x8000_0000


class Form(Enum):
    """Where the comparison's operands come from (both words at run time, or immediates)."""

    REGISTERS = "registers"  # x and y registers (or y an immediate the packet carries)
    IMMEDIATE_Y = "immediate y"  # x a register, y an immediate of the code memory
    CONSTANT = "constant"  # both immediates: the control plane writes the three words


class Outcome(Enum):
    TAKEN = "taken"
    NOT_TAKEN = "not taken"
    HALT = "halt"


@dataclass(frozen=True)
class Comparison:
    """What the first stage's comparison action writes."""

    xor: int  # x ^ y
    and_: int  # x & y
    difference: int  # x |-| y, or y |-| x when reversed
    reversed: bool


def compare(form: Form, x: int, y: int) -> Comparison:
    """The comparison action's words for ``x`` and ``y`` in ``form``."""
    x, y = x & WORD, y & WORD
    reverse = form is Form.IMMEDIATE_Y
    difference = max(y - x, 0) if reverse else max(x - y, 0)
    return Comparison(x ^ y, x & y, difference, reverse)


@dataclass(frozen=True)
class Entry:
    """One TCAM entry: a control op (and difference direction), tests, an outcome.

    ``xor_zero``/``and_zero``/``difference_zero`` set: that word must be zero (a TCAM entry
    cannot ask for non-zero: that is what the next entry gets). ``signs_differ`` tests the top
    bit of ``x ^ y`` when it is not ``None``."""

    ctrl: CtrlOp
    reversed: bool
    outcome: Outcome
    xor_zero: bool = False
    signs_differ: bool | None = None
    and_zero: bool = False
    difference_zero: bool = False

    def matches(self, op: CtrlOp, words: Comparison) -> bool:
        if (op, words.reversed) != (self.ctrl, self.reversed):
            return False
        zeros = (
            (self.xor_zero, words.xor),
            (self.and_zero, words.and_),
            (self.difference_zero, words.difference),
        )
        if any(tested and word != 0 for tested, word in zeros):
            return False
        return self.signs_differ is None or self.signs_differ == bool(words.xor & SIGN)

    def ternary(self) -> dict[str, tuple[int, int]]:
        """(value, mask) per key field: ``ctrl``, ``reversed``, ``xor``, ``and``, ``difference``."""
        xor_value, xor_mask = 0, WORD if self.xor_zero else 0
        if self.signs_differ is not None:
            xor_value |= SIGN if self.signs_differ else 0
            xor_mask |= SIGN
        return {
            "ctrl": (int(self.ctrl), 0xF),
            "reversed": (int(self.reversed), 1),
            "xor": (xor_value, xor_mask),
            "and": (0, WORD if self.and_zero else 0),
            "difference": (0, WORD if self.difference_zero else 0),
        }


T, N = Outcome.TAKEN, Outcome.NOT_TAKEN


def _order(op: CtrlOp, rev: bool, *, strict_less: bool) -> list[Entry]:
    """Unsigned order: ``x > y`` (strict_less False) or ``x < y`` (True).

    Not reversed, the difference is x |-| y: zero exactly when x <= y. Reversed it is
    y |-| x: zero exactly when y <= x."""
    if strict_less != rev:  # x < y from x |-| y, or x > y from y |-| x: zero and not equal
        return [
            Entry(op, rev, N, xor_zero=True),
            Entry(op, rev, T, difference_zero=True),
            Entry(op, rev, N),
        ]
    return [Entry(op, rev, N, difference_zero=True), Entry(op, rev, T)]


def _signed(op: CtrlOp, rev: bool, *, strict_less: bool) -> list[Entry]:
    """Signed order: with different signs the negative word is the larger unsigned one, so
    x >s y is x <u y and x <s y is x >u y; with equal signs it is the unsigned order."""
    differ = _order(op, rev, strict_less=not strict_less)
    return [
        *(
            Entry(op, rev, e.outcome, signs_differ=True, difference_zero=e.difference_zero)
            for e in differ
            if not e.xor_zero  # equal words never have different signs
        ),
        *_order(op, rev, strict_less=strict_less),
    ]


def _entries(op: CtrlOp, rev: bool) -> list[Entry]:
    match op:
        case CtrlOp.JMP:
            return [Entry(op, rev, T)]
        case CtrlOp.HALT:
            return [Entry(op, rev, Outcome.HALT)]
        case CtrlOp.BEQ:
            return [Entry(op, rev, T, xor_zero=True), Entry(op, rev, N)]
        case CtrlOp.BSET:
            return [Entry(op, rev, N, and_zero=True), Entry(op, rev, T)]
        case CtrlOp.BGT:
            return _order(op, rev, strict_less=False)
        case CtrlOp.BLT:
            return _order(op, rev, strict_less=True)
        case CtrlOp.BSGT:
            return _signed(op, rev, strict_less=False)
        case CtrlOp.BSLT:
            return _signed(op, rev, strict_less=True)
    raise ValueError(f"not a control opcode: {op!r}")


RESOLUTION: tuple[Entry, ...] = tuple(
    entry for op in CtrlOp for rev in (False, True) for entry in _entries(op, rev)
)


MIRROR = {CtrlOp.BLT: CtrlOp.BGT, CtrlOp.BGT: CtrlOp.BLT, CtrlOp.BSLT: CtrlOp.BSGT}
MIRROR[CtrlOp.BSGT] = CtrlOp.BSLT


@dataclass(frozen=True)
class BranchPlan:
    """A branch as the comparison action computes it: ``op`` on (``x``, ``y``) in ``form``.

    ``x`` is a register unless the form is CONSTANT; ``y`` is a register (REGISTERS), the
    immediate (IMMEDIATE_Y, or REGISTERS when the packet carries it) or, for CONSTANT, the
    second of the two words the control plane compares itself."""

    op: CtrlOp
    form: Form
    x: Operand
    y: Operand


def plan_branch(op: CtrlOp, x: Operand, y: Operand) -> BranchPlan:
    """The plan of a conditional branch on ``x`` and ``y``.

    Immediates go second, where the action data (or the packet's immediate word) is an
    operand the stage accepts; the swap mirrors the op (x < y is y > x; BEQ and BSET are
    symmetric). Two immediates are compared by the control plane (CONSTANT). A register
    compared with itself needs no comparison: equal words are BEQ-taken and never strictly
    ordered (CONSTANT 0, 0), and BSET x, x is x != 0, that is BSET x, 0xFFFFFFFF."""
    if isinstance(x, Imm) and isinstance(y, Imm):
        return BranchPlan(op, Form.CONSTANT, x, y)
    if isinstance(x, Imm):
        return plan_branch(MIRROR.get(op, op), y, x)
    if isinstance(y, Imm):
        return BranchPlan(op, Form.IMMEDIATE_Y, x, y)
    if x == y:
        if op is CtrlOp.BSET:
            return BranchPlan(op, Form.IMMEDIATE_Y, x, Imm(WORD))
        return BranchPlan(op, Form.CONSTANT, Imm(0), Imm(0))
    return BranchPlan(op, Form.REGISTERS, x, y)


def operand_value(operand: Operand, registers: dict[Register, int]) -> int:
    return operand.value if isinstance(operand, Imm) else registers[operand]


def resolve(op: CtrlOp, words: Comparison) -> Outcome:
    """The outcome of the first entry of :data:`RESOLUTION` that matches."""
    for entry in RESOLUTION:
        if entry.matches(op, words):
            return entry.outcome
    raise AssertionError(f"no TCAM entry for {op.name} (every op ends with a wildcard)")
