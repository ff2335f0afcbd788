"""The warnings of the DPF language (dpfc/sema/lints.py, DPF54xx and DPF5218): a corpus with
goldens, the programs that must stay silent, and the ``-W`` flags.

Each ``tests/lints/NNN_name.dpf`` starts with ``// expect DPFxxxx [DPFyyyy ...]: what`` (the
warnings it must produce, in the order ``dpfc check`` prints them: by position) or
``// expect none: what`` (a program a lint must not fire on); it must check without errors,
and ``NNN_name.stderr`` is the golden of what ``dpfc check`` prints on stderr (empty when
there is no warning). ``DPFC_BLESS=1`` rewrites the goldens; read every diff.
``tests/lints/modules/`` holds modules the corpus imports.

No warning may fire on the programs of the repository that must compile: the examples
(``examples/**/*.dpf``, the corpus of user-style DPFs included), the standard library and
the modules the error corpus imports.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import assume, given, settings

from dpfc.catalog import codes, load_catalog, warning_names
from dpfc.cli.main import main
from dpfc.cli.warning_flags import SpecError, parse_policy
from dpfc.diagnostics import Diagnostic, Severity, SourceFile, WarningPolicy, render_all
from dpfc.driver import check_source
from tests.conftest import ROOT, assert_golden
from tests.corpus import relative
from tests.dpf_programs import GeneratedProgram, programs

CORPUS_DIR = ROOT / "tests" / "lints"
CORPUS = sorted(CORPUS_DIR.glob("*.dpf"))
EXPECT = re.compile(r"^// expect ((?:DPF\d{4} )*DPF\d{4}|none): \S")
WARNING_LINE = re.compile(r"^(?P<file>\S+):\d+:\d+: warning\[(?P<code>DPF\d{4})\]: ")
LINT_CODES = {c for c in vars(codes).values() if str(c).startswith("DPF54")}
# Every program of the repository that must compile (see the module docstring).
MUST_COMPILE = sorted(
    [
        *(ROOT / "examples").rglob("*.dpf"),
        *(ROOT / "stdlib").glob("*.dpf"),
        ROOT / "tests" / "errors" / "modules" / "filters.dpf",
    ]
)


def expected_codes(path: Path) -> list[str]:
    first = path.read_text(encoding="utf-8").splitlines()[0]
    match = EXPECT.match(first)
    assert match is not None, f"{path.name}: first line must be `// expect DPFxxxx ...: what`"
    return [] if match.group(1) == "none" else match.group(1).split()


def warnings_of(path: Path) -> list[Diagnostic]:
    """What checking ``path`` warns of (named relative to the repository root); a corpus
    program has no error, so a DiagnosticError fails the test."""
    checked = check_source(SourceFile(relative(path), path.read_text(encoding="utf-8")))
    assert all(w.severity is Severity.WARNING for w in checked.warnings)
    return checked.warnings


@pytest.mark.parametrize("path", CORPUS, ids=[p.stem for p in CORPUS])
def test_lint_corpus(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    warnings = warnings_of(path)
    stderr = render_all(warnings) + "\n" if warnings else ""
    assert_golden(path.with_suffix(".stderr"), stderr)
    shown = [m for line in stderr.splitlines() if (m := WARNING_LINE.match(line))]
    assert [m["code"] for m in shown] == expected_codes(path), stderr
    assert all(m["file"] == relative(path) for m in shown)
    assert stderr.count("^") >= len(shown)


def test_corpus_is_large_numbered_and_covers_every_warning() -> None:
    assert len(CORPUS) >= 30
    numbers = [p.name[:3] for p in CORPUS]
    assert all(n.isdigit() for n in numbers) and len(set(numbers)) == len(numbers)
    assert {p.stem for p in CORPUS_DIR.glob("*.stderr")} == {p.stem for p in CORPUS}
    covered = {code for path in CORPUS for code in expected_codes(path)}
    assert set(warning_names().values()) <= covered
    assert len([p for p in CORPUS if not expected_codes(p)]) >= 8  # programs left alone


def test_every_lint_code_is_a_named_warning() -> None:
    """Every DPF54xx code can be controlled with -W, and only warnings have names."""
    catalog = load_catalog()
    assert set(warning_names().values()) >= LINT_CODES
    for name, code in warning_names().items():
        assert catalog[code].summary.startswith("warning: "), name


@pytest.mark.parametrize("path", MUST_COMPILE, ids=lambda p: relative(p))
def test_no_warning_on_programs_that_must_compile(
    path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    assert warnings_of(path) == []


def test_warnings_of_imported_modules_are_not_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    noisy = CORPUS_DIR / "modules" / "noisy.dpf"
    assert {w.code for w in warnings_of(noisy)} == {
        "DPF5402",
        "DPF5403",
        "DPF5404",
        "DPF5405",
        "DPF5406",
    }
    assert warnings_of(CORPUS_DIR / "109_none_imported_module.dpf") == []


def test_programs_with_errors_report_only_their_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    result = CliRunner().invoke(main, ["check", "tests/errors/100_unknown_name.dpf"])
    assert result.exit_code == 1
    assert "warning[" not in result.stderr


# -- the -W flags ---------------------------------------------------------------------------

SAMPLE = "tests/lints/090_several_warnings.dpf"


def _check(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, ["check", SAMPLE, *args])
    return result.exit_code, result.stdout, result.stderr


def _codes(stderr: str, kind: str = "warning") -> list[str]:
    return re.findall(rf"{kind}\[(DPF\d{{4}})\]", stderr)


def test_warnings_go_to_stderr_and_exit_0(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    code, stdout, stderr = _check()
    assert code == 0
    assert stdout == f"{SAMPLE}: ok (1 DPF)\n"
    assert _codes(stderr) == expected_codes(ROOT / SAMPLE)


@pytest.mark.parametrize(
    ("flags", "shown"),
    [
        (["-Wnone"], []),
        (["-W", "none", "-W", "unused-local"], ["DPF5403"]),
        (["-Wno-DPF5401", "-Wno-unused-parameter"], ["DPF5405", "DPF5403", "DPF5402"]),
        # A later flag wins: unused-array is hidden, then shown again.
        (
            ["-Wno-5405", "-Wno-index-range", "-Wno-shift-amount", "-Wunused-array"],
            ["DPF5405", "DPF5404", "DPF5403"],
        ),
        (
            ["--warn", "no-unused-local", "--warn", "no-shift-amount"],
            ["DPF5405", "DPF5404", "DPF5401"],
        ),
        (["-Wall"], ["DPF5405", "DPF5404", "DPF5401", "DPF5403", "DPF5402"]),
    ],
)
def test_warnings_can_be_hidden(
    flags: list[str], shown: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    code, stdout, stderr = _check(*flags)
    assert code == 0 and stdout == f"{SAMPLE}: ok (1 DPF)\n"
    assert _codes(stderr) == shown


def test_werror_fails_the_check(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    code, stdout, stderr = _check("-Werror")
    assert code == 1 and stdout == ""
    assert _codes(stderr, "error") == expected_codes(ROOT / SAMPLE)
    assert stderr.count("note: a warning, made an error by -Werror") == 5
    # One warning made an error, the others left warnings; then -Wno-error undoes -Werror.
    code, _, stderr = _check("-Werror=unused-local")
    assert code == 1 and _codes(stderr, "error") == ["DPF5403"] and len(_codes(stderr)) == 4
    code, _, stderr = _check("-Werror", "-Wno-error=DPF5403", "-Wno-unused-local")
    assert code == 1 and "DPF5403" not in stderr
    assert _codes(stderr, "error") == ["DPF5405", "DPF5404", "DPF5401", "DPF5402"]
    assert _check("-Werror", "-Wno-error")[0] == 0
    assert _check("-Werror", "-Wnone")[0] == 0
    clean = CliRunner().invoke(main, ["check", "-Werror", "examples/dpf/kvs.dpf"])
    assert clean.exit_code == 0 and clean.stderr == ""


def test_compile_reports_warnings_on_stderr_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    canonical = CliRunner().invoke(main, ["compile", SAMPLE, "--emit", "ast", "-Wnone"])
    warned = CliRunner().invoke(main, ["compile", SAMPLE, "--emit", "ast"])
    assert warned.exit_code == canonical.exit_code == 0
    assert warned.stdout == canonical.stdout and canonical.stderr == ""
    assert _codes(warned.stderr) == expected_codes(ROOT / SAMPLE)
    out = tmp_path / "x.ir"
    failed = CliRunner().invoke(
        main, ["compile", SAMPLE, "--emit", "ir", "-o", str(out), "-Werror"]
    )
    assert failed.exit_code == 1 and not out.exists()
    assert "error[DPF5401]" in failed.stderr


def test_warnings_in_json_are_one_array(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    result = CliRunner().invoke(main, ["--diagnostics-format", "json", "check", SAMPLE])
    assert result.exit_code == 0
    found = json.loads(result.stderr)
    assert [d["code"] for d in found] == expected_codes(ROOT / SAMPLE)
    assert {d["severity"] for d in found} == {"warning"}
    assert found[0]["span"]["file"] == SAMPLE and found[0]["span"]["line"] == 3
    failed = CliRunner().invoke(
        main, ["check", SAMPLE, "--diagnostics-format", "json", "-Werror=index-range"]
    )
    assert failed.exit_code == 1
    mixed = json.loads(failed.stderr)
    assert [d["severity"] for d in mixed].count("error") == 1
    assert [d["code"] for d in mixed] == expected_codes(ROOT / SAMPLE)


def test_json_warnings_precede_a_later_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A compile that warns at the check and fails later prints one array: the warnings,
    then the error."""
    monkeypatch.chdir(ROOT)
    args = ["compile", "tests/lints/020_unused_local.dpf", "--dpf", "nosuch"]
    result = CliRunner().invoke(
        main, ["--diagnostics-format", "json", *args, "-o", str(tmp_path / "x.dpfo")]
    )
    assert result.exit_code == 1
    found = json.loads(result.stderr)
    assert [(d["code"], d["severity"]) for d in found] == [
        ("DPF5403", "warning"),
        ("DPF0002", "error"),
    ]


