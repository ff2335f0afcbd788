"""The SwitchVM stages in P4: prolog, each EU, epilog (docs/isa.md §2-§3, simulator R11-R14).

Contract: generates the ingress statements that run one DPF from ``meta.pc`` (the prolog's
PC) to a decoded epilog, with exactly the simulator's semantics (``backends/sim/
stages.py``): registers start at 0; selectors read the EU-entry registers and write in
parallel; ALU and memory data see the selected values; the memory address is the entry (or
selected) A register per ``profile.memory_address``; ALU and memory writes win; the branch
compares the values ``profile.branch_operands`` names; HALT skips the remaining EUs.

Each stage fetches its bundle from the packet (``decode.py``, ``fetch.py``) when the PC's bit 15 is set,
else from the stage's code table (one table per stage, keyed by slot: the code-memory words
of docs/encoding.md §7 are its action data). A bundle the packet does not carry, or an
empty slot, is a fault (R14): ``meta.fault`` ends the DPF and the packet is dropped.

The run's metadata fields (the bundle's, the registers' four views) are named by
:mod:`.engine`; a memory lane's translation and access is :mod:`.lane_memory`'s. How a lane
memory is read and updated, which unit hashes, and what LOAD_MD reads from the switch are the
architecture's (:mod:`.arch`): the stages are the same for v1model and TNA.
"""

from __future__ import annotations

from dpfc.backends.p4.arch import Architecture
from dpfc.backends.p4.engine import code_field, pick_register, register
from dpfc.backends.p4.inner import header_field_values
from dpfc.backends.p4.lane_memory import lane_access
from dpfc.backends.p4.lang import (
    Assign,
    Decl,
    Do,
    Expr,
    If,
    Lit,
    Stmt,
    Table,
    action,
    chain,
    mux,
    n,
)
from dpfc.backends.p4.layout import Layout
from dpfc.encoding import IN_PACKET, StageKind
from dpfc.isa import AluOp, CtrlOp, SelectorKind
from dpfc.target import BranchOperands, MemoryAddress, TargetProfile

meta, hdr = n("meta"), n("hdr")


def code_tables(layout: Layout) -> list[Decl]:
    """The code memories: per stage a table keyed by slot whose action loads the word."""
    out: list[Decl] = []
    for kind, prefix, name in (
        (StageKind.PROLOG, "c", "load_prolog"),
        (StageKind.EU, "c", "load_eu"),
        (StageKind.EPILOG, "e", "load_epilog"),
    ):
        fields = layout.word_fields(kind)
        params = [f"bit<{w}> {f}" for f, w in fields]
        body = [Assign(meta.dot(f"{prefix}_{f}"), n(f)) for f, _ in fields]
        if kind is StageKind.PROLOG:
            body.append(Assign(code_field("ctrl_op"), Lit(0)))
        out.append(action(name, params, body, f"A code-memory word of a {kind.value} stage."))
    out.append(action("code_missing", [], [Assign(meta.dot("fault"), Lit(1))]))
    for stage in layout.stages:
        out.append(
            Table(
                layout.code_table(stage),
                [(meta.dot("pc").slice(14, 0), "exact")],
                [layout.code_action(stage), "code_missing"],
                "code_missing",
                layout.profile.code_slots_per_stage,
                f"In-switch code of stage {stage} (isa.md §6 item 16: one slot per bundle).",
            )
        )
    return out


def _fetch(layout: Layout, stage: int) -> list[Stmt]:
    """Fetch the bundle of ``stage`` at meta.pc into the word fields (or fault)."""
    in_packet = [
        Do(n("find_bundle").call(Lit(stage, 5), meta.dot("pc").slice(14, 0))),
        If(
            meta.dot("found").eq(1),
            [Do(n("fetch_epilog" if stage == 31 else "fetch_bundle").call())],
            [Assign(meta.dot("fault"), Lit(1))],
        ),
    ]
    from_table = [Do(n(layout.code_table(stage)).dot("apply").call())]
    return [If((meta.dot("pc") & IN_PACKET).ne(0), in_packet, from_table)]


