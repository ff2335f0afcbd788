"""Every unit's line in a trace shows the operand values the simulator used.

For each kind of unit — prolog selectors (POP, PEEK, RAND, LOAD_MD), EU selectors (MOV,
LOAD_IMM, LOAD_CONST, HASH), every ALU op, every memory op (mapped and unmapped, under
both ``memory_address`` options), every conditional branch (register and immediate
operands, under every ``branch_operands`` option) and the epilog (PUSH, FWD with a
register value, NEXT_PC from a register, HDR_MOD) — a packet runs through the simulator
with its trace recorded, and the operands the trace *prints* are compared with the values
the simulator *used*: the arguments its semantic functions were called with (``alu``,
``hash_word``, ``memory``, ``branch_taken`` and the lane memory's ``translate``, spied on
in the executing module), or, for units without one, what ended up in the packet (the
output stack, the port a forwarding index chose, the DPF pointer) and the inputs given.
Values are drawn by hypothesis, so an operand printed from the wrong register (HASH once
printed its selector's unused immediate field, ``HASH A0 <- 0x0``, for the value it hashed)
fails on the first example. The printed text is parsed, never compared with a golden.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Any
from unittest.mock import patch

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dpfc.backends.sim import Destination, PacketTrace, StageTrace, Switch, render_trace
from dpfc.backends.sim import stages as sim_stages
from dpfc.backends.sim.memory import LaneMemory
from dpfc.encoding import SwitchVMHeader
from dpfc.isa import (
    EPILOG_STAGE,
    PC,
    UNARY_ALU_OPS,
    AluOp,
    Bundle,
    CodeImage,
    Control,
    CtrlOp,
    EpilogBundle,
    EpilogOp,
    Imm,
    InstructionSlot,
    MemOp,
    Operand,
    Register,
    Selector,
    SelectorKind,
    Steering,
    Unit,
    alu,
    branch_taken,
    hash_word,
    instruction_slots,
    memory,
)
from dpfc.packet import PacketSpec, build_packet, parse_packet
from dpfc.target import BUILTIN_PROFILES, BranchOperands, MemoryAddress, TargetProfile

P = BUILTIN_PROFILES["tofino1"]
L = P.lanes
TENANT = 7
IN_PORT = 2
OUT_PORT = 3
A = [Register.a(i) for i in range(L)]
B = [Register.b(i) for i in range(L)]
ALL_REGS = (*A, *B)
PK0, PK1 = PC(True, 0), PC(True, 1)
WORDS = st.integers(0, 0xFFFF_FFFF)
REGISTER_WORDS = st.lists(WORDS, min_size=2 * L, max_size=2 * L)

LOAD_ALL = Bundle(
    tuple(Selector(r, SelectorKind.POP) for r in ALL_REGS),
    (AluOp.NOP,) * L,
    (MemOp.NOP,) * L,
    Control(CtrlOp.JMP, PK0),
)
PUSH_ALL = EpilogBundle(push=ALL_REGS)


def eu(
    *selectors: Selector,
    alu: dict[int, AluOp] | None = None,
    mem: dict[int, MemOp] | None = None,
    control: Control | None = None,
) -> Bundle:
    return Bundle(
        tuple(sorted(selectors, key=lambda s: s.dest)),
        tuple((alu or {}).get(lane, AluOp.NOP) for lane in range(L)),
        tuple((mem or {}).get(lane, MemOp.NOP) for lane in range(L)),
        control or Control(CtrlOp.HALT, PK0),
    )


def new_switch(profile: TargetProfile = P, *, metadata: bool = False) -> Switch:
    sw = Switch("s1", profile, switch_id=0xABC)
    sw.control.authorize(TENANT, metadata=metadata)
    sw.control.set_default_port(OUT_PORT)
    return sw


def run(
    sw: Switch,
    code: CodeImage,
    stack: Sequence[int],
    profile: TargetProfile = P,
) -> tuple[PacketTrace, SwitchVMHeader | None, int | None]:
    """One traced pass: (trace, the output header, the port it left by)."""
    header = SwitchVMHeader(dpf_ptr=PK0, gas=8, stack=tuple(stack), code=code)
    frame = build_packet(PacketSpec(TENANT, header), profile).frame
    result = sw.process(frame, IN_PORT, trace=True)
    assert result.trace is not None
    if not result.outputs:
        return result.trace, None, None
    port, out = result.outputs[0]
    return result.trace, parse_packet(out, profile).header, port


def stage(trace: PacketTrace, name: str) -> StageTrace:
    return next(s for s in trace.stages if s.name == name)


def lines(trace: PacketTrace, name: str) -> list[str]:
    return [event.text for event in stage(trace, name).events]


def one(pattern: str, texts: Sequence[str]) -> re.Match[str]:
    """The one line of ``texts`` that ``pattern`` matches in full."""
    found = [m for m in (re.fullmatch(pattern, t) for t in texts) if m is not None]
    assert len(found) == 1, f"{pattern!r} in {texts}"
    return found[0]


def word(text: str) -> int:
    return int(text, 16)


@dataclass
class Calls:
    """The arguments (and results) of the simulator's semantic functions, in call order."""

    alu: list[tuple[AluOp, int, int, int]] = field(default_factory=list)
    hash: list[tuple[str, int, int]] = field(default_factory=list)
    memory: list[tuple[MemOp, int, int, tuple[int, int | None]]] = field(default_factory=list)
    branch: list[tuple[CtrlOp, int, int, bool]] = field(default_factory=list)
    translate: list[tuple[int, int | None]] = field(default_factory=list)


