"""The request ledger: every rule a switch's control request must pass, stated once.

Contract: a :class:`RequestLedger` holds a switch's tables (one
:class:`~dpfc.switch.tables.PipeTables` per pipe) and is the only thing that changes them.
Every request — the control protocol's and the simulator operator's — validates all of its
arguments on every pipe it names first (DPF4001–DPF4021, each rule in one place:
:mod:`.checks` the common ones, :mod:`.tenants` permission entries, :mod:`.memory` lane
memory and its first-fit allocation, :mod:`.arrays` an image's arrays, :mod:`.code` code
memory, :mod:`.steering` forwarding, multicast and routes) and raises
:class:`~dpfc.switch.control.SwitchRefused` with nothing changed, or records the change.
:class:`LedgerControl` (:mod:`.protocol`) is the control protocol on a ledger; it hands
each accepted change (:mod:`.changes`) to the back end's :class:`DataPlane`. The
simulator's control plane, the bmv2 control and the BF-RT script writer all use it, so
they refuse the same requests with the same codes and messages.
"""

from dpfc.switch.ledger.arrays import ArrayLedger, segment_pieces
from dpfc.switch.ledger.changes import (
    Change,
    CodeCleared,
    CodeWritten,
    DataPlane,
    ForwardingSet,
    Granted,
    LaneMappings,
    MemoryMapped,
    MemoryUnmapped,
    MulticastSet,
    Revoked,
    WordsWritten,
)
from dpfc.switch.ledger.checks import (
    INDEX_LIMIT,
    PIPELINES,
    TENANT_LIMIT,
    WORD_MASK,
    Pipes,
    RequestChecks,
)
from dpfc.switch.ledger.code import CodeLedger
from dpfc.switch.ledger.memory import MemoryLedger
from dpfc.switch.ledger.protocol import LedgerControl
from dpfc.switch.ledger.requests import RequestLedger
from dpfc.switch.ledger.steering import SteeringLedger
from dpfc.switch.ledger.tenants import TenantLedger

__all__ = [
    "INDEX_LIMIT",
    "PIPELINES",
    "TENANT_LIMIT",
    "WORD_MASK",
    "ArrayLedger",
    "Change",
    "CodeCleared",
    "CodeLedger",
    "CodeWritten",
    "DataPlane",
    "ForwardingSet",
    "Granted",
    "LaneMappings",
    "LedgerControl",
    "MemoryLedger",
    "MemoryMapped",
    "MemoryUnmapped",
    "MulticastSet",
    "Pipes",
    "RequestChecks",
    "RequestLedger",
    "Revoked",
    "SteeringLedger",
    "TenantLedger",
    "WordsWritten",
    "segment_pieces",
]
