"""What LOAD_MD reads on the stage-structured program, field by field.

Contract: the switch metadata fields (docs/isa.md §4) a program loads, and where from:
:func:`loaded_sources` names those the permissions stage loads into ``meta.md<index>``
(:func:`metadata_sources`: the expression each is read from), :func:`held_values` those
whose word a prolog selector's action holds as data (an operator's setting, or a constant
of the ingress), :func:`metadata_loaded` all of them: a LOAD_MD of any other index is
refused (DPF4023) in code memory, and drops in-packet code that has it.
"""

from __future__ import annotations

from dpfc.backends.p4.lang import Expr, n

from .arch import StagedArch
from .egress import egress_port
from .inner import HEADER_FIELDS, header_field_values
from .plan import StagePlan

hdr = n("hdr")

# The LOAD_MD indices the stage-0 loader reads: ingress port, timestamp, the IPv4 total
# length (packet_length is it + 14, the Ethernet header, added by the selector's action).
METADATA_SOURCES = (0, 1, 4)
PACKET_LENGTH, ETHERNET_BYTES = 4, 14
# The LOAD_MD indices whose value the selector's action holds: switch_id (the operator's,
# :meth:`~.control.StagedControl.configure`), queue_depth (0 in the ingress, as the
# simulator's), pipe_id (one pipe: 0), egress_port (none yet in the ingress: 0xFFFF).
SWITCH_ID, EGRESS_PORT = 2, 6
METADATA_VALUES = {SWITCH_ID: 0, 3: 0, 5: 0, EGRESS_PORT: 0xFFFF}
# The LOAD_MD indices this program loads (any other is refused: DPF4023, or a fault in
# in-packet code).
METADATA_LOADED = tuple(sorted((*METADATA_SOURCES, *METADATA_VALUES)))


def loaded_sources(plan: StagePlan) -> tuple[int, ...]:
    """The LOAD_MD indices the stage-0 loader reads on ``plan``'s program: with an egress
    pass (:mod:`.egress`) egress_port as well (the port in that pass, 0xFFFF before), with
    the inner frame's fields (:mod:`.inner`) those too."""
    out = METADATA_SOURCES + ((EGRESS_PORT,) if plan.egress_pass else ())
    return out + (HEADER_FIELDS if plan.header_fields else ())


def metadata_loaded(plan: StagePlan) -> tuple[int, ...]:
    """The LOAD_MD indices ``plan``'s program loads (any other is refused: DPF4023, or a
    fault in in-packet code)."""
    return tuple(sorted({*METADATA_LOADED, *loaded_sources(plan)}))


def held_values(plan: StagePlan) -> dict[int, int]:
    """The LOAD_MD indices whose value a selector's action holds on ``plan``'s program."""
    sources = loaded_sources(plan)
    return {index: value for index, value in METADATA_VALUES.items() if index not in sources}


def metadata_sources(plan: StagePlan, arch: StagedArch) -> dict[int, Expr]:
    """LOAD_MD index -> where the stage-0 loader reads it."""
    sources = [arch.ingress_port(), arch.timestamp(), hdr.dot("ipv4").dot("total_len")]
    out = dict(zip(METADATA_SOURCES, sources, strict=True))
    if plan.egress_pass:
        out[EGRESS_PORT] = egress_port()
    if plan.header_fields:
        out |= header_field_values()
    assert tuple(out) == loaded_sources(plan)
    return out


__all__ = [
    "ETHERNET_BYTES",
    "METADATA_LOADED",
    "METADATA_SOURCES",
    "METADATA_VALUES",
    "PACKET_LENGTH",
    "SWITCH_ID",
    "held_values",
    "loaded_sources",
    "metadata_loaded",
    "metadata_sources",
]
