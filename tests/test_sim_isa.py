"""The simulator executes every SwitchVM instruction as docs/isa.md specifies.

Each test builds a small DPF (machine-code objects or assembly text), runs a real packet
through :meth:`Switch.process` and reads the result back from the outgoing packet (the
epilog PUSHes registers onto the stack), from lane memory or from the counters. Expected
values are written out in the test itself, never taken from :mod:`dpfc.isa.semantics`.

Covered: one test per instruction (selectors, ALU, memory, prolog, epilog, branches) over
the boundary values 0, 1, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF in every pairing; the timing
rules of docs/isa.md §3 (parallel selectors, what ALU/memory/branch see, which write
wins, the profile options); prolog order; per-packet register state; HASH known answers;
RAND seeding; mixing in-packet and in-switch code; HALT; NEXT_PC; HDR_MOD; gas.
"""

from __future__ import annotations

import binascii
import itertools
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace

import pytest

from dpfc.asm import assemble_text
from dpfc.backends.sim import Destination, PassResult, Switch
from dpfc.encoding import SwitchVMHeader
from dpfc.isa.bundle import (
    EPILOG_STAGE,
    PC,
    PROLOG_STAGE,
    Bundle,
    CodeImage,
    Control,
    EpilogBundle,
    Imm,
    Operand,
    Register,
    Selector,
    Steering,
)
from dpfc.isa.opcodes import AluOp, CtrlOp, MemOp, SelectorKind
from dpfc.packet.build import PacketSpec, build_packet
from dpfc.packet.wire import ParsedPacket, parse_packet
from dpfc.target import BUILTIN_PROFILES, HEADER_FIELD_NAMES
from dpfc.target.parts import CRC32_FAMILY
from dpfc.target.profile import BranchOperands, MemoryAddress, TargetProfile
from tests.conftest import ROOT
from tests.sim_install import install_program
from tests.sim_install import word as code_word

P = BUILTIN_PROFILES["tofino1"]
L = P.lanes
TENANT = 7
OUT_PORT = 3  # where `pass` leaves (the switch's default port)
WORD = 1 << 32
BOUNDS = (0, 1, 0x7FFF_FFFF, 0x8000_0000, 0xFFFF_FFFF)
PAIRS = list(itertools.product(BOUNDS, BOUNDS))  # includes every equal pair

A = [Register.a(i) for i in range(L)]
B = [Register.b(i) for i in range(L)]
ALL_REGS = (*A, *B)
PK0, PK1 = PC(True, 0), PC(True, 1)


# -- building DPFs and packets -------------------------------------------------------------
def mov(dest: Register, source: Register) -> Selector:
    return Selector(dest, SelectorKind.MOV, source)


def imm(dest: Register, value: int) -> Selector:
    return Selector(dest, SelectorKind.LOAD_IMM, value=value)


def bundle(
    *selectors: Selector,
    alu: dict[int, AluOp] | None = None,
    mem: dict[int, MemOp] | None = None,
    control: Control | None = None,
) -> Bundle:
    """An EU (or prolog) bundle; the default control HALTs to epilog @packet:0."""
    alu = alu or {}
    mem = mem or {}
    return Bundle(
        tuple(sorted(selectors, key=lambda s: s.dest)),
        tuple(alu.get(lane, AluOp.NOP) for lane in range(L)),
        tuple(mem.get(lane, MemOp.NOP) for lane in range(L)),
        control or Control(CtrlOp.HALT, PK0),
    )


def jmp(pc: PC) -> Control:
    return Control(CtrlOp.JMP, pc)


def prolog(*selectors: Selector, to: PC = PK0) -> Bundle:
    return bundle(*selectors, control=jmp(to))


# POPs A0..A3 then B0..B3 (prolog order): the input stack (a0, a1, a2, a3, b0, ..., b3).
LOAD_ALL = prolog(*(Selector(r, SelectorKind.POP) for r in ALL_REGS))
PUSH_ALL = EpilogBundle(push=ALL_REGS)  # output stack top first: A0..A3, B0..B3


def image(
    *eus: Sequence[Bundle] | Bundle,
    prologs: Sequence[Bundle] = (LOAD_ALL,),
    epilogs: Sequence[EpilogBundle] = (PUSH_ALL,),
) -> CodeImage:
    stages = tuple((e,) if isinstance(e, Bundle) else tuple(e) for e in eus)
    return CodeImage(tuple(prologs), stages, tuple(epilogs))


def make_frame(
    code: CodeImage,
    stack: Iterable[int] = (),
    *,
    entry: PC | None = PK0,
    tenant: int = TENANT,
    gas: int = 8,
    app_id: int = 0,
    profile: TargetProfile = P,
) -> bytes:
    header = SwitchVMHeader(app_id=app_id, dpf_ptr=entry, gas=gas, stack=tuple(stack), code=code)
    return build_packet(PacketSpec(tenant, header, payload=b"inner"), profile).frame


def new_switch(
    profile: TargetProfile = P,
    *,
    pipes: int = 1,
    seed: int = 0,
    metadata: bool = False,
    privileged: bool = False,
    recirculate: bool = False,
) -> Switch:
    sw = Switch("s1", profile, pipes=pipes, switch_id=0xABC, seed=seed)
    sw.control.authorize(TENANT, metadata=metadata, privileged=privileged, recirculate=recirculate)
    sw.control.set_default_port(OUT_PORT)
    return sw


def out_packet(result: PassResult, profile: TargetProfile = P) -> ParsedPacket:
    assert result.outputs, f"no output: {result.verdict}: {result.reason}"
    return parse_packet(result.outputs[0][1], profile)


def out_stack(result: PassResult) -> tuple[int, ...]:
    header = out_packet(result).header
    assert header is not None
    return header.stack


def registers(
    eus: Sequence[Bundle | Sequence[Bundle]],
    values: Sequence[int],
    sw: Switch | None = None,
    profile: TargetProfile = P,
) -> dict[str, int]:
    """Run LOAD_ALL(values) -> eus -> PUSH_ALL and return the registers by name."""
    sw = sw or new_switch(profile)
    result = sw.process(make_frame(image(*eus), values, profile=profile), 0)
    assert result.verdict == "pass", result.reason
    stack = out_stack(result)
    return {str(r): v for r, v in zip(ALL_REGS, stack[: 2 * L], strict=True)}


def init(**named: int) -> list[int]:
    """The 8 stack values that LOAD_ALL puts into the named registers (others 0)."""
    return [named.get(str(r), 0) for r in ALL_REGS]


