"""The switch contract: what every SwitchVM switch is to dpfc, stated once.

Every back end — the simulator, its JIT, the P4 program on bmv2 and Tofino — derives from
these and restates none of them:

* :mod:`.control`: the control protocol (:class:`SwitchControl`, :class:`Grant`,
  :class:`Destination`, :class:`SwitchRefused`), through which :mod:`dpfc.deploy` changes a
  switch;
* :mod:`.ledger`: the :class:`RequestLedger` that validates every control request
  (DPF4001–DPF4021) and allocates lane memory first fit, over a switch's tables
  (:mod:`.tables`, :mod:`.lanes`), and :class:`LedgerControl`, the protocol on a ledger;
  the simulator's control plane, the bmv2 control and the BF-RT writer are built on it,
  so they cannot disagree;
* :mod:`.counters`: the per-tenant counters (:data:`TENANT_COUNTERS`);
* :mod:`.rand`: RAND's xorshift32 generator (:data:`XORSHIFT32_SHIFTS`), which the
  simulator runs and the JIT and the P4 program generate.

The package uses ``dpfc.target``, ``dpfc.isa`` and ``dpfc.encoding`` only
(tests/test_layering.py).
"""

from dpfc.switch.control import Destination, Grant, SwitchControl, SwitchRefused
from dpfc.switch.counters import EXECUTION_COUNTERS, TENANT_COUNTERS, TenantStats
from dpfc.switch.lanes import WORD_SPACE, FirstFitAllocator, LaneMap, Segment, TenantSegments
from dpfc.switch.ledger import (
    INDEX_LIMIT,
    PIPELINES,
    TENANT_LIMIT,
    WORD_MASK,
    Change,
    CodeCleared,
    CodeWritten,
    DataPlane,
    ForwardingSet,
    Granted,
    LaneMappings,
    LedgerControl,
    MemoryMapped,
    MemoryUnmapped,
    MulticastSet,
    Pipes,
    RequestLedger,
    Revoked,
    WordsWritten,
    segment_pieces,
)
from dpfc.switch.rand import (
    XORSHIFT32_SHIFTS,
    ZERO_SEED_STATE,
    RandomSource,
    Xorshift32,
    next_state,
    seed_state,
)
from dpfc.switch.tables import (
    CodeEntry,
    LaneT,
    Permissions,
    PipeTables,
    UnauthorizedAction,
    lane_grid,
)

__all__ = [
    "EXECUTION_COUNTERS",
    "INDEX_LIMIT",
    "PIPELINES",
    "TENANT_COUNTERS",
    "TENANT_LIMIT",
    "WORD_MASK",
    "WORD_SPACE",
    "XORSHIFT32_SHIFTS",
    "ZERO_SEED_STATE",
    "Change",
    "CodeCleared",
    "CodeEntry",
    "CodeWritten",
    "DataPlane",
    "Destination",
    "FirstFitAllocator",
    "ForwardingSet",
    "Grant",
    "Granted",
    "LaneMap",
    "LaneMappings",
    "LaneT",
    "LedgerControl",
    "MemoryMapped",
    "MemoryUnmapped",
    "MulticastSet",
    "Permissions",
    "PipeTables",
    "Pipes",
    "RandomSource",
    "RequestLedger",
    "Revoked",
    "Segment",
    "SwitchControl",
    "SwitchRefused",
    "TenantSegments",
    "TenantStats",
    "UnauthorizedAction",
    "WordsWritten",
    "Xorshift32",
    "lane_grid",
    "next_state",
    "seed_state",
    "segment_pieces",
]
