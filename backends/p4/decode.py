"""In-packet code in the P4 program: finding the bundles a packet carries.

Contract: the parser left every code data byte, in order, right-aligned in the wide field
``meta.code`` (``meta.code_len0 + meta.code_len1`` bytes); :mod:`.window` reads it. This
module generates

* the *walk* (:func:`walk`): straight-line code that reads the option headers, block headers
  and bundle headers (docs/encoding.md §2.2) and records, for the t-th bundle of the packet,
  its offset, stage and index within the stage (``meta.bo_t``, ``meta.bs_t``, ``meta.bi_t``);
  the packet carries at most ``(EUs + 2) x packet_bundles_per_stage`` bundles, so the
  unrolled walk is complete;
* ``find_bundle(stage, index)``: a window on a bundle (``meta.found``: whether the packet
  carries it — R14, a fault otherwise), which :mod:`.fetch` decodes;
* the P4 functions the control uses on the stack and registers (:func:`helpers`).

Every size, slice and field width of the in-packet formats comes from the layout tables of
:mod:`dpfc.encoding.layouts`, the tables the Python encoder and decoder use.
"""

from __future__ import annotations

from dpfc.backends.p4.lang import (
    Assign,
    Decl,
    Expr,
    Function,
    If,
    Lit,
    Return,
    Stmt,
    Var,
    action,
    chain,
    n,
)
from dpfc.backends.p4.layout import Layout
from dpfc.backends.p4.window import (
    CONDITIONAL_FIRST,
    advance,
    align,
    bits,
    field_at,
    meta,
    moved,
    shift,
    takes_value,
    times,
    top,
)
from dpfc.encoding import (
    BLOCK_HEAD,
    BRANCH,
    BUNDLE_HEAD,
    CODE_OPTION_HEAD,
    EPILOG_HEAD,
    IMMEDIATE,
    NEXT_PC_IMM,
    NEXT_PC_REG,
    PC_FORMAT,
    REGISTER_BYTE,
    SELECTOR,
    STEER_IMMEDIATE,
    ByteLayout,
)

EPILOG = 31


def helpers(layout: Layout) -> list[Decl]:
    stack_bits = layout.stack_bits
    depth = layout.profile.stack_max_depth
    stack_word = Function(
        "bit<32>",
        "stack_word",
        [f"in bit<{stack_bits}> stack", "in bit<8> depth", "in bit<8> j"],
        [
            Var("bit<8>", "rev", n("depth") - 1 - n("j")),
            Var(f"bit<{stack_bits}>", "t", n("stack")),
            *shift("t", n("rev"), depth, 32),
            Return(n("t").cast(32)),
        ],
        "Stack entry `j` (0 = top) of `depth` entries right-aligned in `stack`.",
    )
    regs = layout.registers
    pick = Function(
        "bit<32>",
        "pick",
        ["in bit<8> code", *(f"in bit<32> {r}" for r in regs)],
        [
            *chain(
                [
                    (n("code").eq(layout.register_code(i)), [Return(n(r))])
                    for i, r in enumerate(regs)
                ]
            ),
            Return(Lit(0, 32)),
        ],
        "The register a 5-bit register code names (one of the values given).",
    )
    shl_words = Function(
        f"bit<{stack_bits}>",
        "shl_words",
        [f"in bit<{stack_bits}> value", "in bit<8> words"],
        [
            Var(f"bit<{stack_bits}>", "t", n("value")),
            *shift("t", n("words"), depth + 1, 32, "<<"),
            Return(n("t")),
        ],
        "`value` shifted left by `words` 32-bit words.",
    )
    keep_words = Function(
        f"bit<{stack_bits}>",
        "keep_words",
        [f"in bit<{stack_bits}> value", "in bit<8> words"],
        [
            Var(f"bit<{stack_bits}>", "t", n("value")),
            *shift("t", n("words"), depth + 1, 32),
            Return(n("value") - n("shl_words").call(n("t"), n("words"))),
        ],
        "The low `words` 32-bit words of `value` (the stack entries below the popped ones).",
    )
    return [stack_word, pick, shl_words, keep_words]


