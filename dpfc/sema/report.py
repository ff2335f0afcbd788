"""A collector of diagnostics shared by the checker's phases (deduplicated, sortable).

Loops are checked once per unrolled iteration, so the same mistake can be found several
times; :class:`Reporter` keeps the first report of each (code, location, message).
"""

from __future__ import annotations

from dpfc.diagnostics import Diagnostic, DiagnosticError, Note, Severity, Span


class Reporter:
    def __init__(self) -> None:
        self.diagnostics: list[Diagnostic] = []
        self.warnings: list[Diagnostic] = []
        self._seen: set[tuple[str, str, int, int, str]] = set()

    def error(
        self,
        code: str,
        message: str,
        span: Span | None,
        *,
        notes: tuple[Note, ...] = (),
        hint: str | None = None,
    ) -> None:
        key = (
            code,
            span.source.name if span else "",
            span.start if span else -1,
            span.end if span else -1,
            message,
        )
        if key in self._seen:
            return
        self._seen.add(key)
        self.diagnostics.append(Diagnostic(code, message, span, notes=notes, hint=hint))

    def warning(self, code: str, message: str, span: Span | None) -> None:
        if any(w.code == code and w.span == span for w in self.warnings):
            return
        self.warnings.append(Diagnostic(code, message, span, severity=Severity.WARNING))

    def extend(self, diagnostics: list[Diagnostic]) -> None:
        for diag in diagnostics:
            self.error(diag.code, diag.message, diag.span, notes=diag.notes, hint=diag.hint)

    def sorted(self) -> list[Diagnostic]:
        return sorted(self.diagnostics, key=sort_key)

    def raise_if_any(self) -> None:
        if self.diagnostics:
            raise DiagnosticError(self.sorted())


def sort_key(diag: Diagnostic) -> tuple[str, int, int]:
    if diag.span is None:
        return ("", -1, -1)
    return (diag.span.source.name, diag.span.start, diag.span.end)


def note(message: str, span: Span | None) -> Note:
    return Note(message, span)