def prolog(layout: Layout, arch: Architecture) -> list[Stmt]:
    """POP/PEEK/LOAD_MD/RAND into the registers, in register order (isa.md "Prolog order")."""
    out = _fetch(layout, 0)
    body: list[Stmt] = [Assign(meta.dot("cursor"), Lit(0))]
    # LOAD_MD needs the metadata permission bit (R5): checked before anything runs.
    denied = [
        (
            code_field(f"sel_{r}_valid")
            .eq(1)
            .land(code_field(f"sel_{r}_kind").eq(SelectorKind.LOAD_MD))
        )
        for r in layout.registers
    ]
    any_md = denied[0]
    for term in denied[1:]:
        any_md = any_md.lor(term)
    body.append(
        If(any_md.land(meta.dot("perm_metadata").eq(0)), [Assign(meta.dot("md_denied"), Lit(1))])
    )
    run: list[Stmt] = []
    for r in layout.registers:
        kind = code_field(f"sel_{r}_kind")
        stack_read = [
            If(
                meta.dot("cursor").lt(meta.dot("depth")),
                [
                    Assign(
                        register("r", r),
                        n("stack_word").call(
                            meta.dot("stack"), meta.dot("depth"), meta.dot("cursor")
                        ),
                    ),
                    If(
                        kind.eq(SelectorKind.POP),
                        [Assign(meta.dot("cursor"), meta.dot("cursor") + 1)],
                    ),
                ],
                [Assign(register("r", r), Lit(0)), Do(n("count_stack_underflow").call())],
            )
        ]
        run.append(
            If(
                code_field(f"sel_{r}_valid").eq(1),
                chain(
                    [
                        (kind.eq(SelectorKind.POP).lor(kind.eq(SelectorKind.PEEK)), stack_read),
                        (
                            kind.eq(SelectorKind.LOAD_MD),
                            [
                                Assign(
                                    register("r", r),
                                    _metadata(layout, arch, code_field(f"sel_{r}_operand")),
                                )
                            ],
                        ),
                        (
                            kind.eq(SelectorKind.RAND),
                            [
                                Do(n("draw_random").call()),
                                Assign(register("r", r), meta.dot("rng")),
                            ],
                        ),
                    ]
                ),
            )
        )
    body.append(
        If(meta.dot("md_denied").eq(0), [*run, Assign(meta.dot("pc"), code_field("pc_taken"))])
    )
    return [*out, If(meta.dot("fault").eq(0), body)]


def _metadata(layout: Layout, arch: Architecture, index: Expr) -> Expr:
    """LOAD_MD's word (isa.md §4; simulator R21, with the switch's own clock and no queue)."""
    values = {
        "ingress_port": arch.ingress_port().cast(32),
        "timestamp": arch.timestamp_ns(),
        "switch_id": meta.dot("switch_id"),
        "queue_depth": arch.queue_depth(),
        "packet_length": arch.packet_length(),
        "pipe_id": meta.dot("pipe_id"),
        # no port is chosen yet in the ingress; the egress pass knows it (isa.md item 20)
        "egress_port": mux(
            meta.dot("eg_phase").eq(1), meta.dot("eg_port").cast(32), Lit(0xFFFF, 32)
        ),
    }
    values.update(header_field_values())  # the inner frame's (isa.md §4)
    result: Expr = Lit(0, 32)
    for md in reversed(layout.profile.metadata):
        if md.name in values:
            result = mux(index.eq(md.index), values[md.name], result)
    return result


