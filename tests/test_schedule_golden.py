"""Golden schedules: the `--explain` grid of every DPF of the paper's applications.

The Z3 search is deterministic (a fixed seed, a context per model, resource limits rather
than clocks for the secondary objectives), so the grid of each DPF is pinned here; a change
in the encoding, the objectives or the code generator shows up as a readable diff
(``DPFC_BLESS=1`` rewrites the files after review).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from dpfc.driver import CompileOptions, compile_source
from dpfc.schedule import format_grid, render_svg
from dpfc.target import BUILTIN_PROFILES
from tests.conftest import ROOT, assert_golden

APPS = ["counter", "kvs", "kvs_update", "count_min", "lb1", "lb2", "lb3", "paxos", "telemetry"]
GOLDEN = ROOT / "tests" / "golden" / "schedules"


@pytest.mark.parametrize("app", APPS)
def test_schedule_grid(app: str) -> None:
    compiled = compile_source(
        ROOT / "examples" / "dpf" / f"{app}.dpf", CompileOptions(target=BUILTIN_PROFILES["tofino1"])
    )
    text = "\n".join(format_grid(u.result.schedule, result=u.result) for u in compiled.units)
    assert_golden(GOLDEN / f"{app}.txt", text)


def test_svg_is_well_formed_and_names_every_operation(tmp_path: Path) -> None:
    compiled = compile_source(
        ROOT / "examples/dpf/kvs.dpf", CompileOptions(target=BUILTIN_PROFILES["tofino1"])
    )
    unit = compiled.unit("cache_get")
    svg = render_svg(unit.result.schedule, result=unit.result)
    root = ET.fromstring(svg)
    texts = " ".join(t.text or "" for t in root.iter("{http://www.w3.org/2000/svg}text"))
    for name in ("tuple = load index", "v0 = load values0", "faadd hits", "BSET"):
        assert name in texts
