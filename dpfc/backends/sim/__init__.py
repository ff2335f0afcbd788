"""The SwitchVM simulator: the embedded default target of dpfc.

It runs real packet bytes through an executable form of ``docs/isa.md`` and
``docs/encoding.md``: permissions, prolog, EUs with the two-stage timing, virtual memory,
epilog, steering and deparsing (:mod:`.execute`), on switches with several pipes joined by
links to hosts and other switches (:mod:`.network`). The operator configures it through
:class:`ControlPlane` (:mod:`.control`) and installs DPFs with :mod:`.install`.
See ``docs/simulator.md``.
"""

from .control import ControlPlane, ControlPlaneError, MemoryUsage
from .execute import Context, PassResult, run_pass
from .install import (
    CodeWrite,
    InstalledDPF,
    apply,
    install_program,
    plan_install,
    plan_remove,
    plan_replace,
)
from .memory import Segment
from .network import Host, Network, PassRecord, Switch, TopologyError, Transmission
from .state import Destination, Permissions, Report, TenantStats, UnauthorizedAction
from .trace import PacketTrace

__all__ = [
    "CodeWrite",
    "Context",
    "ControlPlane",
    "ControlPlaneError",
    "Destination",
    "Host",
    "InstalledDPF",
    "MemoryUsage",
    "Network",
    "PacketTrace",
    "PassRecord",
    "PassResult",
    "Permissions",
    "Report",
    "Segment",
    "Switch",
    "TenantStats",
    "TopologyError",
    "Transmission",
    "UnauthorizedAction",
    "apply",
    "install_program",
    "plan_install",
    "plan_remove",
    "plan_replace",
    "run_pass",
]
