"""``dpfc compile --schedule-svg``: a schedule as a picture (the layout and its SVG).

The picture is the ``--explain`` grid (:mod:`.grid`) drawn as a table, the same text in
its cells:

* columns: row labels, the **prolog** (which register each input is loaded into), one
  column per EU, the **epilog** (what each path pushes, how it steers, which DPF it chains
  to); a dashed line joins a path that ends early to its epilog;
* one band per tree node (``root``, ``root.T`` = the taken side of root's branch, ...),
  headed by a strip that names it; in the band, a row for the EU's selectors, one per lane
  (what its ALU and memory unit do), one for the branch unit;
* colours: a cell's background says which unit works there, a memory access takes the
  colour of its array (the legend says where each array is bound: ``schedule.bindings``);
  cells on the **critical path** (the dependence chain behind the lower bound on the EU
  count, :func:`dpfc.schedule.problem.bounds.critical_chain`) have a thick red outline.

Contract: every text line lies inside the rectangle of its cell. Widths are estimated, not
measured, as ``len(text) * CHAR_EM * font size`` (a monospace advance, rounded up for
renderers that hint: :data:`CHAR_EM`), so the output is byte-identical on every machine; text is
wrapped (at spaces where it can, else mid-word) to the width of its column, never cut, and
the canvas grows to what it holds. The layout is a :class:`Picture` of :class:`Cell`
rectangles and connector :class:`Line` s; :func:`to_svg` writes it as SVG and
:mod:`.png` draws the same layout as a PNG.
"""

from __future__ import annotations

import math
import textwrap
from dataclasses import dataclass
from html import escape

from dpfc.schedule.presentation.cell_text import COLOURS, Band, CellText, picture_text
from dpfc.schedule.presentation.grid import header_line
from dpfc.schedule.problem.bounds import compute_bounds, critical_chain
from dpfc.schedule.result import ScheduleResult
from dpfc.schedule.schedule import Schedule

FONT_SIZE = 11
# The advance of one monospace character, in em. Monospace fonts advance 0.6 em (DejaVu Sans
# Mono 0.602, Menlo, Courier), but renderers that hint metrics round it up to whole pixels
# (cairo draws 11 px DejaVu Sans Mono 7 px apart): 0.65 em holds either way.
CHAR_EM = 0.65
LINE_H = 14  # baseline to baseline
ASCENT = 11  # first baseline below the text area's top (with LINE_H: descenders fit)
PAD_X, PAD_Y = 4, 3  # text inset inside a cell
GAP = 4  # between columns
ROW_GAP = 2  # between the rows of a band
BAND_GAP = 10  # between bands
MARGIN = 10
FONT_FAMILY = "DejaVu Sans Mono, Menlo, Consolas, monospace"

# Column widths in characters: wide enough for most operations on one line, narrow enough
# that a 7-EU schedule stays readable on a screen.
EU_CHARS = (14, 30)
EU_BUDGET = 120  # characters all EU columns may take before each is held to EU_CHARS[1]
EU_WIDEST = 44
SIDE_CHARS = (12, 28)  # prolog and epilog

STROKE = "#868e96"
CRITICAL = "#e03131"


@dataclass(frozen=True)
class Cell:
    """A rectangle and the lines of text inside it (``kind`` is its SVG class)."""

    x: int
    y: int
    width: int
    height: int
    lines: tuple[str, ...]
    kind: str
    fill: str | None = None
    stroke: str | None = None
    stroke_width: float = 1.0
    bold: bool = False

    def baseline(self, index: int) -> int:
        """The y of line ``index``'s baseline."""
        return self.y + PAD_Y + index * LINE_H + ASCENT


@dataclass(frozen=True)
class Line:
    x1: int
    y1: int
    x2: int
    y2: int
    colour: str = STROKE


@dataclass(frozen=True)
class Picture:
    width: int
    height: int
    title: str
    cells: tuple[Cell, ...]
    lines: tuple[Line, ...] = ()


def text_width(text: str, size: int = FONT_SIZE) -> float:
    """The estimated width of ``text`` in pixels (monospace, no font metrics)."""
    return len(text) * CHAR_EM * size


def cell_width(chars: int) -> int:
    return math.ceil(chars * CHAR_EM * FONT_SIZE) + 2 * PAD_X


def cell_height(lines: int) -> int:
    return max(1, lines) * LINE_H + 2 * PAD_Y


