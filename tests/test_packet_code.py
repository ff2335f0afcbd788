"""``dpfc packet --code FILE`` takes SwitchVM assembly or a dpfc object of one DPF.

* An object is told apart by its format (a JSON document of ``"format": "dpfc-object"``),
  whatever its name; the packet is byte for byte the one its assembly gives, and the one
  ``dpfc compile --emit pcap`` writes for the same DPF.
* Assembly keeps working; any other file is a user error (exit 1, no traceback) that says
  what the file is and what ``--code`` takes: DPF source, an install image, a pcap, binary
  data, an object of several DPFs, a JSON document that is not a dpfc object (DPF6202).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import Result

from dpfc.packet import read_pcap
from tests.conftest import ROOT, Invoke, dpfc_in

CACHE_GET = str(ROOT / "examples" / "asm" / "cache_get.dpfasm")
LB1 = str(ROOT / "examples" / "dpf" / "lb1.dpf")
KVS = str(ROOT / "examples" / "dpf" / "kvs.dpf")


@pytest.fixture
def run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Invoke:
    return dpfc_in(tmp_path, monkeypatch)


def ok(result: Result) -> Result:
    assert result.exit_code == 0, result.output
    return result


def refused(result: Result, *fragments: str) -> None:
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output and "internal compiler error" not in result.stderr
    for fragment in fragments:
        assert fragment in result.stderr, result.stderr


def test_an_object_gives_the_packet_its_assembly_gives(run: Invoke, tmp_path: Path) -> None:
    ok(run("asm", CACHE_GET, "-o", "cg.dpfo"))
    shutil.copy(tmp_path / "cg.dpfo", tmp_path / "named-anyhow.txt")  # the format tells
    frames = []
    for code in (CACHE_GET, "cg.dpfo", "named-anyhow.txt"):
        out = f"{Path(code).name}.bin"
        result = ok(run("packet", "--tenant", "9", "--code", code, "--stack", "42", "-o", out))
        assert "cache_get" in result.stdout or "NEXT_PC" in result.stdout
        frames.append((tmp_path / out).read_bytes())
    assert frames[0] == frames[1] == frames[2]


def test_a_compiled_object_gives_the_packet_compile_writes(run: Invoke, tmp_path: Path) -> None:
    ok(run("compile", LB1, "-o", "lb1.dpfo", "--no-report"))
    ok(run("compile", LB1, "--emit", "pcap", "-o", "lb1.pcap", "--stack", "5", "--no-report"))
    ok(run("packet", "--tenant", "1", "--code", "lb1.dpfo", "--stack", "5", "-o", "p.pcap"))
    assert read_pcap(str(tmp_path / "p.pcap")) == read_pcap(str(tmp_path / "lb1.pcap"))


def test_other_files_are_named_for_what_they_are(run: Invoke, tmp_path: Path) -> None:
    takes = "--code takes SwitchVM assembly (.dpfasm) or a dpfc object (.dpfo)"
    refused(run("packet", "--tenant", "1", "--code", LB1), "is DPF source", "dpfc compile", takes)
    ok(run("compile", LB1, "-o", "lb1.dpfo", "--no-report"))
    ok(run("link", "lb1.dpfo", "-o", "lb1.dpfimg"))
    refused(run("packet", "--tenant", "1", "--code", "lb1.dpfimg"), "is an install image", takes)
    ok(run("packet", "--tenant", "1", "-o", "p.pcap"))
    refused(run("packet", "--tenant", "1", "--code", "p.pcap"), "is a pcap file", takes)
    (tmp_path / "noise").write_bytes(bytes(range(256)))
    refused(run("packet", "--tenant", "1", "--code", "noise"), "neither text nor a dpfc object")
    ok(run("compile", KVS, "-o", "kvs.dpfo", "--no-report"))
    refused(
        run("packet", "--tenant", "1", "--code", "kvs.dpfo"),
        "kvs.dpfo holds 3 DPFs (kvs.cache_get, kvs.cache_put, kvs.empty)",
        "--dpf NAME",
    )
    (tmp_path / "other.json").write_text('{"format": "something-else"}\n')
    refused(
        run("packet", "--tenant", "1", "--code", "other.json"),
        "error[DPF6202]",
        '`format` must be "dpfc-object"',
    )
    (tmp_path / "bad.dpfasm").write_text(".dpf x\nprolog p:\n    FROB A0\n")
    refused(run("packet", "--tenant", "1", "--code", "bad.dpfasm"), "bad.dpfasm:3:")
