"""Scenario files for ``dpfc run``: a simulated network, its configuration, code and
traffic as data (docs/simulator.md, "Scenario files"). Outside the simulator core: a
scenario compiles, assembles and links code (:mod:`.code`) and deploys it through the
simulator's control protocol (``SimControl``); :class:`CodeSources` (:mod:`.sources`) maps
the stages of traced runs back to the source the code was compiled from.

:class:`ScenarioBuilder` and the typed reader (:class:`Table`, :class:`Fail`, the error
codes) are public for front ends that read files of their own around the scenario schema:
``dpfc test``'s test files are scenarios with cases."""

from dpfc.backends.scenario.code import CodeEntry, CodeFiles
from dpfc.backends.scenario.loader import TOP_KEYS, ScenarioBuilder, load_scenario
from dpfc.backends.scenario.model import MemoryWatch, QueuedPacket, Scenario
from dpfc.backends.scenario.reader import (
    CODE_FILE,
    CODE_MISSING_KEY,
    CODE_NOT_SETTLED,
    CODE_SYNTAX,
    CODE_TOPOLOGY,
    CODE_TYPE,
    CODE_UNKNOWN_KEY,
    CODE_UNKNOWN_NAME,
    CODE_UNREADABLE,
    CODE_VALUE,
    Fail,
    ScenarioError,
    Table,
    ip_text,
    key_path,
    mac_text,
    names,
    parse_file,
    quote,
)
from dpfc.backends.scenario.sources import CodeSources

__all__ = [
    "CODE_FILE",
    "CODE_MISSING_KEY",
    "CODE_NOT_SETTLED",
    "CODE_SYNTAX",
    "CODE_TOPOLOGY",
    "CODE_TYPE",
    "CODE_UNKNOWN_KEY",
    "CODE_UNKNOWN_NAME",
    "CODE_UNREADABLE",
    "CODE_VALUE",
    "TOP_KEYS",
    "CodeEntry",
    "CodeFiles",
    "CodeSources",
    "Fail",
    "MemoryWatch",
    "QueuedPacket",
    "Scenario",
    "ScenarioBuilder",
    "ScenarioError",
    "Table",
    "ip_text",
    "key_path",
    "load_scenario",
    "mac_text",
    "names",
    "parse_file",
    "quote",
]
