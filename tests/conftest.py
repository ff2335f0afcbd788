"""Shared test fixtures: hypothesis profiles, golden-file comparison, the CLI runner, the
stage-structured program compiled for bmv2 (once per session)."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from click.testing import CliRunner, Result
from hypothesis import HealthCheck, settings

if TYPE_CHECKING:
    from tests.staged_build import StagedBuild

# "ci" (the default) runs every property with >= 1,000 examples, the same ones on every run
# (derandomized: a run's verdict does not depend on luck); DPFC_HYPOTHESIS=fast for quick
# local runs, =thorough for long runs that explore new examples.
settings.register_profile(
    "ci",
    max_examples=1000,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("fast", max_examples=100, deadline=None)
settings.register_profile(
    "thorough", max_examples=20_000, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile(os.environ.get("DPFC_HYPOTHESIS", "ci"))

ROOT = Path(__file__).resolve().parent.parent
# `dpfc compile` caches schedules (docs/scheduling.md); the tests never touch the user's cache
# (one cache per process: each parallel worker has its own).
os.environ["DPFC_CACHE_DIR"] = tempfile.mkdtemp(prefix="dpfc-test-schedules-")
# Parallel workers (pytest-xdist: gw0, gw1, ...) each start their bmv2 switches on Thrift
# ports of a range of their own, below Linux's ephemeral ports, so that no two switches race
# for one port (backends/p4/bmv2.py, free_port).
WORKER = os.environ.get("PYTEST_XDIST_WORKER", "")
if WORKER.startswith("gw"):
    _first = 20_000 + 500 * int(WORKER[2:])
    os.environ["DPFC_BMV2_PORTS"] = f"{_first}-{_first + 499}"
BLESS = os.environ.get("DPFC_BLESS") == "1"


def assert_golden(path: Path, actual: str | bytes) -> None:
    """Compare with a golden file; ``DPFC_BLESS=1`` rewrites it (read the diff before committing)."""
    if BLESS:
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(actual, bytes):
            path.write_bytes(actual)
        else:
            path.write_text(actual, encoding="utf-8")
        return
    if not path.exists():
        pytest.fail(f"missing golden file {path}; run with DPFC_BLESS=1 to create it")
    expected: str | bytes = (
        path.read_bytes() if isinstance(actual, bytes) else path.read_text(encoding="utf-8")
    )
    assert actual == expected, f"output differs from golden file {path} (DPFC_BLESS=1 to update)"


@pytest.fixture
def cli() -> CliRunner:
    return CliRunner()


Invoke = Callable[..., Result]


def dpfc_in(directory: Path, monkeypatch: pytest.MonkeyPatch) -> Invoke:
    """``dpfc ARGS...`` run in process in ``directory`` (the tests' ``run`` fixtures):
    ``invoke(*args)`` returns click's Result."""
    from dpfc.cli.main import main

    monkeypatch.chdir(directory)
    runner = CliRunner()

    def invoke(*args: str) -> Result:
        return runner.invoke(main, list(args), prog_name="dpfc")

    return invoke


@pytest.fixture(scope="session")
def staged_build(tmp_path_factory: pytest.TempPathFactory) -> StagedBuild:
    """The stage-structured program for tofino1_fit, compiled by p4c-bm2-ss
    (tests/staged_build.py); skips the test without bmv2 and p4c."""
    from dpfc.backends.p4 import ToolchainMissing
    from tests.staged_build import build

    try:
        return build(tmp_path_factory.mktemp("staged"))
    except ToolchainMissing as missing:
        pytest.skip(f"bmv2 not run: {missing}")