def chars_in(width: int) -> int:
    """How many characters fit on a line of a cell ``width`` pixels wide."""
    return max(1, math.floor((width - 2 * PAD_X) / (CHAR_EM * FONT_SIZE)))


def wrap(paragraphs: tuple[str, ...], chars: int) -> tuple[str, ...]:
    """Each paragraph wrapped to ``chars`` characters; continuation lines are indented."""
    lines: list[str] = []
    for paragraph in paragraphs:
        lines.extend(
            textwrap.wrap(
                paragraph,
                width=chars,
                subsequent_indent="  " if chars > 8 else "",
                break_on_hyphens=False,
            )
            or [""]
        )
    return tuple(lines)


def _clamp(value: int, bounds: tuple[int, int]) -> int:
    return max(bounds[0], min(bounds[1], value))


def _longest(texts: list[CellText]) -> int:
    return max((len(p) for t in texts for p in t.paragraphs), default=0)


def layout(schedule: Schedule, *, result: ScheduleResult | None = None) -> Picture:
    """Where every cell of ``schedule``'s picture goes."""
    problem = schedule.problem
    chain = {op.id for op in critical_chain(problem, compute_bounds(problem))}
    grid = picture_text(schedule, chain)
    columns = ["", "prolog", *(f"EU{eu}" for eu in range(grid.eus)), "epilog"]
    # Column widths in characters, from what each column holds.
    label_chars = max(len(label) for label in grid.row_labels)
    chars = [label_chars]
    chars.append(_clamp(_longest([t for b in grid.bands for t in b.prolog.values()]), SIDE_CHARS))
    # Few EUs may take wider columns (an operation on one line); many share the budget.
    widest = max(EU_CHARS[1], min(EU_WIDEST, EU_BUDGET // max(1, grid.eus)))
    for eu in range(grid.eus):
        held = [t for b in grid.bands for (_, e), t in b.cells.items() if e == eu]
        chars.append(_clamp(_longest(held), (EU_CHARS[0], widest)))
    epilogs = [b.epilog for b in grid.bands if b.epilog is not None]
    chars.append(_clamp(_longest(epilogs), SIDE_CHARS))
    widths = [cell_width(c) for c in chars]
    xs = [MARGIN]
    for width in widths[:-1]:
        xs.append(xs[-1] + width + GAP)
    grid_width = xs[-1] + widths[-1] - MARGIN

    cells: list[Cell] = []
    connectors: list[Line] = []
    title_lines = wrap((header_line(schedule, result),), chars_in(grid_width))
    y = MARGIN
    cells.append(Cell(MARGIN, y, grid_width, cell_height(len(title_lines)), title_lines, "title"))
    y += cell_height(len(title_lines)) + GAP
    legend, y = _legend(grid.legend, y, grid_width)
    cells.extend(legend)
    y += BAND_GAP
    for col, name in enumerate(columns):
        if name:
            cells.append(Cell(xs[col], y, widths[col], cell_height(1), (name,), "head", bold=True))
    y += cell_height(1) + GAP
    for band in grid.bands:
        y = _band(band, grid.row_labels, xs, widths, grid_width, y, cells, connectors)
        y += BAND_GAP
    return Picture(
        width=grid_width + 2 * MARGIN,
        height=y - BAND_GAP + MARGIN,
        title=header_line(schedule, result),
        cells=tuple(cells),
        lines=tuple(connectors),
    )


def _legend(entries: tuple[CellText, ...], top: int, width: int) -> tuple[list[Cell], int]:
    """Legend entries left to right, as many per row as fit; each drawn like what it
    explains. Returns the cells and the y below them."""
    cells: list[Cell] = []
    x, y, row_h = MARGIN, top, 0
    for entry in entries:
        text = " ".join(entry.paragraphs)
        lines = wrap((text,), chars_in(width))
        w = cell_width(max(len(line) for line in lines))
        if x > MARGIN and x + w > MARGIN + width:
            x, y, row_h = MARGIN, y + row_h + GAP, 0
        h = cell_height(len(lines))
        cells.append(_styled(entry, x, y, w, h, lines, f"legend {entry.kind}"))
        x += w + GAP
        row_h = max(row_h, h)
    return cells, y + row_h


def _styled(
    text: CellText, x: int, y: int, w: int, h: int, lines: tuple[str, ...], kind: str
) -> Cell:
    return Cell(
        x,
        y,
        w,
        h,
        lines,
        kind,
        fill=text.fill,
        stroke=CRITICAL if text.critical else STROKE,
        stroke_width=2.5 if text.critical else 1.0,
    )


def _band(
    band: Band,
    row_labels: tuple[str, ...],
    xs: list[int],
    widths: list[int],
    grid_width: int,
    top: int,
    cells: list[Cell],
    connectors: list[Line],
) -> int:
    """Draw one tree node's band from ``top``; returns the y below it."""
    strip = wrap((band.title,), chars_in(grid_width))
    cells.append(
        Cell(
            MARGIN,
            top,
            grid_width,
            cell_height(len(strip)),
            strip,
            "band",
            COLOURS["band"],
            None,
            bold=True,
        )
    )
    y = top + cell_height(len(strip)) + GAP
    eu_col = {eu: 2 + eu for eu in range(len(xs) - 3)}
    # (row, column) -> text; each wrapped to its column, each row as tall as its tallest.
    placed = {(row, eu_col[eu]): text for (row, eu), text in band.cells.items()}
    placed.update({(row, 1): text for row, text in band.prolog.items()})
    wrapped = {at: wrap(text.paragraphs, chars_in(widths[at[1]])) for at, text in placed.items()}
    heights = [
        cell_height(max((len(lines) for (r, _), lines in wrapped.items() if r == row), default=1))
        for row in range(len(row_labels))
    ]
    epilog_lines: tuple[str, ...] = ()
    if band.epilog is not None:
        # The epilog spans the band's rows; a long one makes the last row taller.
        epilog_lines = wrap(band.epilog.paragraphs, chars_in(widths[-1]))
        spare = cell_height(len(epilog_lines)) - (sum(heights) + ROW_GAP * (len(heights) - 1))
        heights[-1] += max(0, spare)
    row_y = [y]
    for h in heights[:-1]:
        row_y.append(row_y[-1] + h + ROW_GAP)
    bottom = row_y[-1] + heights[-1]
    for row, label in enumerate(row_labels):
        cells.append(Cell(xs[0], row_y[row], widths[0], heights[row], (label,), "label"))
    for (row, col), text in sorted(placed.items()):
        lines = wrapped[row, col]
        cells.append(
            _styled(text, xs[col], row_y[row], widths[col], heights[row], lines, text.kind)
        )
    if band.epilog is not None:
        cells.append(
            _styled(band.epilog, xs[-1], y, widths[-1], bottom - y, epilog_lines, "epilog")
        )
        if band.last_eu is not None and band.last_eu + 1 < len(xs) - 3:
            # The path ends before the last EU: join its last cell to its epilog.
            start = xs[eu_col[band.last_eu]] + widths[eu_col[band.last_eu]]
            mid = (y + bottom) // 2
            connectors.append(Line(start, mid, xs[-1], mid))
    return bottom


def to_svg(picture: Picture) -> str:
    """The layout as an SVG document (every cell a ``<g class="cell KIND">``)."""
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{picture.width}" '
        f'height="{picture.height}" viewBox="0 0 {picture.width} {picture.height}" '
        f'font-family="{FONT_FAMILY}" font-size="{FONT_SIZE}">',
        f"<title>{escape(picture.title)}</title>",
        f'<rect width="{picture.width}" height="{picture.height}" fill="#ffffff"/>',
    ]
    for line in picture.lines:
        out.append(
            f'<line x1="{line.x1}" y1="{line.y1}" x2="{line.x2}" y2="{line.y2}" '
            f'stroke="{line.colour}" stroke-dasharray="4 3"/>'
        )
    for cell in picture.cells:
        fill = cell.fill or "none"
        stroke = f' stroke="{cell.stroke}"' if cell.stroke is not None else ""
        if cell.stroke is not None and cell.stroke_width != 1.0:
            stroke += f' stroke-width="{cell.stroke_width:g}"'
        weight = ' font-weight="bold"' if cell.bold else ""
        out.append(f'<g class="cell {cell.kind}"{weight}>')
        out.append(
            f'<rect x="{cell.x}" y="{cell.y}" width="{cell.width}" height="{cell.height}" '
            f'fill="{fill}"{stroke}/>'
        )
        for index, text in enumerate(cell.lines):
            if text:
                out.append(
                    f'<text x="{cell.x + PAD_X}" y="{cell.baseline(index)}" '
                    f'xml:space="preserve">{escape(text)}</text>'
                )
        out.append("</g>")
    out.append("</svg>")
    return "\n".join(out) + "\n"


def render_svg(schedule: Schedule, *, result: ScheduleResult | None = None) -> str:
    """``schedule`` as an SVG picture."""
    return to_svg(layout(schedule, result=result))
