"""`dpfc explain`: every diagnostic code has an explanation, and the examples still work.

* Completeness: the codes used in the package's source and the catalogue's entries are the
  same set; the failure names each code without an entry and each stale entry. A code is
  used where the source names its constant (``codes.UNKNOWN_NAME``, the constants of
  dpfc/catalog/codes.py) or writes it in a string literal or f-string (docstrings and
  comments left out); a constant no module names is stale like an entry.
* Executable examples: every entry with a ``command`` (and no ``unchecked`` reason) is run
  in a fresh directory holding its files, through the real CLI, and must report its code.
  The DPF-language codes (syntax, names and types, rules, scheduling) have a checked
  ``.dpf`` example, so the catalogue cannot rot; the few no small program reaches are listed
  in ``UNREACHABLE_LANGUAGE`` with the reason in their entry.
* The command: an entry's text, the listing, unknown and malformed codes.
"""

from __future__ import annotations

import ast
import json
import re
import shlex
from pathlib import Path

import pytest
from click.testing import CliRunner

from dpfc.catalog import SECTIONS, Entry, close_codes, codes, load_catalog, normalize_code
from dpfc.cli.main import main
from tests.conftest import ROOT, assert_golden
from tests.modules import modules

PACKAGE = ROOT / "dpfc"
SOURCE_FILES = [module.path for module in modules()]
CODE = re.compile(r"\bDPF\d{4}\b")
# The catalogue itself and its command mention codes as examples, not as diagnostics (their
# string literals are not scanned; the constants they name are).
NOT_SCANNED = {PACKAGE / "catalog", PACKAGE / "cli" / "explain.py"}
CODES_MODULE = PACKAGE / "catalog" / "codes.py"
# name -> code of every constant of the codes module
NAMED_CODES = {
    name: value
    for name, value in vars(codes).items()
    if name.isupper() and isinstance(value, str) and CODE.fullmatch(value)
}
# DPF-language codes: every one has a checked `.dpf` example.
LANGUAGE = re.compile(r"^DPF(50|51|52|54|60)\d\d$")
# Language codes no small program reaches through the CLI: the checker reports the same
# mistake first (6001, 6002, 6004, 6005, 6007), no IR op lacks an implementation (6008), or the
# example takes ~30 s of Z3 time (6024). Each entry says why in its `unchecked` field.
UNREACHABLE_LANGUAGE = {"DPF6001", "DPF6002", "DPF6004", "DPF6005", "DPF6007", "DPF6008", "DPF6024"}
GOLDEN = ROOT / "tests" / "golden" / "explain"


def _docstrings(tree: ast.AST) -> set[int]:
    """ids of the string constants that are docstrings."""
    out: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                out.add(id(body[0].value))
    return out


def _codes_aliases(tree: ast.AST) -> set[str]:
    """The names the codes module is bound to (``from dpfc.catalog import codes``)."""
    return {
        alias.asname or alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module == "dpfc.catalog"
        for alias in node.names
        if alias.name == "codes"
    }


