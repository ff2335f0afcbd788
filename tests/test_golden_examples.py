"""Golden byte vectors of the paper's DPFs, hand-written in assembly (examples/asm/).

Each golden file holds, for one example on tofino1 and a fixed input stack, the SwitchVM
Geneve options in hex (one option per line) and, for in-switch code, every code-memory word.
The same vectors are listed in docs/encoding.md.
"""

from __future__ import annotations

import pytest

from dpfc.asm import assemble_text, format_program
from dpfc.asm.objfile import stage_kind
from dpfc.encoding import OPTIONS_MAX, decode_options, decode_slot, encode_options, encode_slot
from dpfc.encoding.header import split_options
from dpfc.isa.bundle import stage_name
from dpfc.target import BUILTIN_PROFILES
from tests.conftest import ROOT, assert_golden

TOFINO1 = BUILTIN_PROFILES["tofino1"]
EXAMPLES = {
    # name: input stack (top first) of the packet that invokes it
    "counter": (42,),
    "cache_get": (0x2A,),
    "lb3_client": (),
    "paxos_acceptor": (5, 3, 0xDEADBEEF),
}


def _vector(name: str) -> str:
    path = ROOT / "examples" / "asm" / f"{name}.dpfasm"
    program = assemble_text(path.read_text(), str(path.relative_to(ROOT)), TOFINO1)
    stack = EXAMPLES[name]
    encoded = encode_options(program.header(stack), TOFINO1)
    lines = [
        f"# {name} on tofino1, placement {program.placement.value}, entry {program.entry}",
        "# input stack (top first): " + (", ".join(f"{v:#x}" for v in stack) or "empty"),
        f"# SwitchVM options: {len(encoded.data)} bytes (header {encoded.header_bytes}, "
        f"code {encoded.code_bytes}, stack {encoded.stack_bytes})",
    ]
    lines += [
        f"option class={c:#06x} type={t:#04x}: {(data).hex()}"
        for _, c, t, data in split_options(encoded.data)
    ]
    for stage, slots in sorted(program.switch_slots().items()):
        for slot, bundle in sorted(slots.items()):
            word = encode_slot(stage_kind(stage), bundle, TOFINO1)
            lines.append(f"slot {stage_name(stage)} @{slot} ({len(word)} bytes): {word.hex()}")
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_golden_vector(name: str) -> None:
    assert_golden(ROOT / "tests" / "golden" / "encoding" / f"{name}.txt", _vector(name))


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_example_fits_geneve_limits_and_round_trips(name: str) -> None:
    path = ROOT / "examples" / "asm" / f"{name}.dpfasm"
    program = assemble_text(path.read_text(), path.name, TOFINO1)
    header = program.header(EXAMPLES[name])
    encoded = encode_options(header, TOFINO1)
    assert len(encoded.data) <= OPTIONS_MAX
    assert all(len(data) <= 124 for _, _, _, data in split_options(encoded.data))
    assert decode_options(encoded.data, TOFINO1) == header
    for stage, slots in program.switch_slots().items():
        for bundle in slots.values():
            word = encode_slot(stage_kind(stage), bundle, TOFINO1)
            assert decode_slot(stage_kind(stage), word, TOFINO1) == bundle
    again = assemble_text(format_program(program), "again.dpfasm", TOFINO1)
    assert encode_options(again.header(EXAMPLES[name]), TOFINO1).data == encoded.data


def test_paper_shapes() -> None:
    """The examples use the EUs and lanes the paper describes (checked on the machine code)."""

    def load(name: str):  # type: ignore[no-untyped-def]
        path = ROOT / "examples" / "asm" / f"{name}.dpfasm"
        return assemble_text(path.read_text(), path.name, TOFINO1)

    counter = load("counter")
    assert {p.stage for p in counter.bundles} == {0, 1, 31}  # prolog, EU0, epilog
    assert all(not p.pc.in_packet for p in counter.bundles)  # in-switch code
    cache = load("cache_get").image()
    assert [len(s) for s in cache.eus] == [1, 1, 2, 1]  # EU2 has the hit and miss paths
    assert cache.eus[1][0].control.op.name == "BSET"
    assert cache.epilogs[0].hdr_mod and cache.epilogs[0].steering.action == "return_to_sender"
    acceptor = load("paxos_acceptor").image()
    assert acceptor.eus[0][0].mem[0].name == "FAMAX"
