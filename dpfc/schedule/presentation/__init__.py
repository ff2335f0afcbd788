"""How a schedule is shown: the ``--explain`` grid and the ``--schedule-svg/-png`` picture.

Contract: :func:`format_grid` is a schedule as an EU x lane grid of text (one row per EU and
tree node, a column per lane, the selectors and the branch unit; the prolog first, each
epilog last), :func:`render_svg` and :func:`render_png` the same content as a picture
(:func:`layout` places its cells; PNG needs Pillow: :func:`require_pillow` raises DPF0002
without it). The grid and the picture write their cells with the same helpers
(:mod:`.grid`), so they always say the same thing; each names operations by source name
and line. Deterministic: the same schedule gives the same text, SVG and PNG bytes (for one
Pillow version).

Modules: :mod:`.grid` (the grid and the texts it shares), :mod:`.cell_text` (what each cell
of the picture says, its colour), :mod:`.picture` (the layout and its SVG), :mod:`.png`.
"""

from dpfc.schedule.presentation.grid import describe, format_grid, selector_text
from dpfc.schedule.presentation.picture import Picture, layout, render_svg, to_svg
from dpfc.schedule.presentation.png import SCALE, render_png, require_pillow, to_png

__all__ = [
    "SCALE",
    "Picture",
    "describe",
    "format_grid",
    "layout",
    "render_png",
    "render_svg",
    "require_pillow",
    "selector_text",
    "to_png",
    "to_svg",
]
