"""``python -m dpfc.bench COMMAND``: the benchmark suite (see :mod:`dpfc.bench`).

``sim [--packets N] [--runs R] [--engine E] [--many-tenants T] [--no-bmv2]``: packets/s of
the simulator's engines; ``scaling [--packets N] [--runs R] [--max-tenants T] [--max-dpfs D]
[--plot PNG | --no-plot]``: how that grows with the work; ``compile [--set
examples|corpus|all] [--runs R] [--markdown]``: compile times and schedules; ``link [--dpfs
N] [--tenants T] [--runs R]``: linking many DPFs; ``p4 [--packets N] [--runs R] [--json
FILE]``: the SwitchVM program on bmv2 next to the simulator (needs p4c-bm2-ss and
simple_switch, docs/p4.md); ``p4 --tofino [--tna FILE --chip C]``: the TNA programs (or
FILE) compiled by p4c-barefoot, with its stage count and Table 3 figures; ``startup [--runs
R]``: how long ``dpfc --help``, ``--version`` and a command's help take to start; ``verify
[--runs R]``: ``dpfc verify``'s time per DPF of the examples and the corpus; ``all``: every one of them that can run here. Each prints a
table and writes its rows to ``--results`` (default ``bench/results.json``)."""

from __future__ import annotations

import argparse
from pathlib import Path

from dpfc.backends.p4 import TOFINO_TARGETS, ToolchainMissing
from dpfc.diagnostics import DiagnosticError
from dpfc.switch import SwitchRefused

from .commands import (
    Outcome,
    compile_sets,
    planned_steps,
    run_compile,
    run_link,
    run_p4,
    run_scaling,
    run_sim,
    run_startup,
    run_tofino,
    run_verify,
)
from .engines import ENGINES
from .paths import RESULTS, SCALING_PLOT
from .progress import Progress
from .results import write_results


def _sizes(parser: argparse.ArgumentParser, packets: int, runs: int) -> None:
    parser.add_argument("--packets", type=int, default=packets, help="packets per timed run")
    parser.add_argument("--runs", type=int, default=runs, help="timed runs (median, min, max)")


def _sim_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--engine", action="append", choices=sorted(ENGINES), help="only this engine (repeatable)"
    )
    parser.add_argument(
        "--many-tenants", type=int, default=30_000, help="tenants of the many-tenant row"
    )
    parser.add_argument("--no-bmv2", action="store_true", help="skip the bmv2 rows")


def _scaling_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--max-tenants", type=int, default=30_000, help="last tenant count")
    parser.add_argument("--max-dpfs", type=int, default=2_000, help="last installed-DPF count")
    parser.add_argument("--plot", type=Path, default=SCALING_PLOT, help="the PNG to write")
    parser.add_argument("--no-plot", action="store_true", help="do not draw the plot")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m dpfc.bench", description=__doc__)
    parser.add_argument(
        "--results", type=Path, default=RESULTS, help="the JSON to write (default: %(default)s)"
    )
    commands = parser.add_subparsers(dest="command", required=True)
    sim = commands.add_parser("sim", help="packets/s of the SwitchVM simulator")
    _sizes(sim, 2000, 5)
    _sim_options(sim)
    scaling = commands.add_parser("scaling", help="cost against EUs, tenants, installed DPFs")
    _sizes(scaling, 1000, 3)
    _scaling_options(scaling)
    comp = commands.add_parser("compile", help="compile time and schedule quality")
    comp.add_argument("--runs", type=int, default=5, help="compiles per module (median)")
    comp.add_argument("--set", choices=["examples", "corpus", "all"], default="all")
    comp.add_argument("--markdown", action="store_true", help="print a Markdown table")
    linking = commands.add_parser("link", help="time and memory of linking many DPFs")
    linking.add_argument("--dpfs", type=int, default=2000, help="distinct DPFs to link")
    linking.add_argument("--tenants", type=int, default=100, help="tenants they belong to")
    linking.add_argument("--runs", type=int, default=3, help="timed runs (median)")
    p4 = commands.add_parser(
        "p4", help="packets/s of the SwitchVM program on bmv2 vs the simulator"
    )
    _sizes(p4, 2000, 3)
    p4.add_argument("--json", type=Path, default=None, help="a compiled program (skip p4c)")
    p4.add_argument(
        "--tofino",
        action="store_true",
        help="instead: compile the TNA programs with p4c-barefoot and print its figures",
    )
    p4.add_argument("--tna", type=Path, default=None, help="with --tofino: this TNA source instead")
    p4.add_argument(
        "--chip", choices=sorted(TOFINO_TARGETS), default="tofino", help="with --tna: the chip"
    )
    startup = commands.add_parser("startup", help="how long dpfc --help and --version take")
    startup.add_argument("--runs", type=int, default=10, help="starts per row (median)")
    verifying = commands.add_parser("verify", help="time of dpfc verify per DPF")
    verifying.add_argument("--runs", type=int, default=5, help="verifications per DPF (median)")
    every = commands.add_parser("all", help="every benchmark that can run here")
    _sizes(every, 2000, 5)
    _sim_options(every)
    _scaling_options(every)
    every.add_argument("--compile-runs", type=int, default=3, help="compiles per module")
    every.add_argument("--dpfs", type=int, default=2000, help="DPFs the link row links")
    every.add_argument("--tenants", type=int, default=100, help="tenants of the linked DPFs")
    return parser


