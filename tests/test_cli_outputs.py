"""Every output path is checked before any work: ``-o /nonexistent/x`` is a user error
(DPF0002, exit 1, no traceback) raised while the command line is read, not after the
scheduler ran.

* Each option that names a file or directory a command writes is checked (a table below,
  and a test that no such option of any command is missing from it or unchecked).
* The command's work never starts: its function (or, for ``dpfc compile -o``, whose paths
  depend on the kinds emitted, the compile driver) is replaced by one that fails.
* A directory the command creates (``--out-dir``, ``dpfc p4 -o``, ``compile --emit a,b -o
  STEM``) may be missing if its nearest existing ancestor is a writable directory.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import click
import pytest

from dpfc.cli import lang
from dpfc.cli.files import OutputPath
from dpfc.cli.main import main
from tests.conftest import ROOT, Invoke, dpfc_in
from tests.test_cli_conventions import commands

COUNTER = str(ROOT / "examples" / "dpf" / "counter.dpf")
COUNTER_ASM = str(ROOT / "examples" / "asm" / "counter.dpfasm")
SCENARIO = str(ROOT / "examples" / "scenarios" / "counter.toml")
MISSING = "/nonexistent-dpfc-dir/x"

# (command words, the arguments before the output option, the option)
WRITERS = [
    (("asm",), (COUNTER_ASM,), "-o"),
    (("disasm",), ("in.dpfo",), "-o"),
    (("packet",), ("--tenant", "1"), "-o"),
    (("opt",), ("in.ir",), "-o"),
    (("link",), ("in.dpfo",), "-o"),
    (("p4",), (), "-o"),
    (("p4", "bfrt"), ("in.dpfimg",), "-o"),
    (("compile",), (COUNTER, "--schedule-svg", "s.svg"), "-o"),
    (("compile",), (COUNTER, "--emit", "obj,asm"), "-o"),
    (("compile",), (COUNTER, "-o", "c.dpfo"), "--schedule-svg"),
    (("compile",), (COUNTER, "-o", "c.dpfo"), "--schedule-png"),
    (("run",), (SCENARIO,), "--trace-file"),
    (("run",), (SCENARIO,), "--out-dir"),
    (("deploy",), ("in.dpfimg", "--switch", "sim://"), "--script"),
]
# checked in the command, before the driver, once --emit says which paths it writes
CHECKED_BY_THE_COMMAND = {(("compile",), "-o")}


@pytest.fixture
def run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Invoke:
    return dpfc_in(tmp_path, monkeypatch)


def _no_work(*_args: Any, **_kwargs: Any) -> None:
    raise AssertionError("the command started its work")


# options naming a directory the command creates (with its parents)
CREATES = {(("p4",), "-o"), (("run",), "--out-dir")}


@pytest.mark.parametrize(
    ("words", "before", "option"),
    WRITERS,
    ids=[f"{' '.join(w)} {o} {b[-1:]}" for w, b, o in WRITERS],
)
def test_an_unwritable_output_stops_the_command_before_any_work(
    run: Invoke,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    words: tuple[str, ...],
    before: tuple[str, ...],
    option: str,
) -> None:
    (tmp_path / "blocker").write_text("a file, where a directory is needed\n")
    bad = {"blocker/x": "blocker is not a directory"}
    creates = (words, option) in CREATES or "obj,asm" in before
    if not creates:  # (root could create a missing directory the command would create)
        bad[MISSING] = "no such directory /nonexistent-dpfc-dir"
    for path, reason in bad.items():
        with monkeypatch.context() as patch:
            if (words, option) in CHECKED_BY_THE_COMMAND:
                patch.setattr(lang, "compile_program", _no_work)
            else:
                patch.setattr(_command(words), "callback", _no_work)
            result = run(*words, *before, option, path)
        assert result.exit_code == 1, result.output
        assert f"error[DPF0002]: cannot write {path}" in result.stderr, result.stderr
        assert reason in result.stderr
        assert "Traceback" not in result.output and result.stdout == ""
    assert not Path("/nonexistent-dpfc-dir").exists()


def _command(words: tuple[str, ...]) -> click.Command:
    group: click.Command = main
    for word in words:
        assert isinstance(group, click.Group)
        found = group.get_command(click.Context(group), word)
        assert found is not None
        group = found
    return group


OUTPUT_NAMES = {"output", "trace_file", "out_dir", "script", "schedule_svg", "schedule_png"}


def test_every_output_option_is_checked() -> None:
    listed = {(words, option) for words, _, option in WRITERS}
    for words in commands():
        for param in _command(words).params:
            if not isinstance(param, click.Option) or param.name not in OUTPUT_NAMES:
                continue
            option = min(param.opts, key=len)
            assert (words, option) in listed, f"dpfc {' '.join(words)} {option} is not tested"
            if (words, option) not in CHECKED_BY_THE_COMMAND:
                assert isinstance(param.type, OutputPath), f"dpfc {' '.join(words)} {option}"


def test_directories_the_command_creates_may_be_missing(run: Invoke, tmp_path: Path) -> None:
    assert run("run", SCENARIO, "--out-dir", "new/sub").exit_code == 0
    assert (tmp_path / "new" / "sub" / "server.pcap").is_file()
    assert run("compile", COUNTER, "--emit", "obj,asm", "-o", "out/deep/c").exit_code == 0
    assert sorted(p.name for p in (tmp_path / "out" / "deep").iterdir()) == ["c.dpfo", "c.s"]
    (tmp_path / "file").write_text("")
    refused = run("run", SCENARIO, "--out-dir", "file/sub")
    assert refused.exit_code == 1 and "file is not a directory" in refused.stderr
    into_dir = run("compile", COUNTER, "-o", str(tmp_path))
    assert into_dir.exit_code == 1 and "is a directory" in into_dir.stderr


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into any directory")
def test_a_read_only_directory_is_refused(run: Invoke, tmp_path: Path) -> None:
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        result = run("asm", COUNTER_ASM, "-o", str(locked / "x.dpfo"))
        assert result.exit_code == 1 and "is not writable" in result.stderr
    finally:
        locked.chmod(0o700)