def signed(x: int) -> int:
    return x - WORD if x >= 0x8000_0000 else x


# -- selectors ---------------------------------------------------------------------------------
def test_mov_any_to_any_register() -> None:
    values = dict(A0=10, A1=11, A2=12, A3=13, B0=20, B1=21, B2=22, B3=23)
    regs = registers(
        [bundle(mov(A[1], B[2]), mov(B[3], A[0]), mov(A[2], A[3]), mov(B[0], B[1]))],
        init(**values),
    )
    assert regs == dict(values, A1=22, B3=10, A2=13, B0=21)


@pytest.mark.parametrize("word", [*BOUNDS, 0x1234_5678])
def test_mov_copies_every_bit(word: int) -> None:
    regs = registers([bundle(mov(B[2], A[1]), mov(A[3], B[2]))], init(A1=word, B2=~word % WORD))
    assert regs["B2"] == word
    assert regs["A3"] == ~word % WORD


@pytest.mark.parametrize("value", BOUNDS)
def test_load_imm(value: int) -> None:
    regs = registers([bundle(imm(B[0], value), imm(B[3], value))], init(B0=5, B1=6, B3=7))
    assert (regs["B0"], regs["B1"], regs["B3"]) == (value, 6, value)


def test_load_const_reads_the_tenants_table() -> None:
    sw = new_switch()
    sw.control.set_constant(TENANT, 0, 0xFFFF_FFFF)
    sw.control.set_constant(TENANT, 255, 0x8000_0000)
    sw.control.authorize(99)
    sw.control.set_constant(99, 1, 0x5555)  # another tenant's table is not visible
    consts = bundle(
        Selector(B[0], SelectorKind.LOAD_CONST, value=0),
        Selector(B[1], SelectorKind.LOAD_CONST, value=1),  # never set for TENANT: 0
        Selector(B[2], SelectorKind.LOAD_CONST, value=255),
    )
    regs = registers([consts], init(B0=9, B1=9, B2=9, B3=9), sw)
    assert (regs["B0"], regs["B1"], regs["B2"], regs["B3"]) == (0xFFFF_FFFF, 0, 0x8000_0000, 9)


def test_load_const_without_a_table_gives_zero() -> None:
    regs = registers([bundle(Selector(B[3], SelectorKind.LOAD_CONST, value=7))], init(B3=1))
    assert regs["B3"] == 0


# HASH: an independent bitwise CRC (Rocksoft model) with the catalogue's parameters.
CATALOGUE = {  # name: (poly, init, refin, refout, xorout, check value of "123456789")
    "crc32": (0x04C11DB7, 0xFFFF_FFFF, True, True, 0xFFFF_FFFF, 0xCBF43926),
    "crc32c": (0x1EDC6F41, 0xFFFF_FFFF, True, True, 0xFFFF_FFFF, 0xE3069283),
    "crc32d": (0xA833982B, 0xFFFF_FFFF, True, True, 0xFFFF_FFFF, 0x87315576),
    "crc32q": (0x814141AB, 0x0000_0000, False, False, 0x0000_0000, 0x3010BF7F),
}


def reflect(value: int, bits: int) -> int:
    return int(f"{value:0{bits}b}"[::-1], 2)


def bitwise_crc(name: str, data: bytes) -> int:
    poly, crc, refin, refout, xorout, _ = CATALOGUE[name]
    for byte in data:
        crc ^= (reflect(byte, 8) if refin else byte) << 24
        for _ in range(8):
            crc = ((crc << 1) ^ poly if crc & 0x8000_0000 else crc << 1) & 0xFFFF_FFFF
    return (reflect(crc, 32) if refout else crc) ^ xorout


@pytest.mark.parametrize("name", sorted(CATALOGUE))
def test_reference_crc_matches_the_catalogue(name: str) -> None:
    assert bitwise_crc(name, b"123456789") == CATALOGUE[name][5]
    assert {h.name: h.check for h in CRC32_FAMILY}[name] == CATALOGUE[name][5]


def test_reference_crc32_matches_binascii() -> None:
    for word in (*BOUNDS, 0x1234_5678):
        data = word.to_bytes(4, "big")
        assert bitwise_crc("crc32", data) == binascii.crc32(data)


@pytest.mark.parametrize("word", [*BOUNDS, 0x1234_5678, 0xDEAD_BEEF])
def test_hash_uses_each_lanes_crc_over_the_big_endian_word(word: int) -> None:
    assert P.hash_functions[:L] == ("crc32", "crc32c", "crc32d", "crc32q")
    hashes = bundle(*(Selector(a, SelectorKind.HASH) for a in A))
    regs = registers([hashes], init(A0=word, A1=word, A2=word, A3=word, B0=word))
    data = word.to_bytes(4, "big")
    assert regs["A0"] == binascii.crc32(data)
    for lane, name in enumerate(("crc32", "crc32c", "crc32d", "crc32q")):
        assert regs[f"A{lane}"] == bitwise_crc(name, data), name
    assert regs["B0"] == word


def test_hash_known_answers() -> None:
    # crc32 of 00 00 00 00 is the well-known 0x2144DF1C; crc32q of zeros is 0 (no init/xor).
    regs = registers([bundle(*(Selector(a, SelectorKind.HASH) for a in A))], init())
    assert regs["A0"] == 0x2144DF1C
    assert regs["A3"] == 0


def test_hash_and_mov_read_the_eu_entry_value() -> None:
    # HASH A1 and MOV B1, A1 run in parallel: B1 gets the entry A1, not its hash.
    regs = registers(
        [bundle(Selector(A[1], SelectorKind.HASH), mov(B[1], A[1]))], init(A1=0x1234_5678)
    )
    assert regs["A1"] == bitwise_crc("crc32c", bytes.fromhex("12345678"))
    assert regs["B1"] == 0x1234_5678


# -- ALU -----------------------------------------------------------------------------------------
ALU_EXPECT: dict[AluOp, Callable[[int, int], int]] = {
    AluOp.ADD: lambda a, b: (a + b) % WORD,
    AluOp.SUB: lambda a, b: (a - b) % WORD,
    AluOp.AND: lambda a, b: a & b,
    AluOp.OR: lambda a, b: a | b,
    AluOp.XOR: lambda a, b: a ^ b,
    AluOp.LSH: lambda a, b: (a << (b % 32)) % WORD,
    AluOp.RSH: lambda a, b: a >> (b % 32),
    AluOp.NEG: lambda a, b: (WORD - a) % WORD,
    AluOp.MIN: lambda a, b: a if a < b else b,
    AluOp.MAX: lambda a, b: a if a > b else b,
}


