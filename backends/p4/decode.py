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

Every byte position, bit slice, size and shift of the in-packet formats is taken from the
layout tables of :mod:`dpfc.encoding.layouts` (:func:`field_at`), the same tables the
Python encoder and decoder use.
"""

from __future__ import annotations

from dpfc.backends.p4.lang import (
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
    Field,
    StageKind,
    imm_group,
    op_group,
)

meta = n("meta")
EPILOG = 31
CONDITIONAL_FIRST = 2  # ctrl ops below are JMP and HALT (no operands, no second PC)


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


def field_at(layout: Layout, window: str, field: Field, base: int = 0) -> Expr:
    """A field of the layout that starts ``base`` bytes from the top of a window: its bytes
    when it is made of whole bytes, else a bit slice of the one byte that holds it."""
    if field.whole_bytes:
        return top(layout, window, base + field.byte, field.nbytes)
    assert field.nbytes == 1, field
    return top(layout, window, base + field.byte).slice(field.high, field.low)


def bits(value: Expr, table: ByteLayout, name: str) -> Expr:
    """Field ``name`` of a value that holds the whole of layout ``table``."""
    low = table.shift(name)
    return value.slice(low + table.field(name).width - 1, low)


def times(count: Expr, size: int) -> Expr:
    """``count * size`` for a power of two ``size``, as a shift (none for 1)."""
    assert size & (size - 1) == 0, size
    shift = size.bit_length() - 1
    return count << shift if shift else count


def moved(window: str, nbytes: int) -> Stmt:
    """Move a left-aligned window a constant ``nbytes`` bytes on."""
    return Assign(meta.dot(window), meta.dot(window) << 8 * nbytes)


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


def _takes_value(layout: Layout, action_bits: Expr) -> Expr:
    result: Expr = Bool(False)
    for steering in layout.profile.steering:
        if steering.takes_value:
            result = result.lor(action_bits.eq(steering.code))
    return result


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
            _takes_value(layout, head("steer_action")),
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
            _takes_value(layout, e("steer_action")),
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
