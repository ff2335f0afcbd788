"""Must-fail corpus of the scheduler: every file in tests/schedule_errors/ is a DPF that checks
but cannot be scheduled, for one reason.

Each ``NNN_name.dpf`` starts with ``// expect DPFxxxx: why`` and ``// span: TEXT``: the
compile (every phase, as ``dpfc compile`` runs it, on tofino1 or on the profile of a
``NNN_name.toml`` beside it) must fail with exactly one error of that code, rendered as the
golden ``NNN_name.stderr`` next to it (``DPFC_BLESS=1`` rewrites the goldens; read every
diff), located at the source text TEXT: the branch, value, access or path responsible,
never the ``@placement`` line or the DPF's closing brace. No message or note names an IR
value (``%28``). Numbers: 00N the chains of dependent steps (DPF6026), 01N pins (DPF6027),
02N in-packet paths (DPF6023), 03N memory units (DPF6022), 04N lanes (DPF6021), 05N Z3's
proofs (DPF6020), 06N what the problem builder refuses (DPF6003, DPF6006).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from dpfc.diagnostics import Diagnostic, DiagnosticError, Severity, SourceFile, render_all
from dpfc.driver import CompileOptions, compile_source
from dpfc.schedule import ScheduleOptions
from dpfc.target import TargetProfile, load_profile
from tests.conftest import ROOT, assert_golden
from tests.corpus import (
    assert_goldens_name_codes,
    assert_numbered_with_goldens,
    assert_one_error,
    expected_code,
    relative,
)

CORPUS_DIR = ROOT / "tests" / "schedule_errors"
CORPUS = sorted(CORPUS_DIR.glob("*.dpf"))
SCHEDULER_CODES = re.compile(r"DPF60\d\d")
IR_NAME = re.compile(r"%\d")


def _profile(path: Path) -> TargetProfile | None:
    toml = path.with_suffix(".toml")
    return load_profile(relative(toml)) if toml.exists() else None


def _expected_span(path: Path) -> str:
    second = path.read_text(encoding="utf-8").splitlines()[1]
    match = re.match(r"^// span: (?P<text>.+)$", second)
    assert match is not None, f"{path.name}: second line must be `// span: TEXT`"
    return match["text"]


def compile_errors(path: Path) -> list[Diagnostic]:
    """The errors of compiling ``path`` (named by its path from the repository root)."""
    text = path.read_text(encoding="utf-8")
    options = CompileOptions(target=_profile(path), schedule=ScheduleOptions(cache=False))
    try:
        compile_source(SourceFile(relative(path), text), options)
    except DiagnosticError as exc:
        return [d for d in exc.diagnostics if d.severity is Severity.ERROR]
    return []


def test_the_corpus_is_numbered_with_goldens() -> None:
    assert len(CORPUS) >= 20
    assert_numbered_with_goldens(CORPUS, CORPUS_DIR)
    assert_goldens_name_codes(CORPUS, "//")
    assert all(SCHEDULER_CODES.fullmatch(expected_code(p, "//")) for p in CORPUS)


@pytest.mark.parametrize("path", CORPUS, ids=[p.stem for p in CORPUS])
def test_unschedulable_program_reports_its_error(
    path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    diagnostics = compile_errors(path)
    stderr = render_all(diagnostics) + "\n"
    assert_golden(path.with_suffix(".stderr"), stderr)
    assert_one_error(stderr, path, expected_code(path, "//"))
    (error,) = diagnostics
    assert error.span is not None
    assert error.span.text() == _expected_span(path), error.render()
    assert not IR_NAME.search(stderr), stderr
    for span in (error.span, *(note.span for note in error.notes)):
        if span is not None:
            assert span.text().strip() != "}", error.render()
            assert not span.text().startswith("@placement"), error.render()
