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
proofs (DPF6020), 06N what the problem builder refuses (DPF6003, DPF6006), 07N shifts the
profile's ALU cannot make (DPF6009, DPF6010).

Beyond the corpus: the chain of every DPF6026 (of the corpus, and of random programs) starts
in the last EU its message counts (``needs at least 5 EUs``: EU4) and goes back in time.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpfc.diagnostics import Diagnostic, DiagnosticError, Severity, SourceFile, render_all
from dpfc.driver import CompileOptions, check_source, compile_source, optimised_ir
from dpfc.schedule import ScheduleOptions, build_problem, compute_bounds
from dpfc.schedule.diagnose import from_bounds
from dpfc.target import TargetProfile, load_profile
from tests.conftest import ROOT, assert_golden
from tests.corpus import (
    assert_goldens_name_codes,
    assert_numbered_with_goldens,
    assert_one_error,
    expected_code,
    relative,
)
from tests.layout_programs import layouts

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


NEEDS = re.compile(r"needs at least (?P<eus>\d+) EUs")
STEP_EU = re.compile(r"\bEU(?P<eu>\d+)\b")


def assert_chain_matches_its_claim(diag: Diagnostic) -> None:
    """DPF6026's chain starts in the last EU its message counts, and goes back in time."""
    claimed = NEEDS.search(diag.message)
    assert claimed is not None, diag.message
    steps = [int(m["eu"]) for note in diag.notes for m in [STEP_EU.search(note.message)] if m]
    assert steps and steps[0] == int(claimed["eus"]) - 1, diag.render()
    assert steps == sorted(steps, reverse=True), diag.render()


def test_the_corpus_chains_end_where_their_messages_say() -> None:
    chains = [p for p in CORPUS if expected_code(p, "//") == "DPF6026"]
    assert len(chains) >= 5
    for path in chains:
        (diag,) = compile_errors(path)
        assert_chain_matches_its_claim(diag)


@settings(max_examples=300)
@given(seed=st.integers(0, 2**32 - 1))
def test_every_dependence_chain_ends_where_its_message_says(seed: int) -> None:
    """On random programs (tests/layout_programs.py; about a third need more than 4 EUs),
    every DPF6026 names no IR value and its chain ends in the EU it claims (bounds only)."""
    checked = check_source(SourceFile("chain.dpf", layouts(seed).sources["before"]))
    module = optimised_ir(checked)
    (function,) = module.functions
    for booleans in ("branch", "alu"):
        try:
            problem = build_problem(module, function, checked.profile, booleans=booleans)
        except DiagnosticError:
            continue
        for diag in from_bounds(problem, compute_bounds(problem)):
            assert not IR_NAME.search(diag.render()), diag.render()
            if diag.code == "DPF6026":
                assert_chain_matches_its_claim(diag)
