"""A progress bar on stderr for the benchmark suite, drawn only when stderr is a terminal.

The bar advances once per measured row (a known total), so that its output is the same on
every run: ``[#########...........]  9/20 counter, in-switch, 1 tenant``. Redirected to a
file or a pipe (CI logs, tests), it writes nothing; the table on stdout is the result.
"""

from __future__ import annotations

import sys
from typing import TextIO

WIDTH = 24


class Progress:
    def __init__(self, total: int, stream: TextIO | None = None) -> None:
        self.total = max(total, 1)
        self.done = 0
        self.stream = sys.stderr if stream is None else stream
        self.enabled = self.stream.isatty()
        self._shown = 0  # characters of the last line, cleared by the next one

    def start(self, label: str) -> None:
        """Show that the next row, ``label``, is being measured."""
        if not self.enabled:
            return
        filled = WIDTH * self.done // self.total
        text = f"[{'#' * filled}{'.' * (WIDTH - filled)}] {self.done:>3}/{self.total} {label}"
        self.stream.write("\r" + text.ljust(self._shown))
        self.stream.flush()
        self._shown = max(self._shown, len(text))

    def advance(self) -> None:
        self.done = min(self.done + 1, self.total)

    def close(self) -> None:
        """Erase the bar, so that the terminal shows only the table."""
        if self.enabled and self._shown:
            self.stream.write("\r" + " " * self._shown + "\r")
            self.stream.flush()
        self._shown = 0
