"""The stack the packet leaves with: the options and lengths after pops and pushes.

Contract: :func:`restack_stage` returns what the steering stage runs after the epilog
(:mod:`.ends`) chose the pushes (``meta.npush`` push headers valid) and invalidated the
popped stack headers (``meta.npops``): the deparser emits the push headers, then the stack
words left, as the new stack option (top first, docs/encoding.md §9), so the header
option's ``stack_depth``, the stack option's length, Geneve's ``opt_len``, the UDP length
and the IPv4 total length change by the words pushed less the words popped. A stack
that becomes empty loses its option (``n_stack_opts`` 0); a packet that had none and
pushes gets one. One exact table keyed by the old depth, the pops and the pushes does it,
its fixed entries (:func:`restack_entries`) holding each change as action data (a field
plus a constant: one stage on Tofino); a combination without an entry leaves more words
than the stack holds, a fault (R13) that drops the packet. The UDP checksum becomes 0 (none), as the
simulator writes it, unless no DPF ran (the packet leaves as it came); the frame's deparser computes the IPv4 checksum again (:mod:`.v1model`).
"""

from __future__ import annotations

from dpfc.backends.p4.lang import Assign, Do, Expr, If, Lit, Stmt, n
from dpfc.target import TargetProfile

from .arch import StagedArch
from .entries import Entry
from .plan import StagePlan
from .units import Part

meta, hdr = n("meta"), n("hdr")
STACK_OPTION_CLASS, STACK_OPTION_TYPE = 0xFFF0, 0x03
NO_DPF = 0xFFFF  # meta.ppc of a packet that runs no DPF
# the steering stage's tables that may drop the packet (:func:`.ends.steering_stage`)
STEERING_TABLES = ("forwarding", "multicast", "routes", "special", "fault_drop_t")


def _grow(d8: Expr, d6: Expr, d16: Expr) -> list[Stmt]:
    """The header option's depth, Geneve's options, UDP and IPv4 grow (action data, modular)."""
    sv, geneve, udp, ip = hdr.dot("sv"), hdr.dot("geneve"), hdr.dot("udp"), hdr.dot("ipv4")
    return [
        Assign(sv.dot("depth"), sv.dot("depth") + d8),
        Assign(geneve.dot("ver_opt_len"), geneve.dot("ver_opt_len") + d6),
        Assign(udp.dot("len"), udp.dot("len") + d16),
        Assign(ip.dot("total_len"), ip.dot("total_len") + d16),
    ]


def restack_stage(profile: TargetProfile, plan: StagePlan, arch: StagedArch) -> Part:
    """One table keyed by the stack's depth, the pops and the pushes, whose entries
    (:func:`restack_entries`) hold the changes as action data: each field changes by a
    constant, which a Tofino action does in one stage."""
    part, stage = Part(), plan.steering
    sv, opt = hdr.dot("sv"), hdr.dot("stack_opt")
    d8, d5, d6, d16 = n("d8"), n("d5"), n("d6"), n("d16")
    # d6 and d5 add to whole bytes (Ver | Opt Len, R | Length) whose top bits are 0
    grow = ["bit<8> d8", "bit<8> d6", "bit<16> d16"]
    keep = part.action(
        "restack_keep",
        [*grow, "bit<8> d5"],
        [Assign(opt.dot("r_len"), opt.dot("r_len") + d5), *_grow(d8, d6, d16)],
    )
    gone = part.action(
        "restack_gone",
        grow,
        [
            Do(opt.dot("setInvalid").call()),
            Assign(sv.dot("n_stack"), Lit(0, 4)),
            *_grow(d8, d6, d16),
        ],
    )
    new = part.action(
        "restack_new",
        [*grow, "bit<8> d5"],
        [
            Do(opt.dot("setValid").call()),
            Assign(opt.dot("cls"), Lit(STACK_OPTION_CLASS, 16)),
            Assign(opt.dot("type"), Lit(STACK_OPTION_TYPE, 8)),
            Assign(opt.dot("r_len"), d5),
            Assign(sv.dot("n_stack"), Lit(1, 4)),
            *_grow(d8, d6, d16),
        ],
    )
    table = Part()
    keys = [(sv.dot("depth"), "exact"), (meta.dot("npops"), "exact"), (meta.dot("npush"), "exact")]
    size = len(restack_entries(profile, plan))
    # no entry: more words than the stack holds (R13: an overflow is a fault)
    overflow = part.action("restack_overflow", [], [arch.drop()])
    droppers = arch.same_stage(STEERING_TABLES)
    acts = [keep, gone, new, overflow]
    table.table("restack", stage, keys, acts, "restack_overflow()", size, annotations=droppers)
    part.decls += table.decls
    # the UDP checksum would cover the changed options: none, as the simulator writes it;
    # a packet that ran no DPF (none named, or unauthorized and passed) leaves as it came
    no_checksum = Assign(hdr.dot("udp").dot("checksum"), Lit(0, 16))
    ran = meta.dot("ppc").ne(Lit(NO_DPF, 16))
    part.apply.append(If(sv.dot("isValid").call(), [If(ran, [no_checksum]), *table.apply]))
    return part


def restack_entries(profile: TargetProfile, plan: StagePlan) -> list[Entry]:
    """An entry per stack depth, pop count and push count that leave a stack of at most
    ``stack_max_depth`` words (pops beyond the depth take nothing)."""
    out = []
    most = 2 * plan.lanes
    for depth in range(profile.stack_max_depth + 1):
        for pops in range(most + 1):
            for pushes in range(most + 1):
                # a POP of an empty stack reads 0 and takes nothing (R13)
                left = depth - min(pops, depth) + pushes
                if left > profile.stack_max_depth:
                    continue
                words = pushes - min(pops, depth)
                keys = (("sv_depth", depth), ("npops", pops), ("npush", pushes))
                option = -1 if depth and not left else 1 if left and not depth else 0
                grow = words + option
                params = [("d8", words & 0xFF), ("d6", grow & 0xFF), ("d16", 4 * grow & 0xFFFF)]
                if option < 0:
                    out.append(Entry("restack", keys, "restack_gone", tuple(params)))
                elif option > 0:
                    params.append(("d5", left))
                    out.append(Entry("restack", keys, "restack_new", tuple(params)))
                else:  # the same option, longer or shorter (or not: all 0)
                    params.append(("d5", words & 0xFF))
                    out.append(Entry("restack", keys, "restack_keep", tuple(params)))
    return out


__all__ = ["restack_entries", "restack_stage"]
