"""Packet interoperability: scapy's Geneve dissector and tcpdump agree with our parser;
pcap files are deterministic and bad pcap files fail cleanly."""

from __future__ import annotations

import random
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from scapy.contrib.geneve import GENEVE
from scapy.packet import Packet

from dpfc.asm import assemble_text
from dpfc.encoding import OPTION_CLASS, SwitchVMHeader, encode_pc, split_options
from dpfc.isa.bundle import PC, CodeImage
from dpfc.machine import MachineProgram
from dpfc.packet.build import PacketSpec, build_packet
from dpfc.packet.layers import (
    SwitchVMCodeOption,
    SwitchVMHeaderOption,
    SwitchVMStackOption,
    dissect,
    read_pcap,
    write_pcap,
)
from dpfc.packet.wire import ParsedPacket, parse_packet
from dpfc.target.profile import BUILTIN_PROFILES
from tests.conftest import ROOT

TOFINO1 = BUILTIN_PROFILES["tofino1"]
EXAMPLES = ["counter", "cache_get", "lb3_client", "paxos_acceptor"]
STACK_SIZES = [0, 1, 16]
LAYER_OF_TYPE = {1: SwitchVMHeaderOption, 2: SwitchVMCodeOption, 3: SwitchVMStackOption}


def _program(name: str) -> MachineProgram:
    text = (ROOT / "examples" / "asm" / f"{name}.dpfasm").read_text(encoding="utf-8")
    return assemble_text(text, f"{name}.dpfasm")


PROGRAMS = {name: _program(name) for name in EXAMPLES}
IMAGES = [CodeImage(), *(p.image() for p in PROGRAMS.values())]


def _ptr(pc: PC | None) -> int:
    return 0xFFFF if pc is None else encode_pc(pc)


