"""``python -m dpfc.bench verify``: how long ``dpfc verify`` takes per DPF.

Every DPF of ``examples/dpf`` and ``examples/corpus``, compiled once for tofino1, is
verified ``runs`` times against :data:`POLICY` (ranges for forward, multicast and set_port,
chains and stack growth limited: every path is run symbolically and its steering values
proven), timed with ``time.perf_counter``; the table gives each DPF's median, and one row
the median and max over all DPFs' medians. The first DPF is verified once untimed, so
Z3's start-up is not counted.
"""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass

from dpfc.driver import CompileOptions, compile_source
from dpfc.target import BUILTIN_PROFILES
from dpfc.verify import Policy, verify_program

from .paths import CORPUS, DPF_EXAMPLES
from .results import Result, time_result

POLICY = Policy(
    name="bench",
    steering_values={"forward": ((0, 15),), "multicast": ((0, 15),), "set_port": ((1, 8),)},
    chains=False,
    max_stack_growth=4,
)


@dataclass(frozen=True)
class VerifyRow:
    dpf: str
    paths: int
    seconds: list[float]


def verify_rows(runs: int) -> list[VerifyRow]:
    profile = BUILTIN_PROFILES["tofino1"]
    programs = []
    for path in sorted(DPF_EXAMPLES.glob("*.dpf")) + sorted(CORPUS.glob("*.dpf")):
        module = compile_source(path, CompileOptions(target=profile))
        programs += [(f"{path.stem}.{u.name}", u.compiled.program) for u in module.units]
    verify_program(programs[0][1], POLICY)  # Z3's start-up, untimed
    rows = []
    for name, program in programs:
        seconds, paths = [], 0
        for _ in range(runs):
            start = time.perf_counter()
            report = verify_program(program, POLICY)
            seconds.append(time.perf_counter() - start)
            paths = report.paths
        rows.append(VerifyRow(name, paths, seconds))
    return rows


def verify_results(rows: list[VerifyRow]) -> list[Result]:
    out = [time_result("verify", f"{r.dpf} ({r.paths} paths)", "z3", r.seconds) for r in rows]
    medians = [statistics.median(r.seconds) for r in rows]
    out.append(time_result("verify", f"every DPF ({len(rows)}): medians", "z3", medians))
    return out


def verify_title(runs: int) -> str:
    return (
        f"dpfc verify per DPF (examples/dpf + examples/corpus, tofino1), median of {runs} "
        "runs, seconds"
    )


__all__ = ["POLICY", "VerifyRow", "verify_results", "verify_rows", "verify_title"]
