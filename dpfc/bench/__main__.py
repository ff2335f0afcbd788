"""``python -m dpfc.bench sim [--packets N] [--runs R]``: the simulator's throughput;
``python -m dpfc.bench compile [--set examples|corpus|all] [--runs R] [--markdown]``: compile
times and schedules of the paper's examples and of the corpus of user-style DPFs;
``python -m dpfc.bench link [--dpfs N] [--tenants T] [--runs R]``: linking many DPFs;
``python -m dpfc.bench p4 [--packets N] [--runs R] [--json FILE]``: the SwitchVM program on
bmv2 next to the simulator (needs p4c-bm2-ss and simple_switch, docs/p4.md)."""

from __future__ import annotations

import argparse
from pathlib import Path

from dpfc.backends.p4.bmv2 import ToolchainMissing
from dpfc.bench import format_table, simulator_rows
from dpfc.bench.compile import SETS, compile_rows, format_compile_table
from dpfc.bench.link import format_link_table, link_rows
from dpfc.bench.p4 import format_p4_table, p4_rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m dpfc.bench", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    sim = commands.add_parser("sim", help="packets/s of the SwitchVM simulator")
    sim.add_argument("--packets", type=int, default=2000, help="packets per timed run")
    sim.add_argument("--runs", type=int, default=5, help="timed runs (the median is printed)")
    comp = commands.add_parser("compile", help="compile time and schedule quality")
    comp.add_argument("--runs", type=int, default=5, help="compiles per module (median)")
    comp.add_argument(
        "--set", choices=[*SETS, "all"], default="all", help="which modules (default: all)"
    )
    comp.add_argument("--markdown", action="store_true", help="print a Markdown table")
    linking = commands.add_parser("link", help="time and memory of linking many DPFs")
    linking.add_argument("--dpfs", type=int, default=2000, help="distinct DPFs to link")
    linking.add_argument("--tenants", type=int, default=100, help="tenants they belong to")
    linking.add_argument("--runs", type=int, default=3, help="timed runs (the median is printed)")
    p4 = commands.add_parser(
        "p4", help="packets/s of the SwitchVM program on bmv2 vs the simulator"
    )
    p4.add_argument("--packets", type=int, default=2000, help="packets per timed run")
    p4.add_argument("--runs", type=int, default=3, help="timed runs (the median is printed)")
    p4.add_argument("--json", type=Path, default=None, help="a compiled program (skip p4c)")
    args = parser.parse_args(argv)
    if args.command == "p4":
        if args.packets < 1 or args.runs < 1:
            parser.error("--packets and --runs must be at least 1")
        try:
            p4_table, seconds = p4_rows(args.packets, args.runs, args.json)
        except ToolchainMissing as missing:
            parser.exit(1, f"dpfc.bench p4: {missing}\n")
        print(
            format_p4_table(
                p4_table, packets=args.packets, runs=args.runs, compile_seconds=seconds
            ),
            end="",
        )
        return 0
    if args.command == "link":
        if min(args.dpfs, args.tenants, args.runs) < 1:
            parser.error("--dpfs, --tenants and --runs must be at least 1")
        timed, image, size, peak = link_rows(args.dpfs, args.tenants, args.runs)
        table = format_link_table(
            timed, image, size, peak, dpfs=args.dpfs, tenants=args.tenants, runs=args.runs
        )
        print(table, end="")
        return 0
    if args.command == "compile":
        if args.runs < 1:
            parser.error("--runs must be at least 1")
        names = list(SETS) if args.set == "all" else [args.set]
        for index, name in enumerate(names):
            compiled = compile_rows(args.runs, SETS[name])
            title = str(SETS[name].relative_to(SETS[name].parents[1]))
            table = format_compile_table(
                compiled, runs=args.runs, title=title, markdown=args.markdown
            )
            print(("\n" if index else "") + table, end="")
        return 0
    if args.packets < 1 or args.runs < 1:
        parser.error("--packets and --runs must be at least 1")
    rows = simulator_rows(args.packets, args.runs)
    print(format_table(rows, packets=args.packets, runs=args.runs), end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