def test_every_alu_op_is_covered() -> None:
    assert set(ALU_EXPECT) == set(AluOp) - {AluOp.NOP}


@pytest.mark.parametrize(("a", "b"), PAIRS)
@pytest.mark.parametrize("op", list(ALU_EXPECT), ids=lambda op: op.name)
def test_alu(op: AluOp, a: int, b: int) -> None:
    # the op runs in every lane at once; each lane computes on its own A[i], B[i]
    regs = registers(
        [bundle(alu={lane: op for lane in range(L)})],
        init(A0=a, A1=a, A2=b, A3=a, B0=b, B1=b, B2=a, B3=b),
    )
    assert regs["A0"] == regs["A1"] == regs["A3"] == ALU_EXPECT[op](a, b)
    assert regs["A2"] == ALU_EXPECT[op](b, a)
    assert (regs["B0"], regs["B1"], regs["B2"], regs["B3"]) == (b, b, a, b)  # B unchanged


@pytest.mark.parametrize(
    ("op", "a", "b", "expected"),
    [
        (AluOp.ADD, 0xFFFF_FFFF, 1, 0),
        (AluOp.SUB, 0, 1, 0xFFFF_FFFF),
        (AluOp.NEG, 0x8000_0000, 0, 0x8000_0000),
        (AluOp.NEG, 1, 0, 0xFFFF_FFFF),
        (AluOp.LSH, 1, 0xFFFF_FFFF, 0x8000_0000),  # shift by B & 31 = 31
        (AluOp.LSH, 1, 32, 1),  # 32 & 31 = 0
        (AluOp.RSH, 0x8000_0000, 31, 1),  # logical: zero fill
        (AluOp.RSH, 0xFFFF_FFFF, 4, 0x0FFF_FFFF),
        (AluOp.MIN, 0x8000_0000, 1, 1),  # unsigned
        (AluOp.MAX, 0x7FFF_FFFF, 0x8000_0000, 0x8000_0000),
    ],
)
def test_alu_spot_values(op: AluOp, a: int, b: int, expected: int) -> None:
    assert registers([bundle(alu={2: op})], init(A2=a, B2=b))["A2"] == expected


# -- memory --------------------------------------------------------------------------------------
MEM_EXPECT: dict[MemOp, Callable[[int, int], tuple[int, int]]] = {  # (old, data) -> (mem, B)
    MemOp.LOAD: lambda old, data: (old, old),
    MemOp.STORE: lambda old, data: (data, data),
    MemOp.FAADD: lambda old, data: ((old + data) % WORD, old),
    MemOp.FAAND: lambda old, data: (old & data, old),
    MemOp.FAOR: lambda old, data: (old | data, old),
    MemOp.FAMAX: lambda old, data: (old if old > data else data, old),
    MemOp.FAMIN: lambda old, data: (old if old < data else data, old),
}


def test_every_memory_op_is_covered() -> None:
    assert set(MEM_EXPECT) == set(MemOp) - {MemOp.NOP}


@pytest.mark.parametrize(("old", "data"), PAIRS)
@pytest.mark.parametrize("op", list(MEM_EXPECT), ids=lambda op: op.name)
def test_memory(op: MemOp, old: int, data: int) -> None:
    sw = new_switch()
    vaddr = 0x40
    for lane in range(L):
        sw.control.map_direct(TENANT, 0, lane, vaddr + lane, value=old)
    regs = registers(
        [bundle(mem={lane: op for lane in range(L)})],
        init(A0=0x40, A1=0x41, A2=0x42, A3=0x43, B0=data, B1=data, B2=data, B3=data),
        sw,
    )
    expected_mem, expected_b = MEM_EXPECT[op](old, data)
    for lane in range(L):
        assert sw.control.read_memory(TENANT, 0, lane, vaddr + lane) == [expected_mem]
        assert regs[f"B{lane}"] == expected_b
        assert regs[f"A{lane}"] == vaddr + lane  # the address register is untouched
    assert sw.control.stats(TENANT).unmapped == 0


def test_memory_of_each_eu_and_lane_is_separate() -> None:
    # vaddr 5 is mapped in EU0 lane 1 and EU2 lane 1 with different words; EU1 lane 1 not.
    sw = new_switch()
    sw.control.map_direct(TENANT, 0, 1, 5, value=100)
    sw.control.map_direct(TENANT, 2, 1, 5, value=300)
    load = {1: MemOp.LOAD}
    regs = registers(
        [
            bundle(mem=load, control=jmp(PK0)),
            bundle(mov(B[2], B[1]), mem=load, control=jmp(PK0)),
            bundle(mov(B[3], B[1]), mem=load),
        ],
        init(A1=5),
        sw,
    )
    assert (regs["B2"], regs["B3"], regs["B1"]) == (100, 0, 300)
    assert sw.control.stats(TENANT).unmapped == 1  # EU1's access


# -- prolog --------------------------------------------------------------------------------------
def test_pop_takes_the_top_of_the_stack() -> None:
    sw = new_switch()
    code = image(
        bundle(control=Control(CtrlOp.HALT, PK0)),
        prologs=[prolog(Selector(A[2], SelectorKind.POP), Selector(B[1], SelectorKind.POP))],
        epilogs=[EpilogBundle(push=(B[1], A[2]))],
    )
    result = sw.process(make_frame(code, (0xFFFF_FFFF, 0x8000_0000, 0, 1)), 0)
    # A2 popped first (top), then B1; the epilog pushes B1 above A2 on the remaining stack
    assert out_stack(result) == (0x8000_0000, 0xFFFF_FFFF, 0, 1)


def test_peek_leaves_the_stack_unchanged() -> None:
    sw = new_switch()
    code = image(
        bundle(),
        prologs=[prolog(Selector(A[0], SelectorKind.PEEK), Selector(B[3], SelectorKind.PEEK))],
        epilogs=[EpilogBundle(push=(A[0], B[3]))],
    )
    result = sw.process(make_frame(code, (0x7FFF_FFFF, 2)), 0)
    assert out_stack(result) == (0x7FFF_FFFF, 0x7FFF_FFFF, 0x7FFF_FFFF, 2)


