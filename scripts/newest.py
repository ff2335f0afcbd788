"""Run the suite against the newest releases of every dependency, and name the release that
breaks it.

    bash scripts/test-newest [PYTEST ARGS...]

``constraints.txt`` pins the releases the suite was last run with (``bash scripts/test``
installs exactly those). This script builds a fresh virtual environment (``$DPFC_NEWEST_VENV``,
default ``/tmp/dpfc-newest-venv``), installs dpfc with its test extras and no constraints
(so pip takes the newest releases the ``pyproject.toml`` ranges admit), prints every release
that differs from ``constraints.txt`` and runs the suite. When the suite fails, it reruns
the failed tests once per differing release with that one package put back to its pinned
release, and names each release whose rollback makes them pass: that is the drift to read.
Exit status: the suite's.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CONSTRAINTS = ROOT / "constraints.txt"
LAST_FAILED = ROOT / ".pytest_cache" / "v" / "cache" / "lastfailed"


def _name(text: str) -> str:
    return re.sub(r"[-_.]+", "-", text).lower()


def pinned() -> dict[str, str]:
    """package -> release, from constraints.txt."""
    found = {}
    for line in CONSTRAINTS.read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if "==" in line:
            name, release = line.split("==", 1)
            found[_name(name)] = release.strip()
    return found


def installed(python: Path) -> dict[str, str]:
    listing = subprocess.run(
        [str(python), "-m", "pip", "list", "--format=freeze", "--disable-pip-version-check"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    found = {}
    for line in listing.splitlines():
        if "==" in line:
            name, release = line.split("==", 1)
            found[_name(name)] = release
    return found


def pip(python: Path, *args: str) -> None:
    subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", *args],
        check=True,
    )


def pytest(python: Path, *args: str) -> int:
    return subprocess.run([str(python), "-m", "pytest", *args], cwd=ROOT).returncode


def main(argv: list[str]) -> int:
    home = Path(os.environ.get("DPFC_NEWEST_VENV", "/tmp/dpfc-newest-venv"))
    shutil.rmtree(home, ignore_errors=True)
    venv.create(home, with_pip=True)
    python = home / "bin" / "python"
    print(f"scripts/test-newest: a fresh environment in {home}", flush=True)
    pip(python, "--upgrade", "pip")
    pip(python, "--upgrade", "--upgrade-strategy", "eager", "-e", f"{ROOT}[test]")
    pins, now = pinned(), installed(python)
    drift = {
        name: (pins[name], now[name])
        for name in sorted(now)
        if name in pins and pins[name] != now[name]
    }
    new = sorted(set(now) - set(pins) - {"dpfc", "pip", "setuptools"})
    if drift or new:
        print("releases newer than constraints.txt:")
        for name, (old, release) in drift.items():
            print(f"  {name} {old} -> {release}")
        for name in new:
            print(f"  {name} {now[name]} (not pinned)")
    else:
        print("every release is the one constraints.txt pins")
    LAST_FAILED.unlink(missing_ok=True)
    status = pytest(python, *argv)
    if status == 0 or not drift:
        return status
    failed = (
        sorted(json.loads(LAST_FAILED.read_text(encoding="utf-8"))) if LAST_FAILED.exists() else []
    )
    if not failed:
        return status
    print(
        f"\nscripts/test-newest: {len(failed)} tests failed; rerunning them with one release"
        " rolled back at a time"
    )
    culprits = []
    for name, (old, release) in drift.items():
        pip(python, f"{name}=={old}")
        if pytest(python, "-q", "-n", "0", "-p", "no:cacheprovider", *failed) == 0:
            culprits.append(f"{name} {release} (passes with {old})")
        pip(python, f"{name}=={release}")
    if culprits:
        print("\nthe failures come with:\n  " + "\n  ".join(culprits))
    else:
        print("\nno single release explains the failures: read the failed tests above")
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
