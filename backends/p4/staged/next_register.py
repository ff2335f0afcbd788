"""NEXT_PC from a register, on a program that has it (``StagePlan.next_from_register``).

Contract: on a v1model program the epilog's code table has two more actions,
``epilog_switch_reg(steer, reg)`` (code memory: the register's code as action data) and
``epilog_packet_reg`` (in-packet code: the register byte after the 0xF5 tag), which note the
register (``meta.nreg``: its code + 1); :func:`next_from_register` then moves its low 16
bits into the pass's pointer (``dpf_ptr``, or the egress pointer in the egress pass:
:mod:`.egress`), as the simulator does (0xFFFF: none). A Tofino epilog would need an
identity hash unit per register for that move (:mod:`.ends`, the steering value's), which
the epilog stage's hash distribution units do not leave: the TNA programs refuse it in code
memory (DPF4023) and drop in-packet code that has it.
"""

from __future__ import annotations

from dpfc.backends.p4.lang import Assign, Expr, If, Stmt, lit, n

from .eu import reg
from .plan import StagePlan
from .units import Part

meta, hdr = n("meta"), n("hdr")


def next_register_actions(part: Part, plan: StagePlan, packet_steer: Stmt) -> list[str]:
    """Declare the epilog code table's two actions (module docstring) in ``part``; their
    names, none without ``next_from_register``."""
    if not plan.next_from_register:
        return []
    was_set = [Assign(meta.dot("next_set"), lit(1))] if plan.cut_code else []
    switch = part.action(
        "epilog_switch_reg",
        ["bit<8> steer", "bit<8> reg"],
        [Assign(meta.dot("steer"), n("steer")), Assign(meta.dot("nreg"), n("reg") + 1), *was_set],
    )
    register = hdr.dot("ep_next_reg").dot("v")
    packet = part.action(
        "epilog_packet_reg", [], [packet_steer, Assign(meta.dot("nreg"), register + 1), *was_set]
    )
    return [switch, packet]


def next_from_register(plan: StagePlan) -> list[Stmt]:
    """After the epilog's code table: the noted register's low 16 bits become the pointer."""
    if not plan.next_from_register:
        return []
    out: list[Stmt] = []
    for r in plan.registers:
        code: Expr = meta.dot("nreg").eq(plan.register_code(r) + 1)
        out.append(If(code, [Assign(hdr.dot("sv").dot("dpf_ptr"), reg(r).cast(16))]))
    return out


__all__ = ["next_from_register", "next_register_actions"]
