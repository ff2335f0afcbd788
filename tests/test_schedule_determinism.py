"""Determinism: the same input gives the same output on any machine under any load.

Every solver limit of the scheduler is a resource limit (Z3 ``rlimit``), never a clock
(dpfc/schedule/z3/limits.py), so 50 programs — the paper's examples, the corpus of user-style
DPFs and a few variants — compiled one after another and then three at a time in parallel
(each compile competing for the two cores with two others) give byte-identical objects, and
the same diagnostics where a program is rejected. The limits are scaled down (``Budget``)
to keep the suite fast; that changes nothing about determinism.
"""

from __future__ import annotations

from concurrent.futures import ProcessPoolExecutor
from itertools import combinations
from pathlib import Path

from dpfc.diagnostics import DiagnosticError
from dpfc.driver import CompileOptions, compile_source
from dpfc.objfile import write_object
from dpfc.schedule import Budget, ScheduleOptions
from tests.conftest import ROOT

OPTIONS = CompileOptions(schedule=ScheduleOptions(budget=Budget().scaled(0.1)))
OPERATIONS = ["a + b", "a - b", "a & b", "a | b", "a ^ b", "min(a, b)", "max(a, b)", "b - a"]


def _variants(directory: Path, count: int) -> list[Path]:
    """Small DPFs with three or four results of two inputs, each a different mix."""
    paths = []
    mixes = [c for n in (3, 4) for c in combinations(OPERATIONS, n)]
    for index in range(count):
        mix = mixes[(index * 7) % len(mixes)]
        path = directory / f"variant{index}.dpf"
        path.write_text(
            f"module variant{index};\ndpf variant{index}(a: u32, b: u32) {{\n"
            f"    push({', '.join(mix)});\n}}\n"
        )
        paths.append(path)
    return paths


def compile_bytes(path: Path) -> bytes | str:
    """The object's bytes, or the diagnostics of a rejected program."""
    try:
        compiled = compile_source(path, OPTIONS)
    except DiagnosticError as exc:
        return "\n".join(f"{d.code} {d.message}" for d in exc.diagnostics)
    return write_object(compiled.object())


def test_serial_and_parallel_compiles_give_identical_objects(tmp_path: Path) -> None:
    programs = sorted((ROOT / "examples" / "dpf").glob("*.dpf"))
    programs += sorted((ROOT / "examples" / "corpus").glob("*.dpf"))
    programs += _variants(tmp_path, 50 - len(programs))
    assert len(programs) == 50
    serial = [compile_bytes(p) for p in programs]
    with ProcessPoolExecutor(max_workers=3) as pool:
        parallel = list(pool.map(compile_bytes, programs))
    for path, one, other in zip(programs, serial, parallel, strict=True):
        assert one == other, f"{path.name} compiled differently under load"
    assert sum(isinstance(r, bytes) for r in serial) >= 45
