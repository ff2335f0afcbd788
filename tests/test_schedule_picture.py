"""The schedule picture (``dpfc compile --schedule-svg`` / ``--schedule-png``).

Golden SVGs pin three pictures (a branching DPF with arrays, a one-path counter with one
array, a DPF with metadata inputs and two arrays); the other tests check the layout's
promises on every DPF of the examples, independently of the layout's own code: every text
line lies inside its cell by a monospace estimate of its width, no two cells overlap,
nothing is cut (every operation of the ``--explain`` grid is in the picture, whole), the
prolog, the epilogs, the array placement and the critical path are drawn and in the legend.
"""

from __future__ import annotations

import re
import struct
import sys
import xml.etree.ElementTree as ET
from functools import cache
from pathlib import Path

import pytest
from click.testing import CliRunner

from dpfc.cli.main import main
from dpfc.driver import CompiledUnit, CompileOptions, compile_source
from dpfc.schedule.presentation import (
    SCALE,
    describe,
    layout,
    render_png,
    render_svg,
    selector_text,
)
from dpfc.target import BUILTIN_PROFILES
from tests.conftest import ROOT, assert_golden

SVG = "{http://www.w3.org/2000/svg}"
GOLDEN = ROOT / "tests" / "golden" / "pictures"
APPS = ["counter", "kvs", "kvs_update", "count_min", "lb1", "lb2", "lb3", "paxos", "telemetry"]
# The width the picture promises to reserve per character (docs/scheduling.md): 0.65 em,
# more than a monospace font's 0.6 em advance, for renderers that round it up.
EM_PER_CHAR = 0.65
ASCENT, DESCENT = 0.8, 0.25  # of the font size, above and below the baseline


@cache
def _units(app: str) -> dict[str, CompiledUnit]:
    compiled = compile_source(
        ROOT / "examples" / "dpf" / f"{app}.dpf",
        CompileOptions(target=BUILTIN_PROFILES["tofino1"]),
    )
    return {unit.name: unit for unit in compiled.units}


def _svg(app: str, dpf: str) -> str:
    unit = _units(app)[dpf]
    return render_svg(unit.result.schedule, result=unit.result)


def _cells(svg: str) -> list[tuple[set[str], dict[str, float], list[str], ET.Element]]:
    """Each ``<g class="cell ...">``: its classes, its rect, its text lines, its element."""
    root = ET.fromstring(svg)
    cells = []
    for group in root.iter(f"{SVG}g"):
        classes = set(group.get("class", "").split())
        assert "cell" in classes
        rect = group.find(f"{SVG}rect")
        assert rect is not None
        box = {k: float(rect.get(k, "0")) for k in ("x", "y", "width", "height")}
        lines = [t.text or "" for t in group.iter(f"{SVG}text")]
        cells.append((classes, box, lines, group))
    return cells


def _paragraph(lines: list[str]) -> str:
    """A cell's wrapped lines joined back into one line of text."""
    return re.sub(r"\s+", " ", " ".join(lines)).strip()


@pytest.mark.parametrize(
    ("app", "dpf"), [("kvs", "cache_get"), ("counter", "counter"), ("telemetry", "max_hop_latency")]
)
def test_golden_pictures(app: str, dpf: str) -> None:
    assert_golden(GOLDEN / f"{app}.{dpf}.svg", _svg(app, dpf))


@pytest.mark.parametrize("app", APPS)
def test_every_text_fits_in_its_cell_and_cells_do_not_overlap(app: str) -> None:
    for dpf in _units(app):
        _check_fit(_svg(app, dpf), dpf)


