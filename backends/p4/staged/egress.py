"""Egress DPFs on a program with an egress pass: a second pass of the same stages.

Contract: on a plan with ``egress_pass`` (a v1model program; docs/isa.md item 20), a frame
that leaves the ingress by a port while its header names an egress DPF goes through the
stages once more, as the old v1model program does it (docs/p4.md, "Egress DPFs"): the
egress control recirculates it (:data:`EGRESS_CONTROL`, keeping ``meta.eg_phase`` = 1,
``meta.eg_port`` = the port it was leaving by, and ``meta.in_port``), and that pass

* runs the DPF ``egress_ptr`` names (no default DPF: :func:`pointer`), with the same
  permission and app-id checks;
* reads LOAD_MD egress_port as ``eg_port`` (:func:`egress_port`; 0xFFFF in the ingress);
* translates with the pipeline in the key (:data:`PHASE_KEY` of the direct and segment
  tables), into lane registers of its own (``eu<k>_lane<i>_egress``): egress memory is
  distinct state, as the simulator's egress pipeline;
* lets NEXT_PC set the egress pointer (:func:`pointer_in`, :func:`pointer_out` give the
  epilog ``egress_ptr`` in ``dpf_ptr``'s place);
* may only pass (leave by ``eg_port``) or drop (:func:`egress_steering`): any other
  steering drops the packet, as the simulator's fault does; gas is not spent.

A recirculation the ingress DPF asked for goes back to the ingress without the egress DPF
(the frame leaves by no port). Why a pass and not a copy of the stages in the egress
control: P4 tables and registers belong to one control, so a copy doubles the program
for what one recirculation per frame that names an egress DPF does on bmv2.
"""

from __future__ import annotations

from dpfc.backends.p4.lang import Assign, Expr, If, Lit, Stmt, mux, n

from .arch import StagedArch
from .plan import StagePlan

meta, hdr = n("meta"), n("hdr")
NONE = 0xFFFF  # a pointer that names nothing
PHASE_KEY = "eg_phase"  # the translation tables' key of the pass (0 ingress, 1 egress)
EGRESS_SUFFIX = "_egress"  # a lane register of the egress pass: eu<k>_lane<i>_egress

# What the v1model egress control runs: the recirculation the ingress asked for, else the
# egress pass of a frame that names an egress DPF (once: the pass itself leaves).
EGRESS_CONTROL = """\
        if (meta.recirculate == 1) {
            recirculate_preserving_field_list(0);
        } else if (meta.eg_phase == 0 && hdr.sv.isValid() && hdr.sv.egress_ptr != 0xFFFF) {
            meta.eg_phase = 1;
            meta.eg_port = sm.egress_port;
            recirculate_preserving_field_list(0);
        }"""

# The fields the pass needs (v1model): eg_phase and eg_port survive the recirculation.
EGRESS_METADATA = [
    ("eg_phase", "@field_list(0) bit<1>"),
    ("eg_port", "@field_list(0) bit<9>"),
    ("saved_ptr", "bit<16>"),
]


def in_egress() -> Expr:
    return meta.dot(PHASE_KEY).eq(Lit(1, 1))


def pointer(plan: StagePlan) -> Expr:
    """The DPF pointer the permissions stage starts from: ``egress_ptr`` in the egress pass."""
    sv = hdr.dot("sv")
    if not plan.egress_pass:
        return sv.dot("dpf_ptr")
    return mux(in_egress(), sv.dot("egress_ptr"), sv.dot("dpf_ptr"))


def egress_port() -> Expr:
    """LOAD_MD egress_port: the port of the egress pass, none (0xFFFF) in the ingress."""
    return mux(in_egress(), meta.dot("eg_port").cast(32), Lit(NONE, 32))


def pointer_in(plan: StagePlan) -> list[Stmt]:
    """Before the epilog of the egress pass: the epilog's writes of ``dpf_ptr`` (NEXT_PC)
    go to the egress pointer, whose place it takes until :func:`pointer_out`."""
    if not plan.egress_pass:
        return []
    sv = hdr.dot("sv")
    swap = [
        Assign(meta.dot("saved_ptr"), sv.dot("dpf_ptr")),
        Assign(sv.dot("dpf_ptr"), sv.dot("egress_ptr")),
    ]
    return [If(in_egress(), swap)]


def pointer_out(plan: StagePlan) -> list[Stmt]:
    if not plan.egress_pass:
        return []
    sv = hdr.dot("sv")
    swap = [
        Assign(sv.dot("egress_ptr"), sv.dot("dpf_ptr")),
        Assign(sv.dot("dpf_ptr"), meta.dot("saved_ptr")),
    ]
    return [If(in_egress(), swap)]


def egress_steering(
    plan: StagePlan, arch: StagedArch, steer_pass: int
) -> list[tuple[Expr, list[Stmt]]]:
    """The steering stage's case of the egress pass: pass leaves by ``eg_port``; anything
    else (drop, or an action that needs the port unchosen: a fault) drops."""
    if not plan.egress_pass:
        return []
    leave = If(meta.dot("steer").eq(steer_pass), [arch.send_to(meta.dot("eg_port"))], [arch.drop()])
    return [(in_egress(), [leave])]


def cleared_when(plan: StagePlan) -> tuple[Expr, Expr | None]:
    """When HDR_MOD clears an in-packet pointer (:func:`.bundles.cut_code`), besides naming
    in-packet code: the pointer of the pass's pipeline unless its epilog set it (NEXT_PC:
    ``meta.next_set``); the other pipeline's pointer always (None: no further condition).
    Returns the ingress's and the egress's."""
    not_set = meta.dot("next_set").eq(Lit(0, 1))
    if not plan.egress_pass:
        return not_set, None
    return in_egress().lor(not_set), in_egress().lnot().lor(not_set)


__all__ = [
    "EGRESS_CONTROL",
    "EGRESS_METADATA",
    "EGRESS_SUFFIX",
    "PHASE_KEY",
    "cleared_when",
    "egress_port",
    "egress_steering",
    "in_egress",
    "pointer",
    "pointer_in",
    "pointer_out",
]
