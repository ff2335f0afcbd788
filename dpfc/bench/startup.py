"""``python -m dpfc.bench startup``: how long the ``dpfc`` command takes to start.

Each row starts a fresh Python process ``runs`` times, after one untimed start (which fills
the operating system's file cache), and takes the wall-clock time until it exits:

* ``python -c pass``: the interpreter alone, the floor every command stands on;
* ``dpfc --version`` and ``dpfc --help`` (as ``python -m dpfc``): they import the command
  line and none of its commands' modules (:mod:`dpfc.cli.lazy`), so they should take under
  :data:`GOAL_S`;
* ``dpfc compile --help``: a command's own help imports that command's phases (the
  scheduler, z3), the cost the lazy loading leaves to the commands that need it.

The figures depend on the machine and its load; nothing asserts them (a test checks what
``import dpfc.cli.main`` imports instead).
"""

from __future__ import annotations

import subprocess
import sys
import time

from .results import Result, time_result

GOAL_S = 0.3  # dpfc --help and --version: the start-up a user waits for
ROWS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("python -c pass (the interpreter)", ("-c", "pass")),
    ("dpfc --version", ("-m", "dpfc", "--version")),
    ("dpfc --help", ("-m", "dpfc", "--help")),
    ("dpfc compile --help", ("-m", "dpfc", "compile", "--help")),
)


def _start(arguments: tuple[str, ...]) -> float:
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, *arguments],
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    return time.perf_counter() - started


def startup_results(runs: int) -> list[Result]:
    """One row per command of :data:`ROWS`: the seconds of ``runs`` starts (rows run in
    turn, run by run, so that a burst of load slows one run of each rather than one row)."""
    for _what, arguments in ROWS:
        _start(arguments)
    seconds: list[list[float]] = [[] for _ in ROWS]
    for _ in range(runs):
        for index, (_what, arguments) in enumerate(ROWS):
            seconds[index].append(_start(arguments))
    return [
        time_result("startup", what, "fresh process", times)
        for (what, _arguments), times in zip(ROWS, seconds, strict=True)
    ]


def startup_title(runs: int) -> str:
    return (
        f"dpfc start-up (s): a fresh process per run, {runs} run(s); goal: --help and "
        f"--version under {GOAL_S} s"
    )


__all__ = ["GOAL_S", "ROWS", "startup_results", "startup_title"]
