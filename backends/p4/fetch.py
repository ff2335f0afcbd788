"""In-packet code in the P4 program: decoding the bundle :func:`~.decode.find_bundle` found.

Contract: ``fetch_bundle()`` / ``fetch_epilog()`` decode the bundle at the top of the window
``meta.f_win`` into the same fields the code tables' actions set (``meta.c_*`` /
``meta.e_*``, the code-memory word layout of docs/encoding.md §7, :func:`word_meta`), so
the rest of the pipeline does not know where code came from.

Every byte position, bit slice and size comes from the layout tables of
:mod:`dpfc.encoding.layouts` (through :func:`~.window.field_at`), the tables the Python
decoder uses.
"""

from __future__ import annotations

from dpfc.backends.p4.lang import Assign, Decl, Expr, If, Lit, Stmt, action, chain
from dpfc.backends.p4.layout import Layout
from dpfc.backends.p4.window import (
    CONDITIONAL_FIRST,
    field_at,
    meta,
    moved,
    takes_value,
    top,
)
from dpfc.encoding import (
    BRANCH,
    BUNDLE_HEAD,
    EPILOG_HEAD,
    NEXT_PC_IMM,
    NEXT_PC_REG,
    PC_FORMAT,
    REGISTER_BYTE,
    SELECTOR,
    STEER_IMMEDIATE,
    ByteLayout,
    StageKind,
    imm_group,
    op_group,
)


def fetch_bundle(layout: Layout) -> Decl:
    """Decode the prolog/EU bundle at the top of meta.f_win into the meta.c_* fields."""
    m = meta.dot

    def c(f: str) -> Expr:
        return meta.dot(f"c_{f}")

    def read(table: ByteLayout, name: str) -> Expr:
        return field_at(layout, "f_win", table.field(name))

    # f_b0 keeps the header byte that holds the op-group flags, tested after the window moved
    flags = BUNDLE_HEAD.field("has_alu")
    assert BUNDLE_HEAD.field("has_mem").byte == flags.byte
    body: list[Stmt] = [
        Assign(c("ctrl_op"), read(BUNDLE_HEAD, "ctrl_op")),
        Assign(m("f_nimm"), read(BUNDLE_HEAD, "n_imm")),
        Assign(m("f_b0"), top(layout, "f_win", flags.byte)),
        Assign(m("f_nsel"), read(BUNDLE_HEAD, "n_sel")),
        Assign(c("pc_taken"), read(BUNDLE_HEAD, "pc_taken")),
        moved("f_win", BUNDLE_HEAD.size),
        Assign(c("ctrl_x"), Lit(0)),
        Assign(c("ctrl_y"), Lit(0)),
        Assign(c("pc_not_taken"), Lit(0)),
        If(
            c("ctrl_op").ge(CONDITIONAL_FIRST),
            [
                Assign(c("ctrl_x"), read(BRANCH, "x")),
                Assign(c("ctrl_y"), read(BRANCH, "y")),
                Assign(c("pc_not_taken"), read(BRANCH, "pc_not_taken")),
                moved("f_win", BRANCH.size),
            ],
        ),
    ]
    regs = layout.registers
    for r in regs:
        body += [
            Assign(c(f"sel_{r}_valid"), Lit(0)),
            Assign(c(f"sel_{r}_kind"), Lit(0)),
            Assign(c(f"sel_{r}_operand"), Lit(0)),
        ]
    for j in range(len(regs)):
        assign = [
            (
                read(SELECTOR, "dest").eq(layout.register_code(i)),
                [
                    Assign(c(f"sel_{r}_valid"), Lit(1)),
                    Assign(c(f"sel_{r}_kind"), read(SELECTOR, "kind")),
                    Assign(c(f"sel_{r}_operand"), read(SELECTOR, "operand")),
                ],
            )
            for i, r in enumerate(regs)
        ]
        body.append(If(m("f_nsel").gt(j), [*chain(assign), moved("f_win", SELECTOR.size)]))
    ops = op_group(layout.lanes)
    for group, flag in (
        ("alu", BUNDLE_HEAD.field("has_alu")),
        ("mem", BUNDLE_HEAD.field("has_mem")),
    ):
        clear = [Assign(c(f"{group}_{i}"), Lit(0)) for i in range(layout.lanes)]
        load = [Assign(c(f"{group}_{i}"), read(ops, f"lane_{i}")) for i in range(layout.lanes)]
        present = m("f_b0").slice(flag.low, flag.low).eq(1)
        body.append(If(present, [*load, moved("f_win", ops.size)], clear))
    count = layout.profile.immediates_per_bundle
    for k in range(count):
        body.append(
            If(
                m("f_nimm").gt(k),
                [Assign(c(f"imm_{k}"), read(imm_group(count), f"imm_{k}"))],
                [Assign(c(f"imm_{k}"), Lit(0))],
            )
        )
    return action("fetch_bundle", [], body, "Decode the in-packet prolog/EU bundle found.")


def fetch_epilog(layout: Layout) -> Decl:
    """Decode the epilog bundle at the top of meta.f_win into the meta.e_* fields."""

    def e(f: str) -> Expr:
        return meta.dot(f"e_{f}")

    def read(table: ByteLayout, name: str) -> Expr:
        return field_at(layout, "f_win", table.field(name))

    def register_code() -> Expr:
        """A register byte, widened to the 16 bits of a steering value or NEXT_PC."""
        return Lit(0, 8).concat(top(layout, "f_win", 0, REGISTER_BYTE.size))

    body: list[Stmt] = [
        *(
            Assign(e(name), read(EPILOG_HEAD, name))
            for name in ("n_push", "steer_action", "hdr_mod", "steer_src", "next_pc_src")
        ),
        moved("f_win", EPILOG_HEAD.size),
    ]
    for k in range(layout.profile.max_push):
        body.append(
            If(
                e("n_push").gt(k),
                [
                    Assign(e(f"push_{k}"), read(REGISTER_BYTE, "register")),
                    moved("f_win", REGISTER_BYTE.size),
                ],
                [Assign(e(f"push_{k}"), Lit(0))],
            )
        )
    body += [
        Assign(e("steer_value"), Lit(0)),
        If(
            takes_value(layout, e("steer_action")),
            [
                If(
                    e("steer_src").eq(0),
                    [
                        Assign(e("steer_value"), read(STEER_IMMEDIATE, "value")),
                        moved("f_win", STEER_IMMEDIATE.size),
                    ],
                    [
                        Assign(e("steer_value"), register_code()),
                        moved("f_win", REGISTER_BYTE.size),
                    ],
                )
            ],
        ),
        Assign(e("next_pc"), Lit(0)),
        If(
            e("next_pc_src").eq(NEXT_PC_IMM),
            [Assign(e("next_pc"), top(layout, "f_win", 0, PC_FORMAT.size))],
        ),
        If(e("next_pc_src").eq(NEXT_PC_REG), [Assign(e("next_pc"), register_code())]),
    ]
    return action("fetch_epilog", [], body, "Decode the in-packet epilog bundle found.")


def word_meta(layout: Layout) -> list[tuple[str, str]]:
    """The decoded-bundle fields: c_* (prolog/EU words), e_* (epilog words)."""
    fields = [(f"c_{name}", f"bit<{width}>") for name, width in layout.word_fields(StageKind.EU)]
    fields += [
        (f"e_{name}", f"bit<{width}>") for name, width in layout.word_fields(StageKind.EPILOG)
    ]
    return fields
