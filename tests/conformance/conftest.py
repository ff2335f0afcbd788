"""Fixtures of the conformance suite: the P4 program compiled once per run, one bmv2 switch
per test module, and ``target``, which runs a test on the simulator and on bmv2.

Without the P4 toolchain (``p4c-bm2-ss``, ``simple_switch``, ``simple_switch_CLI`` on PATH
or under ``$DPFC_P4_PREFIX``, default /opt/p4) the bmv2 half of every test is skipped with
the reason; the simulator half always runs.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from dpfc.backends.p4.bmv2 import Toolchain
from dpfc.backends.p4.program import generate
from dpfc.target import BUILTIN_PROFILES
from tests.conformance.staged_target import StagedTarget, staged_build
from tests.conformance.targets import Bmv2Target, SimTarget, compile_once

PROFILE = BUILTIN_PROFILES["tofino1"]


@dataclass(frozen=True)
class P4Build:
    toolchain: Toolchain
    source: Path
    json: Path
    seconds: float
    warnings: tuple[str, ...]


@pytest.fixture(scope="session")
def p4_build(tmp_path_factory: pytest.TempPathFactory) -> P4Build:
    """The tofino1 SwitchVM program, generated and compiled by p4c-bm2-ss once per run: the
    first parallel worker to get here compiles it under a lock in the run's shared
    temporary directory, the others read its result."""
    toolchain, output, record = compile_once(
        tmp_path_factory, "p4-program", lambda: generate(PROFILE)
    )
    source = output.with_name("switchvm.p4")
    return P4Build(toolchain, source, output, record["seconds"], tuple(record["warnings"]))


@pytest.fixture(scope="module")
def bmv2(p4_build: P4Build) -> Iterator[Bmv2Target]:
    target = Bmv2Target(PROFILE, p4_build.toolchain, p4_build.json)
    try:
        yield target
    finally:
        target.stop()


@pytest.fixture(scope="module")
def staged(tmp_path_factory: pytest.TempPathFactory) -> Iterator[StagedTarget]:
    """One simple_switch of the stage-structured program (staged_target.STAGED) per module."""
    target = StagedTarget(staged_build(tmp_path_factory))
    try:
        yield target
    finally:
        target.stop()


@pytest.fixture(params=["sim", "bmv2"])
def target(request: pytest.FixtureRequest) -> SimTarget | Bmv2Target:
    if request.param == "sim":
        return SimTarget(PROFILE)
    chosen: Bmv2Target = request.getfixturevalue("bmv2")
    chosen.reset()
    return chosen