def _width(table: ByteLayout, name: str) -> str:
    """The P4 type of a variable holding one field of a layout."""
    return f"bit<{table.field(name).width}>"


STAGE = _width(BLOCK_HEAD, "stage")  # a stage id
INDEX = _width(PC_FORMAT, "index")  # a bundle's index in its stage


def walk_meta(layout: Layout) -> list[tuple[str, str]]:
    fields = [
        ("code_total", "bit<16>"),
        ("w_pad", "bit<16>"),
        ("w_win", f"bit<{layout.code_bits}>"),
        ("f_win", f"bit<{layout.code_bits}>"),
        ("w_active", "bit<1>"),
        ("w_opt", "bit<1>"),
        ("w_pos", "bit<16>"),
        ("w_nblk", _width(CODE_OPTION_HEAD, "n_blocks")),
        # bundles left in the block: up to count_minus_one + 1
        ("w_blk", f"bit<{BLOCK_HEAD.field('count_minus_one').width + 1}>"),
        ("w_head", f"bit<{8 * BLOCK_HEAD.size}>"),
        ("w_stage", STAGE),
        ("w_idx", INDEX),
        ("w_size", "bit<16>"),
        ("found", "bit<1>"),
        ("off", "bit<16>"),
        ("f_b0", f"bit<{8 * BUNDLE_HEAD.field('has_alu').nbytes}>"),
        ("f_nsel", _width(BUNDLE_HEAD, "n_sel")),
        ("f_nimm", _width(BUNDLE_HEAD, "n_imm")),
    ]
    for t in range(layout.max_bundles):
        fields += [
            (f"bv_{t}", "bit<1>"),
            (f"bs_{t}", STAGE),
            (f"bi_{t}", INDEX),
            (f"bo_{t}", "bit<16>"),
        ]
    return fields


MAX_BUNDLE_BYTES = 64  # more than any bundle: 8 + 2*30 + 2*8 + 4*3 bytes on the widest profile


def _bundle_size(layout: Layout) -> list[Stmt]:
    """meta.w_size = the size of the prolog/EU bundle at the top of meta.w_win."""
    size = meta.dot("w_size")

    def head(name: str) -> Expr:
        return field_at(layout, "w_win", BUNDLE_HEAD.field(name))

    half = layout.half_lanes
    selectors = times(head("n_sel").cast(16), SELECTOR.size)
    immediates = times(head("n_imm").cast(16), IMMEDIATE.size)
    return [
        Assign(size, Lit(BUNDLE_HEAD.size, 16) + selectors + immediates),
        If(head("ctrl_op").ge(CONDITIONAL_FIRST), [Assign(size, size + BRANCH.size)]),
        If(head("has_alu").eq(1), [Assign(size, size + half)]),
        If(head("has_mem").eq(1), [Assign(size, size + half)]),
    ]


def _epilog_size(layout: Layout) -> list[Stmt]:
    """meta.w_size = the size of the epilog bundle at the top of meta.w_win."""
    size = meta.dot("w_size")

    def head(name: str) -> Expr:
        return field_at(layout, "w_win", EPILOG_HEAD.field(name))

    register = REGISTER_BYTE.size
    pushes = times(head("n_push").cast(16), register)
    return [
        Assign(size, Lit(EPILOG_HEAD.size, 16) + pushes),
        If(
            takes_value(layout, head("steer_action")),
            [
                Assign(size, size + register),
                If(
                    head("steer_src").eq(0),
                    [Assign(size, size + (STEER_IMMEDIATE.size - register))],
                ),
            ],
        ),
        If(head("next_pc_src").eq(NEXT_PC_IMM), [Assign(size, size + PC_FORMAT.size)]),
        If(head("next_pc_src").eq(NEXT_PC_REG), [Assign(size, size + register)]),
    ]