def assert_scapy_agrees(frame: bytes, parsed: ParsedPacket) -> Packet:
    """scapy's dissection of ``frame`` matches our parser's, option by option."""
    header = parsed.header
    assert header is not None
    geneve: Packet = dissect(frame)[GENEVE]  # scapy types a layer lookup as Any
    assert geneve.vni == parsed.tenant_id
    assert geneve.optionlen * 4 == len(parsed.options)
    ours = split_options(parsed.options)
    layers = list(geneve.options)
    assert len(layers) == len(ours)
    for layer, (_, opt_class, opt_type, data) in zip(layers, ours, strict=True):
        assert type(layer) is LAYER_OF_TYPE[opt_type]
        assert (layer.classid, layer.type, layer.reserved) == (opt_class, opt_type, 0)
        assert layer.length * 4 == len(data)
        assert (
            bytes(layer) == opt_class.to_bytes(2, "big") + bytes([opt_type, len(data) // 4]) + data
        )
    head = layers[0]
    assert (head.version, head.flags, head.gas) == (1, header.flags, header.gas)
    assert (head.app_id, head.dpf_ptr, head.egress_ptr) == (
        header.app_id,
        _ptr(header.dpf_ptr),
        _ptr(header.egress_ptr),
    )
    assert head.stack_depth == len(header.stack)
    code = [layer for layer in layers if isinstance(layer, SwitchVMCodeOption)]
    stack = [layer for layer in layers if isinstance(layer, SwitchVMStackOption)]
    assert (head.n_code_opts, head.n_stack_opts) == (len(code), len(stack))
    assert [layer.code for layer in code] == [d for _, _, t, d in ours if t == 2]
    assert tuple(entry for layer in stack for entry in layer.entries) == header.stack
    return geneve


# -- (a) the examples --------------------------------------------------------------------
@pytest.mark.parametrize("depth", STACK_SIZES)
@pytest.mark.parametrize("name", EXAMPLES)
def test_examples_dissected_by_scapy(name: str, depth: int) -> None:
    program = PROGRAMS[name]
    stack = tuple(range(1000, 1000 + depth))
    header = program.header(stack)
    built = build_packet(PacketSpec(0x00ABCD, header, b"payload"), program.profile)
    parsed = parse_packet(built.frame, program.profile)
    assert parsed.header == header
    geneve = assert_scapy_agrees(built.frame, parsed)
    assert geneve.vni == 0x00ABCD
    assert geneve.options[0].app_id == program.app_id
    assert geneve.options[0].dpf_ptr == encode_pc(program.entry)
    code_layers = [o for o in geneve.options if isinstance(o, SwitchVMCodeOption)]
    assert len(code_layers) == built.options.code_options
    assert (len(code_layers) > 0) == (not header.code.is_empty())
    stack_layers = [o for o in geneve.options if isinstance(o, SwitchVMStackOption)]
    assert len(stack_layers) == (1 if depth else 0)
    assert [e for o in stack_layers for e in o.entries] == list(stack)


# -- (b) random headers ------------------------------------------------------------------
def pcs(image: CodeImage) -> st.SearchStrategy[PC | None]:
    """Valid DPF pointers: an in-packet prolog the image has, any switch slot, or none."""
    switch = st.builds(PC, st.just(False), st.integers(0, TOFINO1.code_slots_per_stage - 1))
    if not image.prologs:
        return switch | st.none()
    packet = st.builds(PC, st.just(True), st.integers(0, len(image.prologs) - 1))
    return packet | switch | st.none()


@st.composite
def packet_specs(draw: st.DrawFn) -> PacketSpec:
    image = draw(st.sampled_from(IMAGES))
    header = SwitchVMHeader(
        app_id=draw(st.integers(0, 0xFFFF_FFFF)),
        dpf_ptr=draw(pcs(image)),
        egress_ptr=draw(pcs(image)),
        gas=draw(st.integers(0, 255)),
        stack=tuple(draw(st.lists(st.integers(0, 0xFFFF_FFFF), max_size=16))),
        code=image,
        flags=draw(st.integers(0, 15)),
    )
    return PacketSpec(draw(st.integers(0, (1 << 24) - 1)), header, draw(st.binary(max_size=32)))


@given(packet_specs())
def test_scapy_agrees_on_random_packets(spec: PacketSpec) -> None:
    built = build_packet(spec, TOFINO1)
    parsed = parse_packet(built.frame, TOFINO1)
    assert parsed.tenant_id == spec.tenant_id
    assert parsed.header == spec.header
    assert parsed.inner.endswith(spec.payload)
    assert_scapy_agrees(built.frame, parsed)


# -- (c) tcpdump -------------------------------------------------------------------------
def _sample_frames() -> list[tuple[bytes, ParsedPacket]]:
    out = []
    for number, (name, depth) in enumerate(
        [("cache_get", 1), ("lb3_client", 0), ("paxos_acceptor", 16), ("counter", 2)], start=1
    ):
        program = PROGRAMS[name]
        header = program.header(tuple(range(depth)))
        frame = build_packet(PacketSpec(number * 0x1111, header, b"x"), program.profile).frame
        out.append((frame, parse_packet(frame, program.profile)))
    return out


def test_tcpdump_decodes_geneve(tmp_path: Path) -> None:
    tcpdump = shutil.which("tcpdump")
    if tcpdump is None:
        pytest.skip("tcpdump not installed: install it (apt-get install tcpdump) to run this test")
    samples = _sample_frames()
    pcap = tmp_path / "samples.pcap"
    write_pcap(str(pcap), [frame for frame, _ in samples])
    result = subprocess.run(
        [tcpdump, "-nn", "-v", "-r", str(pcap)], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr
    lines = [line for line in result.stdout.splitlines() if "> " in line and ".6081:" in line]
    assert len(lines) == len(samples), result.stdout
    for line, (_, parsed) in zip(lines, samples, strict=True):
        assert "Geneve" in line, line
        assert f"vni {parsed.tenant_id:#x}," in line, line
        options = [
            f"class Experimental (0xfff0) type {t:#x} len {4 + len(d)}"
            for _, c, t, d in split_options(parsed.options)
            if c == OPTION_CLASS
        ]
        assert f"options [{', '.join(options)}]" in line, line
    assert result.stdout.count("Geneve") == len(samples)
    assert not re.search(r"\[\|geneve\]|truncated|bad ", result.stdout, re.IGNORECASE)


# -- (d) pcap files ----------------------------------------------------------------------
def test_pcap_written_twice_is_identical(tmp_path: Path) -> None:
    frames = [frame for frame, _ in _sample_frames()]
    first, second = tmp_path / "a.pcap", tmp_path / "b.pcap"
    write_pcap(str(first), frames)
    write_pcap(str(second), frames)
    assert first.read_bytes() == second.read_bytes()
    assert read_pcap(str(first)) == frames


def test_pcap_keeps_malformed_and_empty_frames(tmp_path: Path) -> None:
    frames = [b"", b"\x01", _sample_frames()[0][0][:30], bytes(100)]
    path = tmp_path / "odd.pcap"
    write_pcap(str(path), frames)
    assert read_pcap(str(path)) == frames
    write_pcap(str(path), [])
    assert len(path.read_bytes()) == 24  # the global header alone
    assert read_pcap(str(path)) == []


def test_truncated_pcap_fails_cleanly(tmp_path: Path) -> None:
    """Every prefix of a pcap file either reads as prefixes of its frames or raises
    ValueError/OSError; nothing else escapes."""
    frames = [frame for frame, _ in _sample_frames()]
    whole = tmp_path / "whole.pcap"
    write_pcap(str(whole), frames)
    data = whole.read_bytes()
    cut = tmp_path / "cut.pcap"
    raised = 0
    for size in range(len(data)):
        cut.write_bytes(data[:size])
        try:
            got = read_pcap(str(cut))
        except (ValueError, OSError):
            raised += 1
            continue
        assert len(got) <= len(frames)
        for read, original in zip(got, frames, strict=False):
            assert original.startswith(read)
    assert raised > 0


def test_garbage_pcap_fails_cleanly(tmp_path: Path) -> None:
    rng = random.Random(7)
    path = tmp_path / "garbage.pcap"
    magics = [b"", b"\xd4\xc3\xb2\xa1", b"\xa1\xb2\xc3\xd4", b"\x0a\x0d\x0d\x0a"]
    for _ in range(300):
        noise = bytes(rng.getrandbits(8) for _ in range(rng.randrange(0, 120)))
        path.write_bytes(rng.choice(magics) + noise)
        try:
            frames = read_pcap(str(path))
        except (ValueError, OSError):
            continue
        assert all(isinstance(frame, bytes) for frame in frames)
    with pytest.raises(OSError):
        read_pcap(str(tmp_path / "missing.pcap"))
    with pytest.raises(OSError):
        read_pcap(str(tmp_path))
    path.write_bytes(b"not a pcap at all, just text\n")
    with pytest.raises(ValueError):
        read_pcap(str(path))