@contextmanager
def spying() -> Iterator[Calls]:
    """Record every call the executing stages make to the ISA's semantics."""
    calls = Calls()
    executing = vars(sim_stages)  # the names the stages call: the ISA's semantics
    assert [executing[name] for name in ("alu", "hash_word", "memory", "branch_taken")] == [
        alu,
        hash_word,
        memory,
        branch_taken,
    ]
    translate = LaneMemory.translate

    def spy_alu(op: AluOp, a: int, b: int) -> int:
        out = alu(op, a, b)
        calls.alu.append((op, a, b, out))
        return out

    def spy_hash(function: Any, value: int) -> int:
        out = hash_word(function, value)
        calls.hash.append((function.name, value, out))
        return out

    def spy_memory(op: MemOp, old: int, data: int) -> tuple[int, int | None]:
        out = memory(op, old, data)
        calls.memory.append((op, old, data, out))
        return out

    def spy_branch(op: CtrlOp, x: int, y: int) -> bool:
        out = branch_taken(op, x, y)
        calls.branch.append((op, x, y, out))
        return out

    def spy_translate(self: LaneMemory, tenant: int, vaddr: int) -> int | None:
        out = translate(self, tenant, vaddr)
        calls.translate.append((vaddr, out))
        return out

    with (
        patch.object(sim_stages, "alu", spy_alu),
        patch.object(sim_stages, "hash_word", spy_hash),
        patch.object(sim_stages, "memory", spy_memory),
        patch.object(sim_stages, "branch_taken", spy_branch),
        patch.object(LaneMemory, "translate", spy_translate),
    ):
        yield calls


# -- the instructions events belong to -----------------------------------------------------------
def test_instruction_slots_follow_the_printed_order() -> None:
    bundle = eu(
        Selector(B[1], SelectorKind.LOAD_IMM, value=4),
        Selector(A[0], SelectorKind.HASH),
        alu={2: AluOp.ADD, 0: AluOp.NEG},
        mem={1: MemOp.LOAD},
        control=Control(CtrlOp.BEQ, PK0, A[0], Imm(1), PK1),
    )
    assert instruction_slots(bundle) == (
        InstructionSlot(Unit.SELECTOR, 0),
        InstructionSlot(Unit.SELECTOR, 1),
        InstructionSlot(Unit.ALU, 0),
        InstructionSlot(Unit.ALU, 2),
        InstructionSlot(Unit.MEMORY, 1),
        InstructionSlot(Unit.CONTROL, 0),
    )
    plain = EpilogBundle(push=(A[0],))
    assert instruction_slots(plain) == (InstructionSlot(Unit.EPILOG, EpilogOp.PUSH),)
    full = EpilogBundle((), Steering("forward", A[1]), A[2], hdr_mod=True)
    assert [s.position for s in instruction_slots(full)] == [
        EpilogOp.FWD,
        EpilogOp.NEXT_PC,
        EpilogOp.HDR_MOD,
    ]


