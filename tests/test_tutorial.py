"""docs/tutorial.md cannot rot: every command block runs, and its output is what the page shows.

A ```` ```console ```` block holds commands (``$ `` lines, ``\\`` continues one) each followed by
the output it prints, stdout and stderr together as a terminal shows them (``> `` lines
continue a command over several lines, as the shell's prompt shows them). A line ``...``
stands for any number of lines (output that depends on the machine, such as timings), and a
command ending in ``# exit N`` must exit with N (every other command with 0); ``[...]``
stands for any text within a line. A listing after ``<!-- file: PATH -->`` must be that
file. The blocks run
in order, starting in a scratch directory that stands for the repository's top directory
(its ``examples/`` is the repository's), each command in the directory the one before it
left (``cd`` carries over, as in a reader's shell), so a file one command writes is what the
next one reads. The tutorial works in a directory of its own: when it is done, the top
directory holds nothing new but that directory. Pictures the page embeds
(``![..](tutorial/NAME.svg)``) must be what the commands write: the page's command writes
``NAME.svg`` in the directory the tutorial works in, and it is compared with
``docs/tutorial/NAME.svg`` (``DPFC_BLESS=1`` copies it there).
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import ROOT, assert_golden

TUTORIAL = ROOT / "docs" / "tutorial.md"
PICTURES = ROOT / "docs" / "tutorial"
EXIT = re.compile(r"\s+# exit (\d+)$")


@dataclass
class Command:
    line: int  # in the page, for the failure message
    text: str
    expected: list[str]
    exit_code: int


def commands(page: str) -> list[Command]:
    out: list[Command] = []
    in_block = False
    current: Command | None = None
    pending = ""
    for number, line in enumerate(page.splitlines(), start=1):
        if not in_block:
            in_block = line.strip() == "```console"
            continue
        if line.strip() == "```":
            in_block, current = False, None
            continue
        if pending or line.startswith("$ "):
            text = pending + (line.lstrip() if pending else line[2:])
            if text.endswith("\\"):
                pending = text[:-1].rstrip() + " "
                continue
            pending = ""
            match = EXIT.search(text)
            code = int(match.group(1)) if match else 0
            current = Command(number, text[: match.start()] if match else text, [], code)
            out.append(current)
        elif current is not None and not current.expected and line.startswith("> "):
            current.text += "\n" + line[2:]  # the shell's continuation prompt
        elif current is not None:
            current.expected.append(line)
    return out


def line_matches(expected: str, actual: str) -> bool:
    """Exact but for trailing blanks; ``[...]`` stands for any text within the line."""
    parts = [re.escape(part) for part in expected.rstrip().split("[...]")]
    return re.fullmatch(".*".join(parts), actual.rstrip()) is not None


def matches(expected: list[str], actual: list[str]) -> bool:
    """``...`` lines match any run of lines; the others match line by line."""
    if not expected:
        return not actual
    head, rest = expected[0], expected[1:]
    if head == "...":
        return any(matches(rest, actual[i:]) for i in range(len(actual) + 1))
    return bool(actual) and line_matches(head, actual[0]) and matches(rest, actual[1:])


def listings(page: str) -> list[tuple[str, str]]:
    """(file, listing) for each code block after a ``<!-- file: PATH -->`` line."""
    found = re.findall(r"<!-- file: (\S+) -->\n```\w*\n(.*?)```", page, flags=re.S)
    return [(path, text) for path, text in found]


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    where = tmp_path_factory.mktemp("tutorial")
    (where / "examples").symlink_to(ROOT / "examples")
    return where


def test_the_tutorial_has_commands() -> None:
    found = commands(TUTORIAL.read_text(encoding="utf-8"))
    assert len(found) >= 10, "docs/tutorial.md lost its command blocks"


def test_every_listing_of_the_tutorial_is_its_file() -> None:
    found = listings(TUTORIAL.read_text(encoding="utf-8"))
    assert found, "docs/tutorial.md lost its listings"
    for path, text in found:
        assert (ROOT / path).read_text(encoding="utf-8") == text, f"the listing of {path}"


def in_shell(text: str, state: Path) -> str:
    """``text`` for ``bash -c``, keeping its exit status and leaving the directory it ended
    in in ``state`` (so the next command starts there)."""
    return f"{text}\n__status=$?\npwd > {shlex.quote(str(state))}\nexit $__status"


def test_every_command_of_the_tutorial_prints_what_the_page_shows(
    scratch: Path, tmp_path: Path
) -> None:
    page = TUTORIAL.read_text(encoding="utf-8")
    env = dict(os.environ, COLUMNS="100", NO_COLOR="1", PYTHONUNBUFFERED="1")
    # A reader's first compile: no schedule cached by the tests that ran before this one.
    env["DPFC_CACHE_DIR"] = str(tmp_path / "schedule-cache")
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    state = tmp_path / "cwd"
    cwd = scratch
    for command in commands(page):
        run = subprocess.run(
            ["bash", "-c", in_shell(command.text, state)],
            cwd=cwd,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            timeout=600,
        )
        actual = run.stdout.splitlines()
        assert run.returncode == command.exit_code and matches(command.expected, actual), (
            f"docs/tutorial.md:{command.line}: $ {command.text}\n"
            f"exit {run.returncode} (expected {command.exit_code}); it printed:\n" + run.stdout
        )
        cwd = Path(state.read_text(encoding="utf-8").strip())
    # Everything the tutorial wrote is in its own directory, none in the top directory.
    (work,) = [p for p in scratch.iterdir() if p.name != "examples"]
    assert cwd == work and work.is_dir()
    for name in re.findall(r"!\[[^\]]*\]\(tutorial/([^)]+\.svg)\)", page):
        written = work / name
        assert written.exists(), f"the tutorial embeds {name}, which no command of it writes"
        assert_golden(PICTURES / name, written.read_text(encoding="utf-8"))


def test_a_directory_change_carries_over_to_the_next_command(tmp_path: Path) -> None:
    state = tmp_path / "cwd"
    (tmp_path / "a").mkdir()
    first = subprocess.run(["bash", "-c", in_shell("cd a && false", state)], cwd=tmp_path)
    assert first.returncode == 1 and state.read_text().strip() == str(tmp_path / "a")


def test_the_page_reader_splits_commands_and_their_output() -> None:
    page = (
        "text\n```console\n$ echo a \\\n  b\na b\n$ false  # exit 1\n$ echo '1\n> 2'\n1\n2\n"
        "```\n$ not a command\n"
    )
    (first, second, third) = commands(page)
    assert (first.text, first.expected, first.exit_code) == ("echo a b", ["a b"], 0)
    assert (second.text, second.expected, second.exit_code) == ("false", [], 1)
    assert (third.text, third.expected) == ("echo '1\n2'", ["1", "2"])


def test_ellipsis_lines_match_any_run_of_lines() -> None:
    assert matches(["a", "...", "d"], ["a", "b", "c", "d"])
    assert matches(["a", "...", "d"], ["a", "d"])
    assert not matches(["a", "...", "d"], ["a", "b"])
    assert not matches(["a"], ["a", "b"])
    assert matches(["Z3 [...] s"], ["Z3 0.83 s"])
    assert not matches(["Z3 [...] s"], ["Z3 0.83 ms"])
