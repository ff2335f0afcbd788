"""Deploying install images on switches through the control protocol
(:class:`dpfc.switch.SwitchControl`): the ordered steps between two images
(:mod:`.plan`) and their execution with rollback (:mod:`.apply`)."""

from dpfc.deploy.apply import Deployment, execute
from dpfc.deploy.plan import (
    ClearCode,
    GrantEntry,
    MapMemory,
    Revoke,
    Step,
    UnmapMemory,
    WriteCode,
    describe,
    grant_of,
    inverse,
    plan,
)

__all__ = [
    "ClearCode",
    "Deployment",
    "GrantEntry",
    "MapMemory",
    "Revoke",
    "Step",
    "UnmapMemory",
    "WriteCode",
    "describe",
    "execute",
    "grant_of",
    "inverse",
    "plan",
]