def _check(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Every count must be at least 1 (a message and exit 2 otherwise, as argparse does)."""
    names = ["packets", "runs", "many_tenants", "max_tenants", "max_dpfs", "compile_runs"]
    names += ["dpfs", "tenants"]
    low = [n for n in names if getattr(args, n, 1) < 1]
    if low:
        options = " and ".join("--" + n.replace("_", "-") for n in low)
        parser.error(f"{options} must be at least 1")
    program = getattr(args, "json", None)
    if program is not None and not program.is_file():
        parser.error(f"--json {program}: no such file")
    source = getattr(args, "tna", None)
    if source is not None and not getattr(args, "tofino", False):
        parser.error("--tna needs --tofino")
    if source is not None and not source.is_file():
        parser.error(f"--tna {source}: no such file")


def _outcome(args: argparse.Namespace, progress: Progress) -> Outcome:
    command = args.command
    if command == "sim":
        return run_sim(args, progress)
    if command == "scaling":
        return run_scaling(args, progress, packets=args.packets, runs=args.runs)
    if command == "compile":
        return run_compile(compile_sets(args), args.runs, markdown=args.markdown, progress=progress)
    if command == "link":
        return run_link(args.dpfs, args.tenants, args.runs, progress)
    if command == "p4" and args.tofino:
        return run_tofino(progress, args.tna, args.chip)
    if command == "p4":
        return run_p4(args.packets, args.runs, args.json, progress)
    if command == "startup":
        return run_startup(args.runs, progress)
    if command == "verify":
        return run_verify(args.runs, progress)
    # all: the simulator first (the headline figures), then scaling, compile, link, start-up
    outcome = run_sim(args, progress)
    outcome += run_scaling(args, progress, packets=max(args.packets // 2, 1), runs=args.runs)
    outcome += run_compile(compile_sets(args), args.compile_runs, markdown=False, progress=progress)
    outcome += run_link(args.dpfs, args.tenants, min(args.runs, 3), progress)
    outcome += run_startup(args.runs, progress)
    return outcome


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    _check(parser, args)
    progress = Progress(planned_steps(args))
    try:
        outcome = _outcome(args, progress)
    except ToolchainMissing as missing:  # only `p4` asks for bmv2 (or p4c-barefoot) explicitly
        tool = "p4c-barefoot" if getattr(args, "tofino", False) else "bmv2"
        outcome = Outcome("", [], [], failed=f"{tool} skipped: {missing}")
    except (DiagnosticError, SwitchRefused) as error:
        # sizes beyond what the target holds (more DPFs than code slots, more tenants than
        # permission entries): the target's own message, not a traceback
        progress.close()
        parser.exit(1, f"dpfc.bench {args.command}: {error}\n")
    finally:
        progress.close()
    print(outcome.text, end="")
    try:
        write_results(args.results, args.command, outcome.results, outcome.skipped)
    except OSError as error:
        parser.exit(1, f"dpfc.bench: cannot write {args.results}: {error.strerror}\n")
    if outcome.failed:
        parser.exit(1, f"dpfc.bench {args.command}: {outcome.failed}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
