"""The open-source Tofino compiler (``p4c-barefoot``) as the judge of a TNA program.

Contract: :func:`find_barefoot` finds ``p4c-barefoot`` under ``$DPFC_P4_PREFIX/bin``
(default ``/opt/p4``) or on ``PATH``, or raises
:class:`~dpfc.backends.p4.bmv2.ToolchainMissing` saying where it looked (tests skip with
that reason). :func:`compile_tna` runs it on a TNA source for ``tofino`` (TNA) or
``tofino2`` (T2NA) with its logs on (``-g``) and returns a :class:`BarefootRun`: the
command, its seconds, the compiler's error lines and, when it compiled, the chip's
:class:`TofinoResources` read from the compiler's own logs (``pipe/logs/resources.json``
and ``pipe/logs/phv.json``) by :func:`read_resources`, and the program's BF-RT schema
(``bfrt.json``, read by :mod:`.bfrt_names`).

The figures are the ones the SwitchVM paper's Table 3 gives for its Tofino-1 program, as
used / available over every stage of the chip (the per-stage sizes come from the logs, so
Tofino-2's larger stages count as they are): exact and ternary crossbar bytes, TCAM and SRAM
blocks, hash bits and hash distribution units, gateways, action instruction memory (VLIW
rows), logical tables, and normal PHV bits (the containers the program was given, of the
chip's normal containers; tagalong containers are not counted).
"""

from __future__ import annotations

import json
import re
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dpfc.backends.p4.bmv2 import find_tool

TARGETS = {"tofino": "tna", "tofino2": "t2na"}
ERROR = re.compile(r"\berror\b", re.IGNORECASE)


@dataclass(frozen=True)
class Usage:
    used: int
    available: int

    @property
    def percent(self) -> float:
        return 100.0 * self.used / self.available if self.available else 0.0


@dataclass(frozen=True)
class TofinoResources:
    """What a compiled program uses of the chip, from the compiler's logs."""

    stages: int  # MAU stages with at least one table
    chip_stages: int
    exact_xbar_bytes: Usage
    ternary_xbar_bytes: Usage
    tcam_blocks: Usage
    sram_blocks: Usage
    hash_bits: Usage
    hash_distribution_units: Usage
    gateways: Usage
    vliw_instructions: Usage
    logical_tables: Usage
    normal_phv_bits: Usage

    def table3(self) -> dict[str, Usage]:
        """The figures in the order of the paper's Table 3."""
        return {
            "exact xbar": self.exact_xbar_bytes,
            "ternary xbar": self.ternary_xbar_bytes,
            "TCAM": self.tcam_blocks,
            "SRAM": self.sram_blocks,
            "hash bits": self.hash_bits,
            "hash distribution": self.hash_distribution_units,
            "gateways": self.gateways,
            "action instruction memory": self.vliw_instructions,
            "logical tables": self.logical_tables,
            "normal PHV": self.normal_phv_bits,
        }


@dataclass(frozen=True)
class BarefootRun:
    command: tuple[str, ...]
    seconds: float
    errors: tuple[str, ...]  # the compiler's error lines (none when it compiled)
    resources: TofinoResources | None  # None when it did not compile
    bfrt_json: Path | None = None  # the program's BF-RT schema (bfrt_names.read_bfrt_json)

    @property
    def compiled(self) -> bool:
        return self.resources is not None


def find_barefoot() -> Path:
    return find_tool("p4c-barefoot", "build p4c's Tofino back end")


def command(barefoot: Path, source: Path, target: str, output: Path) -> tuple[str, ...]:
    if target not in TARGETS:
        raise ValueError(f"unknown Tofino target `{target}` (known: {', '.join(TARGETS)})")
    return (
        str(barefoot),
        "--target",
        target,
        "--arch",
        TARGETS[target],
        "-g",
        "--bf-rt-schema",
        str(output / "bfrt.json"),
        "-o",
        str(output),
        str(source),
    )


