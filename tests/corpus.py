"""Shared checks of the must-fail corpora (tests/asm_errors/, tests/errors/).

A corpus file starts with a comment ``<comment> expect DPFxxxx: description`` naming the one
diagnostic it must produce; next to it, ``<stem>.stderr`` is the golden rendering.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

import pytest

from tests.conftest import ROOT

ERROR_LINE = re.compile(
    r"^(?P<file>\S+):(?P<line>\d+):(?P<column>\d+): error\[(?P<code>DPF\d{4})\]: "
)


def relative(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def expected_code(path: Path, comment: str) -> str:
    """The code a corpus file announces on its first line (``comment`` is ``;`` or ``//``)."""
    first = path.read_text(encoding="utf-8").splitlines()[0]
    match = re.match(rf"^{re.escape(comment)} expect (DPF\d{{4}}): \S", first)
    assert match is not None, (
        f"{path.name}: first line must be `{comment} expect DPFxxxx: description`"
    )
    return match.group(1)


def assert_one_error(stderr: str, path: Path, code: str) -> None:
    """One mistake per file, reported once, at a location inside that file, with carets."""
    errors = [m for line in stderr.splitlines() if (m := ERROR_LINE.match(line))]
    assert len(errors) == 1, stderr
    assert errors[0]["file"] == relative(path)
    assert errors[0]["code"] == code
    assert "^" in stderr


def assert_numbered_with_goldens(corpus: Sequence[Path], corpus_dir: Path) -> None:
    """Every file has a unique 3-digit number and a golden ``.stderr``, and vice versa."""
    numbers = [p.name[:3] for p in corpus]
    assert all(n.isdigit() for n in numbers)
    assert len(set(numbers)) == len(numbers), "corpus numbers must be unique"
    stems = {p.stem for p in corpus}
    goldens = {p.stem for p in corpus_dir.glob("*.stderr")}
    assert goldens == stems, f"every {corpus[0].suffix} needs a .stderr golden and vice versa"


def assert_goldens_name_codes(corpus: Sequence[Path], comment: str) -> None:
    """The goldens themselves (not only the live run) carry each file's expected code."""
    for path in corpus:
        golden = path.with_suffix(".stderr")
        if not golden.exists():
            pytest.fail(f"missing golden {golden.name}; run with DPFC_BLESS=1")
        first = golden.read_text(encoding="utf-8").splitlines()[0]
        match = ERROR_LINE.match(first)
        assert match is not None, f"{golden.name}: {first!r}"
        assert match["code"] == expected_code(path, comment), golden.name
