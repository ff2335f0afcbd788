"""The wheel is complete: built from the sources, installed into a fresh virtual
environment, its ``dpfc`` compiles an example that imports the DPF standard library from a
directory far from the repository (the stdlib ships inside the package)."""

from __future__ import annotations

import shutil
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest

from tests.conftest import ROOT

pytestmark = pytest.mark.slow


def _sources(into: Path) -> Path:
    """A copy of the files git tracks or would track (the build writes nothing into the
    checkout)."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.split(b"\0")
    for name in filter(None, listed):
        source = ROOT / name.decode()
        if source.is_file():
            target = into / name.decode()
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
    return into


def test_the_wheel_ships_the_stdlib_and_compiles_from_any_directory(tmp_path: Path) -> None:
    tree = _sources(tmp_path / "src")
    wheels = tmp_path / "wheels"
    # Offline: no build isolation (setuptools and wheel come from the test extras).
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q"]
    subprocess.run(
        [*pip, "wheel", "--no-build-isolation", "--no-deps", "-w", str(wheels), str(tree)],
        check=True,
        capture_output=True,
    )
    [wheel] = wheels.glob("dpfc-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    assert {
        "dpfc/stdlib/hash.dpf",
        "dpfc/stdlib/countmin.dpf",
        "dpfc/backends/sim/__init__.py",
    } <= names
    # A fresh environment; its dependencies (lark, z3, ...) come from this interpreter's
    # site-packages, dpfc only from the wheel.
    env = tmp_path / "venv"
    venv.create(env, system_site_packages=True, with_pip=False)
    python = env / "bin" / "python"
    subprocess.run(
        [*pip, "--python", str(python), "install", "--no-deps", "--no-index", str(wheel)],
        check=True,
        capture_output=True,
    )
    work = tmp_path / "elsewhere"
    work.mkdir()
    shutil.copy(ROOT / "examples" / "dpf" / "count_min.dpf", work / "count_min.dpf")
    where = subprocess.run(
        [str(python), "-c", "import dpfc; print(dpfc.__file__)"],
        cwd=work,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert Path(where).is_relative_to(env), where  # the wheel's dpfc, not the checkout's
    result = subprocess.run(
        [str(env / "bin" / "dpfc"), "compile", "count_min.dpf", "-o", "count_min.dpfo"],
        cwd=work,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert (work / "count_min.dpfo").stat().st_size > 0
    assert "count_min.count_min: 4 EUs" in result.stdout
