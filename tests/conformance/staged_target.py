"""The stage-structured program as a conformance target, with the profile it runs.

Contract: :data:`STAGED` is tofino1 as the stage-structured program takes it: 4 EUs x 4
lanes, 4 in-packet bundles per stage, code format 2 and one code option (the fit
profiles' format, with tofino1's shape: a v1model program only, the Tofino compiler fits
neither 4 lanes nor more than one in-packet bundle per stage).
:func:`staged_build` generates its v1model program (``dpfc.backends.p4.staged``, the
design that goes to Tofino) and compiles it with p4c-bm2-ss once per run, under a lock in
the run's shared temporary directory; :class:`StagedTarget` is a simple_switch running it,
with :class:`~.targets.Bmv2Target`'s interface over
:class:`~dpfc.backends.p4.staged.control.StagedControl`. The program draws RAND from
bmv2's generator (``seed_random`` changes nothing).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

import pytest

from dpfc.backends.p4 import Toolchain
from dpfc.backends.p4.staged import generate
from dpfc.target import BUILTIN_PROFILES
from tests.conformance.targets import Bmv2Target, compile_once

STAGED = replace(
    BUILTIN_PROFILES["tofino1"],
    name="tofino1_staged",
    code_format=2,
    max_code_options=1,
    description="tofino1's shape in the stage-structured program's format (bmv2)",
)


@dataclass(frozen=True)
class StagedProgram:
    toolchain: Toolchain
    json: Path


def staged_build(tmp_path_factory: pytest.TempPathFactory) -> StagedProgram:
    toolchain, output, _record = compile_once(
        tmp_path_factory, "staged-conformance", lambda: generate(STAGED, "v1model")
    )
    return StagedProgram(toolchain, output)


class StagedTarget(Bmv2Target):
    """A simple_switch running :data:`STAGED`'s stage-structured program (a
    :class:`~.targets.Bmv2Target` whose profile picks the staged control)."""

    name = "bmv2-staged"

    def __init__(self, program: StagedProgram) -> None:
        super().__init__(STAGED, program.toolchain, program.json)


__all__ = ["STAGED", "StagedProgram", "StagedTarget", "staged_build"]
