"""``python -m dpfc.bench compile``: compile time and schedule quality of every example.

For each DPF of ``examples/dpf/*.dpf`` on tofino1: the whole compile of its module (check,
lower, optimise, schedule, generate; median of ``runs``, divided among nothing: a module's
time is charged to each of its DPFs as the module time), the time in Z3, the EUs of the Z3
schedule and of the greedy schedule, whether the EU count is proven optimal, and the bytes
of the in-packet SwitchVM options (``switch`` for in-switch code).
"""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass
from pathlib import Path

from dpfc.driver import CompileOptions, compile_source
from dpfc.target.profile import BUILTIN_PROFILES

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "dpf"


@dataclass(frozen=True)
class CompileRow:
    module: str
    dpf: str
    compile_s: float  # median whole-module compile time
    z3_s: float  # Z3 time of this DPF (last run)
    eus: int
    greedy_eus: int | None
    proven: bool
    header_bytes: int | None


def compile_rows(runs: int = 5, examples: Path = EXAMPLES) -> list[CompileRow]:
    profile = BUILTIN_PROFILES["tofino1"]
    rows: list[CompileRow] = []
    for path in sorted(examples.glob("*.dpf")):
        times = []
        compiled = None
        for _ in range(runs):
            started = time.perf_counter()
            compiled = compile_source(path, CompileOptions(target=profile))
            times.append(time.perf_counter() - started)
        assert compiled is not None
        median = statistics.median(times)
        for unit in compiled.units:
            encoded = unit.compiled.encoded
            header = len(encoded.options) if encoded.packed is not None else None
            rows.append(
                CompileRow(
                    path.stem,
                    unit.name,
                    median,
                    unit.result.solve_seconds,
                    unit.result.schedule.eus_used,
                    unit.result.greedy_eus,
                    unit.result.proven_optimal,
                    header,
                )
            )
    return rows


def format_compile_table(rows: list[CompileRow], *, runs: int, markdown: bool = False) -> str:
    header = [
        "module",
        "DPF",
        "compile (s)",
        "Z3 (s)",
        "EUs Z3",
        "EUs greedy",
        "proven",
        "header B",
    ]
    body = [
        [
            r.module,
            r.dpf,
            f"{r.compile_s:.2f}",
            f"{r.z3_s:.2f}",
            str(r.eus),
            "-" if r.greedy_eus is None else str(r.greedy_eus),
            "yes" if r.proven else "no",
            "switch" if r.header_bytes is None else str(r.header_bytes),
        ]
        for r in rows
    ]
    modules = {r.module: r.compile_s for r in rows}
    times = sorted(modules.values())
    greedy_better = any(r.greedy_eus is not None and r.greedy_eus < r.eus for r in rows)
    summary = (
        f"{len(rows)} DPFs in {len(modules)} modules; module compile time median "
        f"{statistics.median(times):.2f} s, max {max(times):.2f} s (median of {runs} runs); "
        f"all proven optimal: {'yes' if all(r.proven for r in rows) else 'no'}; "
        f"greedy never better than Z3: {'no' if greedy_better else 'yes'}"
    )
    if markdown:
        lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        lines += ["| " + " | ".join(row) + " |" for row in body]
        return "\n".join(lines) + "\n\n" + summary + "\n"
    widths = [max(len(row[i]) for row in [header, *body]) for i in range(len(header))]
    lines = ["Compile time and schedules: tofino1, examples/dpf"]
    for row in [header, *body]:
        lines.append("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip())
    return "\n".join(lines) + "\n" + summary + "\n"
