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

from .entries import Entry, fixed_entries
from .packet import packet_frame_entries
from .plan import StagePlan
from .stack import restack_entries

SPECIAL = ("drop", "return_to_sender", "set_port", "recirculate")


def fixed_frame_entries(profile: TargetProfile, plan: StagePlan) -> list[Entry]:
    out = fixed_entries(profile, plan) + packet_frame_entries(plan)
    for action in SPECIAL:
        steering = profile.steering_by_name(action)
        if steering is not None:
            out.append(Entry("special", (("steer", steering.code),), action))
    for count in range(1, 2 * plan.lanes + 1):
        out.append(Entry("epilog_pops", (("npops", count),), f"epilog_pops{count}"))
    return out + restack_entries(profile, plan)


__all__ = ["SPECIAL", "fixed_frame_entries"]
