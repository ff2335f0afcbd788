"""The stack the packet leaves with: the options and lengths after pops and pushes.

Contract: :func:`restack_stage` returns what the steering stage runs after the epilog
(:mod:`.ends`) chose the pushes (``meta.npush`` push headers valid) and invalidated the
popped stack headers (``meta.npops``): the deparser emits the push headers, then the stack
words left, as the new stack option (top first, docs/encoding.md §9), so the header
option's ``stack_depth``, the stack option's length, Geneve's ``opt_len``, the UDP length
and the IPv4 total length change by the words pushed less the words popped. A stack
that becomes empty loses its option (``n_stack_opts`` 0); a packet that had none and
pushes gets one. The IPv4 checksum is not recomputed (neither frame does, :mod:`.v1model`).
"""

from __future__ import annotations

from dpfc.backends.p4.lang import Assign, Do, Expr, If, Lit, Stmt, n

from .plan import StagePlan
from .units import Part

meta, hdr = n("meta"), n("hdr")
STACK_OPTION_CLASS, STACK_OPTION_TYPE = 0xFFF0, 0x03


def _grow(words: Expr, size: Expr) -> list[Stmt]:
    """Geneve's options, UDP and IPv4 grow by ``words`` 32-bit words, ``size`` bytes (16
    bits, modular)."""
    geneve, udp, ip = hdr.dot("geneve"), hdr.dot("udp"), hdr.dot("ipv4")
    return [
        Assign(geneve.dot("opt_len"), geneve.dot("opt_len") + words.cast(6)),
        Assign(udp.dot("len"), udp.dot("len") + size),
        Assign(ip.dot("total_len"), ip.dot("total_len") + size),
    ]


def restack_stage(plan: StagePlan) -> Part:
    part, stage = Part(), plan.steering
    sv, opt = hdr.dot("sv"), hdr.dot("stack_opt")
    delta = meta.dot("npush").cast(16) - meta.dot("npops").cast(16)
    body: list[Stmt] = [
        Assign(sv.dot("depth"), sv.dot("depth") + delta.cast(8)),
        Assign(opt.dot("len"), opt.dot("len") + delta.cast(5)),
        *_grow(delta, delta << 2),
    ]
    gone: list[Stmt] = [
        Do(opt.dot("setInvalid").call()),
        Assign(sv.dot("n_stack"), Lit(0, 4)),
        *_grow(Lit(0xFFFF, 16), Lit(0xFFFC, 16)),
    ]
    new: list[Stmt] = [
        Do(opt.dot("setValid").call()),
        Assign(opt.dot("cls"), Lit(STACK_OPTION_CLASS, 16)),
        Assign(opt.dot("type"), Lit(STACK_OPTION_TYPE, 8)),
        Assign(opt.dot("r"), Lit(0, 3)),
        Assign(opt.dot("len"), sv.dot("depth").slice(4, 0)),
        Assign(sv.dot("n_stack"), Lit(1, 4)),
        *_grow(Lit(1, 16), Lit(4, 16)),
    ]
    restack, drop_option, new_option = Part(), Part(), Part()
    restack.always("restack", stage, body)
    drop_option.always("stack_gone", stage, gone)
    new_option.always("stack_new", stage, new)
    part.decls += restack.decls + drop_option.decls + new_option.decls
    empty = sv.dot("depth").eq(0)
    part.apply.append(
        If(
            sv.dot("isValid").call(),
            [
                *restack.apply,
                If(
                    empty.land(opt.dot("isValid").call()),
                    drop_option.apply,
                    [If(empty.lnot().land(opt.dot("isValid").call().lnot()), new_option.apply)],
                ),
            ],
        )
    )
    return part


__all__ = ["restack_stage"]
