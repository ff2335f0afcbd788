"""The stage-structured program for ``tofino1_fit`` as a user builds it, compiled once.

``dpfc p4 --target tofino1_fit -o DIR`` writes the v1model program (the profile, of code
format 2, decides: the stage-structured one) and p4c-bm2-ss compiles it: the session
fixture ``staged_build`` of tests/conftest.py, shared by the tests that start a
simple_switch on it (tests/test_staged_bmv2.py, tests/test_staged_deploy.py), so the
program is compiled once per run. Without p4c and bmv2 those tests are skipped with the
reason.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from click.testing import CliRunner

from dpfc.backends.p4 import Toolchain, compile_program, find_toolchain
from dpfc.cli.main import main
from dpfc.target import TargetProfile, load_profile

TARGET = "tofino1_fit"


@dataclass(frozen=True)
class StagedBuild:
    toolchain: Toolchain
    profile: TargetProfile
    program_json: Path


def build(directory: Path) -> StagedBuild:
    """``dpfc p4`` then p4c-bm2-ss in ``directory`` (ToolchainMissing: no bmv2 or p4c)."""
    toolchain = find_toolchain()
    done = CliRunner().invoke(main, ["p4", "--target", TARGET, "-o", str(directory)])
    assert done.exit_code == 0, (done.exit_code, done.output, done.exception)
    compiled = compile_program(toolchain, directory / "switchvm.p4", directory / "switchvm.json")
    return StagedBuild(toolchain, load_profile(TARGET), compiled.json)


__all__ = ["TARGET", "StagedBuild", "build"]
