"""A tenant's default DPF and ``unauthorized = "pass"``, on a program that has them.

Contract: on a plan with ``grants`` (a v1model program), :func:`grant_tables` returns the
two tables the permissions stage applies after ``permissions`` (docs/isa.md items 12, 17):

* ``defaults`` (the tenant's slot) -> ``default_dpf(pc)``: a SwitchVM packet whose header
  names no DPF (``dpf_ptr`` 0xFFFF) runs the tenant's default DPF, in the ingress only
  (the egress pass runs the DPF ``egress_ptr`` names, or none);
* ``unauthorized`` (the VNI) -> ``pass_unauthorized``: a packet of a tenant whose grant
  says ``pass`` and whose app id the permissions do not hold runs nothing and is routed
  as it came (``permissions``' miss dropped it: the drop is undone, which v1model's
  deferred ``mark_to_drop`` allows). A LOAD_MD of such a tenant without the metadata bit
  passes the same way (:data:`PERM_PASS` in ``meta.perm``, the prolog's fixed entries).

What differs from the simulator: a steering action the tenant may not take (set_port,
recirculate) drops the packet even when the grant says ``pass`` (the simulator passes the
frame as it came; here the epilog has already taken the popped words off it), and a
tenant's frame without a SwitchVM header runs no default DPF (it has no header to carry
the DPF's stack).

The TNA programs have neither table: a grant with a default DPF or ``pass`` is refused
there (DPF4023), since the default's pointer would be chosen between the permissions and
the prolog, in a stage of its own.
"""

from __future__ import annotations

from dpfc.backends.p4.lang import Assign, If, Lit, Stmt, lit, n

from .egress import in_egress
from .plan import StagePlan
from .units import Part

meta, hdr = n("meta"), n("hdr")
NONE = 0xFFFF
PERM_PASS = 8  # meta.perm: the tenant's unauthorized packets pass (the grant's data)
DEFAULTS, UNAUTHORIZED = "defaults", "unauthorized"


def grant_tables(plan: StagePlan, tenants: int) -> Part | None:
    """The tables (module docstring) for ``tenants`` tenants, whose apply statements apply
    ``permissions`` as well (``unauthorized`` when it misses); None without ``grants``."""
    part, stage = Part(), plan.permissions
    if not plan.grants:
        return None
    default = part.action("default_dpf", ["bit<16> pc"], [Assign(meta.dot("ppc"), n("pc"))])
    defaults = Part()
    defaults.table(
        DEFAULTS, stage, [(meta.dot("slot"), "exact")], [default, "NoAction"], "NoAction()", tenants
    )
    passed: list[Stmt] = [Assign(meta.dot("drop"), lit(0)), Assign(meta.dot("ppc"), Lit(NONE, 16))]
    allowed = part.action("pass_unauthorized", [], passed)
    unauthorized = Part()
    keys = [(hdr.dot("geneve").dot("vni"), "exact")]
    unauthorized.table(UNAUTHORIZED, stage, keys, [allowed, "NoAction"], "NoAction()", tenants)
    part.decls += defaults.decls + unauthorized.decls
    named_none = meta.dot("ppc").eq(Lit(NONE, 16)).land(in_egress().lnot())
    granted = n("permissions.apply").call().dot("hit")
    part.apply = [If(granted, [If(named_none, defaults.apply)], unauthorized.apply)]
    return part


__all__ = ["DEFAULTS", "PERM_PASS", "UNAUTHORIZED", "grant_tables"]
