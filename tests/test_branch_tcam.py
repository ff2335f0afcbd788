"""The branch unit of an EU in a Tofino stage (dpfc.backends.p4.branch_tcam).

The comparison action's three words and the first match of the resolution TCAM give the
outcome docs/isa.md defines (dpfc.isa.semantics.branch_taken) for every control op, every
operand form and any pair of words; the entries as (value, mask) pairs match exactly when
their tests do, which is how a TCAM reads them.
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from dpfc.backends.p4.branch_tcam import (
    RESOLUTION,
    Form,
    Outcome,
    compare,
    operand_value,
    plan_branch,
    resolve,
)
from dpfc.isa import CtrlOp, Imm, Operand, Register
from dpfc.isa.semantics import branch_taken

BOUNDARY = [0, 1, 2, 0x7FFF_FFFE, 0x7FFF_FFFF, 0x8000_0000, 0x8000_0001, 0xFFFF_FFFE, 0xFFFF_FFFF]
words = st.one_of(st.sampled_from(BOUNDARY), st.integers(0, 0xFFFF_FFFF))


def _expected(op: CtrlOp, x: int, y: int) -> Outcome:
    if op is CtrlOp.HALT:
        return Outcome.HALT
    return Outcome.TAKEN if branch_taken(op, x, y) else Outcome.NOT_TAKEN


def test_every_op_form_and_boundary_pair() -> None:
    for op in CtrlOp:
        for form in Form:
            for x in BOUNDARY:
                for y in BOUNDARY:
                    assert resolve(op, compare(form, x, y)) == _expected(op, x, y), (op, form, x, y)


@given(op=st.sampled_from(list(CtrlOp)), form=st.sampled_from(list(Form)), x=words, y=words)
def test_the_tcam_resolves_like_the_isa(op: CtrlOp, form: Form, x: int, y: int) -> None:
    assert resolve(op, compare(form, x, y)) == _expected(op, x, y)


@given(form=st.sampled_from(list(Form)), x=words, y=words)
def test_value_and_mask_match_like_the_tests(form: Form, x: int, y: int) -> None:
    words = compare(form, x, y)
    for entry in RESOLUTION:
        key = {
            "ctrl": int(entry.ctrl),
            "reversed": int(words.reversed),
            "xor": words.xor,
            "and": words.and_,
            "difference": words.difference,
        }
        as_tcam = all((key[f] & mask) == value for f, (value, mask) in entry.ternary().items())
        assert as_tcam == entry.matches(entry.ctrl, words)


def test_only_an_immediate_y_reverses_the_difference() -> None:
    assert [f for f in Form if compare(f, 5, 3).reversed] == [Form.IMMEDIATE_Y]
    assert compare(Form.IMMEDIATE_Y, 3, 5).difference == 2
    assert compare(Form.REGISTERS, 5, 3).difference == 2


def test_the_table_is_small() -> None:
    """Entries a Tofino TCAM holds in one block (512): the table is fixed, not per bundle."""
    assert len(RESOLUTION) == 40
    assert all(len(e.ternary()) == 5 for e in RESOLUTION)


REGISTERS_2 = [Register.a(0), Register.a(1), Register.b(0), Register.b(1)]
operands = st.one_of(st.sampled_from(REGISTERS_2), words.map(Imm))


@given(
    op=st.sampled_from([op for op in CtrlOp if op.conditional]),
    x=operands,
    y=operands,
    values=st.lists(words, min_size=4, max_size=4),
)
def test_the_planned_branch_resolves_like_the_isa(
    op: CtrlOp, x: Operand, y: Operand, values: list[int]
) -> None:
    registers = dict(zip(REGISTERS_2, values, strict=True))
    expected = _expected(op, operand_value(x, registers), operand_value(y, registers))
    plan = plan_branch(op, x, y)
    assert plan.form is Form.CONSTANT or isinstance(plan.x, Register)
    forms = [plan.form]
    if plan.form is Form.IMMEDIATE_Y:
        forms.append(Form.REGISTERS)  # the immediate carried in the packet: a PHV word
    for form in forms:
        words = compare(form, operand_value(plan.x, registers), operand_value(plan.y, registers))
        assert resolve(plan.op, words) == expected, (plan, form)


def test_immediates_go_second_and_mirror_the_op() -> None:
    plan = plan_branch(CtrlOp.BLT, Imm(5), Register.b(1))
    assert (plan.op, plan.form, plan.x, plan.y) == (
        CtrlOp.BGT,
        Form.IMMEDIATE_Y,
        Register.b(1),
        Imm(5),
    )
    assert plan_branch(CtrlOp.BSET, Register.a(0), Register.a(0)).y == Imm(0xFFFF_FFFF)
    assert plan_branch(CtrlOp.BEQ, Imm(1), Imm(2)).form is Form.CONSTANT
