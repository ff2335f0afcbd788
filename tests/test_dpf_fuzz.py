"""Fuzzing the DPF front end: garbage in, a named diagnostic out — never a crash.

More than 5,000 inputs (random bytes, byte-level mutations of the example programs of
tests/golden/syntax/ and tests/errors/, and soups of DPF tokens) go through the parser, and
through ``dpfc.sema.check_file``. The only exception allowed out is
:class:`~dpfc.diagnostics.DiagnosticError`, whose diagnostics must render (text and JSON).
Whatever parses must also survive the printer: print -> parse gives the same tree.
The inputs are drawn from fixed seeds, so a failure names a reproducible case.
"""

from __future__ import annotations

import random

import pytest

from dpfc.diagnostics import DiagnosticError, SourceFile, render_all
from dpfc.driver import check_source
from dpfc.syntax import KEYWORDS, parse_module
from dpfc.syntax.printer import format_module
from tests.conftest import ROOT

SEEDS = ROOT / "tests" / "golden" / "syntax"
PROGRAMS = [
    p.read_bytes()
    for p in sorted(SEEDS.glob("*.dpf")) + sorted((ROOT / "tests" / "errors").glob("0*.dpf"))
]

TOKENS = [
    *sorted(KEYWORDS),
    "hash",
    "forward",
    "drop",
    "pass",
    "min",
    "max",
    "select",
    "fetch_add",
    "x",
    "y",
    "K",
    "arr",
    "m.k",
    "a.b.c",
    "0",
    "1",
    "42",
    "0x2a",
    "0b101",
    "0xffff_ffff",
    "0x1_0000_0000",
    "0x1g",
    "9999999999",
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    ",",
    ";",
    ":",
    ".",
    "..",
    "->",
    "@",
    "=",
    "+=",
    "&=",
    "|=",
    "==",
    "!=",
    "<",
    "<=",
    ">",
    ">=",
    "<<",
    ">>",
    "+",
    "-",
    "*",
    "&",
    "|",
    "^",
    "~",
    "!",
    "&&",
    "||",
    "hash<",
    "@pin",
    "@target(tofino1)",
    "/",
    "%",
    "$",
    "#",
    '"',
    "'",
    "\\",
    "//",
    "/*",
    "\n",
    "\t",
]


def check(text: str) -> None:
    """Run one input; fail the test on anything but a DiagnosticError."""
    source = SourceFile("fuzz.dpf", text)
    try:
        module = parse_module(source)
    except DiagnosticError as exc:
        assert exc.diagnostics
        render_all(exc.diagnostics)
        render_all(exc.diagnostics, "json")
    else:
        printed = format_module(module)
        assert parse_module(SourceFile("printed.dpf", printed)) == module, text
    try:
        check_source(SourceFile("fuzz.dpf", text))
    except DiagnosticError as exc:
        render_all(exc.diagnostics)


def _mutate(rng: random.Random, data: bytes) -> bytes:
    out = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        if not out:
            out.extend(rng.randbytes(3))
        pos = rng.randrange(len(out))
        kind = rng.randrange(6)
        if kind == 0:  # delete a run
            del out[pos : pos + rng.randint(1, 8)]
        elif kind == 1:  # flip a byte to a printable or any byte
            out[pos] = rng.choice([rng.randrange(32, 127), rng.randrange(256)])
        elif kind == 2:  # insert a token
            out[pos:pos] = rng.choice(TOKENS).encode()
        elif kind == 3:  # duplicate a slice elsewhere
            end = min(len(out), pos + rng.randint(1, 40))
            chunk = bytes(out[pos:end])
            where = rng.randrange(len(out) + 1)
            out[where:where] = chunk
        elif kind == 4:  # truncate
            del out[pos:]
        else:  # swap two slices
            other = rng.randrange(len(out))
            a, b = sorted((pos, other))
            out[a], out[b] = out[b], out[a]
    return bytes(out)


def _decode(data: bytes) -> str:
    return data.decode("utf-8", errors="replace")


def test_random_bytes() -> None:
    rng = random.Random(5001)
    for _ in range(1000):
        data = rng.randbytes(rng.randint(0, 200))
        if rng.random() < 0.5:  # mostly printable ASCII gets further into the grammar
            data = bytes(b % 95 + 32 if b % 3 else 10 for b in data)
        check(_decode(data))


def test_mutated_programs() -> None:
    assert len(PROGRAMS) >= 20
    rng = random.Random(5002)
    for _ in range(2600):
        check(_decode(_mutate(rng, rng.choice(PROGRAMS))))


def test_token_soups() -> None:
    rng = random.Random(5003)
    for _ in range(1200):
        soup = rng.choices(TOKENS, k=rng.randint(1, 60))
        check(" ".join(soup))


def test_statement_soups_inside_a_dpf() -> None:
    # Token soups start at item level and rarely get into a body; these do.
    rng = random.Random(5004)
    for _ in range(400):
        soup = " ".join(rng.choices(TOKENS, k=rng.randint(1, 25)))
        check(f"dpf f(a: u32) {{\n    {soup}\n}}\n")


@pytest.mark.parametrize(
    "text",
    [
        "(" * 5000,
        ")" * 5000,
        "{" * 5000,
        "const K = " + "(" * 5000 + "1" + ")" * 5000 + ";",
        "const K = " + "-" * 5000 + "1;",
        "const K = " + " + ".join(["1"] * 3000) + ";",
        "dpf f() {" + "if a {" * 2000 + "}" * 2001,
        "const K = " + "x as u32 " + "as u32 " * 3000 + ";",
        "dpf f() { let x = " + "min(" * 3000 + "1" + ")" * 3000 + "; }",
        "\x00\ufeff\u200b",
        "const K = 1;\r\n// done\r\n",
    ],
    ids=lambda t: repr(t[:12]),
)
def test_extreme_inputs(text: str) -> None:
    check(text)