def _alu(op: Expr, a: Expr, b: Expr, profile: TargetProfile) -> Expr:
    amount = (b & 31).cast(8)
    left, right = a << amount, a >> amount
    if profile.shifts_restricted:  # by constants only; any other amount faulted before
        left, right = a, a
        for bits in reversed(profile.shift_amounts):
            left = mux(amount.eq(bits), a << bits, left)
            right = mux(amount.eq(bits), a >> bits, right)
    cases: list[tuple[AluOp, Expr]] = [
        (AluOp.ADD, a + b),
        (AluOp.SUB, a - b),
        (AluOp.AND, a & b),
        (AluOp.OR, a | b),
        (AluOp.XOR, a ^ b),
        (AluOp.LSH, left),
        (AluOp.RSH, right),
        (AluOp.NEG, Lit(0, 32) - a),
        (AluOp.MIN, mux(a.lt(b), a, b)),
        (AluOp.MAX, mux(a.gt(b), a, b)),
    ]
    result: Expr = a
    for code, value in reversed(cases):
        result = mux(op.eq(code), value, result)
    return result


def eu(layout: Layout, k: int, arch: Architecture) -> list[Stmt]:
    """EU k: fetch, selection, ALU, memory, branch (isa.md §3)."""
    L, regs, profile = layout.lanes, layout.registers, layout.profile
    body = _fetch(layout, k + 1)
    run: list[Stmt] = []
    # Stage 1: selectors read the entry registers (meta.r_*), all at once.
    for index, r in enumerate(regs):
        kind, operand = code_field(f"sel_{r}_kind"), code_field(f"sel_{r}_operand")
        imm = _immediate(layout, operand)
        cases: list[tuple[Expr, list[Stmt]]] = [
            (
                kind.eq(SelectorKind.MOV),
                [Assign(register("s", r), pick_register(layout, operand, "r"))],
            ),
            (kind.eq(SelectorKind.LOAD_IMM), [Assign(register("s", r), imm)]),
            (
                kind.eq(SelectorKind.LOAD_CONST),
                [Do(n("read_constant").call(operand)), Assign(register("s", r), meta.dot("old"))],
            ),
        ]
        if index < L:
            cases.append(
                (
                    kind.eq(SelectorKind.HASH),
                    [
                        Assign(meta.dot(f"hash_in_{index}"), register("r", r)),
                        Do(n(arch.hash_action(k, index)).call()),
                        Assign(register("s", r), meta.dot(f"hash_in_{index}")),
                    ],
                )
            )
        run.append(Assign(register("s", r), register("r", r)))
        run.append(If(code_field(f"sel_{r}_valid").eq(1), chain(cases)))
    run += [Assign(register("t", r), register("s", r)) for r in regs]
    stage1, run = run, []
    # Stage 2: ALU lane i writes A[i]; memory lane i translates, accesses, writes B[i].
    address_prefix = "r" if profile.memory_address is MemoryAddress.ENTRY else "s"
    for i in range(L):
        a, b = regs[i], regs[L + i]
        run.append(
            If(
                code_field(f"alu_{i}").ne(0),
                [
                    Assign(
                        register("t", a),
                        _alu(code_field(f"alu_{i}"), register("s", a), register("s", b), profile),
                    )
                ],
            )
        )
        run.append(
            If(
                code_field(f"mem_{i}").ne(0),
                lane_access(
                    layout,
                    arch,
                    k,
                    i,
                    register(address_prefix, a),
                    register("s", b),
                    register("t", b),
                ),
            )
        )
    # The branch (CFU): its operands from the view branch_operands names.
    view = {
        BranchOperands.ENTRY: "r",
        BranchOperands.SELECTED: "s",
        BranchOperands.LOADED: "loaded",
    }[profile.branch_operands]
    if view == "loaded":  # after selection plus this EU's memory results: A selected, B after
        run += [
            Assign(register("v", r), register("s" if j < L else "t", r)) for j, r in enumerate(regs)
        ]
        view = "v"
    op = code_field("ctrl_op")
    run += [
        Assign(meta.dot("x"), _operand(layout, code_field("ctrl_x"), view)),
        Assign(meta.dot("y"), _operand(layout, code_field("ctrl_y"), view)),
        Assign(meta.dot("taken"), Lit(1)),
        *chain(
            [
                (
                    op.eq(CtrlOp.BEQ),
                    [If(meta.dot("x").ne(meta.dot("y")), [Assign(meta.dot("taken"), Lit(0))])],
                ),
                (
                    op.eq(CtrlOp.BSET),
                    [
                        If(
                            (meta.dot("x") & meta.dot("y")).eq(0),
                            [Assign(meta.dot("taken"), Lit(0))],
                        )
                    ],
                ),
                (
                    op.eq(CtrlOp.BLT),
                    [If(meta.dot("x").ge(meta.dot("y")), [Assign(meta.dot("taken"), Lit(0))])],
                ),
                (
                    op.eq(CtrlOp.BGT),
                    [If(meta.dot("x").le(meta.dot("y")), [Assign(meta.dot("taken"), Lit(0))])],
                ),
                (
                    op.eq(CtrlOp.BSLT),
                    [
                        If(
                            meta.dot("x").signed(32).ge(meta.dot("y").signed(32)),
                            [Assign(meta.dot("taken"), Lit(0))],
                        )
                    ],
                ),
                (
                    op.eq(CtrlOp.BSGT),
                    [
                        If(
                            meta.dot("x").signed(32).le(meta.dot("y").signed(32)),
                            [Assign(meta.dot("taken"), Lit(0))],
                        )
                    ],
                ),
            ]
        ),
        *[Assign(register("r", r), register("t", r)) for r in regs],
        Assign(meta.dot("pc"), code_field("pc_taken")),
        If(meta.dot("taken").eq(0), [Assign(meta.dot("pc"), code_field("pc_not_taken"))]),
        If(op.eq(CtrlOp.HALT), [Assign(meta.dot("halted"), Lit(1))]),
    ]
    if profile.shifts_restricted:
        run = [*_shift_faults(layout), If(meta.dot("fault").eq(0), run)]
    body.append(If(meta.dot("fault").eq(0), stage1 + run))
    return [
        If(
            meta.dot("running").eq(1).land(meta.dot("halted").eq(0)).land(meta.dot("fault").eq(0)),
            body,
            [],
        )
    ]


