"""``python -m dpfc.bench sim [--packets N] [--runs R]``: print the simulator's throughput."""

from __future__ import annotations

import argparse

from dpfc.bench import format_table, simulator_rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m dpfc.bench", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    sim = commands.add_parser("sim", help="packets/s of the SwitchVM simulator")
    sim.add_argument("--packets", type=int, default=2000, help="packets per timed run")
    sim.add_argument("--runs", type=int, default=5, help="timed runs (the median is printed)")
    args = parser.parse_args(argv)
    if args.packets < 1 or args.runs < 1:
        parser.error("--packets and --runs must be at least 1")
    rows = simulator_rows(args.packets, args.runs)
    print(format_table(rows, packets=args.packets, runs=args.runs), end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
