"""The conventions every ``dpfc`` command follows (dpfc/cli/main.py, README "What is here").

Exit codes (usage errors are user errors), ``--diagnostics-format`` everywhere, ``--target``
where a profile matters, ``-`` for stdin and stdout, several ``--emit`` kinds from one
compile, "wrote" lines, the progress line, ``--version``, ``--time-passes``, "did you
mean" for CLI values, output wording, and the README table against each command's help.
"""

from __future__ import annotations

import io
import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner, Result

from dpfc.cli import progress as progress_module
from dpfc.cli.main import main
from dpfc.cli.progress import Progress
from dpfc.driver import compile as compile_driver
from dpfc.schedule import schedule_module
from tests.conftest import ROOT

DPF = ROOT / "examples" / "dpf"
COUNTER = str(DPF / "counter.dpf")
KVS = str(DPF / "kvs.dpf")
COUNTER_ASM = str(ROOT / "examples" / "asm" / "counter.dpfasm")
CACHE_GET_ASM = str(ROOT / "examples" / "asm" / "cache_get.dpfasm")
Invoke = Callable[..., Result]


@pytest.fixture
def run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Invoke:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("DPFC_PROGRESS", "never")

    def invoke(*args: str, input: bytes | str | None = None) -> Result:
        return CliRunner().invoke(main, list(args), prog_name="dpfc", input=input)

    return invoke


def ok(result: Result) -> Result:
    assert result.exit_code == 0, f"exit {result.exit_code}\n{result.stderr}"
    return result


def user_error(result: Result, *fragments: str) -> Result:
    assert result.exit_code == 1, f"exit {result.exit_code}\n{result.output}"
    assert "Traceback" not in result.stderr and "internal compiler error" not in result.stderr
    for fragment in fragments:
        assert fragment in result.stderr, f"{fragment!r} not in\n{result.stderr}"
    return result


def commands(group: click.Group = main, path: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    ctx = click.Context(group, **group.context_settings)
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)  # (imports a lazy command's module)
        yield (*path, name)
        if isinstance(command, click.Group):
            yield from commands(command, (*path, name))


# -- exit codes and usage errors ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (("compile", "--emit", "bogus", COUNTER), "`bogus` is not one of"),
        (("compile",), "Missing argument 'FILE'"),
        (("check", COUNTER, "--no-such"), "no such option `--no-such`"),
        (("nosuchcommand",), "no such command `nosuchcommand`"),
        (("p4", "nosub"), "no such command `nosub` in `dpfc p4`"),
    ],
)
def test_usage_errors_exit_1_as_dpf0003(run: Invoke, args: tuple[str, ...], fragment: str) -> None:
    user_error(run(*args), "dpfc: error[DPF0003]: ", fragment, "hint: ")


def test_no_arguments_prints_the_help(run: Invoke) -> None:
    assert "Usage: dpfc" in ok(run()).stdout


# -- --diagnostics-format -----------------------------------------------------------------------


@pytest.mark.parametrize("command", sorted(commands()), ids=" ".join)
def test_every_command_takes_diagnostics_format(run: Invoke, command: tuple[str, ...]) -> None:
    assert "--diagnostics-format" in ok(run(*command, "--help")).stdout


def _json_diagnostics(result: Result) -> list[dict[str, Any]]:
    data: list[dict[str, Any]] = json.loads(result.stderr)
    return data


def test_diagnostics_format_after_the_subcommand(run: Invoke) -> None:
    assert ok(run("check", COUNTER, "--diagnostics-format", "json")).stdout.endswith("ok (1 DPF)\n")
    missing = user_error(run("check", "missing.dpf", "--diagnostics-format", "json"))
    assert _json_diagnostics(missing)[0]["code"] == "DPF0002"
    before = user_error(run("--diagnostics-format", "json", "check", "missing.dpf"))
    assert _json_diagnostics(before) == _json_diagnostics(missing)


@pytest.mark.parametrize(
    "args",
    [
        ("compile", COUNTER, "--emit", "objj", "--diagnostics-format", "json"),
        ("--diagnostics-format=json", "compile", COUNTER, "--emit", "objj"),
        ("compile", COUNTER, "--tagret", "x", "--diagnostics-format", "json"),
        ("--diagnostics-format", "json", "compil"),
    ],
)
def test_usage_errors_in_json(run: Invoke, args: tuple[str, ...]) -> None:
    (entry,) = _json_diagnostics(user_error(run(*args)))
    assert entry["code"] == "DPF0003" and entry["severity"] == "error"
    assert entry["hint"].startswith("did you mean `")