def test_each_event_names_the_instruction_it_ran() -> None:
    body = eu(
        Selector(A[1], SelectorKind.MOV, A[0]),
        alu={1: AluOp.ADD},
        mem={0: MemOp.LOAD},
        control=Control(CtrlOp.BEQ, PK0, A[0], Imm(1), PK0),
    )
    code = CodeImage((LOAD_ALL,), ((body,), (eu(),)), (PUSH_ALL,))
    trace, _, _ = run(new_switch(), code, [0] * 8)
    slots = [event.slot for event in stage(trace, "eu0").events]
    assert len(slots) == len(set(slots)) and set(slots) == set(instruction_slots(body))
    epilog = [event.slot for event in stage(trace, "epilog").events]
    assert epilog == [InstructionSlot(Unit.EPILOG, EpilogOp.PUSH), None]  # FWD pass: implicit


# -- prolog selectors ----------------------------------------------------------------------------
@given(stack=st.lists(WORDS, min_size=3, max_size=3), draw=WORDS)
def test_prolog_selectors_print_the_words_they_loaded(stack: list[int], draw: int) -> None:
    sw = new_switch(metadata=True)
    sw.rngs[0] = _Draws(draw)
    prolog = Bundle(
        (
            Selector(A[0], SelectorKind.POP),
            Selector(A[1], SelectorKind.POP),
            Selector(A[2], SelectorKind.PEEK),
            Selector(A[3], SelectorKind.LOAD_MD, value=_metadata("ingress_port")),
            Selector(B[0], SelectorKind.RAND),
        ),
        (AluOp.NOP,) * L,
        (MemOp.NOP,) * L,
        Control(CtrlOp.JMP, PK0),
    )
    code = CodeImage((prolog,), ((eu(),),), (EpilogBundle(push=(A[0], A[1], A[2], A[3], B[0])),))
    trace, header, _ = run(sw, code, stack)
    texts = lines(trace, "prolog")
    popped = [word(one(f"POP {r} = (0x[0-9a-f]+)", texts).group(1)) for r in ("A0", "A1")]
    assert popped == stack[:2]
    assert word(one(r"PEEK A2 = (0x[0-9a-f]+)", texts).group(1)) == stack[2]
    assert word(one(r"LOAD_MD A3 <- ingress_port = (0x[0-9a-f]+)", texts).group(1)) == IN_PORT
    assert word(one(r"RAND B0 = (0x[0-9a-f]+)", texts).group(1)) == draw
    assert header is not None and header.stack[:5] == (*stack[:3], IN_PORT, draw)


class _Draws:
    """A pipe's random source whose every draw is ``value``."""

    def __init__(self, value: int) -> None:
        self.value = value

    def getrandbits(self, bits: int) -> int:
        return self.value & ((1 << bits) - 1)


def _metadata(name: str) -> int:
    found = P.metadata_by_name(name)
    assert found is not None
    return found.index


# -- EU selectors --------------------------------------------------------------------------------
@given(regs=REGISTER_WORDS, immediate=WORDS, constant=WORDS, index=st.integers(0, 255))
def test_mov_load_imm_and_load_const_print_the_values_they_selected(
    regs: list[int], immediate: int, constant: int, index: int
) -> None:
    sw = new_switch()
    sw.control.set_constant(TENANT, index, constant)
    body = eu(
        Selector(A[1], SelectorKind.MOV, B[2]),
        Selector(B[2], SelectorKind.MOV, A[1]),  # a parallel copy: reads A1's entry value
        Selector(B[0], SelectorKind.LOAD_IMM, value=immediate),
        Selector(B[3], SelectorKind.LOAD_CONST, value=index),
    )
    trace, header, _ = run(sw, CodeImage((LOAD_ALL,), ((body,),), (PUSH_ALL,)), regs)
    texts = lines(trace, "eu0")
    a1 = one(r"MOV A1 <- B2 = (0x[0-9a-f]+)", texts)
    b2 = one(r"MOV B2 <- A1 = (0x[0-9a-f]+)", texts)
    assert (word(a1.group(1)), word(b2.group(1))) == (regs[L + 2], regs[1])
    imm = one(r"LOAD_IMM B0 <- (0x[0-9a-f]+) = (0x[0-9a-f]+)", texts)
    assert (word(imm.group(1)), word(imm.group(2))) == (immediate, immediate)
    const = one(r"LOAD_CONST B3 <- const\[(\d+)\] = (0x[0-9a-f]+)", texts)
    assert (int(const.group(1)), word(const.group(2))) == (index, constant)
    assert header is not None
    out = dict(zip(map(str, ALL_REGS), header.stack, strict=True))
    assert (out["A1"], out["B2"], out["B0"], out["B3"]) == (
        regs[L + 2],
        regs[1],
        immediate,
        constant,
    )


