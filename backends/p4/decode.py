"""In-packet code in the P4 program: finding and decoding the bundles a packet carries.

Contract: the parser left every code data byte, in order, right-aligned in the wide field
``meta.code`` (``meta.code_len0 + meta.code_len1`` bytes). This module generates

* the alignment of that field (byte 0 at the top) and *windows* on it: a copy shifted so
  that the next byte to read is at the top, read with constant slices and moved on with
  constant shifts. (Shifts on bmv2 take at most 8-bit amounts and p4c folds constant ones
  beyond 256, so a shift by a run-time number of bytes is one shift by the low bits and
  128-bit steps, :func:`shift`; reading each byte at a run-time offset instead made p4c's
  compile time explode);
* the *walk* (:func:`walk`): straight-line code that reads the option headers, block headers
  and bundle headers (docs/encoding.md §2.2) and records, for the t-th bundle of the packet,
  its offset, stage and index within the stage (``meta.bo_t``, ``meta.bs_t``, ``meta.bi_t``);
  the packet carries at most ``(EUs + 2) x packet_bundles_per_stage`` bundles, so the
  unrolled walk is complete;
* ``find_bundle(stage, index)``: a window on a bundle (``meta.found``: whether the packet
  carries it — R14, a fault otherwise);
* ``fetch_bundle()`` / ``fetch_epilog()``: decode that bundle into the same fields the
  code tables' actions set (``meta.c_*`` / ``meta.e_*``, the code-memory word layout of
  docs/encoding.md §7), so the rest of the pipeline does not know where code came from.
"""

from __future__ import annotations

