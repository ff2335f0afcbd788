"""Source spans, diagnostics and their rendering.

Every user-facing error of dpfc is a :class:`Diagnostic`: a stable code (``DPFxxxx``), a
message, a primary :class:`Span` and optional notes (each with its own span) and a hint.
The renderer prints ``file:line:col: error[DPF0123]: message`` followed by the source line and
carets under the span, or JSON. Phases raise :class:`DiagnosticError` (one or more
diagnostics); the CLI catches it, renders it and exits 1. Anything else that escapes is an
internal compiler error (exit 2).
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from enum import Enum

from dpfc.catalog import codes


@dataclass(frozen=True)
class SourceFile:
    """A named text with a line index, so offsets can be turned into line/column."""

    name: str
    text: str
    line_starts: tuple[int, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        starts = [0]
        for index, char in enumerate(self.text):
            if char == "\n":
                starts.append(index + 1)
        object.__setattr__(self, "line_starts", tuple(starts))

    def line_col(self, offset: int) -> tuple[int, int]:
        """1-based line and column of a character offset."""
        offset = max(0, min(offset, len(self.text)))
        lo, hi = 0, len(self.line_starts) - 1
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if self.line_starts[mid] <= offset:
                lo = mid
            else:
                hi = mid - 1
        return lo + 1, offset - self.line_starts[lo] + 1

    def line_text(self, line: int) -> str:
        start = self.line_starts[line - 1]
        end = self.text.find("\n", start)
        return self.text[start:] if end < 0 else self.text[start:end]

    def span(self, start: int, end: int | None = None) -> Span:
        return Span(self, start, start + 1 if end is None else end)

    def span_at(self, line: int, column: int, length: int = 1) -> Span:
        """Span from a 1-based line/column (clamped to the text)."""
        line = max(1, min(line, len(self.line_starts)))
        start = self.line_starts[line - 1] + max(column - 1, 0)
        return Span(self, start, start + max(length, 1))


@dataclass(frozen=True)
class Span:
    """A half-open character range ``[start, end)`` of a :class:`SourceFile`."""

    source: SourceFile
    start: int
    end: int

    def __repr__(self) -> str:
        return f"Span({self.location()}+{self.end - self.start})"

    @property
    def line(self) -> int:
        return self.source.line_col(self.start)[0]

    @property
    def column(self) -> int:
        return self.source.line_col(self.start)[1]

    def location(self) -> str:
        line, column = self.source.line_col(self.start)
        return f"{self.source.name}:{line}:{column}"

    def text(self) -> str:
        return self.source.text[self.start : self.end]


class Severity(Enum):
    ERROR = "error"
    WARNING = "warning"
    NOTE = "note"


@dataclass(frozen=True)
class Note:
    message: str
    span: Span | None = None


@dataclass(frozen=True)
class Diagnostic:
    code: str
    message: str
    span: Span | None = None
    severity: Severity = Severity.ERROR
    notes: tuple[Note, ...] = ()
    hint: str | None = None

    def render(self) -> str:
        """Human-readable form: location, message, source excerpt with carets, notes."""
        lines: list[str] = []
        head = f"{self.severity.value}[{self.code}]: {self.message}"
        if self.span is None:
            lines.append(f"dpfc: {head}")
        else:
            lines.append(f"{self.span.location()}: {head}")
            lines.extend(_excerpt(self.span))
        for note in self.notes:
            if note.span is None:
                lines.append(f"  note: {note.message}")
            else:
                lines.append(f"{note.span.location()}: note: {note.message}")
                lines.extend(_excerpt(note.span))
        if self.hint:
            lines.append(f"  hint: {self.hint}")
        return "\n".join(lines)

    def to_json(self) -> dict[str, object]:
        def span_json(span: Span | None) -> dict[str, object] | None:
            if span is None:
                return None
            line, column = span.source.line_col(span.start)
            end_line, end_column = span.source.line_col(span.end)
            return {
                "file": span.source.name,
                "line": line,
                "column": column,
                "end_line": end_line,
                "end_column": end_column,
            }

        return {
            "code": self.code,
            "severity": self.severity.value,
            "message": self.message,
            "span": span_json(self.span),
            "notes": [{"message": n.message, "span": span_json(n.span)} for n in self.notes],
            "hint": self.hint,
        }


@dataclass(frozen=True)
class WarningPolicy:
    """What becomes of warnings (``dpfc check -W ...``): a code of ``disabled`` is dropped, a
    code of ``errors`` becomes an error (with a note saying so); errors pass unchanged."""

    disabled: frozenset[str] = frozenset()
    errors: frozenset[str] = frozenset()

    def apply(self, diagnostics: Iterable[Diagnostic]) -> list[Diagnostic]:
        kept: list[Diagnostic] = []
        for diag in diagnostics:
            if diag.severity is Severity.WARNING and diag.code in self.disabled:
                continue
            if diag.severity is Severity.WARNING and diag.code in self.errors:
                diag = replace(
                    diag,
                    severity=Severity.ERROR,
                    notes=(*diag.notes, Note("a warning, made an error by -Werror")),
                )
            kept.append(diag)
        return kept


def _excerpt(span: Span) -> list[str]:
    line, column = span.source.line_col(span.start)
    text = span.source.line_text(line)
    end_line, end_column = span.source.line_col(span.end)
    width = (end_column - column) if end_line == line else len(text) - column + 1
    width = max(1, width)
    gutter = f"{line:>4} | "
    return [gutter + text, " " * len(gutter) + " " * (column - 1) + "^" * width]


def decode_source(name: str, data: bytes) -> SourceFile:
    """``data`` as UTF-8 source text named ``name``; raises :class:`DiagnosticError`
    (DPF0002, the code of an unreadable file) located at the first byte that is not UTF-8,
    so the user sees ``file:line:col`` and a caret. The excerpt shows the line with each
    undecodable byte as U+FFFD."""
    try:
        return SourceFile(name, data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        shown = SourceFile(name, data.decode("utf-8", errors="replace"))
        # The characters before the bad byte are valid UTF-8: their count is its column.
        offset = len(data[: exc.start].decode("utf-8"))
        raise DiagnosticError(
            Diagnostic(
                codes.USER_ERROR,
                f"not UTF-8 text: byte {data[exc.start]:#04x} cannot be decoded",
                Span(shown, offset, offset + 1),
                hint="save the file as UTF-8 (ASCII is UTF-8)",
            )
        ) from None


class DiagnosticError(Exception):
    """Raised by a phase that found user errors; carries every diagnostic it found."""

    def __init__(self, diagnostics: Diagnostic | list[Diagnostic]) -> None:
        self.diagnostics = [diagnostics] if isinstance(diagnostics, Diagnostic) else diagnostics
        super().__init__("\n".join(d.render() for d in self.diagnostics))


def did_you_mean(word: str, choices: Iterable[str], *, prefix: str = "") -> str | None:
    """The hint ``did you mean `x`?`` for the choice closest to ``word``, or None.

    One helper for every "unknown name" diagnostic of the language (names, functions,
    arrays, metadata, attributes, types, modules), worded like the assembler's and the
    scenario loader's suggestions. The measure and cutoff are ``difflib.get_close_matches``'s
    (similarity ratio at least 0.6), so only near-misses are suggested (``count`` for
    ``counts``); ``prefix`` is written before the suggestion (``meta.``, ``@``). Of equally
    close choices one with the same first letter wins (typos rarely hit the first letter:
    ``uint32`` means ``u32``, not ``i32``), then the first in sorted order (``fetch_ad``:
    ``fetch_add``, not ``fetch_and``), so the hint does not depend on the order of
    ``choices``.
    """
    best: tuple[float, bool, str] | None = None
    matcher = difflib.SequenceMatcher()
    matcher.set_seq2(word)
    for choice in sorted(set(choices) - {word}):
        matcher.set_seq1(choice)
        if matcher.real_quick_ratio() < _CUTOFF or matcher.quick_ratio() < _CUTOFF:
            continue
        ratio = matcher.ratio()
        same_start = choice[:1] == word[:1]
        if ratio >= _CUTOFF and (best is None or (ratio, same_start) > best[:2]):
            best = (ratio, same_start, choice)
    return None if best is None else f"did you mean `{prefix}{best[2]}`?"


_CUTOFF = 0.6  # difflib.get_close_matches's default


def render_all(diagnostics: list[Diagnostic], fmt: str = "text") -> str:
    if fmt == "json":
        return json.dumps([d.to_json() for d in diagnostics], indent=2)
    return "\n".join(d.render() for d in diagnostics)
