"""``dpfc compile`` (emits, reports, --explain, --schedule-svg), object files and
``dpfc disasm --source``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from dpfc.cli.main import main
from dpfc.diagnostics import DiagnosticError
from dpfc.driver import CompileOptions, compile_source
from dpfc.encoding import decode_options
from dpfc.machine import encode_program
from dpfc.objfile import read_object, write_object
from dpfc.packet.layers import read_pcap
from dpfc.packet.wire import parse_packet
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
    assert "kvs.cache_get: 4 EUs on tofino1, 5 EU bundles" in stdout
    assert "  EUs proven minimal (bound); bundles and instructions proven minimal" in stdout
    assert "in-packet SwitchVM options: 104 bytes" in stdout
    assert "memory words    45000" in stdout
    obj = read_object(out.read_bytes(), str(out))
    assert [d.symbol for d in obj.dpfs] == ["kvs.cache_get", "kvs.cache_put", "kvs.empty"]
    get = obj.dpfs[0]
    assert [(r.label, r.target) for r in get.program.relocations] == [
        ("exit_n2", "count_min.count_min")
    ]
    assert {a.name: (a.eu, a.lane) for a in get.program.arrays}["kvs.hits"] == (3, 0)
    # The object's bytes are the encoder's: the in-packet options and the switch form.
    assert get.encoded.options == encode_program(get.program).options
    assert get.encoded.switch_form is not None


def _kvs_object() -> bytes:
    return write_object(compile_source(KVS, CompileOptions(target=TOFINO1)).object())


def test_objects_are_deterministic_bytes() -> None:
    first = _kvs_object()
    assert first == _kvs_object() and first.endswith(b"\n")
    assert write_object(read_object(first, "kvs.dpfo")) == first


def _swap_word(document: dict[str, Any]) -> None:
    bundles = document["dpfs"][2]["bundles"]
    bundles[0]["word"], bundles[-1]["word"] = bundles[-1]["word"], bundles[0]["word"]


def _debug_version_1_with_registers(document: dict[str, Any]) -> None:
    document["debug_version"] = 1


@pytest.mark.parametrize(
    ("mutate", "reason"),
    [
        (lambda d: d.update(format="other"), "`format` must be"),
        (lambda d: d.update(version=1), "version 1 object; this dpfc reads version 2 only"),
        (lambda d: d.update(format="dpfc-asm-object"), "dpfc asm --emit obj"),
        (lambda d: d["dpfs"][0].update(entry="nowhere"), "`dpfs[0].entry` names no prolog"),
        (lambda d: d["dpfs"][0]["bundles"][0].update(source=[]), "one entry per asm line"),
        (lambda d: d["dpfs"][0].update(params="1"), "`dpfs[0].params` must be an integer"),
        (lambda d: d["dpfs"][0].update(extra=1), "`dpfs[0].extra` is not a field"),
        (lambda d: d["dpfs"][0]["bundles"][1]["asm"].__setitem__(0, "NOP"), "does not match"),
        (lambda d: d["dpfs"][2]["bundles"][0].update(word="00"), "DPF3050"),
        (_swap_word, "DPF3050"),
        (lambda d: d.update(target_fingerprint="0" * 16), "DPF6203"),
        (lambda d: d.update(debug_version=3), "reads debug versions 1 to 2"),
        (lambda d: d["dpfs"][0]["bundles"][0].pop("registers"), "registers` is missing"),
        (lambda d: d["dpfs"][0]["bundles"][0].update(registers={"C0": "x"}), "no register"),
        (lambda d: d["dpfs"][0]["bundles"][0].update(registers={"A0": 1}), "a variable name"),
        (lambda d: d["dpfs"][0]["bundles"][0].update(registers={"A9": "x"}), "no register"),
        (_debug_version_1_with_registers, "`dpfs[0].bundles[0].registers` is not a field"),
    ],
)
def test_malformed_objects_are_rejected_with_a_reason(mutate: object, reason: str) -> None:
    document = json.loads(_kvs_object())
    mutate(document)  # type: ignore[operator]
    with pytest.raises(DiagnosticError) as info:
        read_object(json.dumps(document).encode(), "bad.dpfo")
    diagnostic = info.value.diagnostics[0]
    assert diagnostic.code in ("DPF6202", "DPF6203")
    assert reason in diagnostic.message or reason == diagnostic.code, diagnostic.message
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
