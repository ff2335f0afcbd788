"""The linker's diagnostics (DPF70xx) and how they point at source code.

Objects record the source location of every DPF and instruction; a linker error about a
DPF points there (with the usual excerpt and carets when the source file can still be
read) and names the object the DPF came from.
"""

from __future__ import annotations

from pathlib import Path

from dpfc.diagnostics import Diagnostic, Note, SourceFile, Span
from dpfc.objfile.model import SourceLocation

UNRESOLVED = "DPF7001"  # a chain target no object, base or extern image defines
DUPLICATE = "DPF7002"  # one tenant's DPF defined twice
ARRAY_CONFLICT = "DPF7003"  # one array placed in two places
LANE_CONFLICT = "DPF7004"  # two arrays of one tenant in one lane
CAPACITY = "DPF7005"  # a table or memory of the profile overflows
CHAIN_CYCLE = "DPF7006"  # DPFs that chain to each other in a cycle
NOT_INSTALLABLE = "DPF7007"  # a chain target that cannot be installed in switch code memory
PROFILE_MISMATCH = "DPF7008"  # objects or images for different target profiles
BAD_OPTION = "DPF7009"  # a pipe, symbol or tenant of a link option that does not exist
SLOT_TAKEN = "DPF7010"  # a pinned prolog slot that holds other code
CHAIN_PIPELINE = "DPF7011"  # a chain from an ingress DPF to an egress one, or back


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
    "ARRAY_CONFLICT",
    "BAD_OPTION",
    "CAPACITY",
    "CHAIN_CYCLE",
    "CHAIN_PIPELINE",
    "DUPLICATE",
    "LANE_CONFLICT",
    "NOT_INSTALLABLE",
    "PROFILE_MISMATCH",
    "SLOT_TAKEN",
    "UNRESOLVED",
    "diagnostic",
    "source_span",
    "where",
]