def test_pop_and_peek_on_an_empty_stack_give_zero_and_are_counted() -> None:
    sw = new_switch()
    code = image(
        bundle(),
        prologs=[
            prolog(
                Selector(A[0], SelectorKind.POP),  # takes the only entry
                Selector(A[1], SelectorKind.POP),  # empty: 0
                Selector(B[0], SelectorKind.PEEK),  # empty: 0
            )
        ],
        epilogs=[EpilogBundle(push=(A[0], A[1], B[0]))],
    )
    result = sw.process(make_frame(code, (0xFFFF_FFFF,)), 0)
    assert result.verdict == "pass"  # the packet continues
    assert out_stack(result) == (0xFFFF_FFFF, 0, 0)
    assert sw.control.stats(TENANT).stack_underflow == 2
    kinds = [r.kind for r in sw.control.pipes[0].reports]
    assert kinds == ["stack", "stack"]


METADATA_CASES = [
    "ingress_port",
    "timestamp",
    "switch_id",
    "queue_depth",
    "packet_length",
    "pipe_id",
    "egress_port",
    *HEADER_FIELD_NAMES,
]


def test_metadata_cases_cover_the_profile() -> None:
    assert sorted(METADATA_CASES) == sorted(m.name for m in P.metadata)


@pytest.mark.parametrize("name", METADATA_CASES)
def test_load_md(name: str) -> None:
    sw = new_switch(pipes=2, metadata=True)
    index = P.metadata_by_name(name)
    assert index is not None
    code = image(
        bundle(),
        prologs=[prolog(Selector(B[2], SelectorKind.LOAD_MD, value=index.index))],
        epilogs=[EpilogBundle(push=(B[2],))],
    )
    frame = make_frame(code)
    port = 16 + 5  # port 21: pipe 1 of a 2-pipe switch with 16 ports per pipe
    result = sw.process(frame, port, now_ns=(7 << 32) + 123_456, queue_depth=17)
    expected = {
        "ingress_port": 21,
        "timestamp": 123_456,  # low 32 bits of the nanosecond timestamp
        "switch_id": 0xABC,
        "queue_depth": 17,
        "packet_length": len(frame),
        "pipe_id": 1,
        "egress_port": 0xFFFF,  # the ingress: no output port yet (egress: test_sim_egress)
        # the inner frame of build_packet: 192.168.0.1 -> 192.168.0.2, UDP 9000 -> 9000
        "ipv4_src": 0xC0A8_0001,
        "ipv4_dst": 0xC0A8_0002,
        "ip_proto": 17,
        "dscp": 0,
        "ttl": 64,
        "l4_src": 9000,
        "l4_dst": 9000,
    }[name]
    assert out_stack(result) == (expected,)


def test_rand_is_reproducible_with_a_seed_and_differs_across_seeds() -> None:
    code = image(
        bundle(),
        prologs=[prolog(Selector(A[0], SelectorKind.RAND), Selector(B[1], SelectorKind.RAND))],
        epilogs=[EpilogBundle(push=(A[0], B[1]))],
    )
    frame = make_frame(code)

    def draws(seed: int) -> list[tuple[int, ...]]:
        sw = new_switch(seed=seed)
        return [out_stack(sw.process(frame, 0)) for _ in range(3)]

    first = draws(1)
    assert first == draws(1)
    assert first != draws(2)
    values = [v for pair in first for v in pair]
    assert len(set(values)) == len(values)  # two registers, three packets: all different
    assert all(0 <= v < WORD for v in values)


def test_prolog_jmp_chooses_the_eu0_bundle() -> None:
    code = image(
        [bundle(imm(B[0], 1)), bundle(imm(B[0], 2))],
        prologs=[prolog(to=PK1)],
        epilogs=[EpilogBundle(push=(B[0],))],
    )
    result = new_switch().process(make_frame(code), 0)
    assert out_stack(result) == (2,)
    assert result.executed == ((PROLOG_STAGE, PK0), (1, PK1), (EPILOG_STAGE, PK0))


# -- branches ------------------------------------------------------------------------------------
BRANCH_EXPECT: dict[CtrlOp, Callable[[int, int], bool]] = {
    CtrlOp.BEQ: lambda x, y: x == y,
    CtrlOp.BSET: lambda x, y: (x & y) != 0,
    CtrlOp.BLT: lambda x, y: x < y,
    CtrlOp.BGT: lambda x, y: x > y,
    CtrlOp.BSLT: lambda x, y: signed(x) < signed(y),
    CtrlOp.BSGT: lambda x, y: signed(x) > signed(y),
}
# EU1 @packet:0 halts to epilog 0 (taken), EU1 @packet:1 to epilog 1 (not taken).
BRANCH_EU1 = [bundle(control=Control(CtrlOp.HALT, PK0)), bundle(control=Control(CtrlOp.HALT, PK1))]
BRANCH_EPILOGS = [EpilogBundle(), EpilogBundle(steering=Steering("drop"))]


def branch_taken_in_sim(sw: Switch, op: CtrlOp, x: Operand, y: Operand, values: list[int]) -> bool:
    eu0 = bundle(control=Control(op, PK0, x, y, PK1))
    code = image(eu0, BRANCH_EU1, epilogs=BRANCH_EPILOGS)
    result = sw.process(make_frame(code, values), 0)
    taken = result.executed[-1] == (EPILOG_STAGE, PK0)
    assert result.executed[1:] == (
        (1, PK0),
        (2, PK0 if taken else PK1),
        (EPILOG_STAGE, PK0 if taken else PK1),
    )
    assert result.verdict == ("pass" if taken else "drop")
    return taken


def test_every_branch_kind_is_covered() -> None:
    assert set(BRANCH_EXPECT) == {op for op in CtrlOp if op.conditional}


@pytest.mark.parametrize(("x", "y"), PAIRS)
@pytest.mark.parametrize("op", list(BRANCH_EXPECT), ids=lambda op: op.name)
def test_branch(op: CtrlOp, x: int, y: int) -> None:
    sw = new_switch()
    expected = BRANCH_EXPECT[op](x, y)
    values = init(A1=x, B3=y, B2=x)
    forms: list[tuple[Operand, Operand]] = [
        (A[1], B[3]),  # register, register (different classes and lanes)
        (A[1], Imm(y)),
        (Imm(x), B[3]),
        (Imm(x), Imm(y)),  # equal immediates share a slot
        (B[2], B[3]),
    ]
    for ox, oy in forms:
        assert branch_taken_in_sim(sw, op, ox, oy, values) is expected, (ox, oy)


def test_branch_on_the_same_register_twice() -> None:
    sw = new_switch()
    values = init(A0=0x8000_0000)
    assert branch_taken_in_sim(sw, CtrlOp.BEQ, A[0], A[0], values)
    assert not branch_taken_in_sim(sw, CtrlOp.BLT, A[0], A[0], values)
    assert branch_taken_in_sim(sw, CtrlOp.BSET, A[0], A[0], values)


