"""The entries of the stages around the EUs that every switch holds from the start.

Contract: :func:`fixed_frame_entries` returns :func:`.entries.fixed_entries` (ALU, memory,
branch resolution, in-packet EU code), :func:`.packet.packet_frame_entries` (the in-packet
prolog and epilog) and the frame's own: the ``special`` table's entry
per special steering action of the profile (drop, return to sender, set_port,
recirculate: the codes :meth:`~dpfc.target.TargetProfile.steering_by_name` gives; pass,
forward and multicast are the steering stage's own tables) and ``epilog_pops``, which
removes the words the prolog popped from the stack (:mod:`.stack`).
"""

from __future__ import annotations

from dpfc.target import TargetProfile

from .ends import PERM_PRIVILEGED, PERM_RECIRCULATE
from .entries import ANY, Entry, Key, Ternary, fixed_entries, prolog_refusal
from .packet import packet_frame_entries
from .plan import StagePlan
from .stack import restack_entries

SPECIAL = ("drop", "return_to_sender", "set_port", "recirculate")
VALUE_BITS = 16  # meta.sval: the steering value's low 16 bits


def fixed_frame_entries(profile: TargetProfile, plan: StagePlan) -> list[Entry]:
    out = fixed_entries(profile, plan) + packet_frame_entries(plan) + prolog_refusal(plan)
    for action in ("drop", "return_to_sender"):
        steering = profile.steering_by_name(action)
        if steering is not None:
            out.append(Entry("special", _special_keys(steering.code), action))
    recirculate = profile.steering_by_name("recirculate")
    if recirculate is not None:  # with the bit: no gas drops (priority 0), else it goes
        allowed = Ternary(PERM_RECIRCULATE, PERM_RECIRCULATE)
        keys = _special_keys(recirculate.code, allowed, Ternary(0, 0xFF))
        out.append(Entry("special", keys, "drop", (), 0))
        out.append(Entry("special", _special_keys(recirculate.code, allowed), "recirculate", (), 1))
    for count in range(1, 2 * plan.lanes + 1):
        out.append(Entry("epilog_pops", (("npops", count),), f"epilog_pops{count}"))
    return out + restack_entries(profile, plan)


def _special_keys(
    code: int, perm: Key = ANY, gas: Key = ANY, value: Key = ANY
) -> tuple[tuple[str, Key], ...]:
    return (("steer", Ternary(code, 0xFF)), ("perm", perm), ("sv_gas", gas), ("sval", value))


def set_port_entries(profile: TargetProfile, ports: int) -> list[Entry]:
    """set_port of a privileged tenant to a port below ``ports`` (the switch's): the
    aligned blocks of [0, ports) of the 16-bit steering value."""
    steering = profile.steering_by_name("set_port")
    if steering is None:
        return []
    allowed = Ternary(PERM_PRIVILEGED, PERM_PRIVILEGED)
    out, base = [], 0
    for bit in range(VALUE_BITS - 1, -1, -1):
        if ports & (1 << bit) and base + (1 << bit) <= ports:
            mask = ((1 << VALUE_BITS) - 1) & ~((1 << bit) - 1)
            keys = _special_keys(steering.code, allowed, ANY, Ternary(base, mask))
            out.append(Entry("special", keys, "set_port", (), 2))
            base += 1 << bit
    return out


__all__ = ["SPECIAL", "fixed_frame_entries", "set_port_entries"]
