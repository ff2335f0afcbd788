"""The entries of an in-switch epilog bundle.

Contract: :func:`epilog_entries` turns an epilog bundle installed in epilog code slot
``slot`` into the epilog stage's entries (pushes, their count, steering action and value,
NEXT_PC); :func:`hint` is the successor hint an EU code entry carries for the epilog its
PC leads to. HDR_MOD and NEXT_PC from a register are refused where the plan lacks them
(:class:`~.entry.EntryError`).
"""

from __future__ import annotations

from dpfc.encoding import encode_pc
from dpfc.isa import EpilogBundle, Imm, Register
from dpfc.target import TargetProfile

from .entry import ANY, Entry, EntryError, name, pc_key
from .plan import StagePlan


def epilog_entries(
    profile: TargetProfile, plan: StagePlan, slot: int, bundle: EpilogBundle
) -> list[Entry]:
    """The epilog's entries for ``bundle`` in epilog code slot ``slot``. A steering value
    held in a register is read by the register's own table, which the successor hint of
    the EU that leads here chooses (:func:`hint`)."""
    where = f"epilog slot {slot}"
    if bundle.hdr_mod and not plan.cut_code:
        raise EntryError(f"{where}: HDR_MOD is not on this program")
    if isinstance(bundle.next_pc, Register) and not plan.next_from_register:
        raise EntryError(f"{where}: NEXT_PC from a register is not on this program")
    epc = pc_key("epc", slot)
    out = []
    if bundle.hdr_mod:  # the end of the ingress cuts the in-packet code
        out.append(Entry("epilog_cut", (epc, ("ep_head_hdr_mod", ANY)), "epilog_cut_on"))
    for j, register in enumerate(bundle.push):
        table, push = f"epilog_push{j}", f"ep_push{j}"
        push_keys = (epc, (f"{push}_valid", ANY), (f"{push}_r", ANY))
        out.append(Entry(table, push_keys, f"{table}_{name(register)}"))
    count = (epc, ("ep_head_n_push", ANY))
    out.append(Entry("epilog_pushes", count, f"epilog_pushes{len(bundle.push)}"))
    action = profile.steering_by_name(bundle.steering.action)
    if action is None:
        raise EntryError(f"{where}: no steering action `{bundle.steering.action}`")
    steer = action.code
    keys = (epc, ("ep_next_pc_valid", ANY), ("ep_head_hdr_mod", ANY), ("ep_next_reg_valid", ANY))
    if bundle.next_pc is None:
        out.append(Entry("epilog_code", keys, "epilog_switch_stay", (("steer", steer),)))
    elif isinstance(bundle.next_pc, Register):  # :mod:`.next_register`
        params = (("steer", steer), ("reg", bundle.next_pc.code))
        out.append(Entry("epilog_code", keys, "epilog_switch_reg", params))
    else:
        params = (("steer", steer), ("next", encode_pc(bundle.next_pc)))
        out.append(Entry("epilog_code", keys, "epilog_switch", params))
    value = bundle.steering.value
    if not isinstance(value, Register):
        given = value.value if isinstance(value, Imm) else 0
        out.append(Entry("epilog_values", (epc,), "epilog_value", (("value", given & 0xFFFF),)))
    return out


def hint(bundle: EpilogBundle) -> int:
    """The successor hint of an EU code entry whose PC leads to ``bundle``: the code of the
    register that holds its steering value, plus one; 0 when the value is not a register."""
    value = bundle.steering.value
    return value.code + 1 if isinstance(value, Register) else 0


__all__ = ["epilog_entries", "hint"]