def _shift_faults(layout: Layout) -> list[Stmt]:
    """A shift by an amount the ALU lacks faults before stage 2 (isa.md §6 item 4, R14)."""
    L, regs = layout.lanes, layout.registers
    out: list[Stmt] = []
    for i in range(L):
        alu = code_field(f"alu_{i}")
        amount = register("s", regs[L + i]) & 31
        lacking = amount.ne(0)
        for bits in layout.profile.shift_amounts:
            lacking = lacking.land(amount.ne(bits))
        shifts = alu.eq(AluOp.LSH).lor(alu.eq(AluOp.RSH))
        out.append(If(shifts.land(lacking), [Assign(meta.dot("fault"), Lit(1))]))
    return out


def _immediate(layout: Layout, slot: Expr) -> Expr:
    result: Expr = Lit(0, 32)
    for k in reversed(range(layout.profile.immediates_per_bundle)):
        result = mux(slot.eq(k), code_field(f"imm_{k}"), result)
    return result


def _operand(layout: Layout, byte: Expr, view: str) -> Expr:
    """A branch operand byte: a register code, or 0x80 | k for immediate slot k."""
    return mux(
        (byte & 0x80).ne(0), _immediate(layout, byte & 0x7F), pick_register(layout, byte, view)
    )


def epilog(layout: Layout) -> list[Stmt]:
    """Fetch the epilog bundle at meta.pc (its steering is program.py's)."""
    return [If(meta.dot("running").eq(1).land(meta.dot("fault").eq(0)), _fetch(layout, 31))]