def _check_fit(svg: str, dpf: str) -> None:
    root = ET.fromstring(svg)
    size = float(root.get("font-size", "0"))
    canvas_w, canvas_h = float(root.get("width", "0")), float(root.get("height", "0"))
    # Every text belongs to a cell.
    texts_in_cells = sum(len(g.findall(f"{SVG}text")) for g in root.iter(f"{SVG}g"))
    assert texts_in_cells == len(list(root.iter(f"{SVG}text")))
    boxes = []
    for _, box, _, group in _cells(svg):
        x, y, w, h = box["x"], box["y"], box["width"], box["height"]
        assert x >= 0 and x + w <= canvas_w and y >= 0 and y + h <= canvas_h
        for text in group.iter(f"{SVG}text"):
            tx, baseline = float(text.get("x", "0")), float(text.get("y", "0"))
            width = len(text.text or "") * EM_PER_CHAR * size
            assert x < tx and tx + width <= x + w, f"{text.text!r} leaves its cell in {dpf}"
            assert y <= baseline - ASCENT * size and baseline + DESCENT * size <= y + h
        boxes.append((x, y, x + w, y + h))
    for i, a in enumerate(boxes):
        for b in boxes[i + 1 :]:
            assert a[2] <= b[0] or b[2] <= a[0] or a[3] <= b[1] or b[3] <= a[1], (a, b)


@pytest.mark.parametrize("app", APPS)
def test_nothing_is_cut(app: str) -> None:
    """Every operation and every selector list of the schedule is in one cell, whole."""
    for dpf, unit in _units(app).items():
        _check_whole(unit, _svg(app, dpf), dpf)


def _check_whole(unit: CompiledUnit, svg: str, dpf: str) -> None:
    schedule = unit.result.schedule
    problem = schedule.problem
    cells = [_paragraph(lines) for _, _, lines, _ in _cells(svg)]
    for step in schedule.steps:
        wanted = [describe(problem, problem.ops[lo.op]) for lo in (*step.alu, *step.mem)]
        selectors = selector_text(problem, step)
        wanted += [selectors] if selectors else []
        for text in wanted:
            # A word too long for its column breaks mid-word: compare without spaces.
            bare = text.replace(" ", "")
            assert any(bare in cell.replace(" ", "") for cell in cells), f"{text!r} cut in {dpf}"


LONG_NAMES = """module longnames;

@pin(eu = 0, lane = 0)
segment array counters_of_every_flow_we_have_ever_seen_here: u32[4096];

@target(tofino1) @placement(switch)
dpf a_dpf_with_remarkably_long_identifiers(identifier_of_the_flow_to_count: u32) {
    let count_before_this_packet_arrived =
        fetch_add(counters_of_every_flow_we_have_ever_seen_here[identifier_of_the_flow_to_count], 1);
    if count_before_this_packet_arrived > 3 {
        drop();
    } else {
        push(identifier_of_the_flow_to_count, count_before_this_packet_arrived);
    }
}
"""


def test_names_longer_than_any_column_break_inside_their_cells(tmp_path: Path) -> None:
    source = tmp_path / "longnames.dpf"
    source.write_text(LONG_NAMES)
    compiled = compile_source(source, CompileOptions(target=BUILTIN_PROFILES["tofino1"]))
    (unit,) = compiled.units
    svg = render_svg(unit.result.schedule, result=unit.result)
    _check_fit(svg, unit.name)
    _check_whole(unit, svg, unit.name)
    legend = [_paragraph(lines) for classes, _, lines, _ in _cells(svg) if "legend" in classes]
    assert "array counters_of_every_flow_we_have_ever_seen_here: EU0 lane 0" in legend


