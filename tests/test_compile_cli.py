"""``dpfc compile`` (emits, reports, --explain, --schedule-svg), object files and
``dpfc disasm --source``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from dpfc.cli.main import main
from dpfc.codegen.objfile import read_object, write_module_object
from dpfc.diagnostics import DiagnosticError
from dpfc.encoding.header import decode_options
from dpfc.packet.layers import read_pcap
from dpfc.packet.wire import parse_packet
from dpfc.pipeline import compile_file
from dpfc.target import BUILTIN_PROFILES
from tests.conftest import ROOT

KVS = str(ROOT / "examples" / "dpf" / "kvs.dpf")
TOFINO1 = BUILTIN_PROFILES["tofino1"]


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_compile_writes_an_object_and_prints_the_report(tmp_path: Path) -> None:
    out = tmp_path / "kvs.dpfo"
    code, stdout, _ = run("compile", KVS, "-o", str(out))
    assert code == 0
    assert "kvs.cache_get: 4 EUs on tofino1 (proven optimal" in stdout
    assert "in-packet SwitchVM options: 104 bytes" in stdout
    assert "memory words    45000" in stdout
    document = read_object(out.read_bytes(), str(out))
    assert [d["name"] for d in document["dpfs"]] == ["cache_get", "cache_put", "empty"]
    get = document["dpfs"][0]
    assert get["relocations"] == [
        {"bundle": "exit_n2", "field": "next_pc", "target": "count_min.count_min"}
    ]
    assert {a["name"]: (a["eu"], a["lane"]) for a in get["arrays"]}["hits"] == (3, 0)


def test_objects_are_deterministic_bytes() -> None:
    first = write_module_object([u.compiled for u in compile_file(KVS, TOFINO1).units])
    second = write_module_object([u.compiled for u in compile_file(KVS, TOFINO1).units])
    assert first == second and first.endswith(b"\n")


@pytest.mark.parametrize(
    ("mutate", "reason"),
    [
        (lambda d: d.update(format="other"), "`format` must be"),
        (lambda d: d.update(version=9), "unsupported `version` 9"),
        (lambda d: d["dpfs"][0].update(entry="nowhere"), "`dpfs[0].entry` names no bundle"),
        (lambda d: d["dpfs"][0]["bundles"][0].update(source=[]), "one entry per asm line"),
        (lambda d: d["dpfs"][0].update(params="1"), "`dpfs[0].params` must be int"),
    ],
)
def test_malformed_objects_are_rejected_with_a_reason(mutate: object, reason: str) -> None:
    data = write_module_object([u.compiled for u in compile_file(KVS, TOFINO1).units])
    document = json.loads(data)
    mutate(document)  # type: ignore[operator]
    with pytest.raises(DiagnosticError) as info:
        read_object(json.dumps(document).encode(), "bad.dpfo")
    assert info.value.diagnostics[0].code == "DPF6202"
    assert reason in info.value.diagnostics[0].message
    with pytest.raises(DiagnosticError):
        read_object(b"\xff not json", "bad.dpfo")


def test_header_and_pcap_carry_the_in_packet_code(tmp_path: Path) -> None:
    code, stdout, stderr = run("compile", KVS, "--emit", "header", "--dpf", "cache_get")
    assert code == 0 and stdout.startswith("cache_get: ")
    options = bytes.fromhex(stdout.split(": ")[1].strip())
    header = decode_options(options, TOFINO1)
    assert len(header.code.eus) == 4
    assert "kvs.cache_get" in stderr  # the report goes to stderr when stdout is the output
    pcap = tmp_path / "kvs.pcap"
    code, _, _ = run("compile", KVS, "--emit", "pcap", "--stack", "42", "-o", str(pcap))
    assert code == 0
    frames = read_pcap(str(pcap))
    assert len(frames) == 2  # cache_get and cache_put (empty is in-switch)
    parsed = parse_packet(frames[0], TOFINO1)
    assert parsed.header is not None and parsed.header.stack == (42,)
    code, _, stderr = run("compile", KVS, "--emit", "pcap")
    assert code == 1 and "needs -o FILE" in stderr


def test_explain_svg_asm_and_disasm_source(tmp_path: Path) -> None:
    svg = tmp_path / "get.svg"
    code, stdout, _ = run(
        "compile",
        KVS,
        "--dpf",
        "cache_get",
        "--explain",
        "--schedule-svg",
        str(svg),
        "--no-report",
        "-o",
        str(tmp_path / "o.dpfo"),
    )
    assert code == 0
    assert "EU1  root" in stdout and "BSET" in stdout and "L38" in stdout
    assert svg.read_text().startswith("<svg")
    code, stdout, _ = run("compile", KVS, "--emit", "asm", "--no-report")
    assert code == 0 and "FAADD B0, [A0]" in stdout and "kvs.dpf:43: hits[i] += 1;" in stdout
    code, stdout, _ = run("disasm", "--source", str(tmp_path / "o.dpfo"))
    assert code == 0
    assert "LOAD B0, [A0]" in stdout and "kvs.dpf:37: let tuple = index[key];" in stdout
    code, _, stderr = run("disasm", "--source", KVS)
    assert code == 1 and "DPF6202" in stderr


def test_greedy_scheduler_option_and_a_diagnostic_for_an_unknown_dpf() -> None:
    code, stdout, _ = run("compile", KVS, "--scheduler", "greedy", "--emit", "schedule")
    assert code == 0 and "(greedy)" in stdout
    code, _, stderr = run("compile", KVS, "--dpf", "nope")
    assert code == 1 and "no DPF `nope`" in stderr
