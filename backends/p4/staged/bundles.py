"""More in-packet bundles per stage than one: the copy of the bundle a PC names.

Contract: with ``packet_bundles`` of :class:`~.plan.StagePlan` above one (a v1model
program: the Tofino programs parse one bundle per stage, PHV), the parser fills header
instance ``<slot>_<i>`` with the i-th bundle of a stage (:func:`.headers.instances`), and
:func:`select_bundle` returns what runs at the head of that stage's unit, before its
tables: the fields of the bundle the unit's PC names (in-packet, index ``i``: ``0x8000 |
i``) are copied into the slot's own instance, the one every table of the unit keys on, so
the units and their entries are those of one bundle per stage (an EU's in-packet
immediates, which the stage before loads into ``meta.ci<j>``, are loaded again from the
copy). :func:`drop_copies`
invalidates the copies at the end of the ingress: the deparser emits the parsed bundles,
in the packet's order, and the copies never. With one bundle per stage both are empty.
"""

from __future__ import annotations

from dpfc.backends.p4.lang import Assign, Do, Expr, If, Lit, Stmt, n

from .headers import bundle_fields, instances, slots
from .plan import StagePlan

hdr = n("hdr")
IN_PACKET = 0x8000


def select_bundle(plan: StagePlan, slot: str, pc: Expr) -> list[Stmt]:
    """Copy the bundle of ``slot`` that ``pc`` names (module docstring)."""
    if plan.packet_bundles == 1:
        return []
    out: list[Stmt] = []
    for index, instance in enumerate(instances(plan, slot)):
        copies: list[Stmt] = []
        for (field, _), (source, _) in zip(
            bundle_fields(plan, slot), bundle_fields(plan, slot, instance), strict=True
        ):
            copies.append(Assign(hdr.dot(field), hdr.dot(source)))
        if slot.startswith("eu"):  # the stage before loaded the immediates: again, copied
            meta = n("meta")
            copies += [
                Assign(meta.dot(f"ci{j}"), hdr.dot(f"{slot}_imm{j}").dot("v")) for j in (0, 1)
            ]
        out.append(If(pc.eq(Lit(IN_PACKET | index, 16)), copies))
    return out


def drop_copies(plan: StagePlan) -> list[Stmt]:
    """Invalidate every slot's copy (module docstring)."""
    if plan.packet_bundles == 1:
        return []
    out: list[Stmt] = []
    for slot in [*slots(plan), "ep"]:
        for field, _ in bundle_fields(plan, slot):
            out.append(Do(hdr.dot(field).dot("setInvalid").call()))
    return out


__all__ = ["drop_copies", "select_bundle"]