def test_jmp_runs_every_eu_in_order() -> None:
    step = bundle(imm(B[0], 1), alu={0: AluOp.ADD}, control=jmp(PK0))
    last = bundle(imm(B[0], 1), alu={0: AluOp.ADD}, control=jmp(PK0))
    result = new_switch().process(make_frame(image(step, step, step, last), init()), 0)
    assert out_stack(result)[0] == 4
    assert [stage for stage, _ in result.executed] == [PROLOG_STAGE, 1, 2, 3, 4, EPILOG_STAGE]


def test_halt_skips_the_remaining_eus() -> None:
    # EU0 HALTs to epilog @packet:1; EU1 (which would add) and epilog 0 never run.
    eu0 = bundle(imm(B[0], 5), alu={0: AluOp.ADD}, control=Control(CtrlOp.HALT, PK1))
    eu1 = bundle(imm(B[0], 100), alu={0: AluOp.ADD}, control=Control(CtrlOp.HALT, PK0))
    code = image(eu0, eu1, epilogs=[EpilogBundle(steering=Steering("drop")), PUSH_ALL])
    result = new_switch().process(make_frame(code, init(A0=1)), 0)
    assert result.verdict == "pass"
    assert result.executed == ((PROLOG_STAGE, PK0), (1, PK0), (EPILOG_STAGE, PK1))
    assert out_stack(result)[0] == 6


def test_halt_in_the_last_eu() -> None:
    eus = [bundle(control=jmp(PK0))] * 3 + [bundle(control=Control(CtrlOp.HALT, PK1))]
    code = image(*eus, epilogs=[EpilogBundle(steering=Steering("drop")), PUSH_ALL])
    result = new_switch().process(make_frame(code, init()), 0)
    assert result.executed[-1] == (EPILOG_STAGE, PK1)


# -- epilog --------------------------------------------------------------------------------------
def test_push_puts_the_first_listed_on_top() -> None:
    code = image(bundle(), epilogs=[EpilogBundle(push=(B[3], A[0], B[3], A[2]))])
    result = new_switch().process(make_frame(code, [*init(A0=1, A2=3, B3=0xFFFF_FFFF), 42]), 0)
    assert out_stack(result) == (0xFFFF_FFFF, 1, 0xFFFF_FFFF, 3, 42)


def test_push_to_exactly_the_depth_limit_and_one_over() -> None:
    sw = new_switch()
    depth = P.stack_max_depth
    no_pop = prolog()
    fill = EpilogBundle(push=ALL_REGS)
    exact = make_frame(image(bundle(), prologs=[no_pop], epilogs=[fill]), range(depth - 8))
    assert len(out_stack(sw.process(exact, 0))) == depth
    over = make_frame(image(bundle(), prologs=[no_pop], epilogs=[fill]), range(depth - 7))
    result = sw.process(over, 0)
    assert result.verdict == "drop"
    assert "PUSH of 8 makes the stack 17 deep" in result.reason
    stats = sw.control.stats(TENANT)
    assert (stats.faults, stats.dropped) == (1, 1)
    assert [r.kind for r in sw.control.pipes[0].reports] == ["fault"]


def epilog_run(
    epilog: EpilogBundle, sw: Switch | None = None, values: Sequence[int] = (), port: int = 0
) -> tuple[Switch, PassResult]:
    sw = sw or new_switch()
    result = sw.process(make_frame(image(bundle(), epilogs=[epilog]), values or init()), port)
    return sw, result


def test_fwd_pass_routes_by_the_outer_destination() -> None:
    sw = new_switch()
    sw.control.set_route(bytes([10, 0, 0, 2]), 9)  # build_frame's default destination
    _, result = epilog_run(EpilogBundle(), sw, init())
    assert result.verdict == "pass"
    assert [port for port, _ in result.outputs] == [9]
    assert sw.control.stats(TENANT).passed == 1


def test_fwd_pass_without_a_route_drops() -> None:
    sw = new_switch()
    sw.control.set_default_port(None)
    _, result = epilog_run(EpilogBundle(), sw, init())
    assert result.verdict == "drop"
    assert "no route" in result.reason
    assert sw.control.stats(TENANT).dropped == 1


def test_fwd_drop() -> None:
    sw, result = epilog_run(EpilogBundle(steering=Steering("drop")), values=init())
    assert (result.verdict, result.outputs) == ("drop", [])
    assert sw.control.stats(TENANT).dropped == 1


def test_fwd_return_to_sender_swaps_addresses_and_uses_the_ingress_port() -> None:
    sw, result = epilog_run(
        EpilogBundle(steering=Steering("return_to_sender")), values=init(), port=11
    )
    assert result.verdict == "return_to_sender"
    assert [port for port, _ in result.outputs] == [11]
    out = out_packet(result)
    assert (out.ip_src, out.ip_dst) == (bytes([10, 0, 0, 2]), bytes([10, 0, 0, 1]))
    assert (out.eth_src, out.eth_dst) == (
        bytes.fromhex("020000000002"),
        bytes.fromhex("020000000001"),
    )
    assert sw.control.stats(TENANT).returned == 1


@pytest.mark.parametrize("value", [Imm(0x103), A[1]])
def test_fwd_forward_uses_the_tenants_entry(value: Operand) -> None:
    sw = new_switch()
    sw.control.set_forwarding(
        TENANT,
        0x103,
        Destination(port=6, ip_dst=bytes([10, 9, 9, 9]), eth_dst=bytes.fromhex("02aabbccddee")),
    )
    sw.control.set_forwarding(TENANT, 0x3, Destination(port=2))  # a decoy for a bad mask
    # a register value counts by its low 16 bits: 0xFFFF0103 names entry 0x103
    _, result = epilog_run(
        EpilogBundle(steering=Steering("forward", value)), sw, init(A1=0xFFFF_0103)
    )
    assert result.verdict == "forward"
    assert [port for port, _ in result.outputs] == [6]
    out = out_packet(result)
    assert out.ip_dst == bytes([10, 9, 9, 9])
    assert out.eth_dst == bytes.fromhex("02aabbccddee")
    assert sw.control.stats(TENANT).forwarded == 1


def test_fwd_forward_without_a_port_routes_the_new_destination() -> None:
    sw = new_switch()
    sw.control.set_forwarding(TENANT, 0, Destination(ip_dst=bytes([10, 1, 2, 3])))
    sw.control.set_route(bytes([10, 1, 2, 3]), 12)
    _, result = epilog_run(EpilogBundle(steering=Steering("forward", Imm(0))), sw, init())
    assert [port for port, _ in result.outputs] == [12]


