"""``python -m dpfc.bench verify``: how long ``dpfc verify`` and ``--validate`` take per DPF.

Every DPF of ``examples/dpf`` and ``examples/corpus``, compiled once for tofino1, is
verified ``runs`` times against :data:`POLICY` (ranges for forward, multicast and set_port,
chains and stack growth limited: every path is run symbolically and its steering values
proven), and proved equal to its unoptimised IR (``dpfc compile --validate``'s proof), each
timed with ``time.perf_counter``; the table gives each DPF's medians (engine ``verify`` and
``validate``), and per engine one row: the median and max over all DPFs' medians. The first DPF is verified once untimed, so
Z3's start-up is not counted.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

from dpfc.driver import CompileOptions, compile_source, lower
from dpfc.machine import MachineProgram
from dpfc.target import BUILTIN_PROFILES
from dpfc.verify import Policy, Validation, validate_unlinked, verify_program

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
    validate_seconds: list[float]  # dpfc compile --validate's proof of the same DPF
    pairs: int


def verify_rows(runs: int) -> list[VerifyRow]:
    profile = BUILTIN_PROFILES["tofino1"]
    programs: list[tuple[str, MachineProgram, Callable[[], Validation]]] = []
    for path in sorted(DPF_EXAMPLES.glob("*.dpf")) + sorted(CORPUS.glob("*.dpf")):
        module = compile_source(path, CompileOptions(target=profile))
        plain = lower(module.checked)
        for unit in module.units:
            program, module_name = unit.compiled.program, unit.problem.module
            schedule = unit.result.schedule
            job = partial(validate_unlinked, plain, unit.name, module_name, program, schedule)
            programs.append((f"{path.stem}.{unit.name}", program, job))
    verify_program(programs[0][1], POLICY)  # Z3's start-up, untimed
    rows = []
    for name, program, prove in programs:
        seconds, proving, paths, pairs = [], [], 0, 0
        for _ in range(runs):
            start = time.perf_counter()
            report = verify_program(program, POLICY)
            seconds.append(time.perf_counter() - start)
            paths = report.paths
            start = time.perf_counter()
            pairs = prove().pairs
            proving.append(time.perf_counter() - start)
        rows.append(VerifyRow(name, paths, seconds, proving, pairs))
    return rows


def verify_results(rows: list[VerifyRow]) -> list[Result]:
    out = []
    for r in rows:
        out.append(time_result("verify", f"{r.dpf} ({r.paths} paths)", "verify", r.seconds))
        what = f"{r.dpf} ({r.pairs} path pairs)"
        out.append(time_result("verify", what, "validate", r.validate_seconds))
    for engine, field_ in (("verify", "seconds"), ("validate", "validate_seconds")):
        medians = [statistics.median(getattr(r, field_)) for r in rows]
        out.append(time_result("verify", f"every DPF ({len(rows)}): medians", engine, medians))
    return out


def verify_title(runs: int) -> str:
    return (
        f"dpfc verify and translation validation per DPF (examples/dpf + examples/corpus, "
        f"tofino1), median of {runs} "
        "runs, seconds"
    )


__all__ = ["POLICY", "VerifyRow", "verify_results", "verify_rows", "verify_title"]
