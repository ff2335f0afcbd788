"""The benchmarks' common result: one row per measured thing, a plain-text table, the
machine it was measured on, and ``bench/results.json``.

A :class:`Result` is one measurement repeated ``runs`` times: its median, min and max in
``unit`` (``pkt/s`` for throughput, where min is the slowest run; ``s`` for times). A
:class:`Skipped` row names what was not measured and why (a missing toolchain): the table
and the JSON say so instead of printing a figure for what does not exist.

``results.json`` (schema 1)::

    {"schema": 1, "command": "sim", "date": "2026-11-24T16:00:00+00:00",
     "machine": {"cpu": ..., "cores": 2, "load_average": [1.2, 1.1, 1.0],
                 "python": "3.11.9", "platform": ..., "libraries": {"z3-solver": ...}},
     "results": [{"suite": "sim", "what": "counter, in-switch, 1 tenant",
                  "engine": "interpreter", "packets": 2000, "runs": 5, "unit": "pkt/s",
                  "median": 9500.0, "min": 9100.0, "max": 9800.0}, ...],
     "skipped": [{"suite": "sim", "what": "bmv2", "reason": "..."}]}
"""

from __future__ import annotations

import datetime
import json
import os
import platform
import statistics
from dataclasses import asdict, dataclass
from importlib import metadata
from pathlib import Path

SCHEMA = 1
LIBRARIES = ("dpfc", "z3-solver", "lark", "scapy", "networkx", "llvmlite", "matplotlib")


@dataclass(frozen=True)
class Result:
    suite: str  # "compile" | "sim" | "scaling" | "link" | "p4" | "startup"
    what: str
    engine: str
    packets: int | None  # None: not a packet benchmark
    runs: int
    unit: str  # "pkt/s" | "s"
    median: float
    min: float
    max: float


@dataclass(frozen=True)
class Skipped:
    suite: str
    what: str
    reason: str


def rate_result(suite: str, what: str, engine: str, packets: int, seconds: list[float]) -> Result:
    """Packets per second of ``runs`` timed runs of ``packets`` packets each."""
    rates = [packets / s if s > 0 else float("inf") for s in seconds]
    return Result(
        suite,
        what,
        engine,
        packets,
        len(rates),
        "pkt/s",
        statistics.median(rates),
        min(rates),
        max(rates),
    )


def time_result(suite: str, what: str, engine: str, seconds: list[float]) -> Result:
    return Result(
        suite,
        what,
        engine,
        None,
        len(seconds),
        "s",
        statistics.median(seconds),
        min(seconds),
        max(seconds),
    )


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as info:
            for line in info:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _version(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def machine() -> dict[str, object]:
    """What the figures depend on: the CPU, the cores this process may use, the load when
    the measurement ended, and the versions of Python and the libraries."""
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None
    return {
        "cpu": _cpu_model(),
        "cores": os.cpu_count(),
        "usable_cores": usable,
        "load_average": [round(x, 2) for x in os.getloadavg()],
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "platform": platform.platform(),
        "libraries": {name: _version(name) for name in LIBRARIES},
    }


def write_results(
    path: Path, command: str, results: list[Result], skipped: list[Skipped]
) -> dict[str, object]:
    """Write ``path`` (its directory created); returns what was written."""
    document: dict[str, object] = {
        "schema": SCHEMA,
        "command": command,
        "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "machine": machine(),
        "results": [asdict(r) for r in results],
        "skipped": [asdict(s) for s in skipped],
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    return document


def _figure(value: float, unit: str) -> str:
    return f"{value:,.0f}" if unit == "pkt/s" else f"{value:.3f}"


def format_results(title: str, results: list[Result], skipped: list[Skipped]) -> str:
    """A table of ``results`` (one line each, figures right-aligned), then one line per
    skipped measurement."""
    header = ("what", "engine", "packets", "runs", "median", "min", "max", "unit")
    body = [
        (
            r.what,
            r.engine,
            "-" if r.packets is None else str(r.packets),
            str(r.runs),
            _figure(r.median, r.unit),
            _figure(r.min, r.unit),
            _figure(r.max, r.unit),
            r.unit,
        )
        for r in results
    ]
    widths = [max(len(row[i]) for row in [header, *body]) for i in range(len(header))]

    def line(cells: tuple[str, ...]) -> str:
        text = [
            c.ljust(w) if i in (0, 1, 7) else c.rjust(w)
            for i, (c, w) in enumerate(zip(cells, widths, strict=True))
        ]
        return "  ".join(text).rstrip()

    lines = [title, line(header), "  ".join("-" * w for w in widths)]
    lines += [line(cells) for cells in body]
    lines += [f"skipped: {s.what}: {s.reason}" for s in skipped]
    return "\n".join(lines) + "\n"
