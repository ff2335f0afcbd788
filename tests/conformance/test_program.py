"""The generated v1model program: golden text for the small 2-EU x 2-lane profile, and
p4c-bm2-ss compiles it without warnings for tofino1, tofino2 and the small profile.

tofino1's program is the one the conformance suite compiles once per run (``p4_build``);
the other two are compiled here, once each.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from dpfc.backends.p4.bmv2 import compile_program
from dpfc.backends.p4.program import generate
from dpfc.target import BUILTIN_PROFILES, load_profile
from dpfc.target.profile import TargetProfile
from tests.conformance.conftest import P4Build
from tests.conftest import ROOT, assert_golden

GOLDEN = ROOT / "tests" / "golden" / "p4"
SMALL = load_profile(str(GOLDEN / "small.toml"))


def test_the_small_profile_is_two_eus_by_two_lanes() -> None:
    assert (SMALL.num_eus, SMALL.lanes) == (2, 2)


def test_golden_program_of_the_small_profile() -> None:
    assert_golden(GOLDEN / "small_v1model.p4", generate(SMALL))


def test_generation_is_deterministic() -> None:
    profile = BUILTIN_PROFILES["tofino1"]
    assert generate(profile) == generate(profile)


def test_tofino1_compiles_without_warnings(p4_build: P4Build) -> None:
    assert p4_build.warnings == ()


@pytest.mark.parametrize("profile", [BUILTIN_PROFILES["tofino2"], SMALL], ids=["tofino2", "small"])
def test_compiles_without_warnings(
    profile: TargetProfile, p4_build: P4Build, tmp_path: Path
) -> None:
    source = tmp_path / f"{profile.name}.p4"
    source.write_text(generate(profile), encoding="utf-8")
    compiled = compile_program(p4_build.toolchain, source, tmp_path / f"{profile.name}.json")
    assert compiled.warnings == []
