"""How the linker's diagnostics (DPF70xx, ``codes.LINK_*``) point at source code.

Objects record the source location of every DPF and instruction; a linker error about a
DPF points there (with the usual excerpt and carets when the source file can still be
read) and names the object the DPF came from.
"""

from __future__ import annotations

from pathlib import Path

from dpfc.diagnostics import Diagnostic, Note, SourceFile, Span
from dpfc.objfile import SourceLocation


def source_span(location: SourceLocation | None) -> Span | None:
    """The span of ``location`` when its file can be read (else None)."""
    if location is None:
        return None
    path, line, column = location
    try:
        source = SourceFile(path, Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError):
        return None
    return source.span_at(line, column)


def where(location: SourceLocation | None) -> str:
    """`` (file:line)`` for a message, or nothing."""
    return "" if location is None else f" ({location[0]}:{location[1]})"


def diagnostic(
    code: str,
    message: str,
    location: SourceLocation | None = None,
    *,
    notes: tuple[tuple[str, SourceLocation | None], ...] = (),
    hint: str | None = None,
) -> Diagnostic:
    """A diagnostic at ``location``; when its source cannot be read, the message says
    where instead."""
    span = source_span(location)
    text = message if span is not None or location is None else message + where(location)
    return Diagnostic(
        code,
        text,
        span,
        notes=tuple(
            Note(note + ("" if source_span(loc) is not None else where(loc)), source_span(loc))
            for note, loc in notes
        ),
        hint=hint,
    )


__all__ = [
    "diagnostic",
    "source_span",
    "where",
]
