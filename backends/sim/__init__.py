"""The SwitchVM simulator: the embedded default target of dpfc.

It runs real packet bytes through an executable form of ``docs/isa.md`` and
``docs/encoding.md``: permissions, prolog, EUs with the two-stage timing, virtual memory,
epilog, steering and deparsing (:mod:`.execute` over :mod:`.machine`, :mod:`.stages`,
:mod:`.steering` and :mod:`.outcome`), in the ingress and then, for each frame that
leaves, in the egress of its port's pipe, on switches with several pipes joined by links
to hosts and other switches (:mod:`.network`). The operator configures it through
:class:`ControlPlane` (:mod:`.control` and its ``control_*`` mixins), which takes code as
code-memory words; :class:`SimDriver` (:mod:`.driver`) is the switch-driver protocol over
it, through which ``dpfc.deploy`` installs linked images. The package imports only
``dpfc.encoding``, ``dpfc.isa``, ``dpfc.packet`` and ``dpfc.target``
(tests/test_layering.py).
See ``docs/simulator.md``.
"""

from .control import ControlPlane, ControlPlaneError, MemoryUsage
from .driver import SimDriver, pieces
from .execute import Context, EgressRun, PassResult, run_egress, run_pass
from .memory import Segment
from .network import Host, Network, PassRecord, Switch, TopologyError, Transmission
from .state import Destination, Permissions, Report, TenantStats, UnauthorizedAction
from .trace import PacketTrace

__all__ = [
    "Context",
    "ControlPlane",
    "ControlPlaneError",
    "Destination",
    "EgressRun",
    "Host",
    "MemoryUsage",
    "Network",
    "PacketTrace",
    "PassRecord",
    "PassResult",
    "Permissions",
    "Report",
    "Segment",
    "SimDriver",
    "Switch",
    "TenantStats",
    "TopologyError",
    "Transmission",
    "UnauthorizedAction",
    "pieces",
    "run_egress",
    "run_pass",
]
