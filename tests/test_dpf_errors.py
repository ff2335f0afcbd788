"""Must-fail corpus of the DPF language: every file in tests/errors/ is one mistake.

Each ``NNN_name.dpf`` starts with ``// expect DPFxxxx: what is wrong`` and must fail with
exactly one error of that code, rendered (location relative to the repository root, message,
source line, carets, notes, hint) as the golden ``NNN_name.stderr`` next to it.
``DPFC_BLESS=1`` rewrites the goldens; read every diff before committing.

The files run through the whole checker (``dpfc.sema.check_file``). Numbers 001-099 are the
syntax cases of :mod:`dpfc.syntax`, 1NN the checker's, 2NN the near-miss names answered with
"did you mean" (at least 30, issue 13). ``tests/errors/multi/`` holds files with several
syntax errors each (``// expect DPF5004 DPF5005: ...``, the codes in source order): the
recovery of :mod:`dpfc.syntax.recovery` must report each of them, and nothing else.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from dpfc.catalog import codes
from dpfc.cli.files import read_source
from dpfc.diagnostics import (
    Diagnostic,
    DiagnosticError,
    Severity,
    SourceFile,
    did_you_mean,
    render_all,
)
from dpfc.driver import check_source
from dpfc.syntax.recovery import MAX_SYNTAX_ERRORS
from tests.conftest import ROOT, assert_golden
from tests.corpus import (
    ERROR_LINE,
    assert_goldens_name_codes,
    assert_numbered_with_goldens,
    assert_one_error,
    expected_code,
    relative,
)

CORPUS_DIR = ROOT / "tests" / "errors"
CORPUS = sorted(CORPUS_DIR.glob("*.dpf"))
SYNTAX_CODES = {code for code in vars(codes).values() if str(code).startswith("DPF50")}


def _expected_code(path: Path) -> str:
    return expected_code(path, "//")


def run_checker(path: Path) -> list[Diagnostic]:
    """The errors for ``path`` (run from the repository root, named by its relative path)."""
    text = path.read_text(encoding="utf-8")
    try:
        check_source(SourceFile(relative(path), text))
    except DiagnosticError as exc:
        return [d for d in exc.diagnostics if d.severity is Severity.ERROR]
    return []  # a program that checks has no errors (only warnings)


def _stderr(diagnostics: list[Diagnostic]) -> str:
    # What `dpfc check` prints: the rendered diagnostics, then a newline (click.echo).
    return render_all(diagnostics) + "\n"


@pytest.mark.parametrize("path", CORPUS, ids=[p.stem for p in CORPUS])
def test_must_fail_program_reports_its_error(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    code = _expected_code(path)
    monkeypatch.chdir(ROOT)
    diagnostics = run_checker(path)
    stderr = _stderr(diagnostics)
    assert_golden(path.with_suffix(".stderr"), stderr)
    assert_one_error(stderr, path, code)


MULTI_DIR = CORPUS_DIR / "multi"
MULTI = sorted(MULTI_DIR.glob("*.dpf"))


def _expected_codes(path: Path) -> list[str]:
    """``// expect DPF5004 DPF5005: description``: the codes, in source order."""
    first = path.read_text(encoding="utf-8").splitlines()[0]
    match = re.match(r"^// expect ((?:DPF\d{4} )*DPF\d{4}): \S", first)
    assert match is not None, f"{path.name}: first line must be `// expect DPFxxxx ...: what`"
    return match.group(1).split()


