"""docs/packets.md cannot rot: its commands print what the page shows, its scapy examples
run as doctests (in a fresh interpreter: the page shows what scapy does *before* dpfc.packet
is imported), and dpfc.packet binds its layers on import while ``import dpfc`` does not.

A ```` ```console ```` block holds ``$ `` commands, each followed by its output (stdout and
stderr together); a ``...`` line matches any run of lines. Commands run in order in one
scratch directory where ``examples/`` is the repository's; ``dpfc`` is this checkout's
(``python -m dpfc``). tcpdump commands are skipped, with a reason, where tcpdump is missing.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.conftest import ROOT

PAGE = ROOT / "docs" / "packets.md"


@dataclass
class Command:
    line: int
    text: str
    expected: list[str] = field(default_factory=list)


def commands(page: str) -> list[Command]:
    out: list[Command] = []
    in_block = False
    for number, line in enumerate(page.splitlines(), start=1):
        if line.strip() in ("```console", "```"):
            in_block = line.strip() == "```console"
        elif in_block and line.startswith("$ "):
            out.append(Command(number, line[2:]))
        elif in_block and out:
            out[-1].expected.append(line)
    return out


def matches(expected: list[str], actual: list[str]) -> bool:
    if not expected:
        return not actual
    head, rest = expected[0], expected[1:]
    if head == "...":
        return any(matches(rest, actual[i:]) for i in range(len(actual) + 1))
    return bool(actual) and actual[0].rstrip() == head.rstrip() and matches(rest, actual[1:])


def _env() -> dict[str, str]:
    return dict(os.environ, PYTHONPATH=str(ROOT), COLUMNS="100", NO_COLOR="1", TZ="UTC")


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The page's commands, run in order (the doctests read the files they write)."""
    where = tmp_path_factory.mktemp("packets")
    (where / "examples").symlink_to(ROOT / "examples")
    for command in commands(PAGE.read_text(encoding="utf-8")):
        if command.text.startswith("tcpdump") and shutil.which("tcpdump") is None:
            continue  # test_tcpdump_reads_the_pcaps skips with the reason
        script = f'dpfc() {{ "{sys.executable}" -m dpfc "$@"; }}\n{command.text}'
        run = subprocess.run(
            ["bash", "-c", script],
            cwd=where,
            env=_env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            timeout=300,
        )
        assert run.returncode == 0 and matches(command.expected, run.stdout.splitlines()), (
            f"docs/packets.md:{command.line}: $ {command.text}\n"
            f"exit {run.returncode}; it printed:\n{run.stdout}"
        )
    return where


def test_the_page_has_its_commands() -> None:
    texts = [c.text for c in commands(PAGE.read_text(encoding="utf-8"))]
    assert any(t.startswith("dpfc packet") for t in texts)
    assert any(t.startswith("tcpdump") for t in texts)


def test_the_commands_print_what_the_page_shows(scratch: Path) -> None:
    assert (scratch / "guard.pcap").exists() and (scratch / "out" / "server.pcap").exists()


def test_tcpdump_reads_the_pcaps(scratch: Path) -> None:
    if shutil.which("tcpdump") is None:
        pytest.skip("tcpdump is not installed")
    for pcap in ("guard.pcap", "out/server.pcap"):
        run = subprocess.run(
            ["tcpdump", "-r", pcap, "-t", "-nn"],
            cwd=scratch,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert run.returncode == 0, run.stderr
        assert "Geneve" in run.stdout and "vni 0x7" in run.stdout


def test_the_scapy_examples_run(scratch: Path) -> None:
    run = subprocess.run(
        [sys.executable, "-m", "doctest", "-o", "ELLIPSIS", str(PAGE)],
        cwd=scratch,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stdout + run.stderr


def test_import_dpfc_packet_binds_the_layers_and_import_dpfc_does_not() -> None:
    probe = (
        "import sys, dpfc; assert 'scapy' not in sys.modules, 'import dpfc loaded scapy'\n"
        "import dpfc.packet.layers\n"
        "from scapy.all import Ether\n"
        "from dpfc.packet import build_frame, build_inner, SwitchVMHeaderOption\n"
        "from dpfc.encoding import SwitchVMHeader, encode_options\n"
        "from dpfc.target import BUILTIN_PROFILES\n"
        "options = encode_options(SwitchVMHeader(app_id=5), BUILTIN_PROFILES['tofino1']).data\n"
        "frame = build_frame(tenant_id=3, options=options, inner=build_inner(b''))\n"
        "assert Ether(frame)[SwitchVMHeaderOption].app_id == 5\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", probe], env=_env(), capture_output=True, text=True, timeout=120
    )
    assert run.returncode == 0, run.stderr
