"""Static checks run by the test command: ruff (lint and format) and mypy --strict."""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest

from tests.conftest import ROOT


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, cwd=ROOT, capture_output=True, text=True, check=False)


def test_ruff_lint() -> None:
    result = _run(sys.executable, "-m", "ruff", "check", "dpfc", "tests")
    assert result.returncode == 0, result.stdout + result.stderr


def test_ruff_format() -> None:
    result = _run(sys.executable, "-m", "ruff", "format", "--check", "dpfc", "tests")
    assert result.returncode == 0, result.stdout + result.stderr


def test_mypy_strict() -> None:
    if shutil.which("mypy") is None and _run(sys.executable, "-m", "mypy", "--version").returncode:
        pytest.fail("mypy is not installed: run `pip install -e '.[test]'`")
    result = _run(sys.executable, "-m", "mypy")
    assert result.returncode == 0, result.stdout + result.stderr