@pytest.mark.parametrize(
    ("spec", "message", "hint"),
    [
        ("unused-locals", "`unused-locals` is not a warning", "did you mean `unused-local`?"),
        ("no-DPF5101", "DPF5101 is an error, not a warning", "the warnings: unreachable"),
        ("error=DPF9999", "`DPF9999` is not a warning", "the warnings: unreachable"),
        ("eror", "`eror` is not a warning", "did you mean `error`?"),
    ],
)
def test_bad_specs_are_usage_errors(spec: str, message: str, hint: str) -> None:
    with pytest.raises(SpecError) as caught:
        parse_policy([spec])
    assert str(caught.value).startswith(message)
    assert caught.value.hint is not None and caught.value.hint.startswith(hint)
    result = CliRunner().invoke(main, ["check", f"-W{spec}", SAMPLE])
    assert result.exit_code == 1 and "error[DPF0003]" in result.stderr
    assert message in result.stderr


def test_policy_order_and_defaults() -> None:
    assert parse_policy([]) == WarningPolicy()
    assert parse_policy(["no-unused-local", "unused-local"]) == WarningPolicy()
    assert parse_policy(["error=5403", "no-error"]) == WarningPolicy()
    hidden = parse_policy(["none"])
    assert hidden.disabled == frozenset(warning_names().values()) and not hidden.errors
    assert parse_policy(["error=DPF5403", "no-DPF5403"]) == WarningPolicy(
        disabled=frozenset({"DPF5403"})
    )


