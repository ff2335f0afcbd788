"""The compile driver: one profile decision, options validated before any phase, ``--dpf``
schedules only what it needs, ``--bindings`` places shared arrays where another module's
object placed them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from dpfc.cli.main import main
from dpfc.diagnostics import DiagnosticError, SourceFile
from dpfc.driver import (
    CompileOptions,
    check_source,
    compile_source,
    optimised_ir,
    scheduled_functions,
)
from dpfc.objfile import read_object, write_object
from dpfc.target import BUILTIN_PROFILES, load_profile
from tests.conftest import ROOT

TOFINO1 = BUILTIN_PROFILES["tofino1"]

# Pops 4 parameters: fine on tofino1 (stack depth 16), not on a profile of depth 2.
FOUR_PARAMS = """
{attr}
dpf sum4(a: u32, b: u32, c: u32, d: u32) {{
    push(a + b + c + d);
}}
"""
SHALLOW = 'base = "tofino1"\nname = "shallow"\nstack_max_depth = 2\n'


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def shallow(tmp_path: Path) -> Path:
    path = tmp_path / "shallow.toml"
    path.write_text(SHALLOW)
    return path


@pytest.mark.parametrize("attr", ["@target(tofino1)", ""], ids=["with-target", "without"])
@pytest.mark.parametrize("command", ["check", "compile"])
def test_an_explicit_target_wins_over_at_target_in_check_and_compile(
    tmp_path: Path, shallow: Path, attr: str, command: str
) -> None:
    """The reproduction of the issue: @target(tofino1) used to make `check` and `compile`
    accept 4 parameters on a profile whose stack holds 2."""
    source = tmp_path / "sum4.dpf"
    source.write_text(FOUR_PARAMS.format(attr=attr))
    code, _, stderr = run(command, str(source), "--target", str(shallow))
    assert code == 1, stderr
    assert "error[DPF5209]" in stderr and "on shallow" in stderr
    # Without --target, @target (or the default) decides: tofino1 takes 4 parameters.
    code, _, stderr = run("check", str(source))
    assert code == 0, stderr


def test_every_phase_gets_the_one_resolved_profile(tmp_path: Path, shallow: Path) -> None:
    source = tmp_path / "inc.dpf"
    source.write_text("@target(tofino1)\ndpf inc(x: u32) {\n    push(x + 1);\n}\n")
    profile = load_profile(str(shallow))
    compiled = compile_source(source, CompileOptions(target=profile))
    assert compiled.checked.profile is profile
    assert compiled.profile is profile
    assert compiled.checked.dpfs[0].profile is profile
    assert compiled.module.functions[0].attrs["target"] == "shallow"
    assert compiled.units[0].problem.profile is profile
    assert compiled.units[0].compiled.program.profile is profile
    # @target alone decides when no profile is given.
    source.write_text("@target(tofino2)\ndpf inc(x: u32) {\n    push(x + 1);\n}\n")
    assert check_source(source).profile is BUILTIN_PROFILES["tofino2"]
    source.write_text("dpf inc(x: u32) {\n    push(x + 1);\n}\n")
    assert check_source(source).profile is TOFINO1


def test_targets_that_disagree_are_an_error_even_with_an_explicit_target() -> None:
    text = "@target(tofino1) dpf f() { }\n@target(tofino2) dpf g() { }\n"
    for target in (None, TOFINO1):
        with pytest.raises(DiagnosticError) as info:
            check_source(SourceFile("t.dpf", text), target)
        [diagnostic] = info.value.diagnostics
        assert diagnostic.code == "DPF5220"
        assert diagnostic.span is not None and diagnostic.span.line == 2
        assert diagnostic.notes[0].span is not None and diagnostic.notes[0].span.line == 1


# A DPF whose scheduling is slow (many independent results of two inputs); the options
# below are wrong, so no phase may run.
SLOW = (
    "dpf many(a: u32, b: u32) {\n    push("
    + ", ".join(f"(a + {k}) ^ (b - {k})" for k in range(8))
    + ");\n}\n"
)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--stack", "1,zz"], "stack values are comma-separated"),
        (["--stack", "0x1_0000_0000"], "does not fit in 32 bits"),
        (["--tenant", "0x1000000"], "tenant id"),
        (["--emit", "pcap"], "--emit pcap needs -o FILE"),
        (["--target", "tofino9"], "tofino9"),
        (["--bindings", "missing.dpfo"], "cannot read missing.dpfo"),
    ],
)
def test_options_are_validated_before_any_phase_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, options: list[str], message: str
) -> None:
    source = tmp_path / "slow.dpf"
    source.write_text(SLOW)
    ran: list[str] = []

    def phase(name: str) -> Any:
        def record(*args: object, **kwargs: object) -> None:
            ran.append(name)
            raise AssertionError(f"{name} ran before the options were validated")

        return record

    monkeypatch.setattr("dpfc.driver.compile.check_source", phase("check"))
    monkeypatch.setattr("dpfc.driver.compile.schedule_module", phase("schedule"))
    code, _, stderr = run("compile", str(source), *options)
    assert code == 1 and message in stderr, stderr
    assert ran == []


def test_an_unknown_dpf_is_reported_before_scheduling(monkeypatch: pytest.MonkeyPatch) -> None:
    def fail(*args: object, **kwargs: object) -> None:
        raise AssertionError("scheduled")

    monkeypatch.setattr("dpfc.driver.compile.schedule_module", fail)
    code, _, stderr = run("compile", str(ROOT / "examples/dpf/kvs.dpf"), "--dpf", "nope")
    assert code == 1
    assert "no DPF `nope`" in stderr and "cache_get, cache_put, empty" in stderr


SHARING = """
segment array shared: u32[16];
segment array own: u32[16];

