"""``python -m dpfc.bench compile``: compile time and schedule quality.

Two sets of modules, on tofino1: the paper's applications (``examples/dpf``) and the corpus
of user-style DPFs written from the paper's prose (``examples/corpus``: counters, sketches,
load balancers, arithmetic, nested conditions, many results). For each DPF: the whole
compile of its module (check, lower, optimise, schedule, generate; median of ``runs``, in
one process, so the parser is built once: a module's time is charged to each of its DPFs),
the time in Z3, the EUs of the chosen and of the greedy schedule, what is proven (the EU
count; bundles and instructions), which schedule was kept, and the bytes of the in-packet
SwitchVM options (``switch`` for in-switch code). A module that does not compile is listed
with its diagnostic code. Times are wall-clock on whatever machine runs it; the schedules
themselves do not depend on the machine (deterministic resource limits).
"""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass
from pathlib import Path

from dpfc.diagnostics import DiagnosticError
from dpfc.driver import CompileOptions, compile_source
from dpfc.target import DEFAULT_PROFILE

from .paths import CORPUS, DPF_EXAMPLES
from .results import Result

SETS = {"examples": DPF_EXAMPLES, "corpus": CORPUS}


@dataclass(frozen=True)
class CompileRow:
    module: str
    dpf: str
    compile_s: float  # median whole-module compile time
    z3_s: float  # Z3 time of this DPF (last run)
    eus: int | None  # None: the module did not compile
    greedy_eus: int | None
    proof: str  # why the EU count is minimal ("" if not proven)
    secondary: str  # "proven" | "floor" | "limit" | "off"
    kept: str  # "z3" | "greedy"
    header_bytes: int | None
    error: str = ""  # the diagnostic code when the module does not compile
    compile_min_s: float = 0.0  # fastest and slowest whole-module compile of the runs
    compile_max_s: float = 0.0


def compile_rows(runs: int = 5, directory: Path = SETS["examples"]) -> list[CompileRow]:
    profile = DEFAULT_PROFILE
    rows: list[CompileRow] = []
    for path in sorted(directory.glob("*.dpf")):
        times = []
        compiled = None
        error = ""
        for _ in range(runs):
            started = time.perf_counter()
            try:
                compiled = compile_source(path, CompileOptions(target=profile))
            except DiagnosticError as exc:
                error = exc.diagnostics[0].code
            times.append(time.perf_counter() - started)
        median = statistics.median(times)
        if compiled is None:
            rows.append(
                CompileRow(
                    path.stem,
                    "-",
                    median,
                    0.0,
                    None,
                    None,
                    "",
                    "",
                    "",
                    None,
                    error,
                    min(times),
                    max(times),
                )
            )
            continue
        for unit in compiled.units:
            encoded = unit.compiled.encoded
            result = unit.result
            rows.append(
                CompileRow(
                    path.stem,
                    unit.name,
                    median,
                    result.solve_seconds,
                    result.schedule.eus_used,
                    result.greedy_eus,
                    result.proof,
                    result.secondary,
                    result.schedule.scheduler,
                    len(encoded.options) if encoded.packed is not None else None,
                    compile_min_s=min(times),
                    compile_max_s=max(times),
                )
            )
    return rows


def format_compile_table(
    rows: list[CompileRow], *, runs: int, title: str = "examples/dpf", markdown: bool = False
) -> str:
    header = ["module", "DPF", "compile (s)", "Z3 (s)", "EUs", "greedy", "EUs proven"]
    header += ["bundles+instr.", "kept", "header B"]
    body = [
        [
            r.module,
            r.dpf,
            f"{r.compile_s:.2f}",
            f"{r.z3_s:.2f}",
            r.error or str(r.eus),
            "-" if r.greedy_eus is None else str(r.greedy_eus),
            r.proof or ("-" if r.error else "no"),
            r.secondary or "-",
            r.kept or "-",
            "switch" if r.header_bytes is None and not r.error else str(r.header_bytes or "-"),
        ]
        for r in rows
    ]
    modules = {r.module: r.compile_s for r in rows}
    times = sorted(modules.values())
    failed = sorted({r.module for r in rows if r.error})
    greedy_better = any(
        r.greedy_eus is not None and r.eus is not None and r.greedy_eus < r.eus for r in rows
    )
    compiled = [r for r in rows if not r.error]
    rejected = f", {len(failed)} modules rejected ({', '.join(failed)})" if failed else ""
    summary = (
        f"{len(compiled)} DPFs in {len(modules) - len(failed)} modules compiled{rejected}; "
        f"module compile time median {statistics.median(times):.2f} s, max {max(times):.2f} s "
        f"(median of {runs} runs); EU count proven minimal: "
        f"{sum(bool(r.proof) for r in compiled)}/{len(compiled)}; greedy fewer EUs than the "
        f"result: {'yes' if greedy_better else 'never'}"
    )
    if markdown:
        lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        lines += ["| " + " | ".join(row) + " |" for row in body]
        return "\n".join(lines) + "\n\n" + summary + "\n"
    widths = [max(len(row[i]) for row in [header, *body]) for i in range(len(header))]
    lines = [f"Compile time and schedules: tofino1, {title}"]
    for row in [header, *body]:
        lines.append("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip())
    return "\n".join(lines) + "\n" + summary + "\n"


def compile_results(rows: list[CompileRow], runs: int, title: str) -> list[Result]:
    """One result per module (its whole compile; its DPFs share it), in seconds."""
    results = []
    seen: set[str] = set()
    for r in rows:
        if r.module in seen:
            continue
        seen.add(r.module)
        dpfs = ", ".join(x.dpf for x in rows if x.module == r.module)
        what = f"{title}/{r.module}.dpf" + (f" ({r.error})" if r.error else f": {dpfs}")
        results.append(
            Result(
                "compile",
                what,
                "dpfc (tofino1)",
                None,
                runs,
                "s",
                r.compile_s,
                r.compile_min_s,
                r.compile_max_s,
            )
        )
    return results
