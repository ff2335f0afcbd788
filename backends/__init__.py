"""dpfc back ends (installed as ``dpfc.backends``): the targets that run compiled DPFs.

The simulator (``dpfc.backends.sim``) and the P4 generator (``dpfc.backends.p4``) arrive
with their issues. Back ends import only the public names of ``dpfc`` packages; third-party
back ends can register under the ``dpfc.backends`` entry-point group instead.
"""

from __future__ import annotations

from importlib.metadata import entry_points


def available_backends() -> dict[str, str]:
    """Back ends registered in the ``dpfc.backends`` entry-point group: name -> target."""
    return {ep.name: ep.value for ep in entry_points(group="dpfc.backends")}