@given(regs=REGISTER_WORDS)
def test_hash_prints_the_value_it_hashed(regs: list[int]) -> None:
    # MOV B0 <- A0 beside HASH A0: both read A0's entry value; the hash is of that value
    body = eu(*(Selector(a, SelectorKind.HASH) for a in A), Selector(B[0], SelectorKind.MOV, A[0]))
    with spying() as calls:
        trace, header, _ = run(new_switch(), CodeImage((LOAD_ALL,), ((body,),), (PUSH_ALL,)), regs)
    texts = lines(trace, "eu0")
    for lane, (function, value, out) in enumerate(calls.hash):
        shown = one(rf"HASH A{lane} <- (\w+)\(A{lane}=(0x[0-9a-f]+)\) = (0x[0-9a-f]+)", texts)
        assert (shown.group(1), word(shown.group(2)), word(shown.group(3))) == (
            function,
            value,
            out,
        )
        assert value == regs[lane]
    assert len(calls.hash) == L
    assert header is not None and header.stack[:L] == tuple(out for _, _, out in calls.hash)


# -- ALU -----------------------------------------------------------------------------------------
ALU_OPS = [op for op in AluOp if op is not AluOp.NOP]
MEMORY_OPS = [op for op in MemOp if op is not MemOp.NOP]


@given(op=st.sampled_from(ALU_OPS), regs=REGISTER_WORDS)
def test_alu_prints_the_selected_operands_it_computed_on(op: AluOp, regs: list[int]) -> None:
    # lane 1 computes on values its selectors changed: the ALU reads selected, not entry
    body = eu(
        Selector(A[1], SelectorKind.MOV, B[3]),
        Selector(B[1], SelectorKind.MOV, A[2]),
        alu={1: op, 3: op},
    )
    with spying() as calls:
        trace, header, _ = run(new_switch(), CodeImage((LOAD_ALL,), ((body,),), (PUSH_ALL,)), regs)
    texts = lines(trace, "eu0")
    assert [(lane_op, a, b) for lane_op, a, b, _ in calls.alu] == [
        (op, regs[L + 3], regs[2]),
        (op, regs[3], regs[L + 3]),
    ]
    for lane, (_, a, b, out) in zip((1, 3), calls.alu, strict=True):
        if op in UNARY_ALU_OPS:
            shown = one(
                rf"lane {lane}: {op.name} A{lane}=(0x[0-9a-f]+) -> A{lane}=(0x[0-9a-f]+)", texts
            )
            assert (word(shown.group(1)), word(shown.group(2))) == (a, out)
        else:
            shown = one(
                rf"lane {lane}: {op.name} A{lane}=(0x[0-9a-f]+), B{lane}=(0x[0-9a-f]+) "
                rf"-> A{lane}=(0x[0-9a-f]+)",
                texts,
            )
            assert tuple(word(g) for g in shown.groups()) == (a, b, out)
    assert header is not None and (header.stack[1], header.stack[3]) == (
        calls.alu[0][3],
        calls.alu[1][3],
    )


# -- memory --------------------------------------------------------------------------------------
MEMORY_LINE = (
    r"lane 0: {op} \[A0=(0x[0-9a-f]+) -> phys (\d+)\]{data} old=(0x[0-9a-f]+) "
    r"new=(0x[0-9a-f]+)(?: -> B0=(0x[0-9a-f]+))?"
)


