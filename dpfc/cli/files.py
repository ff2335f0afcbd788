"""Reading and writing the files a command names: an OS error is the user's, not a crash.

Conventions every command follows through these functions:

* ``-`` as an input file is standard input (named ``<stdin>`` in diagnostics), and as
  ``-o -`` standard output;
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

import click

from dpfc.cli.errors import UserError, quiet
from dpfc.diagnostics import SourceFile, decode_source

STDIO = "-"
STDIN_NAME = "<stdin>"


def output_option(help: str) -> Callable[[Callable[..., object]], Callable[..., object]]:
    """``-o/--output FILE`` (``-`` for stdout), the option every command that writes one
    file takes."""
    return click.option(
        "-o", "--output", type=click.Path(dir_okay=False, allow_dash=True), help=help
    )


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
    "display_name",
    "is_stdio",
    "read_bytes",
    "read_source",
    "write_file",
    "write_with",
    "wrote",
]