def test_fwd_multicast_sends_one_copy_per_destination() -> None:
    sw = new_switch()
    sw.control.set_multicast_group(
        TENANT, 2, [Destination(port=4), Destination(port=8, ip_dst=bytes([10, 7, 7, 7]))]
    )
    _, result = epilog_run(EpilogBundle(steering=Steering("multicast", Imm(2))), sw, init())
    assert result.verdict == "multicast"
    assert [port for port, _ in result.outputs] == [4, 8]
    assert parse_packet(result.outputs[1][1], P).ip_dst == bytes([10, 7, 7, 7])
    assert parse_packet(result.outputs[0][1], P).ip_dst == bytes([10, 0, 0, 2])
    assert sw.control.stats(TENANT).multicast == 1


def test_fwd_set_port_for_a_privileged_tenant() -> None:
    sw = new_switch(privileged=True)
    _, result = epilog_run(EpilogBundle(steering=Steering("set_port", B[0])), sw, init(B0=0xF_000E))
    assert result.verdict == "set_port"
    assert [port for port, _ in result.outputs] == [14]
    # 0x10E: bits above the low 8 count, so this names port 270, which does not exist
    _, result = epilog_run(EpilogBundle(steering=Steering("set_port", B[0])), sw, init(B0=0x10E))
    assert result.verdict == "drop"


def test_fwd_set_port_to_a_missing_port_drops() -> None:
    sw = new_switch(privileged=True)
    _, result = epilog_run(EpilogBundle(steering=Steering("set_port", Imm(16))), sw, init())
    assert result.verdict == "drop"


def test_fwd_recirculate_consumes_one_gas() -> None:
    sw = new_switch(privileged=True, recirculate=True)
    code = image(bundle(), epilogs=[EpilogBundle(steering=Steering("recirculate"))])
    result = sw.process(make_frame(code, init(), gas=5), 0)
    assert result.verdict == "recirculate"
    assert result.outputs == []
    assert result.recirculated is not None
    header = parse_packet(result.recirculated, P).header
    assert header is not None
    assert header.gas == 4
    assert header.dpf_ptr == PK0  # the same DPF runs again
    assert sw.control.stats(TENANT).recirculated == 1


def test_recirculate_with_no_gas_drops_and_reports() -> None:
    sw = new_switch(privileged=True, recirculate=True)
    code = image(bundle(), epilogs=[EpilogBundle(steering=Steering("recirculate"))])
    result = sw.process(make_frame(code, init(), gas=0), 0)
    assert (result.verdict, result.recirculated) == ("drop", None)
    stats = sw.control.stats(TENANT)
    assert (stats.gas_exhausted, stats.dropped, stats.recirculated) == (1, 1, 0)
    assert [r.kind for r in sw.control.pipes[0].reports] == ["gas"]


def test_gas_counts_down_to_the_drop() -> None:
    sw = new_switch(privileged=True, recirculate=True)
    code = image(bundle(), epilogs=[EpilogBundle(steering=Steering("recirculate"))])
    frame: bytes | None = make_frame(code, init(), gas=3)
    verdicts = []
    while frame is not None:
        result = sw.process(frame, 0)
        verdicts.append(result.verdict)
        frame = result.recirculated
    assert verdicts == ["recirculate"] * 3 + ["drop"]


def test_next_pc_immediate_rewrites_the_dpf_pointer() -> None:
    _, result = epilog_run(EpilogBundle(next_pc=PC(False, 9)), values=init())
    header = out_packet(result).header
    assert header is not None
    assert header.dpf_ptr == PC(False, 9)


@pytest.mark.parametrize(
    ("value", "pointer"),
    [
        (0xDEAD_0009, PC(False, 9)),  # low 16 bits, in the PC format
        (0x0000_8000, PC(True, 0)),  # bit 15: in-packet bundle 0 (the packet carries it)
        (0x1234_FFFF, None),  # 0xFFFF: none
    ],
)
def test_next_pc_register(value: int, pointer: PC | None) -> None:
    _, result = epilog_run(EpilogBundle(next_pc=B[2]), values=init(B2=value))
    header = out_packet(result).header
    assert header is not None
    assert header.dpf_ptr == pointer


def test_next_pc_register_naming_a_missing_in_packet_prolog_faults() -> None:
    sw, result = epilog_run(EpilogBundle(next_pc=B[2]), values=init(B2=0x8003))
    assert result.verdict == "drop"
    assert sw.control.stats(TENANT).faults == 1


def test_without_next_pc_the_pointer_is_kept() -> None:
    _, result = epilog_run(EpilogBundle(), values=init())
    header = out_packet(result).header
    assert header is not None
    assert header.dpf_ptr == PK0


def test_hdr_mod_removes_the_code_options() -> None:
    code = image(bundle(), prologs=[prolog()], epilogs=[EpilogBundle(hdr_mod=True)])
    stack = (0xFFFF_FFFF, 0, 0x8000_0000)
    original = build_packet(
        PacketSpec(TENANT, SwitchVMHeader(dpf_ptr=PK0, gas=8, stack=stack, code=code), b"inner"), P
    )
    result = new_switch().process(original.frame, 0)
    out = result.outputs[0][1]
    # code options gone, everything else the same: 4-byte option header per code option
    assert len(out) == len(original.frame) - original.options.code_bytes
    # the expected bytes: the same packet built without code and with no DPF pointer (the
    # in-packet prolog it named has left); the switch zeroes the outer UDP checksum
    expected = bytearray(
        build_packet(
            PacketSpec(TENANT, SwitchVMHeader(dpf_ptr=None, gas=8, stack=stack), b"inner"), P
        ).frame
    )
    expected[40:42] = b"\x00\x00"  # outer UDP checksum (14 Ethernet + 20 IPv4 + 6)
    assert out == bytes(expected)
    header = parse_packet(out, P).header
    assert header is not None
    assert header.code.is_empty()
    assert header.stack == stack
    assert header.dpf_ptr is None


def test_hdr_mod_with_next_pc_keeps_the_new_pointer() -> None:
    code = image(bundle(), epilogs=[EpilogBundle(hdr_mod=True, next_pc=PC(False, 4))])
    result = new_switch().process(make_frame(code, init()), 0)
    header = out_packet(result).header
    assert header is not None
    assert header.code.is_empty()
    assert header.dpf_ptr == PC(False, 4)


