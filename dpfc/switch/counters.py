"""The counters a switch keeps per tenant (docs/simulator.md R22), named once.

Contract: :class:`TenantStats` is the list, in order; :data:`TENANT_COUNTERS` its names.
The simulator counts all of them (``control.stats(tenant)``), the JIT keeps them in its
statistics array in this order, and the P4 program keeps :data:`EXECUTION_COUNTERS` — the
packets, the DPF runs and every violation — in per-tenant-slot registers; where packets
went (the rest) only the simulator reports.
"""

from __future__ import annotations

from dataclasses import dataclass, fields


@dataclass
class TenantStats:
    """Per-tenant counters the control plane reads back (§3.9: violations are reported)."""

    # -- what every target counts (EXECUTION_COUNTERS) --------------------------------------
    packets: int = 0
    executed: int = 0
    unauthorized: int = 0
    refused: int = 0  # gated metadata or steering without the permission bit, unknown entry
    unmapped: int = 0  # memory accesses with no translation
    stack_underflow: int = 0
    faults: int = 0  # missing or foreign code, stack overflow, options overflow
    gas_exhausted: int = 0
    # -- where the packets went (the simulator's) -------------------------------------------
    recirculated: int = 0
    dropped: int = 0
    forwarded: int = 0
    returned: int = 0
    multicast: int = 0
    passed: int = 0
    egress: int = 0  # egress DPF executions (one per frame leaving with an egress pointer)


TENANT_COUNTERS: tuple[str, ...] = tuple(f.name for f in fields(TenantStats))
EXECUTION_COUNTERS = TENANT_COUNTERS[: TENANT_COUNTERS.index("recirculated")]

__all__ = ["EXECUTION_COUNTERS", "TENANT_COUNTERS", "TenantStats"]
