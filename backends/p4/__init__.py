"""The P4 back end: the SwitchVM data plane generated for bmv2 (v1model) and Tofino (TNA)
from one model, the bmv2 control, and BF-RT scripts that install images; the
stage-structured program (:mod:`.staged`) for the profiles the Tofino compiler fits
(docs/p4.md)."""

from dpfc.backends.p4.barefoot import TARGETS as TOFINO_TARGETS
from dpfc.backends.p4.barefoot import BarefootRun, compile_tna, find_barefoot
from dpfc.backends.p4.bfrt import bfrt_script
from dpfc.backends.p4.bmv2 import (
    PacketSocket,
    Switch,
    Toolchain,
    ToolchainMissing,
    compile_program,
    find_toolchain,
)
from dpfc.backends.p4.bmv2_control import Bmv2Control
from dpfc.backends.p4.controls import StagedControl, control_for, staged_program
from dpfc.backends.p4.layout import Layout, LayoutError
from dpfc.backends.p4.program import ARCHITECTURES, architecture, generate
from dpfc.backends.p4.simple_switch_cli import Cli, CliModules, find_cli_modules
from dpfc.backends.p4.staged import PlanError
from dpfc.backends.p4.staged import generate as generate_staged

__all__ = [
    "ARCHITECTURES",
    "TOFINO_TARGETS",
    "BarefootRun",
    "Bmv2Control",
    "Cli",
    "CliModules",
    "Layout",
    "LayoutError",
    "PacketSocket",
    "PlanError",
    "StagedControl",
    "Switch",
    "Toolchain",
    "ToolchainMissing",
    "architecture",
    "bfrt_script",
    "compile_program",
    "compile_tna",
    "control_for",
    "find_barefoot",
    "find_cli_modules",
    "find_toolchain",
    "generate",
    "generate_staged",
    "staged_program",
]
