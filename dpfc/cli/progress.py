"""A progress line on stderr while a compile runs longer than a second.

The scheduler calls a callback (``ScheduleOptions.progress``) with what it is doing —
``scheduling kvs.cache_get (z3, 3 EUs asked)`` — at each step. :class:`Progress` is that
callback: it only remembers the text, and prints it once :data:`DELAY_S` has passed since
the compile started (a background thread does, because one Z3 question can block the
caller for many seconds). On a terminal the line is rewritten in place and erased when the
compile ends; elsewhere (``DPFC_PROGRESS=always`` into a pipe or a test) each new text is
one line, prefixed ``dpfc:``.

When: ``DPFC_PROGRESS`` = ``auto`` (default: when stderr is a terminal), ``always`` or
``never``; never with ``--no-progress``, ``-q`` or ``--diagnostics-format json`` (stderr is
for machines then). The wall clock decides only whether something is printed, never what is
compiled.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from typing import TextIO

DELAY_S = 1.0  # a compile shorter than this prints no progress
POLL_S = 0.1  # how often the thread looks whether the line must be (re)printed
ERASE = "\r\x1b[K"  # carriage return, erase to the end of the line


def wanted(stream: TextIO, *, quiet: bool, diagnostics_format: str) -> bool:
    """Whether a compile writing diagnostics to ``stream`` shows progress."""
    if quiet or diagnostics_format == "json":
        return False
    mode = os.environ.get("DPFC_PROGRESS", "auto")
    if mode == "always":
        return True
    if mode == "never":
        return False
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


class Progress:
    """The callback; use as a context manager (``with Progress(...) as progress:``)."""

    def __init__(
        self,
        stream: TextIO,
        *,
        rewrite: bool,
        delay: float | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.stream = stream
        self.rewrite = rewrite  # a terminal: rewrite one line in place
        self.delay = DELAY_S if delay is None else delay
        self.clock = clock
        self.started = clock()
        self.text = ""
        self.shown = ""
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.thread: threading.Thread | None = None

    def __call__(self, text: str) -> None:
        with self.lock:
            self.text = text
        self._show_if_due()

    def __enter__(self) -> Progress:
        # (the delay counts from construction: the start of the command, not of this phase)
        self.thread = threading.Thread(target=self._watch, name="dpfc-progress", daemon=True)
        self.thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self.stop.set()
        if self.thread is not None:
            self.thread.join()
        with self.lock:
            if self.rewrite and self.shown:
                self.stream.write(ERASE)  # leave no half line before the results
                self.stream.flush()

    def _watch(self) -> None:
        while not self.stop.wait(POLL_S):
            self._show_if_due()

    def _show_if_due(self) -> None:
        with self.lock:
            if not self.text or self.text == self.shown:
                return
            if self.clock() - self.started < self.delay:
                return
            if self.rewrite:
                self.stream.write(f"{ERASE}dpfc: {self.text}...")
            else:
                self.stream.write(f"dpfc: {self.text}...\n")
            self.stream.flush()
            self.shown = self.text


__all__ = ["DELAY_S", "Progress", "wanted"]