from dpfc.backends.p4.ast import (
    Assign,
    Bool,
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
from dpfc.encoding.words import StageKind

meta = n("meta")
EPILOG = 31
CONDITIONAL_FIRST = 2  # ctrl ops below are JMP and HALT (no operands, no second PC)
NEXT_PC_IMM, NEXT_PC_REG = 1, 2


def shift(var: str, amount: Expr, limit: int, unit: int, op: str = ">>") -> list[Stmt]:
    """``var op= unit * amount`` for amounts below ``limit``, in shifts p4c accepts (an
    8-bit amount, constants of at most 256: one shift by the low bits, then 128-bit steps)."""
    out: list[Stmt] = []
    low = 256 // unit  # amounts of one shift: unit * (amount % low) < 256
    by_low = ((amount & (low - 1)) * unit).cast(8)
    out.append(Assign(n(var), n(var) >> by_low if op == ">>" else n(var) << by_low))
    step = low
    while step < limit:
        repeats = step * unit // 128
        moved = n(var) >> 128 if op == ">>" else n(var) << 128
        out.append(If((amount & step).ne(0), [Assign(n(var), moved)] * repeats))
        step *= 2
    return out


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


def top(layout: Layout, window: str, first: int, count: int = 1) -> Expr:
    """Bytes first .. first+count-1 of a left-aligned window (constant positions)."""
    hi = layout.code_bits - 1 - 8 * first
    return meta.dot(window).slice(hi, hi - 8 * count + 1)


def advance(window: str, nbytes: Expr, limit: int) -> list[Stmt]:
    """Move a left-aligned window ``nbytes`` (< ``limit``) bytes on."""
    return shift(f"meta.{window}", nbytes, limit, 8, "<<")


def align(layout: Layout) -> list[Stmt]:
    """Left-align the in-packet code: byte 0 at the top of meta.code."""
    m = meta.dot
    return [
        Assign(m("code_total"), m("code_len0") + m("code_len1")),
        Assign(m("w_pad"), Lit(layout.code_bits // 8, 16) - m("code_total")),
        *shift("meta.code", m("w_pad"), layout.code_bits // 8 + 1, 8, "<<"),
    ]


def walk_meta(layout: Layout) -> list[tuple[str, str]]:
    fields = [
        ("code_total", "bit<16>"),
        ("w_pad", "bit<16>"),
        ("w_win", f"bit<{layout.code_bits}>"),
        ("f_win", f"bit<{layout.code_bits}>"),
        ("w_active", "bit<1>"),
        ("w_opt", "bit<1>"),
        ("w_pos", "bit<16>"),
        ("w_nblk", "bit<8>"),
        ("w_blk", "bit<4>"),
        ("w_head", "bit<8>"),
        ("w_stage", "bit<5>"),
        ("w_idx", "bit<15>"),
        ("w_size", "bit<16>"),
        ("found", "bit<1>"),
        ("off", "bit<16>"),
        ("f_b0", "bit<8>"),
        ("f_nsel", "bit<5>"),
        ("f_nimm", "bit<2>"),
    ]
    for t in range(layout.max_bundles):
        fields += [
            (f"bv_{t}", "bit<1>"),
            (f"bs_{t}", "bit<5>"),
            (f"bi_{t}", "bit<15>"),
            (f"bo_{t}", "bit<16>"),
        ]
    return fields


MAX_BUNDLE_BYTES = 64  # more than any bundle: 8 + 2*30 + 2*8 + 4*3 bytes on the widest profile


def _bundle_size(layout: Layout) -> list[Stmt]:
    """meta.w_size = the size of the prolog/EU bundle at the top of meta.w_win."""
    b0, b1, size = top(layout, "w_win", 0), top(layout, "w_win", 1), meta.dot("w_size")
    half = layout.half_lanes
    return [
        Assign(size, Lit(4, 16) + (b1.slice(7, 3).cast(16) << 1) + (b0.slice(3, 2).cast(16) << 2)),
        If(b0.slice(7, 4).ge(CONDITIONAL_FIRST), [Assign(size, size + 4)]),
        If(b0.slice(1, 1).eq(1), [Assign(size, size + half)]),
        If(b0.slice(0, 0).eq(1), [Assign(size, size + half)]),
    ]


def _takes_value(layout: Layout, action_bits: Expr) -> Expr:
    result: Expr = Bool(False)
    for steering in layout.profile.steering:
        if steering.takes_value:
            result = result.lor(action_bits.eq(steering.code))
    return result


def _epilog_size(layout: Layout) -> list[Stmt]:
    """meta.w_size = the size of the epilog bundle at the top of meta.w_win."""
    b0, b1, size = top(layout, "w_win", 0), top(layout, "w_win", 1), meta.dot("w_size")
    return [
        Assign(size, Lit(2, 16) + b0.slice(7, 3).cast(16)),
        If(
            _takes_value(layout, b0.slice(2, 0)),
            [Assign(size, size + 1), If(b1.slice(6, 6).eq(0), [Assign(size, size + 1)])],
        ),
        If(b1.slice(5, 4).eq(NEXT_PC_IMM), [Assign(size, size + 2)]),
        If(b1.slice(5, 4).eq(NEXT_PC_REG), [Assign(size, size + 1)]),
    ]


def walk(layout: Layout) -> list[Stmt]:
    """Record every in-packet bundle's offset, stage and index (the module docstring).
    The window meta.w_win keeps the next unread byte at its top."""
    m = meta.dot
    limit = layout.code_bits // 8 + 1
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
                Assign(m("w_nblk"), top(layout, "w_win", 0)),
                Assign(m("w_pos"), Lit(1)),
                Assign(m("w_win"), m("w_win") << 8),
                Assign(m("w_stage"), Lit(0x1F)),
            ],
        ),
    ]
    for t in range(layout.max_bundles):
        next_option = [
            Assign(m("w_opt"), Lit(1)),
            Assign(m("w_win"), m("code")),
            *advance("w_win", m("code_len0"), limit),
            Assign(m("w_nblk"), top(layout, "w_win", 0)),
            Assign(m("w_win"), m("w_win") << 8),
            Assign(m("w_pos"), m("code_len0") + 1),
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
                    Assign(m("w_head"), top(layout, "w_win", 0)),
                    Assign(m("w_win"), m("w_win") << 8),
                    Assign(m("w_pos"), m("w_pos") + 1),
                    Assign(m("w_blk"), m("w_head").slice(2, 0).cast(4) + 1),
                    Assign(m("w_nblk"), m("w_nblk") - 1),
                    If(
                        m("w_head").slice(7, 3).ne(m("w_stage")),
                        [
                            Assign(m("w_stage"), m("w_head").slice(7, 3)),
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
        ["in bit<5> stage", "in bit<15> index"],
        [
            Assign(m("found"), Lit(0)),
            Assign(m("off"), Lit(0)),
            *chain(cases),
            Assign(m("f_win"), m("code")),
            *advance("f_win", m("off"), layout.code_bits // 8 + 1),
        ],
        "Find in-packet bundle `index` of `stage` (found = 0: the packet does not carry it).",
    )


def fetch_bundle(layout: Layout) -> Decl:
    """Decode the prolog/EU bundle at the top of meta.f_win into the meta.c_* fields."""
    m = meta.dot

    def c(f: str) -> Expr:
        return meta.dot(f"c_{f}")

    def b(i: int, count: int = 1) -> Expr:
        return top(layout, "f_win", i, count)

    body: list[Stmt] = [
        Assign(c("ctrl_op"), b(0).slice(7, 4)),
        Assign(m("f_nimm"), b(0).slice(3, 2)),
        Assign(m("f_b0"), b(0)),
        Assign(m("f_nsel"), b(1).slice(7, 3)),
        Assign(c("pc_taken"), b(2, 2)),
        Assign(m("f_win"), m("f_win") << 32),
        Assign(c("ctrl_x"), Lit(0)),
        Assign(c("ctrl_y"), Lit(0)),
        Assign(c("pc_not_taken"), Lit(0)),
        If(
            c("ctrl_op").ge(CONDITIONAL_FIRST),
            [
                Assign(c("ctrl_x"), b(0)),
                Assign(c("ctrl_y"), b(1)),
                Assign(c("pc_not_taken"), b(2, 2)),
                Assign(m("f_win"), m("f_win") << 32),
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
                b(0).slice(7, 3).eq(layout.register_code(i)),
                [
                    Assign(c(f"sel_{r}_valid"), Lit(1)),
                    Assign(c(f"sel_{r}_kind"), b(0).slice(2, 0)),
                    Assign(c(f"sel_{r}_operand"), b(1)),
                ],
            )
            for i, r in enumerate(regs)
        ]
        body.append(If(m("f_nsel").gt(j), [*chain(assign), Assign(m("f_win"), m("f_win") << 16)]))
    for group, flag in (("alu", 1), ("mem", 0)):
        clear = [Assign(c(f"{group}_{i}"), Lit(0)) for i in range(layout.lanes)]
        load = [
            Assign(
                c(f"{group}_{i}"), b(i // 2).slice(7, 4) if i % 2 == 0 else b(i // 2).slice(3, 0)
            )
            for i in range(layout.lanes)
        ]
        moved = Assign(m("f_win"), m("f_win") << 8 * layout.half_lanes)
        body.append(If(m("f_b0").slice(flag, flag).eq(1), [*load, moved], clear))
    for k in range(layout.profile.immediates_per_bundle):
        body.append(
            If(
                m("f_nimm").gt(k),
                [Assign(c(f"imm_{k}"), b(4 * k, 4))],
                [Assign(c(f"imm_{k}"), Lit(0))],
            )
        )
    return action("fetch_bundle", [], body, "Decode the in-packet prolog/EU bundle found.")


def fetch_epilog(layout: Layout) -> Decl:
    """Decode the epilog bundle at the top of meta.f_win into the meta.e_* fields."""
    m = meta.dot

    def e(f: str) -> Expr:
        return meta.dot(f"e_{f}")

    def b(i: int, count: int = 1) -> Expr:
        return top(layout, "f_win", i, count)

    body: list[Stmt] = [
        Assign(e("n_push"), b(0).slice(7, 3)),
        Assign(e("steer_action"), b(0).slice(2, 0)),
        Assign(e("hdr_mod"), b(1).slice(7, 7)),
        Assign(e("steer_src"), b(1).slice(6, 6)),
        Assign(e("next_pc_src"), b(1).slice(5, 4)),
        Assign(m("f_win"), m("f_win") << 16),
    ]
    for k in range(layout.profile.max_push):
        body.append(
            If(
                e("n_push").gt(k),
                [Assign(e(f"push_{k}"), b(0).slice(4, 0)), Assign(m("f_win"), m("f_win") << 8)],
                [Assign(e(f"push_{k}"), Lit(0))],
            )
        )
    body += [
        Assign(e("steer_value"), Lit(0)),
        If(
            _takes_value(layout, e("steer_action")),
            [
                If(
                    e("steer_src").eq(0),
                    [Assign(e("steer_value"), b(0, 2)), Assign(m("f_win"), m("f_win") << 16)],
                    [
                        Assign(e("steer_value"), Lit(0, 8).concat(b(0))),
                        Assign(m("f_win"), m("f_win") << 8),
                    ],
                )
            ],
        ),
        Assign(e("next_pc"), Lit(0)),
        If(e("next_pc_src").eq(NEXT_PC_IMM), [Assign(e("next_pc"), b(0, 2))]),
        If(e("next_pc_src").eq(NEXT_PC_REG), [Assign(e("next_pc"), Lit(0, 8).concat(b(0)))]),
    ]
    return action("fetch_epilog", [], body, "Decode the in-packet epilog bundle found.")


def word_meta(layout: Layout) -> list[tuple[str, str]]:
    """The decoded-bundle fields: c_* (prolog/EU words), e_* (epilog words)."""
    fields = [(f"c_{name}", f"bit<{width}>") for name, width in layout.word_fields(StageKind.EU)]
    fields += [
        (f"e_{name}", f"bit<{width}>") for name, width in layout.word_fields(StageKind.EPILOG)
    ]
    return fields