def test_hdr_mod_keeps_an_in_switch_pointer() -> None:
    sw = new_switch()
    program = assemble_text(
        ".placement switch\nprolog p:\n JMP e\neu0 e:\n HALT x\nepilog x:\n HDR_MOD\n", "t", P
    )
    slots = program.switch_slots()
    for stage in (PROLOG_STAGE, 1, EPILOG_STAGE):
        sw.control.install_code(stage, 0, code_word(stage, slots[stage][0], P))
    carried = image(bundle(), prologs=[prolog()], epilogs=[EpilogBundle()])  # unused code
    result = sw.process(make_frame(carried, entry=PC(False, 0)), 0)
    header = out_packet(result).header
    assert header is not None
    assert header.code.is_empty()
    assert header.dpf_ptr == PC(False, 0)  # the DPF runs again at the next SwitchVM


# -- timing of one EU (docs/isa.md §3) -------------------------------------------------------
def test_selectors_are_a_parallel_copy() -> None:
    regs = registers(
        [
            bundle(
                mov(A[0], B[0]), mov(B[0], A[0]), mov(A[1], A[2]), mov(A[2], A[3]), mov(A[3], A[1])
            )
        ],
        init(A0=1, B0=2, A1=11, A2=12, A3=13),
    )
    assert (regs["A0"], regs["B0"]) == (2, 1)  # swapped
    assert (regs["A1"], regs["A2"], regs["A3"]) == (12, 13, 11)  # rotated


def test_alu_sees_selected_values() -> None:
    regs = registers(
        [bundle(imm(B[0], 5), mov(A[1], B[2]), alu={0: AluOp.ADD, 1: AluOp.SUB})],
        init(A0=10, B0=100, A1=1000, B1=1, B2=50),
    )
    assert regs["A0"] == 15  # entry A0 + selected B0
    assert regs["A1"] == 49  # selected A1 (= B2) - B1
    assert regs["B0"] == 5


def test_alu_write_wins_over_the_selector_write() -> None:
    regs = registers([bundle(mov(A[2], B[1]), alu={2: AluOp.NEG})], init(B1=1, A2=77))
    assert regs["A2"] == 0xFFFF_FFFF  # -(selected A2 = 1), not the selector's 1


def test_memory_data_is_selected_and_loaded_value_wins() -> None:
    # cache_get's count_hit: LOAD_IMM B0, 1 + FAADD B0, [A0] leaves the old word in B0
    sw = new_switch()
    sw.control.map_direct(TENANT, 0, 0, 8, value=41)
    sw.control.map_direct(TENANT, 0, 1, 9, value=0xAAAA)
    sw.control.map_direct(TENANT, 0, 2, 10, value=0)
    regs = registers(
        [
            bundle(
                imm(B[0], 1),
                mov(B[1], A[3]),
                mov(B[2], A[3]),
                mem={0: MemOp.FAADD, 1: MemOp.LOAD, 2: MemOp.STORE},
            )
        ],
        init(A0=8, A1=9, A2=10, A3=0x5151),
        sw,
    )
    assert sw.control.read_memory(TENANT, 0, 0, 8) == [42]
    assert regs["B0"] == 41  # the old word, not the selector's 1
    assert regs["B1"] == 0xAAAA  # LOAD beats MOV B1, A3
    assert sw.control.read_memory(TENANT, 0, 2, 10) == [0x5151]  # STORE wrote selected B2
    assert regs["B2"] == 0x5151  # STORE leaves B2 as selected


@pytest.mark.parametrize("mode", list(MemoryAddress), ids=lambda m: m.value)
def test_memory_address_option(mode: MemoryAddress) -> None:
    profile = replace(P, name="addr", memory_address=mode)
    sw = new_switch(profile)
    sw.control.map_direct(TENANT, 0, 0, 0x10, value=111)
    sw.control.map_direct(TENANT, 0, 0, 0x20, value=222)
    sw.control.map_direct(TENANT, 0, 1, 0x30, value=0)
    sw.control.map_direct(TENANT, 0, 1, 0x31, value=0)
    regs = registers(
        [
            bundle(
                mov(A[0], B[3]), imm(B[1], 9), mov(A[1], A[3]), mem={0: MemOp.LOAD, 1: MemOp.STORE}
            )
        ],
        init(A0=0x10, B3=0x20, A1=0x30, A3=0x31),
        sw,
        profile,
    )
    entry = mode is MemoryAddress.ENTRY
    assert regs["B0"] == (111 if entry else 222)
    stored = sw.control.read_memory(TENANT, 0, 1, 0x30, 2)
    assert stored == ([9, 0] if entry else [0, 9])
    assert regs["A0"] == 0x20  # the register itself holds the selected value either way


BRANCH_MODE_CASES = {
    # name: (bundle, initial registers, taken under entry / selected / loaded)
    "selector_overwrites_B0": (
        bundle(imm(B[0], 2), control=Control(CtrlOp.BEQ, PK0, B[0], Imm(1), PK1)),
        dict(B0=1),
        (True, False, False),
    ),
    "selector_moves_into_A3": (
        bundle(mov(A[3], B[3]), control=Control(CtrlOp.BEQ, PK0, A[3], Imm(4), PK1)),
        dict(B3=4),
        (False, True, True),
    ),
    "load_into_B1": (
        bundle(mem={1: MemOp.LOAD}, control=Control(CtrlOp.BEQ, PK0, B[1], Imm(9), PK1)),
        dict(A1=0x30),
        (False, False, True),
    ),
    "fetch_and_add_into_B1": (
        bundle(
            imm(B[1], 5), mem={1: MemOp.FAADD}, control=Control(CtrlOp.BEQ, PK0, B[1], Imm(9), PK1)
        ),
        dict(A1=0x30, B1=9),
        (True, False, True),
    ),
    "alu_result_never_seen": (
        bundle(alu={2: AluOp.ADD}, control=Control(CtrlOp.BEQ, PK0, A[2], Imm(1), PK1)),
        dict(A2=1, B2=1),
        (True, True, True),
    ),
}


@pytest.mark.parametrize("case", sorted(BRANCH_MODE_CASES))
@pytest.mark.parametrize("mode", list(BranchOperands), ids=lambda m: m.value)
def test_branch_operands_option(mode: BranchOperands, case: str) -> None:
    profile = replace(P, name="branch", branch_operands=mode)
    sw = new_switch(profile)
    sw.control.map_direct(TENANT, 0, 1, 0x30, value=9)
    eu0, values, outcomes = BRANCH_MODE_CASES[case]
    code = image(eu0, BRANCH_EU1, epilogs=BRANCH_EPILOGS)
    result = sw.process(make_frame(code, init(**values), profile=profile), 0)
    expected = outcomes[list(BranchOperands).index(mode)]
    assert (result.executed[-1] == (EPILOG_STAGE, PK0)) is expected