@pytest.mark.parametrize("path", MULTI, ids=[p.stem for p in MULTI])
def test_several_syntax_errors_in_one_run(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """tests/errors/multi/: files with several syntax errors, each reported once, in order,
    with no error caused by the recovery itself (goldens read by hand)."""
    monkeypatch.chdir(ROOT)
    stderr = _stderr(run_checker(path))
    assert_golden(path.with_suffix(".stderr"), stderr)
    errors = [m for line in stderr.splitlines() if (m := ERROR_LINE.match(line))]
    assert [m["code"] for m in errors] == _expected_codes(path), stderr
    assert all(m["file"] == relative(path) for m in errors)


def test_multi_corpus_is_large() -> None:
    assert len(MULTI) >= 10
    assert all(len(_expected_codes(p)) >= 2 for p in MULTI)
    assert_numbered_with_goldens(MULTI, MULTI_DIR)


def test_syntax_errors_stop_the_checker() -> None:
    """A module with syntax errors is not checked: the unknown name is not reported."""
    source = "dpf f() {\n    let a = ;\n    push(nowhere);\n    let b = ;\n}\n"
    with pytest.raises(DiagnosticError) as caught:
        check_source(SourceFile("x.dpf", source))
    assert [d.code for d in caught.value.diagnostics] == ["DPF5005", "DPF5005"]


def test_syntax_errors_are_capped() -> None:
    body = "".join(f"    let a{i} = ;\n" for i in range(30))
    with pytest.raises(DiagnosticError) as caught:
        check_source(SourceFile("x.dpf", "dpf f() {\n" + body + "}\n"))
    diagnostics = caught.value.diagnostics
    assert len(diagnostics) == MAX_SYNTAX_ERRORS
    assert diagnostics[-1].notes[-1].message == "more syntax errors follow; fix these first"


def test_syntax_corpus_is_large_and_complete() -> None:
    syntax = [p for p in CORPUS if p.name[0] == "0"]
    assert len(syntax) >= 20
    assert_numbered_with_goldens(CORPUS, CORPUS_DIR)
    covered = {_expected_code(p) for p in syntax}
    missing = SYNTAX_CODES - covered
    assert not missing, f"no corpus file exercises {sorted(missing)}"


def test_goldens_name_the_expected_code() -> None:
    assert_goldens_name_codes(CORPUS, "//")


def test_unclosed_brace_points_at_the_opening_brace(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    (diag,) = run_checker(CORPUS_DIR / "009_unclosed_brace.dpf")
    assert diag.message == "unclosed `{`"
    (note,) = diag.notes
    assert note.span is not None and note.span.text() == "{"
    # The `}` on the last line closes the `if`, so the body of the dpf is the one left open.
    assert (note.span.line, note.span.column) == (2, 17)


def test_json_rendering_of_a_syntax_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    path = CORPUS_DIR / "004_missing_semicolon.dpf"
    (diag,) = json.loads(render_all(run_checker(path), "json"))
    assert diag["code"] == "DPF5004"
    assert diag["message"] == "expected `;` after statement"
    assert diag["span"]["file"] == "tests/errors/004_missing_semicolon.dpf"
    # Just after `let slot = key & 15` on line 3.
    assert (diag["span"]["line"], diag["span"]["column"]) == (3, 24)


def test_the_corpus_teaches_with_suggestions() -> None:
    """Issue 13: at least 30 near-miss names answered with "did you mean" (2NN_suggest_*)."""
    suggesting = [
        p for p in CORPUS if "did you mean" in p.with_suffix(".stderr").read_text(encoding="utf-8")
    ]
    assert len(suggesting) >= 30
    assert all(p.stem.split("_", 1)[1].startswith("suggest") for p in CORPUS if p.name[0] == "2")


@pytest.mark.parametrize(
    ("word", "choices", "expected"),
    [
        ("count", ["counts", "key"], "did you mean `counts`?"),
        # Equally close: the same first letter wins, then sorted order.
        ("uint32", ["i32", "u32", "bool"], "did you mean `u32`?"),
        ("fetch_ad", ["fetch_and", "fetch_add"], "did you mean `fetch_add`?"),
        ("row3", ["row2", "row1", "row0"], "did you mean `row0`?"),
        # Not a near miss, or only the name itself: no suggestion.
        ("nothere", ["hash", "countmin"], None),
        ("key", ["key"], None),
    ],
)
def test_did_you_mean(word: str, choices: list[str], expected: str | None) -> None:
    assert did_you_mean(word, choices) == expected
    assert did_you_mean(word, reversed(choices)) == expected


def test_did_you_mean_prefix() -> None:
    assert did_you_mean("ingress_prot", ["ingress_port"], prefix="meta.") == (
        "did you mean `meta.ingress_port`?"
    )


NOT_UTF8 = b"dpf f(key: u32) {\n    push(key); // caf\xe9\n}\n"
NOT_UTF8_STDERR = """\
{name}:2:22: error[DPF0002]: not UTF-8 text: byte 0xe9 cannot be decoded
   2 |     push(key); // caf\ufffd
                            ^
  hint: save the file as UTF-8 (ASCII is UTF-8)
"""


def test_non_utf8_source_is_located(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    Path("bad.dpf").write_bytes(NOT_UTF8)
    with pytest.raises(DiagnosticError) as caught:
        check_source(Path("bad.dpf"))
    assert _stderr(caught.value.diagnostics) == NOT_UTF8_STDERR.format(name="bad.dpf")


def test_non_utf8_import_is_located(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    Path("lib.dpf").write_bytes(NOT_UTF8)
    Path("main.dpf").write_text("import lib;\n\ndpf g() {\n}\n", encoding="utf-8")
    with pytest.raises(DiagnosticError) as caught:
        check_source(Path("main.dpf"))
    assert _stderr(caught.value.diagnostics) == NOT_UTF8_STDERR.format(name="lib.dpf")


def test_non_utf8_from_the_command_line_reader(tmp_path: Path) -> None:
    """What ``dpfc check -``, ``dpfc asm`` and ``dpfc opt`` read goes through one reader."""
    path = tmp_path / "bad.dpf"
    path.write_bytes(NOT_UTF8)
    with pytest.raises(DiagnosticError) as caught:
        read_source(str(path))
    assert _stderr(caught.value.diagnostics) == NOT_UTF8_STDERR.format(name=str(path))