@given(
    mode=st.sampled_from(list(MemoryAddress)),
    op=st.sampled_from(MEMORY_OPS),
    address=st.integers(0, 15),
    other=st.integers(16, 31),
    data=WORDS,
    stored=WORDS,
)
def test_memory_prints_the_address_data_and_words_it_used(
    mode: MemoryAddress, op: MemOp, address: int, other: int, data: int, stored: int
) -> None:
    profile = replace(P, name="addr", memory_address=mode)
    sw = new_switch(profile)
    sw.control.map_segment(TENANT, 0, 0, 0, 32)
    sw.control.write_memory(TENANT, 0, 0, address, [stored])
    sw.control.write_memory(TENANT, 0, 0, other, [stored ^ 1])
    # the selector moves `other` into A0: the entry and the selected address differ
    body = eu(Selector(A[0], SelectorKind.MOV, A[1]), mem={0: op})
    regs = [address, other, 0, 0, data, 0, 0, 0]
    with spying() as calls:
        trace, header, _ = run(sw, CodeImage((LOAD_ALL,), ((body,),), (PUSH_ALL,)), regs, profile)
    ((vaddr, physical),) = calls.translate
    ((_, old, used_data, (new, b_value)),) = calls.memory
    assert vaddr == (address if mode is MemoryAddress.ENTRY else other)
    data_part = "" if op is MemOp.LOAD else r" B0=(0x[0-9a-f]+)"
    shown = one(MEMORY_LINE.format(op=op.name, data=data_part), lines(trace, "eu0"))
    values = [g for g in shown.groups()]
    assert word(values[0]) == vaddr and int(values[1]) == physical
    if op is not MemOp.LOAD:
        assert word(values.pop(2)) == used_data == data
    assert (word(values[2]), word(values[3])) == (old, new)
    assert (None if values[4] is None else word(values[4])) == b_value
    assert header is not None and header.stack[L] == (data if b_value is None else b_value)


@given(op=st.sampled_from(MEMORY_OPS), address=st.integers(32, 0xFFFF_FFFF), data=WORDS)
def test_unmapped_memory_prints_the_address_it_translated(
    op: MemOp, address: int, data: int
) -> None:
    sw = new_switch()
    sw.control.map_segment(TENANT, 0, 0, 0, 32)
    body = eu(mem={0: op})
    with spying() as calls:
        trace, header, _ = run(
            sw, CodeImage((LOAD_ALL,), ((body,),), (PUSH_ALL,)), [address, 0, 0, 0, data, 0, 0, 0]
        )
    assert calls.translate == [(address, None)] and calls.memory == []
    data_part = "" if op is MemOp.LOAD else rf" B0={data:#x}"
    result = "" if op is MemOp.STORE else " -> B0=0x0"
    texts = lines(trace, "eu0")
    assert texts == [
        f"lane 0: {op.name} [A0={address:#x}]{data_part} unmapped: memory unchanged{result}"
    ]
    assert header is not None and header.stack[L] == (data if op is MemOp.STORE else 0)


# -- branches ------------------------------------------------------------------------------------
CONDITIONAL = [op for op in CtrlOp if op.conditional]


@given(
    mode=st.sampled_from(list(BranchOperands)),
    op=st.sampled_from(CONDITIONAL),
    regs=REGISTER_WORDS,
    immediate=WORDS,
    loaded=WORDS,
    with_immediate=st.booleans(),
)
def test_branch_prints_both_operands_it_compared(
    mode: BranchOperands,
    op: CtrlOp,
    regs: list[int],
    immediate: int,
    loaded: int,
    with_immediate: bool,
) -> None:
    """x is B1, which a selector and a LOAD both write (entry, selected and loaded differ);
    y is A2 (a MOV changes it) or an immediate."""
    profile = replace(P, name="branch", branch_operands=mode)
    sw = new_switch(profile)
    sw.control.map_direct(TENANT, 0, 1, 5, value=loaded)
    y: Operand = Imm(immediate) if with_immediate else A[2]
    body = eu(
        Selector(B[1], SelectorKind.MOV, B[0]),
        Selector(A[2], SelectorKind.MOV, B[3]),
        mem={1: MemOp.LOAD},
        control=Control(op, PK0, B[1], y, PK1),
    )
    regs = [*regs[:1], 5, *regs[2:]]  # A1: the LOAD's address
    # EU1 goes on to the epilog of the same index as the bundle the branch chose
    then = (eu(control=Control(CtrlOp.HALT, PK0)), eu(control=Control(CtrlOp.HALT, PK1)))
    code = CodeImage((LOAD_ALL,), ((body,), then), (PUSH_ALL, PUSH_ALL))
    with spying() as calls:
        trace, _, _ = run(sw, code, regs, profile)
    ((used_op, x_used, y_used, taken),) = calls.branch
    assert used_op is op
    expect_x = {"entry": regs[L + 1], "selected": regs[L], "loaded": loaded}[mode.value]
    expect_y = (
        immediate if with_immediate else (regs[2] if mode is BranchOperands.ENTRY else regs[L + 3])
    )
    assert (x_used, y_used) == (expect_x, expect_y)
    y_pattern = r"(0x[0-9a-f]+)" if with_immediate else r"A2=(0x[0-9a-f]+)"
    shown = one(rf"{op.name} B1=(0x[0-9a-f]+), {y_pattern}: (taken|not taken)", lines(trace, "eu0"))
    assert (word(shown.group(1)), word(shown.group(2))) == (x_used, y_used)
    assert (shown.group(3) == "taken") is taken
    assert trace.stages[-1].pc == (PK0 if taken else PK1)


