"""Lane memories in the P4 program: the arrays, their translation tables, one access.

Contract: :func:`memory_decls` declares, for every EU and memory lane, the lane memory
(the ingress's words, then the egress's: memory is per pipeline) and its two translation
tables, both keyed by pipeline and tenant (R11): direct mappings of one word each, then
aligned power-of-two segments with the null segment at the lowest priority; and the two
actions that map an address. :func:`lane_access` is memory lane i of EU k at run time
(isa.md §2, simulator R11-R12): it translates the address, runs the bundle's memory
opcode on the word through the architecture (:meth:`~.arch.Architecture.memory_access`)
and writes the loaded word to the lane's B register, or counts an unmapped address.
"""

from __future__ import annotations

from dpfc.backends.p4.arch import Architecture
from dpfc.backends.p4.engine import code_field, register
from dpfc.backends.p4.lang import Assign, Decl, Do, Expr, If, Lit, Stmt, Table, action, n
from dpfc.backends.p4.layout import Layout
from dpfc.isa import MemOp

meta = n("meta")


def memory_decls(layout: Layout, arch: Architecture) -> list[Decl]:
    """Lane memories, translation tables (tenant-keyed: R11) and their actions."""
    out: list[Decl] = [
        action(
            "mapped",
            ["bit<32> phys"],
            [Assign(meta.dot("phys"), n("phys")), Assign(meta.dot("mapped"), Lit(1))],
        ),
        action(
            "segment",
            ["bit<32> base", "bit<32> offset_mask"],
            [
                Assign(meta.dot("phys"), n("base") + (meta.dot("vaddr") & n("offset_mask"))),
                Assign(meta.dot("mapped"), Lit(1)),
            ],
        ),
    ]
    profile = layout.profile
    for k in range(layout.eus):
        for i in range(layout.lanes):
            out += arch.lane_memory(
                layout.memory(k, i),
                # the ingress's words, then the egress's (memory is per pipeline)
                2 * profile.memory_words_per_lane,
                register("s", layout.registers[layout.lanes + i]),
                f"EU{k} lane {i}: its 32-bit words (isa.md §6 item 15)",
            )
            direct_size = (
                profile.direct_entries_per_lane if profile.lane_has_direct_mapping(i) else 1
            )
            out.append(
                Table(
                    layout.direct_table(k, i),
                    [
                        (meta.dot("eg_phase"), "exact"),
                        (meta.dot("tenant"), "exact"),
                        (meta.dot("vaddr"), "exact"),
                    ],
                    ["mapped", "NoAction"],
                    "NoAction",
                    direct_size,
                    "Direct mappings, one word each, before segments (isa.md item 14).",
                )
            )
            out.append(
                Table(
                    layout.segment_table(k, i),
                    [
                        (meta.dot("eg_phase"), "exact"),
                        (meta.dot("tenant"), "exact"),
                        (meta.dot("vaddr"), "ternary"),
                    ],
                    ["segment", "NoAction"],
                    "NoAction",
                    profile.segments_per_lane + 1,
                    "Aligned power-of-two segments; the null segment has the lowest priority.",
                )
            )
    return out


def lane_access(
    layout: Layout, arch: Architecture, k: int, i: int, address: Expr, data: Expr, b_out: Expr
) -> list[Stmt]:
    """Memory lane i of EU k (isa.md §2, simulator R11-R12): direct mapping first, then the
    tenant's segments (the null segment last, lowest priority)."""
    op, old = code_field(f"mem_{i}"), meta.dot("old")
    return [
        Assign(meta.dot("vaddr"), address),
        Assign(meta.dot("mapped"), Lit(0)),
        If(
            n(layout.direct_table(k, i)).dot("apply").call().dot("miss"),
            [Do(n(layout.segment_table(k, i)).dot("apply").call())],
        ),
        If(
            meta.dot("mapped").eq(1),
            [
                *arch.memory_access(layout.memory(k, i), op, meta.dot("phys"), data, old),
                If(op.ne(MemOp.STORE), [Assign(b_out, old)]),
            ],
            [Do(n("count_unmapped").call()), If(op.ne(MemOp.STORE), [Assign(b_out, Lit(0))])],
        ),
    ]
