"""Reading and writing the files a command names: an OS error is the user's, not a crash.

Conventions every command follows through these functions:

* ``-`` as an input file is standard input (named ``<stdin>`` in diagnostics), and as
  ``-o -`` standard output;
* every output path is checked when the command line is read (:class:`OutputPath`, or
  :func:`check_output` where the kinds to write decide the paths): its directory must
  exist (or, for a directory the command creates, its nearest existing ancestor) and be
  writable, so ``-o /nonexistent/x`` is a user error before any work, not after it;
* every file written says ``wrote FILE (N bytes)`` on stderr (:func:`write_file`,
  :func:`write_with`), so stdout carries results only; nothing is said for ``-o -``, nor
  with ``-q``.
"""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from dpfc.cli.errors import UserError, quiet
from dpfc.diagnostics import SourceFile, decode_source

STDIO = "-"
STDIN_NAME = "<stdin>"


class Unwritable(click.ClickException):
    """An output path no file can be written to: a user error (DPF0002, exit 1), reported
    while the command line is read, before any work."""


def output_problem(path: str, *, directory: bool = False) -> str | None:
    """Why nothing can be written at ``path`` (None: it can be). A file needs an existing,
    writable directory and, if it exists, to be a writable file; a ``directory`` (created
    with its parents) needs its nearest existing ancestor to be a writable directory."""
    target = Path(path)
    if target.exists():
        if directory and not target.is_dir():
            return f"{path} is not a directory"
        if not directory and target.is_dir():
            return f"{path} is a directory"
        if not os.access(target, os.W_OK):
            return f"{path} is not writable"
        return None
    parent = target.parent
    if directory:
        while not parent.exists() and parent != parent.parent:
            parent = parent.parent
    if not parent.exists():
        return f"no such directory {parent}"
    if not parent.is_dir():
        return f"{parent} is not a directory"
    if not os.access(parent, os.W_OK | os.X_OK):
        return f"the directory {parent} is not writable"
    return None


def check_output(path: str | None, *, directory: bool = False, given: str | None = None) -> None:
    """Raise :class:`Unwritable` when ``path`` (not ``-``) cannot be written; the message
    names ``given``, the option's value, when ``path`` was made from it."""
    if path is None or is_stdio(path):
        return
    problem = output_problem(path, directory=directory)
    if problem is not None:
        raise Unwritable(f"cannot write {given or path}: {problem}")


class OutputPath(click.Path):
    """An option's output file (``-``: stdout) or, with ``directory``, an output directory
    that is created: checked when the command line is read (:func:`check_output`), so a
    path that cannot be written stops the command before it does any work."""

    def __init__(self, *, directory: bool = False, allow_dash: bool = True) -> None:
        super().__init__(file_okay=not directory, dir_okay=directory, allow_dash=allow_dash)
        self.directory = directory

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        path = super().convert(value, param, ctx)
        check_output(str(path), directory=self.directory)
        return path


def output_option(help: str) -> Callable[[Callable[..., object]], Callable[..., object]]:
    """``-o/--output FILE`` (``-`` for stdout), the option every command that writes one
    file takes."""
    return click.option("-o", "--output", type=OutputPath(), help=help)


def is_stdio(path: str | None) -> bool:
    return path == STDIO


def display_name(path: str) -> str:
    """The name diagnostics use for an input file."""
    return STDIN_NAME if is_stdio(path) else path


def read_bytes(path: str) -> bytes:
    if is_stdio(path):
        # The binary buffer under the text stream (click's test runner swaps sys.stdin).
        return sys.stdin.buffer.read()
    try:
        return Path(path).read_bytes()
    except OSError as exc:
        raise UserError(f"cannot read {path}: {exc.strerror}") from None


def read_source(path: str) -> SourceFile:
    """A UTF-8 text file (or standard input) as a :class:`SourceFile`; a byte that is not
    UTF-8 is a located diagnostic (``file:line:col`` and a caret)."""
    return decode_source(display_name(path), read_bytes(path))


def wrote(path: str, size: int) -> None:
    """The one "wrote" line (stderr: stdout carries results only; none with ``-q``)."""
    if not quiet():
        click.echo(f"wrote {path} ({size} bytes)", err=True)


def write_file(path: str, data: str | bytes) -> None:
    """Write ``data`` to ``path`` (``-``: stdout) and say so."""
    raw = data.encode("utf-8") if isinstance(data, str) else data
    if is_stdio(path):
        stream = sys.stdout.buffer
        stream.write(raw)
        stream.flush()
        return
    try:
        Path(path).write_bytes(raw)
    except OSError as exc:
        raise UserError(f"cannot write {path}: {exc.strerror}") from None
    wrote(path, len(raw))


def write_with(path: str, writer: Callable[[str], None]) -> None:
    """Let ``writer`` write the file ``path`` (a library that wants a path, e.g. pcap);
    for ``-`` it writes a temporary file that is copied to stdout."""
    if is_stdio(path):
        handle, temporary = tempfile.mkstemp(prefix="dpfc-")
        os.close(handle)
        try:
            writer(temporary)
            write_file(STDIO, Path(temporary).read_bytes())
        finally:
            os.unlink(temporary)
        return
    try:
        writer(path)
        size = Path(path).stat().st_size
    except OSError as exc:
        raise UserError(f"cannot write {path}: {exc.strerror}") from None
    wrote(path, size)


__all__ = [
    "STDIN_NAME",
    "STDIO",
    "OutputPath",
    "Unwritable",
    "check_output",
    "display_name",
    "is_stdio",
    "output_problem",
    "read_bytes",
    "read_source",
    "write_file",
    "write_with",
    "wrote",
]