def walk(layout: Layout) -> list[Stmt]:
    """Record every in-packet bundle's offset, stage and index (the module docstring).
    The window meta.w_win keeps the next unread byte at its top."""
    m = meta.dot
    limit = layout.code_bits // 8 + 1
    n_blocks = field_at(layout, "w_win", CODE_OPTION_HEAD.field("n_blocks"))
    out: list[Stmt] = [
        *align(layout),
        Assign(m("w_active"), Lit(0)),
        Assign(m("w_opt"), Lit(0)),
        Assign(m("w_blk"), Lit(0)),
        Assign(m("w_stage"), Lit(0)),
        Assign(m("w_idx"), Lit(0)),
        Assign(m("w_win"), m("code")),
        If(
            m("code_total").ne(0),
            [
                Assign(m("w_active"), Lit(1)),
                Assign(m("w_nblk"), n_blocks),
                Assign(m("w_pos"), Lit(CODE_OPTION_HEAD.size)),
                moved("w_win", CODE_OPTION_HEAD.size),
                Assign(m("w_stage"), Lit(0x1F)),
            ],
        ),
    ]
    block_stage = bits(m("w_head"), BLOCK_HEAD, "stage")
    count_minus_one = bits(m("w_head"), BLOCK_HEAD, "count_minus_one")
    block_count = count_minus_one.cast(BLOCK_HEAD.field("count_minus_one").width + 1) + 1
    for t in range(layout.max_bundles):
        next_option = [
            Assign(m("w_opt"), Lit(1)),
            Assign(m("w_win"), m("code")),
            *advance("w_win", m("code_len0"), limit),
            Assign(m("w_nblk"), n_blocks),
            moved("w_win", CODE_OPTION_HEAD.size),
            Assign(m("w_pos"), m("code_len0") + CODE_OPTION_HEAD.size),
        ]
        next_block = [
            If(
                m("w_nblk").eq(0),
                [
                    If(
                        m("w_opt").eq(0).land(m("code_len1").ne(0)),
                        next_option,
                        [Assign(m("w_active"), Lit(0))],
                    )
                ],
            ),
            If(
                m("w_active").eq(1),
                [
                    Assign(m("w_head"), top(layout, "w_win", 0, BLOCK_HEAD.size)),
                    moved("w_win", BLOCK_HEAD.size),
                    Assign(m("w_pos"), m("w_pos") + BLOCK_HEAD.size),
                    Assign(m("w_blk"), block_count),
                    Assign(m("w_nblk"), m("w_nblk") - 1),
                    If(
                        block_stage.ne(m("w_stage")),
                        [
                            Assign(m("w_stage"), block_stage),
                            Assign(m("w_idx"), Lit(0)),
                        ],
                    ),
                ],
            ),
        ]
        record = [
            Assign(m(f"bv_{t}"), Lit(1)),
            Assign(m(f"bs_{t}"), m("w_stage")),
            Assign(m(f"bi_{t}"), m("w_idx")),
            Assign(m(f"bo_{t}"), m("w_pos")),
            If(m("w_stage").eq(EPILOG), _epilog_size(layout), _bundle_size(layout)),
            Assign(m("w_pos"), m("w_pos") + m("w_size")),
            *advance("w_win", m("w_size"), MAX_BUNDLE_BYTES),
            Assign(m("w_idx"), m("w_idx") + 1),
            Assign(m("w_blk"), m("w_blk") - 1),
        ]
        out += [
            If(m("w_active").eq(1).land(m("w_blk").eq(0)), next_block),
            If(m("w_active").eq(1), record, [Assign(m(f"bv_{t}"), Lit(0))]),
        ]
    return out


def find_bundle(layout: Layout) -> Decl:
    """Sets meta.found and, when found, meta.f_win: the code from the bundle on."""
    m = meta.dot
    cases = [
        (
            m(f"bv_{t}").eq(1).land(m(f"bs_{t}").eq(n("stage"))).land(m(f"bi_{t}").eq(n("index"))),
            [Assign(m("found"), Lit(1)), Assign(m("off"), m(f"bo_{t}"))],
        )
        for t in range(layout.max_bundles)
    ]
    return action(
        "find_bundle",
        [f"in {STAGE} stage", f"in {INDEX} index"],
        [
            Assign(m("found"), Lit(0)),
            Assign(m("off"), Lit(0)),
            *chain(cases),
            Assign(m("f_win"), m("code")),
            *advance("f_win", m("off"), layout.code_bits // 8 + 1),
        ],
        "Find in-packet bundle `index` of `stage` (found = 0: the packet does not carry it).",
    )