# -- did you mean -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "hint"),
    [
        (("compile", COUNTER, "--target", "tofno1"), "did you mean `tofino1`?"),
        (("asm", COUNTER_ASM, "--target", "bvm2"), "did you mean `bmv2`?"),
        (("compile", COUNTER, "--emit", "objj"), "did you mean `obj`?"),
        (("compile", COUNTER, "--emit", "obj,assm"), "did you mean `asm`?"),
        (("compile", COUNTER, "--scheduler", "greedyy"), "did you mean `greedy`?"),
        (("p4", "--arch", "v1modl"), "did you mean `v1model`?"),
        (("disasm", "x.pcap", "--input", "pcapp"), "did you mean `pcap`?"),
        (("target", "tofino3"), "did you mean `tofino1`?"),
        (("compil", COUNTER), "did you mean `compile`?"),
        (("dissasm",), "did you mean `disasm`?"),
        (("compile", COUNTER, "--tagret", "tofino1"), "did you mean `--target`?"),
    ],
)
def test_did_you_mean(run: Invoke, args: tuple[str, ...], hint: str) -> None:
    user_error(run(*args), "error[DPF0003]", f"  hint: {hint}")


# -- --target where a profile matters ------------------------------------------------------------

TARGETED = ["asm", "disasm", "packet", "check", "compile", "opt", "link", "deploy", "p4", "p4 bfrt"]


@pytest.mark.parametrize("command", TARGETED)
def test_target_where_a_profile_matters(run: Invoke, command: str) -> None:
    assert "--target" in ok(run(*command.split(), "--help")).stdout


def test_opt_checks_its_target(run: Invoke, tmp_path: Path) -> None:
    ir = ok(run("compile", COUNTER, "--emit", "ir")).stdout
    (tmp_path / "c.ir").write_text(ir)
    assert ok(run("opt", "c.ir", "--target", "tofino2")).stdout.startswith("module counter")
    user_error(run("opt", "c.ir", "--target", "tofno2"), "did you mean `tofino2`?")
    (tmp_path / "bad.toml").write_text('base = "tofino1"\nlanes = 99\n')
    user_error(run("opt", "c.ir", "--target", "bad.toml"), "lanes")


# -- - for standard input and output -------------------------------------------------------------


def test_check_compile_and_opt_read_stdin(run: Invoke) -> None:
    source = Path(COUNTER).read_text()
    assert ok(run("check", "-", input=source)).stdout == "<stdin>: ok (1 DPF)\n"
    broken = user_error(run("check", "-", input=source.replace("push(id", "push(idd")))
    assert "<stdin>:" in broken.stderr
    ir = ok(run("compile", "-", "--emit", "ir", input=source)).stdout
    assert ir.startswith("module counter")
    assert ok(run("opt", "-", "-p", "dce", input=ir)).stdout.startswith("module counter")


def test_compile_object_to_stdout_with_the_report_on_stderr(run: Invoke) -> None:
    result = ok(run("compile", COUNTER, "-o", "-"))
    assert json.loads(result.stdout)["format"] == "dpfc-object"
    assert "counter.counter: 1 EU on tofino1" in result.stderr
    assert "wrote" not in result.stderr


def test_asm_and_disasm_use_stdin_and_stdout(run: Invoke) -> None:
    text = Path(CACHE_GET_ASM).read_text()
    options = ok(run("asm", "-", "--emit", "options", "-o", "-", input=text))
    assert "cache_get: target tofino1" in options.stderr  # the size report
    raw = options.stdout_bytes
    assert raw[:2] == b"\xff\xf0"  # the SwitchVM option class
    explained = ok(run("disasm", "-", "--input", "options", input=raw))
    assert "prolog" in explained.stdout
    pcap = ok(run("asm", CACHE_GET_ASM, "-o", "-", "--emit", "pcap")).stdout_bytes
    assert "packet 1 of 1" in ok(run("disasm", "-", "--input", "pcap", input=pcap)).stdout
    assert "packet 1 of 1" in ok(run("disasm", "-", input=pcap)).stdout  # by its magic


# -- several --emit kinds from one compile ------------------------------------------------------


