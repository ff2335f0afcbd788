"""Scenario files for ``dpfc run``: a simulated network, its configuration, code and
traffic as data (docs/simulator.md, "Scenario files"). Outside the simulator core: a
scenario compiles, assembles and links code (:mod:`.code`) and deploys it through the
simulator's control protocol (``SimControl``); :class:`CodeSources` (:mod:`.sources`) maps
the stages of traced runs back to the source the code was compiled from."""

from dpfc.backends.scenario.loader import load_scenario
from dpfc.backends.scenario.model import MemoryWatch, QueuedPacket, Scenario
from dpfc.backends.scenario.reader import ScenarioError
from dpfc.backends.scenario.sources import CodeSources

__all__ = [
    "CodeSources",
    "MemoryWatch",
    "QueuedPacket",
    "Scenario",
    "ScenarioError",
    "load_scenario",
]