def test_prolog_epilog_placement_and_critical_path_of_a_branching_dpf() -> None:
    cells = _cells(_svg("kvs", "cache_get"))
    by_class: dict[str, list[str]] = {}
    for classes, _, lines, _ in cells:
        for cls in classes - {"cell"}:
            by_class.setdefault(cls, []).append(_paragraph(lines))
    assert by_class["prolog"][1:] == ["A0<-key (POP)"]  # [0]: the legend
    epilogs = by_class["epilog"]
    assert "push key(A3), v0(A1), v1(B1), v2(B2) return_to_sender drop_code (L51)" in epilogs
    assert "push key(A3) chain count_min.count_min (L51)" in epilogs
    # root.T and root.F: bands for both sides, each with its epilog, root.F's joined to it.
    assert any(text.startswith("root.T: the taken side") for text in by_class["band"])
    assert any(text.startswith("root.F: the not-taken side") for text in by_class["band"])
    assert len(ET.fromstring(_svg("kvs", "cache_get")).findall(f"{SVG}line")) == 1
    legend = by_class["legend"]
    for entry in ("array hits: EU3 lane 0", "array index: EU0 lane 0", "array values2: EU2 lane 2"):
        assert entry in legend
    assert "critical path: tuple -> i -> faadd hits" in legend
    # The memory cells take their array's colour (the legend's), critical cells a red outline.
    fills = {}
    for classes, _, lines, group in cells:
        rect = group.find(f"{SVG}rect")
        assert rect is not None
        text = _paragraph(lines)
        if "legend" in classes and text.startswith("array "):
            fills[text.split(":")[0].removeprefix("array ")] = rect.get("fill")
        if "mem" in classes and "legend" not in classes:
            array = re.search(r"(\w+)\[", text)
            assert array is not None and rect.get("fill") == fills[array.group(1)]
    critical = [
        _paragraph(lines)
        for classes, _, lines, group in cells
        if "legend" not in classes and group.find(f"{SVG}rect").get("stroke-width") == "2.5"  # type: ignore[union-attr]
    ]
    assert critical[0] == "tuple = load index[key] L37"
    assert "%10 = faadd hits[i], 1 L43" in critical and len(critical) == 5  # i on 3 lanes


def test_a_one_path_counter_reads_well() -> None:
    """The tutorial's kind of DPF: one path, one array, the whole operation on one line."""
    picture = layout(_units("counter")["counter"].result.schedule)
    texts = {line for cell in picture.cells for line in cell.lines}
    assert "before = faadd counters[id], 1 L16" in texts
    assert "root: the DPF's only path (EU0)" in texts
    assert "A0<-id (POP)" in texts and "array counters: EU0 lane 0" in texts
    assert picture.width <= 700 and not picture.lines  # small; no path ends early


def test_png_has_the_layout_size() -> None:
    unit = _units("kvs")["cache_get"]
    png = render_png(unit.result.schedule, result=unit.result)
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and png[12:16] == b"IHDR"
    width, height = struct.unpack(">II", png[16:24])
    picture = layout(unit.result.schedule, result=unit.result)
    assert (width, height) == (picture.width * SCALE, picture.height * SCALE)


def _run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_compile_schedule_png_one_file_per_dpf(tmp_path: Path) -> None:
    kvs = str(ROOT / "examples" / "dpf" / "kvs.dpf")
    code, _, stderr = _run(
        "compile", kvs, "--no-report", "--schedule-png", str(tmp_path / "kvs.png"),
        "-o", str(tmp_path / "kvs.dpfo"),
    )  # fmt: skip
    assert code == 0, stderr
    for dpf in ("cache_get", "cache_put", "empty"):
        assert (tmp_path / f"kvs-{dpf}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_compile_schedule_png_without_pillow_is_a_user_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "PIL", None)  # import PIL raises ImportError
    counter = str(ROOT / "examples" / "dpf" / "counter.dpf")
    code, _, stderr = _run("compile", counter, "--schedule-png", str(tmp_path / "c.png"))
    assert code == 1
    assert "error[DPF0002]: drawing the schedule as a PNG needs Pillow" in stderr
    assert "dpfc[png]" in stderr and "Traceback" not in stderr
    assert not (tmp_path / "c.png").exists()


def test_schedule_svg_refuses_a_png_name(tmp_path: Path) -> None:
    counter = str(ROOT / "examples" / "dpf" / "counter.dpf")
    code, _, stderr = _run("compile", counter, "--schedule-svg", str(tmp_path / "c.png"))
    assert code == 1 and "use --schedule-png" in stderr
