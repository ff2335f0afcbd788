"""What the README says about running dpfc and its tests holds: shell completion works as
documented, and the hypothesis profiles it names exist."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from hypothesis import settings

from tests.conftest import ROOT

README = (ROOT / "README.md").read_text(encoding="utf-8")


def _dpfc_env(**extra: str) -> dict[str, str]:
    env = dict(os.environ, **extra)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    return env


def test_the_documented_bash_completion_script_is_printed() -> None:
    assert 'eval "$(_DPFC_COMPLETE=bash_source dpfc)"' in README
    run = subprocess.run(
        ["dpfc"], env=_dpfc_env(_DPFC_COMPLETE="bash_source"), capture_output=True, text=True
    )
    assert run.returncode == 0
    assert "complete -o nosort -F _dpfc_completion dpfc" in run.stdout


def test_completion_completes_a_command() -> None:
    env = _dpfc_env(_DPFC_COMPLETE="bash_complete", COMP_WORDS="dpfc comp", COMP_CWORD="1")
    run = subprocess.run(["dpfc"], env=env, capture_output=True, text=True)
    assert "plain,compile" in run.stdout.splitlines()


def test_the_hypothesis_profiles_the_readme_names_exist() -> None:
    named = set(re.findall(r"`(\w+)` \((?:the default|\d)", README))
    assert named == {"ci", "fast", "thorough"}
    for name in named:
        settings.get_profile(name)  # raises for an unknown profile


def test_completion_completes_a_target_profile() -> None:
    env = _dpfc_env(
        _DPFC_COMPLETE="bash_complete", COMP_WORDS="dpfc compile --target tof", COMP_CWORD="3"
    )
    run = subprocess.run(["dpfc"], env=env, capture_output=True, text=True)
    names = ["tofino1", "tofino2", "tofino1_fit", "tofino2_fit"]
    assert run.stdout.splitlines() == [f"plain,{name}" for name in names]
