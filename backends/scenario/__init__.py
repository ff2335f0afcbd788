"""Scenario files for ``dpfc run``: a simulated network, its configuration, code and
traffic as data (docs/simulator.md, "Scenario files"). Outside the simulator core: a
scenario compiles, assembles and links code (:mod:`.code`) and deploys it through the
simulator's control protocol (``SimControl``)."""

from dpfc.backends.scenario.loader import load_scenario
from dpfc.backends.scenario.model import MemoryWatch, QueuedPacket, Scenario
from dpfc.backends.scenario.reader import ScenarioError

__all__ = ["MemoryWatch", "QueuedPacket", "Scenario", "ScenarioError", "load_scenario"]