def test_several_kinds_from_one_compile(
    run: Invoke, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = []
    real = schedule_module  # what the compile driver calls

    def counting(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(compile_driver, "schedule_module", counting)
    kinds = "obj,asm,header,pcap,schedule,ast,ir,opt-ir"
    result = ok(run("compile", KVS, "--emit", kinds, "-o", "out/kvs.dpfo", "--dpf", "cache_get"))
    assert len(calls) == 1  # one schedule (one Z3 run) for every kind
    names = sorted(p.name for p in (tmp_path / "out").iterdir())
    extensions = [
        ".dpfo",
        ".s",
        ".hex",
        ".pcap",
        ".schedule.txt",
        ".canonical.dpf",
        ".ir",
        ".opt.ir",
    ]
    assert names == sorted(f"kvs{ext}" for ext in extensions)
    for name in names:
        size = (tmp_path / "out" / name).stat().st_size
        assert f"wrote {Path('out') / name} ({size} bytes)" in result.stderr
    assert "kvs.cache_get: 4 EUs" in result.stdout  # the report: outputs are files
    # A directory names the stem after the source.
    ok(run("compile", COUNTER, "--emit", "obj,asm", "-o", "dir/"))
    assert sorted(p.name for p in (tmp_path / "dir").iterdir()) == ["counter.dpfo", "counter.s"]


def test_several_kinds_need_a_stem_and_never_overwrite_the_source(
    run: Invoke, tmp_path: Path
) -> None:
    user_error(run("compile", COUNTER, "--emit", "obj,asm"), "-o STEM", "out/x.dpfo")
    user_error(run("compile", COUNTER, "--emit", "obj,asm", "-o", "-"), "-o STEM")
    (tmp_path / "m.canonical.dpf").write_text(Path(COUNTER).read_text())
    user_error(
        run("compile", "m.canonical.dpf", "--emit", "ast,obj", "-o", "m"),
        "would overwrite the source",
    )


# -- "wrote FILE (N bytes)" on stderr ------------------------------------------------------------


def _wrote(result: Result, tmp_path: Path, name: str) -> None:
    size = (tmp_path / name).stat().st_size
    assert f"wrote {name} ({size} bytes)\n" in result.stderr, result.stderr
    assert "wrote" not in result.stdout


def test_every_written_file_is_announced_on_stderr(run: Invoke, tmp_path: Path) -> None:
    _wrote(ok(run("compile", COUNTER, "-o", "c.dpfo")), tmp_path, "c.dpfo")
    _wrote(ok(run("compile", COUNTER, "--emit", "ir", "-o", "c.ir")), tmp_path, "c.ir")
    _wrote(ok(run("opt", "c.ir", "-o", "o.ir")), tmp_path, "o.ir")
    _wrote(ok(run("asm", COUNTER_ASM, "-o", "a.dpfo")), tmp_path, "a.dpfo")
    _wrote(ok(run("disasm", "a.dpfo", "-o", "a.txt")), tmp_path, "a.txt")
    _wrote(ok(run("packet", "--tenant", "3", "-o", "p.pcap")), tmp_path, "p.pcap")
    _wrote(ok(run("link", "c.dpfo", "-o", "c.dpfimg")), tmp_path, "c.dpfimg")
    scenario = str(ROOT / "examples" / "scenarios" / "counter.toml")
    _wrote(ok(run("run", scenario, "--trace-file", "t.txt")), tmp_path, "t.txt")
    svg = ok(run("compile", COUNTER, "--schedule-svg", "s.svg", "-o", "c.dpfo"))
    _wrote(svg, tmp_path, "s.svg")


# -- the progress line ---------------------------------------------------------------------------


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_progress_prints_only_after_the_delay_and_erases_itself() -> None:
    clock, stream = FakeClock(), io.StringIO()
    with Progress(stream, rewrite=True, delay=1.0, clock=clock) as progress:
        progress("scheduling m.a (z3, 3 EUs asked)")
        assert stream.getvalue() == ""
        clock.now = 1.5
        progress("scheduling m.a (z3, 2 EUs asked)")
        assert stream.getvalue() == "\r\x1b[Kdpfc: scheduling m.a (z3, 2 EUs asked)..."
    assert stream.getvalue().endswith("...\r\x1b[K")  # nothing left on the line
    quiet = io.StringIO()
    with Progress(quiet, rewrite=True, delay=1.0, clock=FakeClock()) as progress:
        progress("scheduling m.a (greedy)")
    assert quiet.getvalue() == ""  # a compile shorter than the delay says nothing


def test_compile_shows_progress_unless_quiet_or_json(
    run: Invoke, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(progress_module, "DELAY_S", 0.0)
    monkeypatch.setenv("DPFC_PROGRESS", "always")
    args = ("compile", KVS, "--dpf", "cache_get", "--no-cache", "--no-report", "-o", "k.dpfo")
    shown = ok(run(*args)).stderr
    assert "dpfc: scheduling kvs.cache_get (greedy)...\n" in shown
    # (its EU count is proven by the bound: Z3 only lowers the bundles)
    assert "dpfc: scheduling kvs.cache_get (z3, lowering bundles at 4 EUs)...\n" in shown
    asked = ok(run("compile", str(DPF / "telemetry.dpf"), "--no-cache", "-o", "t.dpfo")).stderr
    assert re.search(r"dpfc: scheduling telemetry\.\w+ \(z3, \d EUs? asked\)\.\.\.\n", asked)
    assert "scheduling" not in ok(run(*args, "--no-progress")).stderr
    assert "scheduling" not in ok(run(*args, "-q")).stderr
    assert "scheduling" not in ok(run(*args, "--diagnostics-format", "json")).stderr
    monkeypatch.setenv("DPFC_PROGRESS", "auto")  # stderr is no terminal here
    assert "scheduling" not in ok(run(*args)).stderr


# -- -q: one meaning on every command ------------------------------------------------------------


@pytest.mark.parametrize("command", sorted(commands()), ids=" ".join)
def test_every_command_takes_quiet_with_one_meaning(run: Invoke, command: tuple[str, ...]) -> None:
    help_text = " ".join(ok(run(*command, "--help")).stdout.split())
    assert "-q, --quiet print nothing but diagnostics and the output asked for" in help_text


def test_quiet_prints_nothing_but_diagnostics_and_the_output(run: Invoke, tmp_path: Path) -> None:
    quiet = [
        ("check", COUNTER, "-q"),
        ("compile", COUNTER, "-o", "c.dpfo", "-q"),
        ("asm", COUNTER_ASM, "-o", "a.dpfo", "-q"),
        ("-q", "link", "c.dpfo", "-o", "c.dpfimg"),  # before the subcommand too
        ("deploy", "c.dpfimg", "--switch", "sim://", "-q"),
        ("p4", "-o", "p4", "-q"),
        ("run", str(ROOT / "examples" / "scenarios" / "counter.toml"), "-q", "--out-dir", "o"),
    ]
    for args in quiet:
        result = ok(run(*args))
        assert result.stderr == "", (args, result.stderr)
        if args[0] != "run":  # the report is what `dpfc run` is asked for
            assert result.stdout == "", (args, result.stdout)
    assert (tmp_path / "c.dpfimg").is_file() and (tmp_path / "o" / "server.pcap").is_file()
    # the output asked for still comes, and so do the diagnostics
    assert ok(run("compile", COUNTER, "--emit", "ir", "-q")).stdout.startswith("module counter")
    user_error(run("check", "missing.dpf", "-q"), "cannot read missing.dpf")


def test_the_narrower_switches_have_their_own_names(run: Invoke) -> None:
    ok(run("compile", COUNTER, "-o", "c.dpfo"))
    ok(run("link", "c.dpfo", "-o", "c.dpfimg"))
    steps = ok(run("deploy", "c.dpfimg", "--switch", "sim://")).stdout.splitlines()
    summary = ok(run("deploy", "c.dpfimg", "--switch", "sim://", "--no-steps")).stdout
    assert len(steps) > 1 and summary.splitlines() == steps[-1:]
    assert summary.startswith("deployed image ")
    reported = ok(run("compile", COUNTER, "-o", "c.dpfo", "--no-progress"))
    assert (
        "counter.counter: 1 EU on tofino1" in reported.stdout and "wrote c.dpfo" in reported.stderr
    )


# -- --time-passes and the wording of reports ----------------------------------------------------


def test_time_passes_includes_the_scheduler_and_code_generation(run: Invoke) -> None:
    stderr = ok(run("compile", KVS, "--time-passes", "--no-report", "-o", "k.dpfo")).stderr
    assert "; pass timings" in stderr and "; back-end timings" in stderr
    assert re.search(r";\s+[\d.]+\s+[\d.]+  schedule \(3 DPFs, z3\)", stderr)
    assert re.search(r";\s+[\d.]+\s+[\d.]+    in the solver: kvs\.cache_get", stderr)
    assert re.search(r";\s+[\d.]+\s+[\d.]+  generate code", stderr)


def test_greedy_report_wording(run: Invoke) -> None:
    stdout = ok(run("compile", KVS, "--scheduler", "greedy", "-o", "k.dpfo")).stdout
    assert "kvs.cache_put: 1 EU on tofino1, 1 EU bundle, 1 selector, no solver\n" in stdout
    assert "  greedy scheduler: EUs not proven minimal\n" in stdout
    assert "greedy: " not in stdout  # nothing to compare the greedy schedule with
    grid = ok(run("compile", KVS, "--scheduler", "greedy", "--emit", "schedule")).stdout
    assert "kvs.cache_put on tofino1: 1 EU, greedy scheduler; 1 bundle, 1 selector" in grid
    assert "greedy scheduler; greedy:" not in grid


def test_run_says_code_bytes_and_frame_bytes(run: Invoke) -> None:
    scenario = str(ROOT / "examples" / "scenarios" / "cache_get.toml")
    stdout = ok(run("run", scenario)).stdout
    assert "code 8 bundles (92 bytes), frame 208 bytes" in stdout
    assert "stack [0x64, 0x6f6e6531, 0x6f6e6532, 0x6f6e6533], frame 128 bytes" in stdout
    report = json.loads(ok(run("run", scenario, "--json")).stdout)
    frames = [o["frame"] for p in report["packets"] for s in p["passes"] for o in s["outputs"]]
    assert {(f["code_bundles"], f["code_bytes"], f["bytes"]) for f in frames if "code_bytes" in f}
    assert (8, 92, 208) in {(f["code_bundles"], f.get("code_bytes"), f["bytes"]) for f in frames}


def _chain(tmp_path: Path, links: int) -> str:
    """A DPF whose dependence chain needs about 2 EUs per link."""
    lines = ["module deep;", "", "@target(tofino1) @placement(packet)", "dpf deep(x: u32) {"]
    previous = "x"
    for k in range(links):
        lines.append(f"    let v{k} = ({previous} ^ {k + 3}) + {previous};")
        previous = f"v{k}"
    lines += [f"    push({previous});", "}"]
    path = tmp_path / f"deep{links}.dpf"
    path.write_text("\n".join(lines) + "\n")
    return path.name


def test_dpf6026_suggests_only_a_profile_with_enough_eus(run: Invoke, tmp_path: Path) -> None:
    six = user_error(run("compile", _chain(tmp_path, 3)), "error[DPF6026]", "needs at least 6")
    assert "a profile with 6 EUs or more (--target tofino2)" in six.stderr
    ten = user_error(run("compile", _chain(tmp_path, 5)), "error[DPF6026]", "needs at least 10")
    assert "tofino2" not in ten.stderr
    assert "no built-in profile has 10 EUs or more" in ten.stderr


def test_disasm_names_the_command_for_source_and_assembly(run: Invoke, tmp_path: Path) -> None:
    user_error(run("disasm", COUNTER), "is DPF source", "use `dpfc check` or `dpfc compile`")
    user_error(run("disasm", COUNTER_ASM), "is SwitchVM assembly", "use `dpfc asm FILE --disasm`")
    (tmp_path / "noext").write_text(Path(COUNTER).read_text())
    source = user_error(run("disasm", "noext"), "noext is DPF source")
    assert "EtherType" not in source.stderr
    user_error(run("disasm", "-", input=Path(COUNTER_ASM).read_text()), "<stdin> is SwitchVM")


# -- the README table ----------------------------------------------------------------------------


def readme_rows() -> list[tuple[tuple[str, ...], set[str]]]:
    """(command words, options) of every command in the README's "What is here" table."""
    text = (ROOT / "README.md").read_text()
    table = text.split("## What is here", 1)[1].split("\n\n", 2)[1]
    rows = []
    for line in table.splitlines()[2:]:
        first = line.split(" | ")[0]
        for usage in re.findall(r"`(dpfc [^`]+)`", first):
            words = []
            for word in usage.split()[1:]:
                if not re.fullmatch(r"[a-z][a-z0-9]*", word):
                    break
                words.append(word)
            rows.append((tuple(words), set(re.findall(r"(?<![\w-])(--?[a-z][\w-]*)", usage))))
    return rows


def test_readme_table_lists_every_command() -> None:
    listed = {words for words, _ in readme_rows()}
    missing = set(commands()) - listed
    assert not missing, f"commands missing from the README table: {sorted(missing)}"


# ids from sorted words: parallel workers must collect the same ids (a set's order is not fixed)
@pytest.mark.parametrize(
    ("words", "options"),
    readme_rows(),
    ids=lambda v: " ".join(sorted(v)) if isinstance(v, set) else str(v),
)
def test_readme_table_options_exist(run: Invoke, words: tuple[str, ...], options: set[str]) -> None:
    help_text = ok(run(*words, "--help")).stdout
    for option in sorted(options):
        assert re.search(rf"(?<![\w-]){re.escape(option)}\b", help_text), (
            f"README lists `{option}` for `dpfc {' '.join(words)}`, its --help does not"
        )