def compile_tna(barefoot: Path, source: Path, target: str, output: Path) -> BarefootRun:
    """``p4c-barefoot`` on ``source`` for ``target``, its outputs and logs in ``output``."""
    argv = command(barefoot, source, target, output)
    started = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - started
    errors = _errors((done.stdout + done.stderr).splitlines())
    if done.returncode != 0:
        return BarefootRun(argv, seconds, errors or (f"exit {done.returncode}",), None)
    logs = output / "pipe" / "logs"
    resources = read_resources(logs / "resources.json", logs / "phv.json")
    return BarefootRun(argv, seconds, (), resources, output / "bfrt.json")


def _errors(lines: list[str]) -> tuple[str, ...]:
    """The compiler's error lines; an error whose text starts on the next line gets it."""
    found = []
    for at, line in enumerate(lines):
        if not ERROR.search(line) or "0 errors" in line:
            continue
        if line.rstrip().endswith("error:"):
            line = line.rstrip() + " " + next((s.strip() for s in lines[at + 1 :] if s.strip()), "")
        found.append(line)
    return tuple(found)


def read_resources(resources_json: Path, phv_json: Path) -> TofinoResources:
    """The figures of :class:`TofinoResources` from the compiler's two logs."""
    logged = json.loads(resources_json.read_text())["resources"]
    mau = logged["mau"]
    chip = int(mau["nStages"])
    used = sorted(mau["mau_stages"], key=lambda s: s["stage_number"])
    # Every stage of the chip is available, whether the program used it or not: the
    # per-stage sizes of an unused stage are those of the used ones.
    every = used + [used[-1]] * (chip - len(used)) if used else []

    def sized(count: Any, size: Any) -> Usage:
        return Usage(sum(count(s) for s in used), sum(size(s) for s in every))

    def xbar(kind: str) -> Any:
        return lambda s: sum(1 for b in s["xbar_bytes"]["bytes"] if b["byte_type"] == kind)

    return TofinoResources(
        stages=len([s for s in used if s["logical_tables"]["ids"]]),
        chip_stages=chip,
        exact_xbar_bytes=sized(xbar("exact"), lambda s: s["xbar_bytes"]["exact_size"]),
        ternary_xbar_bytes=sized(xbar("ternary"), lambda s: s["xbar_bytes"]["ternary_size"]),
        tcam_blocks=sized(
            lambda s: len(s["tcams"]["tcams"]),
            lambda s: s["tcams"]["nRows"] * s["tcams"]["nColumns"],
        ),
        sram_blocks=sized(
            lambda s: len(s["rams"]["srams"]),
            lambda s: s["rams"]["nRows"] * s["rams"]["nColumns"],
        ),
        hash_bits=sized(
            lambda s: len(s["hash_bits"]["bits"]),
            lambda s: s["hash_bits"]["nBits"] * s["hash_bits"]["nFunctions"],
        ),
        hash_distribution_units=sized(
            lambda s: len(s["hash_distribution_units"]["units"]),
            lambda s: (
                s["hash_distribution_units"]["nHashIds"] * s["hash_distribution_units"]["nUnitIds"]
            ),
        ),
        gateways=sized(
            lambda s: len(s["gateways"]["gateways"]),
            lambda s: s["gateways"]["nRows"] * s["gateways"]["nUnits"],
        ),
        vliw_instructions=sized(
            lambda s: len(s["vliw"]["instructions"]), lambda s: s["vliw"]["size"]
        ),
        logical_tables=sized(
            lambda s: len(s["logical_tables"]["ids"]), lambda s: s["logical_tables"]["size"]
        ),
        normal_phv_bits=_phv_bits(phv_json, logged["phv_containers"]["normal"]),
    )


def _phv_bits(phv_json: Path, normal: list[dict[str, Any]]) -> Usage:
    """Bits of the normal containers that hold a field, of all the chip's normal ones."""
    phv = json.loads(phv_json.read_text())
    used = sum(
        c["bit_width"]
        for c in phv["containers"]
        if c.get("container_type") == "normal" and c.get("slices")
    )
    return Usage(used, sum(group["width"] * group["units"] for group in normal))


__all__ = [
    "TARGETS",
    "BarefootRun",
    "TofinoResources",
    "Usage",
    "command",
    "compile_tna",
    "find_barefoot",
    "read_resources",
]
