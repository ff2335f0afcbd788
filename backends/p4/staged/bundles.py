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
:func:`cut_code` is HDR_MOD on a program that can cut the code (v1model: its parser
extracts the code's end byte and padding, ``StagePlan.cut_code``).
"""

from __future__ import annotations

from dpfc.backends.p4.lang import Assign, Do, Expr, If, Lit, Stmt, Var, n

from .egress import cleared_when
from .headers import CODE_END, bundle_fields, instances, slots
from .plan import StagePlan

hdr = n("hdr")
IN_PACKET = 0x8000
NONE = 0xFFFF  # a pointer that names nothing


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


def cut_code(plan: StagePlan) -> list[Stmt]:
    """HDR_MOD (R10), on a program that cuts the code (v1model): the code option leaves
    the packet, with its bundles, end byte and padding; Geneve's options, UDP and IPv4
    shrink by its length, the header counts no code option, and the in-packet pointers
    :func:`.egress.cleared_when` names become none (0xFFFF): the pass's own unless its
    NEXT_PC set it, the other pipeline's always."""
    if not plan.cut_code:
        return []
    meta, sv = n("meta"), hdr.dot("sv")
    option = hdr.dot("code_opt")
    words = n("code_words")
    body: list[Stmt] = [
        Var("bit<16>", "code_words", option.dot("r_len").cast(16) + 1),
        Assign(
            hdr.dot("geneve").dot("ver_opt_len"),
            hdr.dot("geneve").dot("ver_opt_len") - words.cast(8),
        ),
        Assign(hdr.dot("udp").dot("len"), hdr.dot("udp").dot("len") - (words << 2)),
        Assign(hdr.dot("ipv4").dot("total_len"), hdr.dot("ipv4").dot("total_len") - (words << 2)),
        Assign(sv.dot("n_code"), Lit(0, 4)),
    ]
    pointers = (sv.dot("dpf_ptr"), sv.dot("egress_ptr"))
    for pointer, cleared in zip(pointers, cleared_when(plan), strict=True):
        named = pointer.slice(15, 15).eq(Lit(1, 1)).land(pointer.ne(Lit(NONE, 16)))
        if cleared is not None:
            named = named.land(cleared)
        body.append(If(named, [Assign(pointer, Lit(NONE, 16))]))
    headers = [option.dot("setInvalid")]
    for slot in [*slots(plan), "ep"]:
        for instance in instances(plan, slot):
            headers += [
                hdr.dot(f).dot("setInvalid") for f, _ in bundle_fields(plan, slot, instance)
            ]
    headers += [hdr.dot(f).dot("setInvalid") for f, _ in CODE_END]
    body += [Do(h.call()) for h in headers]
    return [If(meta.dot("cut").eq(Lit(1, 8)).land(option.dot("isValid").call()), body)]


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
