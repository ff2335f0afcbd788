"""An object as assembly text (``dpfc disasm OBJ``, ``dpfc disasm --source OBJ``).

Each DPF prints with the one canonical printer; with ``with_source`` every instruction line
ends with the source location it came from and, when that file can be read, its text.
"""

from __future__ import annotations

from pathlib import Path

from dpfc.machine import format_program
from dpfc.objfile.model import ObjectFile, SourceLocation


class SourceLines:
    """Source lines by (file, line), each file read once (relative paths from the current
    directory, as the object names them); a file that cannot be read has no lines."""

    def __init__(self) -> None:
        self.files: dict[str, list[str] | None] = {}

    def text(self, path: str, line: int) -> str:
        """Line ``line`` of ``path``, stripped; empty when the file or the line is missing."""
        if path not in self.files:
            try:
                self.files[path] = Path(path).read_text(encoding="utf-8").splitlines()
            except (OSError, UnicodeDecodeError):
                self.files[path] = None
        lines = self.files[path]
        return lines[line - 1].strip() if lines is not None and 0 < line <= len(lines) else ""

    def note(self, location: SourceLocation | None) -> str | None:
        """``file:line: text`` of ``location`` (``file:line:`` when the text is missing)."""
        if location is None:
            return None
        path, line, _column = location
        return f"{path}:{line}: {self.text(path, line)}".rstrip()


def format_object(obj: ObjectFile, *, with_source: bool = False) -> str:
    """Every DPF of ``obj`` as assembly, separated by blank lines."""
    sources = SourceLines()
    chunks = []
    for dpf in obj.dpfs:
        notes = None
        if with_source:
            notes = {
                label: [sources.note(loc) for loc in locations]
                for label, locations in dpf.source.items()
            }
        chunks.append(format_program(dpf.program, notes=notes))
    return "\n".join(chunks)


__all__ = ["SourceLines", "format_object"]
