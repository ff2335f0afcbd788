"""``dpfc test``: test files of DPFs, run on the simulator, its JIT or a switch (docs/testing.md).

A test file is a scenario (``dpfc.backends.scenario``: the same keys, the same builder)
without traffic, plus cases: each case gets a fresh network with the file's code and
configuration, sends its packets with the inputs they list, and checks the outputs and
state they expect (:mod:`.spec`: the file's cases; :mod:`.build`: a case as a scenario,
its frames; :mod:`.memory`: memory words by array or lane; :mod:`.observe`: a packet on the
simulator; :mod:`.device`: on bmv2 or a simulated device; :mod:`.compare`: expectations
against what happened; :mod:`.runner`: files and cases; :mod:`.report`: text with a diff
per mismatch, JSON, JUnit XML; :mod:`.locate`: the line of a key path in TOML).

This back end uses the scenario front end, the simulator, the JIT and the P4 back end's
bmv2 control through their packages' public names (tests/test_layering.py).
"""

from dpfc.backends.testing.compare import Mismatch, Unchecked
from dpfc.backends.testing.device import Bmv2Device, Device, SimDevice
from dpfc.backends.testing.locate import locate
from dpfc.backends.testing.report import (
    Summary,
    junit_xml,
    render_case,
    render_summary,
    results_json,
)
from dpfc.backends.testing.runner import (
    CaseResult,
    PacketResult,
    Target,
    TestFile,
    load_test_file,
    located,
    run_case,
)

__all__ = [
    "Bmv2Device",
    "CaseResult",
    "Device",
    "Mismatch",
    "PacketResult",
    "SimDevice",
    "Summary",
    "Target",
    "TestFile",
    "Unchecked",
    "junit_xml",
    "load_test_file",
    "locate",
    "located",
    "render_case",
    "render_summary",
    "results_json",
    "run_case",
]