dpf a(x: u32) {
    shared[x] += 1;
}

dpf b(x: u32) {
    push(shared[x]);
}

dpf c(x: u32) {
    own[x] += 1;
}
"""


def test_dpf_schedules_only_that_dpf_and_those_sharing_its_arrays(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    module = optimised_ir(check_source(SourceFile("sharing.dpf", SHARING)))
    assert scheduled_functions(module, "a") == {"a", "b"}
    assert scheduled_functions(module, "c") == {"c"}
    assert scheduled_functions(module, None) == {"a", "b", "c"}
    import dpfc.schedule.module as schedule_module
    from dpfc.schedule.search import schedule_problem as real  # what schedule_module calls

    scheduled: list[str] = []

    def spy(problem: Any, options: Any = None, **keywords: Any) -> Any:
        scheduled.append(problem.name)
        return real(problem, options, **keywords)

    monkeypatch.setattr(schedule_module, "schedule_problem", spy)
    compiled = compile_source(SourceFile("sharing.dpf", SHARING), CompileOptions(only="c"))
    assert scheduled == ["c"] and [u.name for u in compiled.units] == ["c"]
    scheduled.clear()
    compiled = compile_source(SourceFile("sharing.dpf", SHARING), CompileOptions(only="b"))
    assert sorted(scheduled) == ["a", "b"] and [u.name for u in compiled.units] == ["b"]
    # The binding --dpf finds is the one a whole-module compile finds.
    whole = compile_source(SourceFile("sharing.dpf", SHARING))
    assert compiled.units[0].compiled.program.arrays == whole.unit("b").compiled.program.arrays


WRITER = """
module writer;
segment array table: u32[64];
dpf put(k: u32, v: u32) {
    table[(k ^ 5) & 63] = v;
}
"""
READER = """
module reader;
import writer;
dpf get(k: u32) {
    push(writer.table[k]);
}
"""


def test_a_module_compiled_against_an_object_takes_its_array_bindings(tmp_path: Path) -> None:
    (tmp_path / "writer.dpf").write_text(WRITER)
    (tmp_path / "reader.dpf").write_text(READER)
    writer = compile_source(tmp_path / "writer.dpf")
    [binding] = writer.units[0].compiled.program.arrays
    alone = compile_source(tmp_path / "reader.dpf")
    [placed_alone] = alone.units[0].compiled.program.arrays
    assert placed_alone.name == binding.name == "writer.table"
    # The example of the issue: compiled alone, the two modules place the array apart.
    assert (placed_alone.eu, placed_alone.lane) != (binding.eu, binding.lane)
    obj = tmp_path / "writer.dpfo"
    obj.write_bytes(write_object(writer.object()))
    against = compile_source(
        tmp_path / "reader.dpf",
        CompileOptions(objects=(read_object(obj.read_bytes(), str(obj)),)),
    )
    [placed] = against.units[0].compiled.program.arrays
    assert (placed.eu, placed.lane) == (binding.eu, binding.lane)
    # The same through the CLI.
    code, _, stderr = run(
        "compile", str(tmp_path / "reader.dpf"), "--bindings", str(obj), "-o", str(tmp_path / "r")
    )
    assert code == 0, stderr
    [dpf] = read_object((tmp_path / "r").read_bytes(), "r").dpfs
    assert dpf.program.arrays == (placed,)


def test_a_pin_that_contradicts_an_object_is_dpf5221(tmp_path: Path) -> None:
    (tmp_path / "writer.dpf").write_text(WRITER)
    writer = compile_source(tmp_path / "writer.dpf")
    [binding] = writer.units[0].compiled.program.arrays
    other_eu = (binding.eu + 1) % TOFINO1.num_eus
    pinned = WRITER.replace(
        "segment array table", f"@pin(eu = {other_eu}, lane = 0)\nsegment array table"
    )
    (tmp_path / "pinned").mkdir()
    (tmp_path / "pinned" / "writer.dpf").write_text(pinned)
    with pytest.raises(DiagnosticError) as info:
        compile_source(
            tmp_path / "pinned" / "writer.dpf", CompileOptions(objects=(writer.object(),))
        )
    [diagnostic] = info.value.diagnostics
    assert diagnostic.code == "DPF5221"
    assert f"pinned to EU{other_eu} lane 0" in diagnostic.message
    assert diagnostic.span is not None and diagnostic.span.line == 3
