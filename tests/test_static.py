"""Static checks run by the test command: ruff (lint and format) and mypy --strict (through
scripts/typecheck.py, which type-checks the package laid out as a wheel installs it, the
tests and scripts/, all with the same settings)."""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest

from tests.conftest import ROOT

SOURCES = ("dpfc", "backends", "stdlib", "tests", "scripts", "setup.py")
TYPED = ("dpfc", "backends", "stdlib", "tests", "scripts")  # every module of them, for mypy


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, cwd=ROOT, capture_output=True, text=True, check=False)


def test_ruff_lint() -> None:
    result = _run(sys.executable, "-m", "ruff", "check", *SOURCES)
    assert result.returncode == 0, result.stdout + result.stderr


def test_ruff_format() -> None:
    result = _run(sys.executable, "-m", "ruff", "format", "--check", *SOURCES)
    assert result.returncode == 0, result.stdout + result.stderr


def test_mypy_strict() -> None:
    if shutil.which("mypy") is None and _run(sys.executable, "-m", "mypy", "--version").returncode:
        pytest.fail("mypy is not installed: run `pip install -e '.[test]'`")
    result = _run(sys.executable, str(ROOT / "scripts" / "typecheck.py"))
    assert result.returncode == 0, result.stdout + result.stderr
    # mypy saw every module: the package, the tests (their sub-packages and conftest files
    # too) and the scripts
    modules = sum(len(list((ROOT / folder).rglob("*.py"))) for folder in TYPED)
    assert f"no issues found in {modules} source files" in result.stdout, result.stdout
