"""mypy --strict over the package as it is installed, its tests and these scripts:
``python scripts/typecheck.py``.

The repository keeps ``dpfc.backends`` in ``backends/`` and ``dpfc.stdlib`` in ``stdlib/``
(setup.py maps them), a layout mypy cannot follow from the source tree. This script builds,
in ``.typecheck/`` (ignored by git, rebuilt on each run, so mypy's cache stays warm), the
tree a wheel installs, as links to the repository's files: ``dpfc/`` with ``backends`` and
``stdlib`` inside, and beside it ``tests/`` (the ``tests`` package, which imports ``dpfc``
as installed) and ``scripts/``. It runs mypy there with the settings of pyproject.toml
(``files``: those three folders, one ``strict`` for all) and prints the errors with the
repository's paths. Exit status: mypy's.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TREE = ROOT / ".typecheck"
# package folder inside the installed tree -> the repository's folder
MOVED = {"dpfc/backends": "backends", "dpfc/stdlib": "stdlib"}


def build_tree() -> Path:
    shutil.rmtree(TREE, ignore_errors=True)
    package = TREE / "dpfc"
    package.mkdir(parents=True)
    for entry in sorted((ROOT / "dpfc").iterdir()):
        if entry.name != "__pycache__":
            (package / entry.name).symlink_to(entry)
    for inside, folder in MOVED.items():
        (TREE / inside).symlink_to(ROOT / folder)
    for folder in ("tests", "scripts"):
        (TREE / folder).symlink_to(ROOT / folder)
    return TREE


def repository_paths(text: str) -> str:
    """mypy's paths in the tree -> the repository's paths."""
    for inside, folder in MOVED.items():
        text = re.sub(rf"(?m)^{re.escape(inside)}/", f"{folder}/", text)
    return text


def main(argv: list[str]) -> int:
    tree = build_tree()
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--config-file",
            str(ROOT / "pyproject.toml"),
            "--cache-dir",
            str(ROOT / ".mypy_cache"),
            *argv,
        ],
        cwd=tree,
        capture_output=True,
        text=True,
        check=False,
    )
    sys.stdout.write(repository_paths(result.stdout))
    sys.stderr.write(repository_paths(result.stderr))
    return result.returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
