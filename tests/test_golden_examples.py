"""Golden byte vectors of the paper's DPFs, hand-written in assembly (examples/asm/).

Each golden file holds, for one example on tofino1 and a fixed input stack, the SwitchVM
Geneve options in hex (one option per line) and, for in-switch code, every code-memory word;
``NAME.format2.txt`` the same on tofino1 with in-packet code format version 2.
docs/encoding.md lists the vectors of counter, cache_get, lb3_client and paxos_acceptor.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from dpfc.asm import assemble_text
from dpfc.encoding import (
    OPTIONS_MAX,
    decode_options,
    decode_slot,
    encode_options,
    encode_slot,
    split_options,
    stage_kind,
)
from dpfc.isa.bundle import EPILOG_STAGE, PC, PROLOG_STAGE, EpilogBundle, stage_name
from dpfc.machine import format_program
from dpfc.target import BUILTIN_PROFILES, TargetProfile
from tests.conftest import ROOT, assert_golden

TOFINO1 = BUILTIN_PROFILES["tofino1"]
TAGGED = replace(TOFINO1, code_format=2)
EXAMPLES = {
    # name: input stack (top first) of the packet that invokes it
    "counter": (42,),
    "cache_get": (0x2A,),
    "cache_put": (0x2A,),
    "cache_update": (0x2A, 0x8000_0005, 0x1111_1111, 0x2222_2222, 0x3333_3333),  # key, tuple, value
    "count_min": (0x2A,),
    "empty": (),
    "lb1": (0xC0FFEE,),
    "lb2": (),
    "lb3_client": (),
    "lb3_server": (3, 17),  # server index, load
    "paxos_acceptor": (5, 3, 0xDEADBEEF),
    "paxos_leader": (0xDEADBEEF,),  # the proposed value
}


# the examples docs/encoding.md lists, in format version 2 as well
TAGGED_EXAMPLES = ["cache_get", "counter", "lb3_client", "paxos_acceptor"]


def _vector(name: str, profile: TargetProfile = TOFINO1) -> str:
    path = ROOT / "examples" / "asm" / f"{name}.dpfasm"
    program = assemble_text(path.read_text(), str(path.relative_to(ROOT)), profile)
    stack = EXAMPLES[name]
    encoded = encode_options(program.header(stack), profile)
    version = "" if profile.code_format == 1 else f" (code format {profile.code_format})"
    lines = [
        f"# {name} on {profile.name}{version}, placement {program.placement.value}, "
        f"entry {program.entry}",
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
            word = encode_slot(stage_kind(stage), bundle, profile)
            lines.append(f"slot {stage_name(stage)} @{slot} ({len(word)} bytes): {word.hex()}")
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_golden_vector(name: str) -> None:
    assert_golden(ROOT / "tests" / "golden" / "encoding" / f"{name}.txt", _vector(name))


@pytest.mark.parametrize("name", TAGGED_EXAMPLES)
def test_golden_vector_in_format_2(name: str) -> None:
    """The same DPFs in format version 2 (docs/encoding.md §9): header, stack, code options."""
    golden = ROOT / "tests" / "golden" / "encoding" / f"{name}.format2.txt"
    assert_golden(golden, _vector(name, TAGGED))


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

    # the chains name fixed slots: cache-get's miss -> count-min at prolog slot 1, cache-put
    # -> the empty DPF at slot 0, the Paxos leader -> the acceptor's in-switch copy at slot 1
    assert load("count_min").entry == PC(False, 1)
    assert load("empty").entry == PC(False, 0)
    assert load("cache_put").image().epilogs[0].next_pc == PC(False, 0)
    leader = load("paxos_leader").switch_slots()[EPILOG_STAGE][0]
    assert isinstance(leader, EpilogBundle)
    assert leader.next_pc == PC(False, 1) and leader.steering.action == "multicast"
    # count-min: PEEK, PEEK, POP into three lanes; three FAADDs in EU1; MIN in EU2 and EU3
    sketch = load("count_min").switch_slots()
    prolog = sketch[PROLOG_STAGE][1]
    assert [s.kind.name for s in prolog.selectors] == ["PEEK", "PEEK", "POP"]
    assert [op.name for op in sketch[2][0].mem[:3]] == ["FAADD"] * 3
    assert sketch[3][0].alu[0].name == sketch[4][0].alu[0].name == "MIN"
    # LB3 server response: PEEK A0, POP A1, PEEK B0, POP B1, two STOREs in EU1 (as the client)
    server = load("lb3_server").image()
    assert [(str(s.dest), s.kind.name) for s in server.prologs[0].selectors] == [
        ("A0", "PEEK"),
        ("A1", "POP"),
        ("B0", "PEEK"),
        ("B1", "POP"),
    ]
    assert [op.name for op in server.eus[1][0].mem[:2]] == ["STORE", "STORE"]
    # cache-update FA-ORs the tuple in EU0 and STOREs the value in EU2 lanes 0-2
    update = load("cache_update").image()
    assert update.eus[0][0].mem[0].name == "FAOR"
    assert [op.name for op in update.eus[2][0].mem[:3]] == ["STORE"] * 3
