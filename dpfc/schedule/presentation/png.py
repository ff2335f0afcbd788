"""``dpfc compile --schedule-png``: the schedule picture as a PNG, drawn with Pillow.

The same layout as the SVG (:func:`.picture.layout`: cells, colours, outlines, connector
lines) drawn at :data:`SCALE` times its size, so one SVG pixel is ``SCALE`` PNG pixels
(the PNG is ``SCALE * width`` by ``SCALE * height``). Text uses Pillow's built-in font
(``ImageFont.load_default``, shipped inside Pillow), never a system font, so the picture
is the same on every machine with the same Pillow; a line wider than its cell in that font
(it is narrower than the monospace width the layout reserves, except for runs of wide
letters) is drawn smaller until it fits. PNG bytes may differ between Pillow versions.

Pillow is an optional dependency (``pip install 'dpfc[png]'``); without it,
:func:`render_png` raises a user error (DPF0002) that says how to install it.
"""

from __future__ import annotations

import io
from typing import TYPE_CHECKING

from dpfc.catalog import codes
from dpfc.diagnostics import Diagnostic, DiagnosticError
from dpfc.schedule.presentation.picture import ASCENT, FONT_SIZE, PAD_X, Cell, Line, Picture, layout
from dpfc.schedule.result import ScheduleResult
from dpfc.schedule.schedule import Schedule

if TYPE_CHECKING:
    from PIL import ImageDraw, ImageFont

SCALE = 2
DASH, DASH_GAP = 4, 3  # the SVG's stroke-dasharray


def render_png(schedule: Schedule, *, result: ScheduleResult | None = None) -> bytes:
    """``schedule``'s picture as PNG bytes."""
    return to_png(layout(schedule, result=result))


def require_pillow() -> None:
    """Raise the user error of a missing Pillow (DPF0002), so that a command can refuse
    ``--schedule-png`` before it compiles anything."""
    try:
        import PIL  # noqa: F401
    except ImportError:
        raise DiagnosticError(
            Diagnostic(
                codes.USER_ERROR,
                "drawing the schedule as a PNG needs Pillow, which is not installed",
                hint="install it with `python3 -m pip install 'dpfc[png]'` (or `pillow`), "
                "or write an SVG with --schedule-svg",
            )
        ) from None


def to_png(picture: Picture, scale: int = SCALE) -> bytes:
    require_pillow()
    from PIL import Image, ImageDraw

    image = Image.new("RGB", (picture.width * scale, picture.height * scale), "#ffffff")
    draw = ImageDraw.Draw(image)
    fonts = _Fonts()
    for line in picture.lines:
        _dashed(draw, line, scale)
    for cell in picture.cells:
        _cell(draw, cell, scale, fonts)
    out = io.BytesIO()
    image.save(out, format="PNG")
    return out.getvalue()


class _Fonts:
    """Pillow's built-in font, one object per pixel size."""

    def __init__(self) -> None:
        self._by_size: dict[int, ImageFont.FreeTypeFont | ImageFont.ImageFont] = {}

    def get(self, size: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
        from PIL import ImageFont

        if size not in self._by_size:
            self._by_size[size] = ImageFont.load_default(size=size)
        return self._by_size[size]


def _cell(draw: ImageDraw.ImageDraw, cell: Cell, scale: int, fonts: _Fonts) -> None:
    from PIL import ImageFont

    if cell.fill is not None or cell.stroke is not None:
        draw.rectangle(
            (
                cell.x * scale,
                cell.y * scale,
                (cell.x + cell.width) * scale - 1,
                (cell.y + cell.height) * scale - 1,
            ),
            fill=cell.fill,
            outline=cell.stroke,
            width=max(1, round(cell.stroke_width * scale)) if cell.stroke is not None else 0,
        )
    room = (cell.width - 2 * PAD_X) * scale
    for index, text in enumerate(cell.lines):
        if not text:
            continue
        size = FONT_SIZE * scale
        font = fonts.get(size)
        while size > 4 and draw.textlength(text, font=font) > room:
            size -= 1
            font = fonts.get(size)
        x, y = (cell.x + PAD_X) * scale, cell.baseline(index) * scale
        if isinstance(font, ImageFont.FreeTypeFont):
            passes = 2 if cell.bold else 1  # a second pass one pixel right reads as bold
            for dx in range(passes):
                draw.text((x + dx, y), text, fill="#000000", font=font, anchor="ls")
        else:
            # Pillow built without FreeType: a small bitmap font, placed by its top.
            draw.text((x, y - ASCENT * scale), text, fill="#000000", font=font)


def _dashed(draw: ImageDraw.ImageDraw, line: Line, scale: int) -> None:
    """A horizontal or vertical dashed line (the only kind the layout draws)."""
    x1, y1, x2, y2 = (v * scale for v in (line.x1, line.y1, line.x2, line.y2))
    length = max(abs(x2 - x1), abs(y2 - y1))
    step_x = (x2 - x1) / length if length else 0.0
    step_y = (y2 - y1) / length if length else 0.0
    at = 0
    while at < length:
        end = min(length, at + DASH * scale)
        draw.line(
            (x1 + step_x * at, y1 + step_y * at, x1 + step_x * end, y1 + step_y * end),
            fill=line.colour,
            width=scale // 2 or 1,
        )
        at = end + DASH_GAP * scale
