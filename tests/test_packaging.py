"""Both kinds of install work: the wheel (built from the sources) and an editable install of
the checkout, each into a fresh virtual environment. From a directory far from the
repository, the installed ``dpfc`` imports its back ends (``backends/`` of the repository,
``dpfc.backends`` once installed) and compiles an example that imports the DPF standard
library (``stdlib/``, shipped as ``dpfc/stdlib``)."""

from __future__ import annotations

import shutil
import subprocess
import sys
import sysconfig
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


PIP = [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q"]


def _environment(into: Path) -> Path:
    """A fresh virtual environment whose dependencies (lark, z3, ...) come from this
    interpreter's site-packages; dpfc is installed into it by the test. Its python."""
    venv.create(into, with_pip=False)
    python = into / "bin" / "python"
    site = _run(python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))", cwd=into)
    ours = {sysconfig.get_path("purelib"), sysconfig.get_path("platlib")}
    (Path(site.stdout.strip()) / "outer.pth").write_text("\n".join(sorted(ours)) + "\n")
    return python


def _run(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(a) for a in args], cwd=cwd, capture_output=True, text=True, check=False
    )


def _compiles_from_elsewhere(python: Path, work: Path, package_in: Path) -> None:
    """From a directory far from any checkout, the installed dpfc (found under
    ``package_in``) runs its back ends and compiles an example that imports the stdlib."""
    work.mkdir()
    shutil.copy(ROOT / "examples" / "dpf" / "count_min.dpf", work / "count_min.dpf")
    where = _run(
        python,
        "-c",
        "import dpfc, dpfc.backends.sim, dpfc.sema.loader as l; "
        "print(dpfc.__file__, dpfc.backends.sim.__file__, l.STDLIB_DIR, sep='\\n')",
        cwd=work,
    )
    assert where.returncode == 0, where.stderr
    for path in where.stdout.split():
        assert Path(path).is_relative_to(package_in), (path, package_in)
    result = _run(
        python.parent / "dpfc", "compile", "count_min.dpf", "-o", "count_min.dpfo", cwd=work
    )
    assert result.returncode == 0, result.stderr
    assert (work / "count_min.dpfo").stat().st_size > 0
    assert "count_min.count_min: 4 EUs" in result.stdout
    run = _run(
        python.parent / "dpfc", "run", ROOT / "examples" / "scenarios" / "counter.toml", cwd=work
    )
    assert run.returncode == 0, run.stderr


def test_the_wheel_ships_the_back_ends_and_the_stdlib(tmp_path: Path) -> None:
    tree = _sources(tmp_path / "src")
    wheels = tmp_path / "wheels"
    # Offline: no build isolation (setuptools and wheel come from the test extras).
    built = _run(
        *PIP, "wheel", "--no-build-isolation", "--no-deps", "-w", wheels, tree, cwd=tmp_path
    )
    assert built.returncode == 0, built.stderr
    [wheel] = wheels.glob("dpfc-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    assert {
        "dpfc/stdlib/hash.dpf",
        "dpfc/stdlib/countmin.dpf",
        "dpfc/stdlib/README.md",
        "dpfc/backends/sim/__init__.py",
        "dpfc/backends/p4/program.py",
        "dpfc/catalog/sema.toml",
        "dpfc/py.typed",
    } <= names
    assert not any(name.startswith(("backends/", "stdlib/", "tests/")) for name in names)
    env = tmp_path / "venv"
    python = _environment(env)
    installed = _run(
        *PIP, "--python", python, "install", "--no-deps", "--no-index", wheel, cwd=tmp_path
    )
    assert installed.returncode == 0, installed.stderr
    _compiles_from_elsewhere(python, tmp_path / "elsewhere", env)


def test_an_editable_install_runs_the_checkout(tmp_path: Path) -> None:
    tree = _sources(tmp_path / "src")
    python = _environment(tmp_path / "venv")
    installed = _run(
        *PIP,
        "--python",
        python,
        "install",
        "--no-deps",
        "--no-build-isolation",
        "-e",
        tree,
        cwd=tmp_path,
    )
    assert installed.returncode == 0, installed.stderr
    _compiles_from_elsewhere(python, tmp_path / "elsewhere", tree)
    # an edit of the checkout's back end is seen at once: no reinstall
    marker = tree / "backends" / "sim" / "edited_here.py"
    marker.write_text("EDITED = True\n", encoding="utf-8")
    seen = _run(python, "-c", "from dpfc.backends.sim.edited_here import EDITED", cwd=tmp_path)
    assert seen.returncode == 0, seen.stderr
