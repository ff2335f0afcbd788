"""``python -m dpfc.bench p4 --tofino``: the generated TNA programs judged by the Tofino compiler.

Method: four programs, each written to a scratch directory and compiled once with
``p4c-barefoot -g`` (dpfc.backends.p4.barefoot): the program of ``dpfc p4 --arch tna`` for
the paper's profiles (tofino1 on Tofino-1 with TNA, tofino2 on Tofino-2 with T2NA), and the
stage-structured program (dpfc.backends.p4.staged) for the profiles that fit (tofino1_fit,
tofino2_fit). A row gives the compile time and, when the compiler accepts the program, the
stages it uses and the figures of the paper's Table 3 read from the compiler's own logs
(used / available over the chip's stages), beside the paper's for Tofino-1; when it refuses
the program, the first error. The figures are the compiler's, not dpfc's estimates; the
time depends on the machine and its load.
"""

from __future__ import annotations

import re
import tempfile
from dataclasses import dataclass
from pathlib import Path

from dpfc.backends.p4 import BarefootRun, compile_tna, find_barefoot, generate, generate_staged
from dpfc.target import BUILTIN_PROFILES

from .results import Result, time_result

# (profile, chip, stage-structured): the old program for the paper's profiles, the
# stage-structured one for the profiles that fit
PROGRAMS = (
    ("tofino1", "tofino", False),
    ("tofino1_fit", "tofino", True),
    ("tofino2", "tofino2", False),
    ("tofino2_fit", "tofino2", True),
)
CHIPS = {"tofino": 1, "tofino2": 2}
# The paper's Table 3 (Tofino-1, 4 EUs x 4 lanes), percent, in TofinoResources.table3 order.
PAPER_TABLE3 = {
    "exact xbar": 24.0,
    "ternary xbar": 20.0,
    "TCAM": 41.0,
    "SRAM": 57.0,
    "hash bits": 49.0,
    "hash distribution": 72.0,
    "gateways": 17.0,
    "action instruction memory": 85.0,
    "logical tables": 73.0,
    "normal PHV": 64.0,
}
SCRATCH_PATH = re.compile(r"^\S*/(?=[^/\s]+\.p4\()")  # the scratch directory of a message


@dataclass(frozen=True)
class TofinoRow:
    program: str  # a built-in profile's TNA program, or the file name of a TNA source
    chip: str
    run: BarefootRun


def tofino_rows(program: Path | None = None, chip: str = "tofino") -> list[TofinoRow]:
    """Compile every program of :data:`PROGRAMS`, or the TNA source ``program`` for ``chip``;
    raises ToolchainMissing without the compiler."""
    barefoot = find_barefoot()
    rows = []
    with tempfile.TemporaryDirectory(prefix="dpfc-tofino-") as scratch:
        if program is not None:
            run = compile_tna(barefoot, program, chip, Path(scratch) / "out")
            return [TofinoRow(program.name, chip, run)]
        for profile, target, staged in PROGRAMS:
            source = Path(scratch) / f"{profile}.p4"
            chosen = BUILTIN_PROFILES[profile]
            text = (
                generate_staged(chosen, "tna", CHIPS[target]) if staged else generate(chosen, "tna")
            )
            source.write_text(text)
            run = compile_tna(barefoot, source, target, Path(scratch) / f"{profile}.out")
            rows.append(TofinoRow(profile, target, run))
    return rows


def tofino_results(rows: list[TofinoRow]) -> list[Result]:
    return [
        time_result(
            "p4",
            f"{row.program} compiled for {row.chip}",
            "p4c-barefoot",
            [row.run.seconds],
        )
        for row in rows
    ]


def format_tofino_table(rows: list[TofinoRow]) -> str:
    lines = ["SwitchVM TNA programs compiled by p4c-barefoot (-g); Table 3 figures from its logs"]
    for row in rows:
        run = row.run
        head = f"{row.program} on {row.chip}: {run.seconds:.1f} s, "
        if run.resources is None:
            first = run.errors[0] if run.errors else "refused"
            lines.append(head + f"refused: {SCRATCH_PATH.sub('', first.strip())}")
            continue
        found = run.resources
        lines.append(head + f"{found.stages} of {found.chip_stages} stages")
        for name, usage in found.table3().items():
            paper = f"  (paper {PAPER_TABLE3[name]:.0f}%)" if row.chip == "tofino" else ""
            lines.append(
                f"  {name:<27} {usage.used:>7,} / {usage.available:>7,}  {usage.percent:5.1f}%"
                + paper
            )
    return "\n".join(lines) + "\n"