# -- the epilog ----------------------------------------------------------------------------------
@given(regs=REGISTER_WORDS, index=st.integers(0, 3), high=st.integers(0, 0xFFFF))
def test_epilog_prints_what_it_pushed_and_the_index_it_steered_by(
    regs: list[int], index: int, high: int
) -> None:
    sw = new_switch()
    for k in range(4):
        sw.control.set_forwarding(TENANT, k, Destination(port=4 + k))
    regs = [*regs[:1], (high << 16) | index, *regs[2:]]  # A1: the index in its low 16 bits
    epilog = EpilogBundle(push=(B[2], A[0], B[0]), steering=Steering("forward", A[1]))
    trace, header, port = run(sw, CodeImage((LOAD_ALL,), ((eu(),),), (epilog,)), regs)
    texts = lines(trace, "epilog")
    pushed = one(r"PUSH B2=(0x[0-9a-f]+), A0=(0x[0-9a-f]+), B0=(0x[0-9a-f]+)", texts)
    assert header is not None
    assert (
        tuple(word(g) for g in pushed.groups())
        == header.stack[:3]
        == (regs[L + 2], regs[0], regs[L])
    )
    fwd = one(r"FWD forward, A1=(0x[0-9a-f]+) -> (\d+)", texts)
    assert word(fwd.group(1)) == regs[1] and int(fwd.group(2)) == index
    assert port == 4 + index  # the forwarding entry of the printed index


@pytest.mark.parametrize("index", [0, 3])
def test_epilog_prints_the_immediate_it_steered_by(index: int) -> None:
    sw = new_switch()
    for k in range(4):
        sw.control.set_forwarding(TENANT, k, Destination(port=4 + k))
    epilog = EpilogBundle(steering=Steering("forward", Imm(index)))
    trace, _, port = run(sw, CodeImage((LOAD_ALL,), ((eu(),),), (epilog,)), [0] * 8)
    assert lines(trace, "epilog") == [f"FWD forward, {index}"]
    assert port == 4 + index


@given(regs=REGISTER_WORDS, target=st.integers(0, 1))
def test_epilog_prints_the_pointer_it_chained_to(regs: list[int], target: int) -> None:
    sw = new_switch()
    pointer = 0x8000 | target  # @packet:target
    regs = [*regs[:2], pointer | (regs[2] & 0xFFFF_0000), *regs[3:]]
    epilog = EpilogBundle(next_pc=A[2], hdr_mod=False)
    code = CodeImage((LOAD_ALL, LOAD_ALL), ((eu(),),), (epilog,))
    trace, header, _ = run(sw, code, regs)
    shown = one(r"NEXT_PC A2=(0x[0-9a-f]+) -> (@\w+:\d+)", lines(trace, "epilog"))
    assert word(shown.group(1)) == regs[2]
    assert header is not None and str(header.dpf_ptr) == shown.group(2) == str(PC(True, target))


def test_hdr_mod_is_printed_and_removes_the_code() -> None:
    epilog = EpilogBundle(hdr_mod=True)
    trace, header, _ = run(new_switch(), CodeImage((LOAD_ALL,), ((eu(),),), (epilog,)), [0] * 8)
    assert lines(trace, "epilog") == ["FWD pass", "HDR_MOD: code options removed"]
    assert header is not None and header.code.is_empty()


# -- rendering -----------------------------------------------------------------------------------
def test_the_rendered_trace_holds_every_event_and_the_registers() -> None:
    body = eu(Selector(A[0], SelectorKind.HASH), alu={1: AluOp.ADD})
    trace, _, _ = run(new_switch(), CodeImage((LOAD_ALL,), ((body,),), (PUSH_ALL,)), range(8))
    text = render_trace(trace)
    for each in trace.stages:
        for event in each.events:
            assert f"    {event.text}\n" in text
    assert "    regs A=[0x2144df1c 0x6 0x2 0x3] B=[0x4 0x5 0x6 0x7]\n" in text
    assert stage(trace, "epilog").registers == stage(trace, "eu0").registers
    assert trace.stages[-1].stage == EPILOG_STAGE