def test_default_profile_branches_on_entry_values() -> None:
    assert P.branch_operands is BranchOperands.ENTRY
    assert P.memory_address is MemoryAddress.ENTRY


def test_alu_and_loaded_results_are_visible_from_the_next_eu() -> None:
    sw = new_switch()
    sw.control.map_direct(TENANT, 0, 1, 3, value=0xBEEF)
    regs = registers(
        [
            bundle(alu={0: AluOp.ADD}, mem={1: MemOp.LOAD}, control=jmp(PK0)),
            bundle(mov(A[2], A[0]), mov(A[3], B[1])),
        ],
        init(A0=2, B0=3, A1=3),
        sw,
    )
    assert (regs["A2"], regs["A3"]) == (5, 0xBEEF)


# -- prolog order ----------------------------------------------------------------------------
def run_text(text: str, stack: Sequence[int], sw: Switch | None = None) -> PassResult:
    program = assemble_text(text, "test.dpfasm", P)
    header = program.header(tuple(stack))
    frame = build_packet(PacketSpec(TENANT, header), P).frame
    return (sw or new_switch()).process(frame, 0)


def test_count_min_prolog_peek_peek_pop() -> None:
    text = """
prolog p:
    POP A2
    PEEK A1
    PEEK A0
    JMP e
eu0 e:
    HALT x
epilog x:
    PUSH A0, A1, A2
"""
    # PEEK A0 and PEEK A1 run before POP A2 whatever the text order: all three see the key
    assert out_stack(run_text(text, (0xC0FFEE, 5, 6))) == (0xC0FFEE,) * 3 + (5, 6)


def test_lb3_server_prolog_peek_pop_peek_pop() -> None:
    text = """
prolog p:
    PEEK A0
    POP A1
    PEEK B0
    POP B1
    JMP e
eu0 e:
    HALT x
epilog x:
    PUSH A0, A1, B0, B1
"""
    assert out_stack(run_text(text, (3, 0x8000_0000, 9))) == (3, 3, 0x8000_0000, 0x8000_0000, 9)


def test_paxos_acceptor_prolog_pop_peek_pop_pop() -> None:
    text = """
prolog p:
    POP B1
    POP B0
    PEEK A1
    POP A0
    JMP e
eu0 e:
    HALT x
epilog x:
    PUSH A0, A1, B0, B1
"""
    # A0 = i, A1 = round (peek), B0 = round (pop), B1 = value
    assert out_stack(run_text(text, (1, 2, 3, 4))) == (1, 2, 2, 3, 4)


# -- per-packet state --------------------------------------------------------------------------
def test_registers_are_zeroed_for_every_packet() -> None:
    sw = new_switch()
    setter = assemble_text(
        ".placement switch\nprolog p:\n POP A0\n POP A1\n POP A2\n POP A3\n POP B0\n"
        " POP B1\n POP B2\n POP B3\n JMP e\neu0 e:\n HALT x\nepilog x:\n FWD drop\n",
        "setter",
        P,
    )
    for stage, slots in setter.switch_slots().items():
        for slot, b in slots.items():
            sw.control.install_code(stage, slot, code_word(stage, b, P))
    first = sw.process(make_frame(CodeImage(), range(1, 9), entry=PC(False, 0)), 0)
    assert first.verdict == "drop"
    # an in-packet DPF that initialises nothing and pushes all registers
    reader = image(bundle(), prologs=[prolog()])
    assert out_stack(sw.process(make_frame(reader), 0)) == (0,) * 8


def test_in_packet_and_in_switch_code_mix_across_stages() -> None:
    sw = new_switch()
    add = {0: AluOp.ADD}
    # prolog @packet:0 -> EU0 @switch:5 -> EU1 @packet:0 -> EU2 @switch:2 -> EU3 @packet:1
    # -> epilog @switch:1
    sw.control.install_code(1, 5, code_word(1, bundle(alu=add, control=jmp(PK0)), P))
    sw.control.install_code(3, 2, code_word(3, bundle(alu=add, control=jmp(PK1)), P))
    sw.control.install_code(EPILOG_STAGE, 1, code_word(EPILOG_STAGE, EpilogBundle(push=(A[0],)), P))
    code = CodeImage(
        (
            prolog(
                Selector(A[0], SelectorKind.POP), Selector(B[0], SelectorKind.POP), to=PC(False, 5)
            ),
        ),
        (
            (),
            (bundle(alu=add, control=jmp(PC(False, 2))),),
            (),
            (bundle(control=jmp(PC(False, 1))), bundle(alu=add, control=jmp(PC(False, 1)))),
        ),
        (),
    )
    result = sw.process(make_frame(code, (1, 10)), 0)
    assert result.executed == (
        (PROLOG_STAGE, PK0),
        (1, PC(False, 5)),
        (2, PK0),
        (3, PC(False, 2)),
        (4, PK1),
        (EPILOG_STAGE, PC(False, 1)),
    )
    assert out_stack(result) == (41,)


def test_in_switch_dpf_jumping_into_in_packet_code() -> None:
    sw = new_switch()
    sw.control.install_code(
        PROLOG_STAGE, 3, code_word(PROLOG_STAGE, prolog(Selector(A[0], SelectorKind.POP)), P)
    )
    code = image(
        bundle(imm(B[0], 7), alu={0: AluOp.XOR}), prologs=[], epilogs=[EpilogBundle(push=(A[0],))]
    )
    result = sw.process(make_frame(code, (0xF0,), entry=PC(False, 3)), 0)
    assert result.executed[:2] == ((PROLOG_STAGE, PC(False, 3)), (1, PK0))
    assert out_stack(result) == (0xF7,)


def test_counter_example_runs_from_switch_memory() -> None:
    # the counter example (examples/asm/counter.dpfasm), installed in code memory
    sw = new_switch()
    sw.control.map_direct(TENANT, 0, 0, 4, value=0xFFFF_FFFF)
    program = assemble_text((ROOT / "examples/asm/counter.dpfasm").read_text(), "counter", P)
    installed = install_program(sw.control, program)
    frame = make_frame(CodeImage(), (4,), entry=installed.entry)
    assert out_stack(sw.process(frame, 0)) == (4, 0xFFFF_FFFF)
    assert out_stack(sw.process(frame, 0)) == (4, 0)  # wrapped
    assert sw.control.read_memory(TENANT, 0, 0, 4) == [1]