def codes_in_source() -> dict[str, list[str]]:
    """Every code the package uses, with where: each ``codes.NAME`` and each code in a string
    literal or f-string."""
    found: dict[str, list[str]] = {}
    for path in SOURCE_FILES:
        if path == CODES_MODULE:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        aliases = _codes_aliases(tree)
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id in aliases
            ):
                code = NAMED_CODES[node.attr]  # a KeyError: a name the codes module lacks
                found.setdefault(code, []).append(f"{path.relative_to(ROOT)}:{node.lineno}")
        if any(path == skip or skip in path.parents for skip in NOT_SCANNED):
            continue
        skip = _docstrings(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                if id(node) in skip:
                    continue
                for code in CODE.findall(node.value):
                    where = f"{path.relative_to(ROOT)}:{node.lineno}"
                    found.setdefault(code, []).append(where)
    return found


SOURCE_CODES = codes_in_source()
CATALOG = load_catalog()
CHECKED = [e for e in CATALOG.values() if e.command is not None and e.unchecked is None]


def test_the_scan_finds_every_quoted_code() -> None:
    # A plain grep for "DPFxxxx" literals is a lower bound of what the AST scan finds.
    quoted: set[str] = set()
    for path in SOURCE_FILES:
        if not any(path == skip or skip in path.parents for skip in NOT_SCANNED):
            quoted |= set(re.findall(r"\"(DPF\d{4})\"", path.read_text(encoding="utf-8")))
    assert quoted <= set(SOURCE_CODES)
    assert len(SOURCE_CODES) >= 270


def test_every_code_in_the_source_has_an_entry() -> None:
    missing = sorted(set(SOURCE_CODES) - set(CATALOG))
    assert not missing, "codes without a `dpfc explain` entry (add them to dpfc/catalog/):\n" + (
        "\n".join(f"  {c} (used at {SOURCE_CODES[c][0]})" for c in missing)
    )


def test_every_entry_has_a_code_in_the_source() -> None:
    stale = sorted(set(CATALOG) - set(SOURCE_CODES))
    assert not stale, "entries for codes the source no longer uses:\n" + "\n".join(
        f"  {c} ({CATALOG[c].section})" for c in stale
    )


def test_entries_are_in_the_file_of_their_range() -> None:
    prefixes = {
        "cli_asm.toml": ("DPF0",),
        "isa.toml": ("DPF10",),
        "encoding.toml": ("DPF20",),
        "decode.toml": ("DPF30",),
        "sim.toml": ("DPF40",),
        "scenario.toml": ("DPF41",),
        "syntax.toml": ("DPF50",),
        "sema.toml": ("DPF51", "DPF52"),
        "ir.toml": ("DPF53",),
        "lints.toml": ("DPF54",),
        "schedule.toml": ("DPF6",),
        "link.toml": ("DPF7",),
        "verify.toml": ("DPF8",),
    }
    assert set(prefixes) == {name for name, _ in SECTIONS}
    misplaced = [e.code for e in CATALOG.values() if not e.code.startswith(prefixes[e.section])]
    assert not misplaced


def test_language_codes_have_checked_dpf_examples() -> None:
    lacking = [
        code
        for code, entry in CATALOG.items()
        if LANGUAGE.match(code)
        and code not in UNREACHABLE_LANGUAGE
        and (
            entry.command is None
            or entry.unchecked is not None
            or not any(name.endswith(".dpf") for name, _ in entry.files)
        )
    ]
    assert not lacking, f"DPF-language codes without a checked .dpf example: {lacking}"
    assert all(CATALOG[code].unchecked for code in UNREACHABLE_LANGUAGE)


def test_most_examples_are_checked() -> None:
    assert len(CHECKED) >= 0.8 * len(CATALOG)


def _argv(command: str) -> list[str]:
    argv = shlex.split(command)
    assert argv[0] == "dpfc", f"an example command starts with `dpfc`: {command}"
    return argv[1:]


@pytest.mark.parametrize("entry", CHECKED, ids=[e.code for e in CHECKED])
def test_example_reports_its_code(
    entry: Entry, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert entry.command is not None
    for name, data in entry.file_bytes().items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_bytes(data)
    monkeypatch.chdir(tmp_path)
    *steps, last = entry.command.split(" && ")
    for step in steps:  # the steps that make the example's input must succeed
        done = CliRunner().invoke(main, _argv(step))
        assert done.exit_code == 0, f"`{step}` failed:\n{done.stderr}"
    result = CliRunner().invoke(main, _argv(last))
    assert "Traceback" not in result.stderr and "internal compiler error" not in result.stderr
    assert f"[{entry.code}]" in result.stderr, (
        f"`{entry.command}` did not report {entry.code}:\n{result.stderr}"
    )


def test_explain_prints_an_entry(cli: CliRunner) -> None:
    result = cli.invoke(main, ["explain", "DPF5201"])
    assert result.exit_code == 0, result.output
    assert_golden(GOLDEN / "DPF5201.txt", result.stdout)
    for part in ("DPF5201: ", "Example:", "$ dpfc ", "How to fix it:"):
        assert part in result.stdout


@pytest.mark.parametrize("spelling", ["dpf5201", "5201", "[DPF5201]", " DPF5201 "])
def test_explain_accepts_other_spellings(cli: CliRunner, spelling: str) -> None:
    assert cli.invoke(main, ["explain", spelling]).stdout == CATALOG["DPF5201"].render()


def test_explain_lists_every_code(cli: CliRunner) -> None:
    result = cli.invoke(main, ["explain"])
    assert result.exit_code == 0
    listed = re.findall(r"^  (DPF\d{4})  \S", result.stdout, re.MULTILINE)
    assert listed == sorted(CATALOG)
    for _, title in SECTIONS:
        assert title in result.stdout


def test_unknown_code_suggests_close_codes(cli: CliRunner) -> None:
    result = cli.invoke(main, ["explain", "DPF5199"])
    assert result.exit_code == 1
    assert result.stdout == ""
    assert "error[DPF0002]: no diagnostic code DPF5199; did you mean" in result.stderr
    assert "DPF5119" in result.stderr
    assert close_codes("DPF5199") == ["DPF5119", "DPF5109"]
    assert close_codes("DPF5120", ["DPF5102", "DPF5121", "DPF6120"]) == [
        "DPF5121",
        "DPF5102",
        "DPF6120",
    ]


def test_far_code_has_no_suggestion(cli: CliRunner) -> None:
    result = cli.invoke(main, ["explain", "DPF9999"])
    assert result.exit_code == 1
    assert "no diagnostic code DPF9999" in result.stderr
    assert "did you mean" not in result.stderr


def test_malformed_code_is_a_user_error(cli: CliRunner) -> None:
    result = cli.invoke(main, ["explain", "hello"])
    assert result.exit_code == 1
    assert "error[DPF0002]: `hello` is not a diagnostic code" in result.stderr
    assert normalize_code("DPF12") is None


def test_unknown_code_in_json(cli: CliRunner) -> None:
    result = cli.invoke(main, ["--diagnostics-format", "json", "explain", "DPF5199"])
    assert result.exit_code == 1
    [diagnostic] = json.loads(result.stderr)
    assert diagnostic["code"] == "DPF0002"
    assert "did you mean" in diagnostic["message"]
