"""Negative-test corpus of the assembler: every file in tests/asm_errors/ is one mistake.

Each ``NNN_name.dpfasm`` starts with ``; expect DPFxxxx: what is wrong`` and must make
``dpfc asm`` fail with exit code 1, nothing on stdout and exactly the text of the golden
``NNN_name.stderr`` next to it on stderr (location, message, source line, carets, notes,
hint). ``DPFC_BLESS=1`` rewrites the goldens; read every diff before committing.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from dpfc.cli.main import main
from tests.conftest import ROOT, assert_golden
from tests.corpus import (
    assert_goldens_name_codes,
    assert_numbered_with_goldens,
    assert_one_error,
    expected_code,
    relative,
)

CORPUS_DIR = ROOT / "tests" / "asm_errors"
CORPUS = sorted(CORPUS_DIR.glob("*.dpfasm"))

# Every assembler diagnostic that a corpus file must exercise (one file per rule at least).
REQUIRED_CODES = {
    "DPF0001",  # syntax
    "DPF0101",  # unknown instruction
    "DPF0102",  # instruction in the wrong section
    "DPF0103",  # operand count
    "DPF0105",  # bad directive
    "DPF0106",  # directive after the first bundle
    "DPF0107",  # instruction outside a bundle
    "DPF0108",  # unknown .target
    "DPF0109",  # unknown stage / EU beyond the profile
    "DPF0110",  # register expected
    "DPF0111",  # number / label / address expected
    "DPF0112",  # ALU register classes and lanes
    "DPF0113",  # two ALU ops in one lane
    "DPF0114",  # memory operand classes, lanes, brackets
    "DPF0115",  # two memory ops in one lane
    "DPF0116",  # bundle without a successor
    "DPF0117",  # two branches in one EU
    "DPF0118",  # epilog op given twice
    "DPF0120",  # unknown label
    "DPF0121",  # label of the wrong stage
    "DPF0122",  # duplicate label
    "DPF0123",  # slot used twice
    "DPF0130",  # no prolog / bad .entry
    "DPF0132",  # two DPFs of one file with one name or two targets
    "DPF1001",  # register beyond the profile
    "DPF1002",  # slot / in-packet index out of range
    "DPF1003",  # immediate out of range
    "DPF1005",  # two selectors write one register
    "DPF1011",  # too many distinct immediates in a bundle
    "DPF1014",  # HASH into a B register
    "DPF1015",  # LOAD_IMM into an A register
    "DPF1016",  # constant index out of range
    "DPF1017",  # unknown metadata
    "DPF1020",  # PUSH beyond 2L
    "DPF1021",  # unknown steering action
    "DPF1022",  # steering value missing / not allowed
    "DPF1023",  # steering value out of range
    "DPF1031",  # too many in-packet bundles in one stage
    "DPF1032",  # in-packet PC naming no bundle
    "DPF2005",  # header over the Geneve limit
}


def _expected_code(path: Path) -> str:
    return expected_code(path, ";")


def _assemble(args: list[str], monkeypatch: pytest.MonkeyPatch) -> Result:
    # Relative paths from the repository root keep the goldens machine-independent.
    monkeypatch.chdir(ROOT)
    return CliRunner().invoke(main, args)


@pytest.mark.parametrize("path", CORPUS, ids=[p.stem for p in CORPUS])
def test_malformed_assembly_reports_its_error(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    result = _assemble(["asm", relative(path)], monkeypatch)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert "Traceback" not in result.stderr
    assert "internal compiler error" not in result.stderr
    assert result.exit_code == 1, result.stderr
    assert result.stdout == ""
    assert_golden(path.with_suffix(".stderr"), result.stderr)
    assert_one_error(result.stderr, path, _expected_code(path))


def test_corpus_is_large_and_complete() -> None:
    assert len(CORPUS) >= 35
    assert_numbered_with_goldens(CORPUS, CORPUS_DIR)
    for golden in CORPUS_DIR.glob("*.stderr"):
        assert "Traceback" not in golden.read_text(encoding="utf-8"), golden.name


def test_corpus_covers_every_assembler_rule() -> None:
    covered = {_expected_code(p) for p in CORPUS}
    missing = REQUIRED_CODES - covered
    assert not missing, f"no corpus file exercises {sorted(missing)}"


def test_goldens_name_the_expected_code() -> None:
    """The goldens themselves (not only the live run) carry each file's expected code."""
    assert_goldens_name_codes(CORPUS, ";")


def test_json_diagnostics(monkeypatch: pytest.MonkeyPatch) -> None:
    path = CORPUS_DIR / "007_unknown_instruction.dpfasm"
    result = _assemble(["--diagnostics-format", "json", "asm", relative(path)], monkeypatch)
    assert result.exit_code == 1
    assert result.stdout == ""
    diagnostics = json.loads(result.stderr)
    assert isinstance(diagnostics, list) and len(diagnostics) == 1
    diag = diagnostics[0]
    assert diag["code"] == "DPF0101"
    assert diag["severity"] == "error"
    assert "LOAD_IMN" in diag["message"] and "LOAD_IMM" in diag["message"]
    span = diag["span"]
    assert span["file"] == relative(path)
    # `    LOAD_IMN B0, 1` on line 9: the mnemonic starts in column 5 and is 8 characters long.
    text = path.read_text(encoding="utf-8").splitlines()
    assert text[span["line"] - 1].strip().startswith("LOAD_IMN")
    assert (span["line"], span["column"], span["end_column"]) == (9, 5, 13)


def test_json_diagnostics_with_notes_and_hint(monkeypatch: pytest.MonkeyPatch) -> None:
    path = next(p for p in CORPUS if p.stem.endswith("two_alu_ops_one_lane"))
    result = _assemble(["--diagnostics-format", "json", "asm", relative(path)], monkeypatch)
    assert result.exit_code == 1
    (diag,) = json.loads(result.stderr)
    assert diag["code"] == "DPF0113"
    assert diag["hint"]
    (note,) = diag["notes"]
    assert note["span"]["line"] == diag["span"]["line"] - 1
