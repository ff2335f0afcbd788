"""The ``dpfc`` command imports a command's modules only when that command is resolved.

* ``import dpfc.cli.main``, ``dpfc --help`` and ``dpfc --version`` import none of the heavy
  libraries (z3, llvmlite, scapy, lark, networkx, matplotlib) nor any command module; a
  command's own ``--help`` imports its module. (How long that takes is a benchmark row,
  ``python -m dpfc.bench startup``, not a test.)
* Each lazy entry's summary is what the command's own help gives at every width, and its
  target is the command of that name: the listing cannot drift from the commands.
* Completing a command name lists the names with their summaries, importing nothing.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import click
import pytest

from dpfc.cli.lazy import LazyCommand
from dpfc.cli.main import COMMANDS, main
from tests.conftest import ROOT

HEAVY = ("z3", "llvmlite", "scapy", "lark", "networkx", "matplotlib")
PROBE = """\
import json, sys
from dpfc.cli.main import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
loaded = sorted(m for m in sys.modules if m.split(".")[0] in {heavy} or m.startswith("dpfc.cli."))
print(json.dumps(loaded), file=sys.stderr)
"""


def loaded_modules(*args: str) -> list[str]:
    """The heavy libraries and dpfc.cli modules a fresh process has loaded after
    ``dpfc ARGS``."""
    done = subprocess.run(
        [sys.executable, "-c", PROBE.format(heavy=set(HEAVY)), *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    found: list[str] = json.loads(done.stderr.strip().splitlines()[-1])
    return found


LIGHT = ["dpfc.cli.conventions", "dpfc.cli.lazy", "dpfc.cli.main", "dpfc.cli.options"]


def test_importing_the_command_line_imports_no_heavy_library() -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "import json, sys, dpfc.cli.main; print(json.dumps(list(sys.modules)))",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    modules: list[str] = json.loads(done.stdout)
    assert not {m for m in modules if m.split(".")[0] in HEAVY}


@pytest.mark.parametrize("args", [("--help",), ("--version",), ()], ids=["help", "version", "none"])
def test_help_and_version_import_no_command(args: tuple[str, ...]) -> None:
    assert loaded_modules(*args) == LIGHT


def test_a_command_imports_its_own_module() -> None:
    loaded = loaded_modules("explain", "--help")
    assert "dpfc.cli.explain" in loaded and "dpfc.cli.lang" not in loaded
    assert "z3" in loaded_modules("compile", "--help")


@pytest.mark.parametrize("entry", COMMANDS, ids=[e.name for e in COMMANDS])
def test_each_summary_is_the_command_help(entry: LazyCommand) -> None:
    command = entry.load()
    assert command.name == entry.name
    for width in range(10, 200):
        assert entry.short_help(width) == command.get_short_help_str(width), width


def test_help_lists_every_command_with_its_summary() -> None:
    text = main.get_help(click.Context(main, info_name="dpfc", **main.context_settings))
    listed = text.split("Commands:\n", 1)[1]
    names = [line.split()[0] for line in listed.splitlines() if line.strip()]
    assert names == sorted(e.name for e in COMMANDS)
    assert "  explain  Explain a diagnostic code such as DPF5101" in listed


def test_completing_a_command_name_imports_nothing(tmp_path: Path) -> None:
    script = (
        "import os, sys\n"
        "os.environ.update(_DPFC_COMPLETE='bash_complete', COMP_WORDS='dpfc c', COMP_CWORD='1')\n"
        "from dpfc.cli.main import main\n"
        "try:\n    main(prog_name='dpfc', complete_var='_DPFC_COMPLETE')\n"
        "except SystemExit:\n    pass\n"
        "print([m for m in sys.modules if m in ('dpfc.cli.lang', 'z3')], file=sys.stderr)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, cwd=tmp_path
    )
    assert done.stdout.split() == ["plain,check", "plain,compile"]
    assert done.stderr.strip() == "[]"
