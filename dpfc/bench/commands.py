"""What each ``python -m dpfc.bench`` command measures and prints: the glue between the
command line (:mod:`dpfc.bench.__main__`) and the suites.

Each ``run_*`` returns an :class:`Outcome`: the text for stdout (the suite's table), its
:class:`~dpfc.bench.results.Result` rows and what was skipped; ``all`` adds them up.
:func:`planned_steps` counts the rows a command will measure, the progress bar's total.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field
from pathlib import Path

from .compile import SETS, compile_results, compile_rows, format_compile_table
from .engines import bmv2_missing
from .link import format_link_table, link_results, link_rows
from .p4 import baseline_result, format_p4_table, p4_rows
from .plot import PlotUnavailable, plot_scaling
from .progress import Progress
from .results import Result, Skipped, format_results, rate_result
from .scaling import format_scaling_table, scaling_points, scaling_row_count
from .sim import engines, sim_results, sim_row_count
from .startup import startup_results, startup_title
from .tofino import format_tofino_table, tofino_results, tofino_rows
from .verify import verify_results, verify_rows, verify_title


@dataclass
class Outcome:
    text: str
    results: list[Result] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    failed: str = ""  # a command that could not do what it was asked (exit status 1)

    def __iadd__(self, other: Outcome) -> Outcome:
        self.text += "\n" + other.text
        self.results += other.results
        self.skipped += other.skipped
        self.failed = self.failed or other.failed
        return self


def compile_sets(args: argparse.Namespace) -> list[str]:
    """The module sets to compile: ``all`` compiles the examples only (the corpus is the
    compiler's own benchmark: ``compile --set corpus``)."""
    if args.command == "all":
        return ["examples"]
    return list(SETS) if args.set == "all" else [args.set]


def planned_steps(args: argparse.Namespace) -> int:
    """The progress bar's total for ``args``'s command."""
    command = args.command
    steps = 0
    if command in ("sim", "all"):
        steps += sim_row_count(args.engine, runs=args.runs, bmv2=not args.no_bmv2)
    if command in ("scaling", "all"):
        steps += scaling_row_count(args.max_tenants, args.max_dpfs, args.runs)
    if command in ("compile", "all"):
        steps += sum(len(list(SETS[name].glob("*.dpf"))) for name in compile_sets(args))
    if command in ("link", "p4", "startup", "verify", "all"):
        steps += 1
    if command == "all":
        steps += 1  # startup
    return steps


def run_sim(args: argparse.Namespace, progress: Progress) -> Outcome:
    results, skipped = sim_results(
        args.packets,
        args.runs,
        engine_names=args.engine,
        many_tenants=args.many_tenants,
        bmv2=not args.no_bmv2,
        progress=progress,
    )
    title = (
        f"SwitchVM simulator throughput (pkt/s): tofino1, one switch, {args.packets} packets "
        f"per run, {args.runs} run(s)"
    )
    return Outcome(format_results(title, results, skipped), results, skipped)


def run_scaling(
    args: argparse.Namespace, progress: Progress, *, packets: int, runs: int
) -> Outcome:
    ready, missing = engines(getattr(args, "engine", None))
    skipped = [Skipped("scaling", item.what, item.reason) for item in missing]
    points = scaling_points(
        packets,
        runs,
        ready,
        max_tenants=args.max_tenants,
        max_dpfs=args.max_dpfs,
        progress=progress,
    )
    text = format_scaling_table(points, packets=packets, runs=runs)
    if not args.no_plot:
        title = f"SwitchVM simulator, tofino1: {packets} packets per run, median of {runs}"
        try:
            plot_scaling(points, args.plot, title=title)
            text += f"plot: {args.plot}\n"
        except PlotUnavailable as missing:
            skipped.append(Skipped("scaling", "plot", str(missing)))
            text += f"skipped: plot: {missing}\n"
        except OSError as error:
            failed = f"cannot write {args.plot}: {error.strerror or error}"
            return Outcome(text, [p.result for p in points], skipped, failed=failed)
    return Outcome(text, [p.result for p in points], skipped)


def run_compile(sets: list[str], runs: int, *, markdown: bool, progress: Progress) -> Outcome:
    outcome = Outcome("")
    for index, name in enumerate(sets):
        directory = SETS[name]
        title = str(directory.relative_to(directory.parents[1]))
        progress.start(f"compile {title}")
        rows = compile_rows(runs, directory)
        for _ in range(len(list(directory.glob("*.dpf")))):
            progress.advance()
        table = format_compile_table(rows, runs=runs, title=title, markdown=markdown)
        outcome.text += ("\n" if index else "") + table
        outcome.results += compile_results(rows, runs, title)
    return outcome


def run_link(dpfs: int, tenants: int, runs: int, progress: Progress) -> Outcome:
    progress.start(f"link {dpfs} DPFs")
    timed, image, size, peak = link_rows(dpfs, tenants, runs)
    progress.advance()
    table = format_link_table(timed, image, size, peak, dpfs=dpfs, tenants=tenants, runs=runs)
    return Outcome(table, link_results(timed, dpfs=dpfs, tenants=tenants, runs=runs))


def run_p4(packets: int, runs: int, program_json: Path | None, progress: Progress) -> Outcome:
    """bmv2 next to the simulator; a missing toolchain is a skipped row and a failure (the
    command was asked for bmv2 figures and has none)."""
    reason = bmv2_missing()
    if reason is not None:
        skipped = [Skipped("p4", "bmv2", reason)]
        return Outcome(f"skipped: bmv2: {reason}\n", [], skipped, failed="bmv2 skipped")
    progress.start("bmv2 (p4c-bm2-ss, simple_switch)")
    figures = p4_rows(packets, runs, program_json)
    progress.advance()
    results = [baseline_result(figures.baseline)]
    for row in figures.rows:
        what = f"{row.dpf}.dpf compiled, {row.placement}, {row.program} program"
        results.append(rate_result("p4", what, "bmv2", packets, list(row.bmv2_seconds)))
        results.append(rate_result("p4", what, "interpreter", packets, list(row.sim_seconds)))
    table = format_p4_table(figures, packets=packets, runs=runs)
    return Outcome(table, results)


def run_tofino(progress: Progress, program: Path | None = None, chip: str = "tofino") -> Outcome:
    """The TNA programs (or ``program``) through p4c-barefoot; a missing compiler fails as
    bmv2 does."""
    progress.start("p4c-barefoot")
    rows = tofino_rows(program, chip)
    progress.advance()
    return Outcome(format_tofino_table(rows), tofino_results(rows))


def run_startup(runs: int, progress: Progress) -> Outcome:
    progress.start("dpfc start-up")
    results = startup_results(runs)
    progress.advance()
    return Outcome(format_results(startup_title(runs), results, []), results)


def run_verify(runs: int, progress: Progress) -> Outcome:
    progress.start("dpfc verify")
    results = verify_results(verify_rows(runs))
    progress.advance()
    return Outcome(format_results(verify_title(runs), results, []), results)