def test_every_warning_is_documented() -> None:
    """docs/language.md's Warnings table names every warning with its code and -W name, and
    its Diagnostics table lists the codes."""
    page = (ROOT / "docs" / "language.md").read_text(encoding="utf-8")
    for name, code in warning_names().items():
        assert f"| {code} | `{name}` |" in page, code
    for code in LINT_CODES:
        assert f"| {code} | warning: " in page, code


def test_run_reports_the_warnings_of_its_sources(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`dpfc run` compiles a scenario's .dpf files: their warnings go to stderr (-W applies),
    and the report on stdout is the same."""
    scenarios = ROOT / "examples" / "scenarios"
    for name in ("egress.toml", "egress_path.dpf"):
        (tmp_path / name).write_bytes((scenarios / name).read_bytes())
    monkeypatch.chdir(tmp_path)
    clean = CliRunner().invoke(main, ["run", "egress.toml"])
    assert clean.exit_code == 0 and clean.stderr == ""
    source = tmp_path / "egress_path.dpf"
    text = source.read_text(encoding="utf-8")
    source.write_text(text.replace("    multicast(0);", "    let spare = 1;\n    multicast(0);"))
    warned = CliRunner().invoke(main, ["run", "egress.toml"])
    assert warned.exit_code == 0 and warned.stdout == clean.stdout
    assert warned.stderr.startswith("egress_path.dpf:20:9: warning[DPF5403]: local `spare`")
    hidden = CliRunner().invoke(main, ["run", "egress.toml", "-Wno-unused-local"])
    assert hidden.exit_code == 0 and hidden.stderr == ""
    failed = CliRunner().invoke(main, ["run", "-Werror", "egress.toml"])
    assert failed.exit_code == 1 and failed.stdout == ""
    assert "error[DPF5403]" in failed.stderr


def test_specs_complete_in_the_shell() -> None:
    result = CliRunner().invoke(
        main,
        [],
        env={
            "_DPFC_COMPLETE": "bash_complete",
            "COMP_WORDS": "dpfc check -W no-unused",
            "COMP_CWORD": "3",
        },
        prog_name="dpfc",
    )
    assert result.stdout.split() == [
        "plain,no-unused-local",
        "plain,no-unused-parameter",
        "plain,no-unused-array",
    ]


# -- the unused lints against the text of random programs -------------------------------------


def _declared(source: str) -> dict[str, str]:
    """The locals (`let vN`) and parameters (`pN: T`) of a generated program, by name: their
    names are unique in it (tests/dpf_programs.py), so the text tells how each is used."""
    found = {name: "let" for name in re.findall(r"\blet (v\d+)\b", source)}
    found.update({name: "param" for name in re.findall(r"\b(p\d+): ", source)})
    return found


def _reads(source: str, name: str) -> int:
    """Occurrences of ``name`` that read it: all but its declaration and assignments to it."""
    every = len(re.findall(rf"\b{name}\b", source))
    writes = len(re.findall(rf"(?m)^\s*{name} = ", source))
    return every - writes - 1


def _subject(message: str) -> str:
    """The name a warning's message is about (its first quoted name)."""
    match = re.search(r"`(\w+)`", message)
    assert match is not None, message
    return match.group(1)


@settings(deadline=None)
@given(program=programs())
def test_unused_lints_agree_with_the_text(program: GeneratedProgram) -> None:
    """On random programs, a local or parameter is reported unused exactly when the text
    never reads it ("assigned but never read" exactly when it is assigned), and an array
    exactly when the text never indexes it. Programs with an empty loop or with statements
    after a `return` are left out: neither is checked (the body of an empty loop, unreachable
    statements), so their text is not code."""
    checked = check_source(SourceFile("g.dpf", program.source))
    found = {w.code for w in checked.warnings}
    assume(codes.EMPTY_LOOP not in found and codes.UNREACHABLE_STATEMENT not in found)
    source = program.source
    unused = {
        _subject(w.message): w.message
        for w in checked.warnings
        if w.code in (codes.UNUSED_LOCAL, codes.UNUSED_PARAMETER, codes.UNUSED_ARRAY)
    }
    expected = {name for name in _declared(source) if _reads(source, name) == 0}
    expected |= {a.name for a in program.arrays if not re.search(rf"\b{a.name}\[", source)}
    assert set(unused) == expected, source
    for name, message in unused.items():
        assigned = bool(re.search(rf"(?m)^\s*{name} = ", source))
        assert ("assigned but never read" in message) == assigned, source
