"""The SwitchVM simulator: the embedded default target of dpfc.

It runs real packet bytes through an executable form of ``docs/isa.md`` and
``docs/encoding.md``: permissions, prolog, EUs with the two-stage timing, virtual memory,
epilog, steering and deparsing (:mod:`.execute` over :mod:`.machine`, :mod:`.stages`,
:mod:`.steering` and :mod:`.outcome`), in the ingress and then, for each frame that
leaves, in the egress of its port's pipe, on switches with several pipes (:mod:`.switch`)
joined by links to hosts and other switches (:mod:`.network`). The operator configures it
through :class:`ControlPlane` (:mod:`.control`), which takes code as code-memory words and
validates every request with the switch contract's :class:`~dpfc.switch.RequestLedger`;
:class:`SimControl` (:mod:`.switch_control`) is the control protocol on it, through which
``dpfc.deploy`` installs linked images. The package imports only ``dpfc.encoding``,
``dpfc.isa``, ``dpfc.packet``, ``dpfc.switch`` and ``dpfc.target`` (tests/test_layering.py).
The JIT (``dpfc.backends.jit``) runs the simulator's switches through the names this
package exports, and no others.
See ``docs/simulator.md``.
"""

from dpfc.switch import Destination, Permissions, Segment, TenantStats, UnauthorizedAction

from .control import ControlPlane, MemoryUsage
from .deparse import plain_ipv4_destination
from .execute import Context, EgressRun, PassResult, run_egress, run_pass
from .memory import LaneMemory
from .network import Host, Network, PassRecord, Transmission, passes_until_done
from .state import PipeState, Report
from .switch import Switch, TopologyError
from .switch_control import SimControl
from .trace import (
    PacketTrace,
    SourceLine,
    StageSource,
    StageTrace,
    TraceEvent,
    TraceSources,
    render_trace,
)

__all__ = [
    "Context",
    "ControlPlane",
    "Destination",
    "EgressRun",
    "Host",
    "LaneMemory",
    "MemoryUsage",
    "Network",
    "PacketTrace",
    "PassRecord",
    "PassResult",
    "Permissions",
    "PipeState",
    "Report",
    "Segment",
    "SimControl",
    "SourceLine",
    "StageSource",
    "StageTrace",
    "Switch",
    "TenantStats",
    "TopologyError",
    "TraceEvent",
    "TraceSources",
    "Transmission",
    "UnauthorizedAction",
    "passes_until_done",
    "plain_ipv4_destination",
    "render_trace",
    "run_egress",
    "run_pass",
]
