"""p4c's front and mid end on a generated program: the check the TNA program gets.

Contract: :func:`find_p4test` finds ``p4test`` under ``$DPFC_P4_PREFIX/bin`` (default
``/opt/p4``) or on ``PATH``, or raises :class:`~dpfc.backends.p4.bmv2.ToolchainMissing`
saying where it looked (tests skip with that reason). :func:`check_program` runs it on a
source file with the architecture's preprocessor macros (TNA: ``__TARGET_TOFINO__``, which
bf-p4c would set from its ``--target``) and returns the command, p4test's version and its
warnings; it raises :class:`P4testError` with p4test's output when p4test fails.

p4test parses, type-checks and runs the target-independent passes (inlining, constant
folding, def-use, the architecture's extern signatures); it knows nothing of a chip's
stages, containers or stateful ALUs. What that leaves unchecked is listed in docs/p4.md.
"""

from __future__ import annotations

import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from dpfc.backends.p4.arch import Architecture
from dpfc.backends.p4.bmv2 import find_tool


class P4testError(RuntimeError):
    """p4test refused the program (the message has its output)."""


@dataclass(frozen=True)
class Checked:
    command: tuple[str, ...]
    version: str  # p4test --version, e.g. "1.2.5.16 (SHA: 6b7ec98e77 BUILD: Release)"
    seconds: float
    warnings: tuple[str, ...]


def find_p4test() -> Path:
    return find_tool("p4test", "install p4c")


def version(p4test: Path) -> str:
    done = subprocess.run([str(p4test), "--version"], capture_output=True, text=True, check=False)
    lines = [line for line in done.stdout.splitlines() if line.startswith("Version")]
    return lines[0].removeprefix("Version").strip() if lines else "unknown"


def command(p4test: Path, source: Path, arch: Architecture) -> tuple[str, ...]:
    defines = [f"-D{name}={value}" for name, value in sorted(arch.defines().items())]
    return (str(p4test), "--std", "p4-16", *defines, str(source))


def check_program(p4test: Path, source: Path, arch: Architecture) -> Checked:
    """p4test on ``source`` (a program generated for ``arch``)."""
    argv = command(p4test, source, arch)
    started = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - started
    messages = (done.stdout + done.stderr).strip()
    if done.returncode != 0:
        raise P4testError(f"p4test failed on {source}:\n{messages}")
    warnings = tuple(line for line in messages.splitlines() if "warning" in line)
    return Checked(argv, version(p4test), seconds, warnings)


__all__ = ["Checked", "P4testError", "check_program", "command", "find_p4test", "version"]
