"""Reading and writing the files a command names: an OS error is the user's, not a crash."""

from __future__ import annotations

from pathlib import Path

from dpfc.cli.errors import UserError


def read_bytes(path: str) -> bytes:
    try:
        return Path(path).read_bytes()
    except OSError as exc:
        raise UserError(f"cannot read {path}: {exc.strerror}") from None


def write_file(path: str, data: str | bytes) -> None:
    try:
        if isinstance(data, str):
            Path(path).write_text(data, encoding="utf-8")
        else:
            Path(path).write_bytes(data)
    except OSError as exc:
        raise UserError(f"cannot write {path}: {exc.strerror}") from None


__all__ = ["read_bytes", "write_file"]
