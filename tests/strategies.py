"""Hypothesis strategies that generate *valid* SwitchVM machine code for a target profile.

Everything drawn here obeys the rules of :mod:`dpfc.isa.check` (``tests/test_roundtrip.py``
asserts it on every example): prolog selector kinds only in prologs and EU kinds in EUs,
HASH into A registers, LOAD_IMM/LOAD_CONST into B registers, unique sorted destinations, at
most ``immediates_per_bundle`` distinct immediates per bundle (selectors and branch operands
together), one ALU and one memory op per lane, and PCs that name an existing in-packet
bundle of the right stage or an in-range in-switch slot. Whole images stay small enough for
the Geneve limits most of the time; :func:`fits` is the exact test.

Bundle-level generators are plain ``draw_*(draw, ...)`` functions called inside composites,
and leaf strategies are cached per profile: building strategy objects per draw dominated the
run time of the 1,000-example properties.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cache
from typing import TypeVar

from hypothesis import assume
from hypothesis import strategies as st

from dpfc.encoding import EncodingError, SwitchVMHeader, encode_options
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
    RegClass,
    Register,
    Selector,
    StageBundle,
    Steering,
    stage_name,
)
from dpfc.isa.opcodes import AluOp, CtrlOp, MemOp, SelectorKind
from dpfc.machine.program import MachineProgram, PlacedBundle, Placement
from dpfc.target import (
    BUILTIN_PROFILES,
    BranchOperands,
    MetadataField,
    SteeringAction,
    TargetProfile,
    profile_from_toml,
)

WORD_MAX = 0xFFFF_FFFF
E = TypeVar("E", AluOp, MemOp)

# A 2-lane profile built in Python, and a 3-lane one (odd lane count: padding nibbles) from TOML.
DUO = replace(
    BUILTIN_PROFILES["tofino1"],
    name="duo",
    lanes=2,
    num_eus=3,
    hash_functions=("crc32c", "crc32q"),
    immediates_per_bundle=3,
    packet_bundles_per_stage=2,
    code_slots_per_stage=64,
    const_table_entries=16,
    stack_max_depth=8,
    max_gas=40,
    branch_operands=BranchOperands.LOADED,
    metadata=(
        MetadataField("ingress_port", 0, "port"),
        MetadataField("tenant_flow", 17, "a custom metadata field"),
        MetadataField("last", 255, "the largest index"),
    ),
)
TRIO = profile_from_toml(
    """
base = "tofino2"
name = "trio"
lanes = 3
num_eus = 5
immediates_per_bundle = 1
packet_bundles_per_stage = 8
code_slots_per_stage = 300
stack_max_depth = 57
branch_operands = "selected"
""",
)
PROFILES: dict[str, TargetProfile] = {
    "tofino1": BUILTIN_PROFILES["tofino1"],
    "tofino2": BUILTIN_PROFILES["tofino2"],
    "duo": DUO,
    "trio": TRIO,
}
PROFILE_NAMES = sorted(PROFILES)


def tagged(profile: TargetProfile) -> TargetProfile:
    """``profile`` with its in-packet code in format version 2 (docs/encoding.md §9), under
    the same name (so that messages naming the profile read the same in both versions)."""
    return replace(profile, code_format=2)


# Every profile above in format version 2, by the name of its version-1 original.
TAGGED_PROFILES: dict[str, TargetProfile] = {name: tagged(p) for name, p in PROFILES.items()}

BOUNDARY_WORDS = (0, 1, 2, 31, 32, 33, 255, 256, 0x7FFF_FFFF, 0x8000_0000, WORD_MAX)


# Strategies are built once and cached: building them per draw dominates the run time.
_WORDS = st.one_of(st.sampled_from(BOUNDARY_WORDS), st.integers(0, WORD_MAX))
_BOOLEANS = st.booleans()
_STEERING_VALUES = st.one_of(
    st.sampled_from((0, 1, 0xFF, 0x100, 0xFFFF)).map(Imm), st.integers(0, 0xFFFF).map(Imm)
)


def words() -> st.SearchStrategy[int]:
    """32-bit values, biased towards the boundaries."""
    return _WORDS


def profiles() -> st.SearchStrategy[TargetProfile]:
    return st.sampled_from([PROFILES[n] for n in PROFILE_NAMES])


def all_registers(profile: TargetProfile) -> list[Register]:
    return [Register.a(i) for i in range(profile.lanes)] + [
        Register.b(i) for i in range(profile.lanes)
    ]


@cache
def registers(profile: TargetProfile, cls: RegClass | None = None) -> st.SearchStrategy[Register]:
    return st.sampled_from([r for r in all_registers(profile) if cls is None or r.cls is cls])


@cache
def pcs(profile: TargetProfile, packet_count: int, *, switch: bool = True) -> st.SearchStrategy[PC]:
    """A PC into a stage holding ``packet_count`` in-packet bundles, or an in-switch slot
    (the boundary slots of the profile and a few others)."""
    in_packet = [PC(True, i) for i in range(packet_count)]
    if not switch and in_packet:
        return st.sampled_from(in_packet)
    last = profile.code_slots_per_stage - 1
    slots = {0, 1, 2, last // 2, last, min(255, last), min(256, last)}
    in_switch = [PC(False, slot) for slot in sorted(slots)]
    # About as many in-packet as in-switch choices; shrinking prefers @packet:0.
    repeat = -(-len(in_switch) // len(in_packet)) if in_packet else 0
    return st.sampled_from(in_packet * repeat + in_switch)


class _Immediates:
    """Distinct immediates of one bundle, so the per-bundle limit is never exceeded."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.values: list[int] = []

    def can_use(self, value: int) -> bool:
        return value in self.values or len(self.values) < self.limit

    def use(self, value: int) -> None:
        if value not in self.values:
            self.values.append(value)


def draw_immediate(draw: st.DrawFn, budget: _Immediates) -> int | None:
    """An immediate within the bundle's budget (reusing one is free), or None if full."""
    if budget.values and (len(budget.values) >= budget.limit or draw(_BOOLEANS)):
        value = draw(st.sampled_from(budget.values))
    elif len(budget.values) < budget.limit:
        value = draw(words())
    else:
        return None
    budget.use(value)
    return value


@cache
def _destinations(profile: TargetProfile) -> st.SearchStrategy[list[Register]]:
    """A subset of the registers, drawn as one bit mask (one draw instead of one each)."""
    regs = all_registers(profile)
    return st.integers(0, (1 << len(regs)) - 1).map(
        lambda mask: [reg for bit, reg in enumerate(regs) if mask >> bit & 1]
    )


@cache
def _lane_ops(enum: type[E], lanes: int) -> st.SearchStrategy[tuple[E, ...]]:
    """One opcode per lane, drawn as one base-``len(enum)`` number (shrinks to all nops)."""
    base = len(enum)

    def digits(number: int) -> tuple[E, ...]:
        return tuple(enum((number // base**lane) % base) for lane in range(lanes))

    return st.integers(0, base**lanes - 1).map(digits)


@cache
def _selector_kinds(
    profile: TargetProfile, prolog: bool, cls: RegClass
) -> st.SearchStrategy[SelectorKind]:
    if prolog:
        kinds = [SelectorKind.POP, SelectorKind.PEEK, SelectorKind.RAND]
        if profile.metadata:
            kinds.append(SelectorKind.LOAD_MD)
    else:
        kinds = [SelectorKind.MOV]
        kinds.append(SelectorKind.HASH if cls is RegClass.A else SelectorKind.LOAD_IMM)
        if cls is RegClass.B and profile.const_table_entries:
            kinds.append(SelectorKind.LOAD_CONST)
    return st.sampled_from(kinds)


@cache
def _const_indices(profile: TargetProfile) -> st.SearchStrategy[int]:
    last = profile.const_table_entries - 1
    return st.one_of(st.sampled_from((0, last)), st.integers(0, last))


@cache
def _metadata_fields(profile: TargetProfile) -> st.SearchStrategy[MetadataField]:
    return st.sampled_from(profile.metadata)


@cache
def _control_ops(prolog: bool) -> st.SearchStrategy[CtrlOp]:
    return st.sampled_from([CtrlOp.JMP] if prolog else list(CtrlOp))


def draw_selectors(
    draw: st.DrawFn, profile: TargetProfile, *, prolog: bool, budget: _Immediates | None = None
) -> tuple[Selector, ...]:
    """Selectors of a prolog or EU bundle: unique destinations, sorted, legal kinds."""
    budget = budget if budget is not None else _Immediates(profile.immediates_per_bundle)
    out: list[Selector] = []
    for dest in sorted(draw(_destinations(profile))):
        kind = draw(_selector_kinds(profile, prolog, dest.cls))
        if kind is SelectorKind.MOV:
            out.append(Selector(dest, kind, draw(registers(profile))))
        elif kind is SelectorKind.LOAD_IMM:
            value = draw_immediate(draw, budget)
            if value is None:  # budget exhausted: copy a register instead
                out.append(Selector(dest, SelectorKind.MOV, draw(registers(profile))))
            else:
                out.append(Selector(dest, kind, None, value))
        elif kind is SelectorKind.LOAD_CONST:
            index = draw(_const_indices(profile))
            out.append(Selector(dest, kind, None, index))
        elif kind is SelectorKind.LOAD_MD:
            field = draw(_metadata_fields(profile))
            out.append(Selector(dest, kind, None, field.index))
        else:
            out.append(Selector(dest, kind))
    return tuple(out)


def draw_branch_operand(draw: st.DrawFn, profile: TargetProfile, budget: _Immediates) -> Operand:
    if draw(_BOOLEANS):
        value = draw_immediate(draw, budget)
        if value is not None:
            return Imm(value)
    return draw(registers(profile))


def draw_control(
    draw: st.DrawFn,
    profile: TargetProfile,
    *,
    next_count: int,
    epilog_count: int,
    prolog: bool = False,
    budget: _Immediates | None = None,
    switch: bool = True,
) -> Control:
    """JMP (and, in an EU, HALT or a conditional branch) to existing bundles or slots.

    ``next_count``/``epilog_count``: in-packet bundles in the next stage / the epilog.
    """
    budget = budget if budget is not None else _Immediates(profile.immediates_per_bundle)
    op = draw(_control_ops(prolog))
    if op is CtrlOp.HALT:
        return Control(op, draw(pcs(profile, epilog_count, switch=switch)))
    taken = draw(pcs(profile, next_count, switch=switch))
    if not op.conditional:
        return Control(op, taken)
    x = draw_branch_operand(draw, profile, budget)
    y = draw_branch_operand(draw, profile, budget)
    return Control(op, taken, x, y, draw(pcs(profile, next_count, switch=switch)))


def draw_bundle(
    draw: st.DrawFn,
    profile: TargetProfile,
    *,
    prolog: bool = False,
    next_count: int = 0,
    epilog_count: int = 0,
    switch: bool = True,
) -> Bundle:
    """A prolog bundle (selectors and a JMP) or an EU bundle."""
    budget = _Immediates(profile.immediates_per_bundle)
    sels = draw_selectors(draw, profile, prolog=prolog, budget=budget)
    lanes = profile.lanes
    if prolog:
        alu: tuple[AluOp, ...] = (AluOp.NOP,) * lanes
        mem: tuple[MemOp, ...] = (MemOp.NOP,) * lanes
    else:
        alu = draw(_lane_ops(AluOp, lanes))
        mem = draw(_lane_ops(MemOp, lanes))
    control = draw_control(
        draw,
        profile,
        next_count=next_count,
        epilog_count=epilog_count,
        prolog=prolog,
        budget=budget,
        switch=switch,
    )
    return Bundle(sels, alu, mem, control)


def draw_epilog(
    draw: st.DrawFn, profile: TargetProfile, *, prolog_count: int = 0, switch: bool = True
) -> EpilogBundle:
    """PUSH (<= 2L registers), a steering action with/without value, NEXT_PC, HDR_MOD."""
    push = tuple(draw(_push_lists(profile)))
    action = draw(_steering_actions(profile))
    value: Operand | None = None
    if action.takes_value:
        value = draw(st.one_of(registers(profile), _STEERING_VALUES))
    next_pc = draw(_next_pcs(profile, prolog_count, switch))
    return EpilogBundle(push, Steering(action.name, value), next_pc, draw(_BOOLEANS))


@cache
def _push_lists(profile: TargetProfile) -> st.SearchStrategy[list[Register]]:
    return st.lists(registers(profile), max_size=profile.max_push)


@cache
def _steering_actions(profile: TargetProfile) -> st.SearchStrategy[SteeringAction]:
    return st.sampled_from(profile.steering)


@cache
def _next_pcs(
    profile: TargetProfile, prolog_count: int, switch: bool
) -> st.SearchStrategy[PC | Register | None]:
    return st.one_of(st.none(), registers(profile), pcs(profile, prolog_count, switch=switch))


@st.composite
def stage_bundles(draw: st.DrawFn, kind: str, profile: TargetProfile) -> StageBundle:
    """A bundle legal in a stage of ``kind`` ("prolog", "eu", "epilog"), PCs anywhere valid."""
    count = profile.packet_bundles_per_stage
    if kind == "epilog":
        return draw_epilog(draw, profile, prolog_count=count)
    return draw_bundle(draw, profile, prolog=kind == "prolog", next_count=count, epilog_count=count)


@st.composite
def code_images(
    draw: st.DrawFn,
    profile: TargetProfile,
    *,
    min_prologs: int = 0,
    max_bundles: int = 7,
) -> CodeImage:
    """A checked in-packet image: stage counts first, then bundles whose PCs name them.

    Trailing EU stages are never empty (the decoder trims them); middle ones may be.
    """
    per_stage = profile.packet_bundles_per_stage
    remaining = max_bundles
    n_prologs = draw(st.integers(min(min_prologs, per_stage), min(per_stage, remaining)))
    remaining -= n_prologs
    n_eus = draw(st.integers(0, min(profile.num_eus, remaining)))
    eu_counts: list[int] = []
    for k in range(n_eus):
        low = 1 if k == n_eus - 1 else 0
        high = max(low, min(per_stage, remaining - (n_eus - 1 - k)))
        count = draw(st.integers(low, high))
        eu_counts.append(count)
        remaining -= count
    n_epilogs = draw(st.integers(0, max(0, min(per_stage, remaining))))

    def count_of(stage_pos: int) -> int:
        """In-packet bundles of stage position 0 (prolog), 1..num_eus, num_eus+1 (epilog)."""
        if stage_pos == profile.num_eus + 1:
            return n_epilogs
        if stage_pos == 0:
            return n_prologs
        return eu_counts[stage_pos - 1] if stage_pos <= n_eus else 0

    prologs = tuple(
        draw_bundle(draw, profile, prolog=True, next_count=count_of(1)) for _ in range(n_prologs)
    )
    eus = tuple(
        tuple(
            draw_bundle(draw, profile, next_count=count_of(k + 2), epilog_count=n_epilogs)
            for _ in range(count)
        )
        for k, count in enumerate(eu_counts)
    )
    epilog_bundles = tuple(
        draw_epilog(draw, profile, prolog_count=n_prologs) for _ in range(n_epilogs)
    )
    return CodeImage(prologs, eus, epilog_bundles)


def fits(header: SwitchVMHeader, profile: TargetProfile) -> bool:
    """Whether the header encodes (in particular: within the 252 Geneve option bytes)."""
    try:
        encode_options(header, profile)
    except EncodingError:
        return False
    return True


@st.composite
def headers(draw: st.DrawFn, profile: TargetProfile) -> SwitchVMHeader:
    """A SwitchVM header whose encoding fits the Geneve limits (examples that do not are
    rejected; the image is drawn small so that few are)."""
    image = draw(code_images(profile, max_bundles=draw(st.integers(0, 10))))
    depth = draw(st.integers(0, profile.stack_max_depth))  # uniform: deep stacks need 2 options
    stack = tuple(draw(words()) for _ in range(depth))
    pointer = st.one_of(st.none(), pcs(profile, len(image.prologs)))
    header = SwitchVMHeader(
        app_id=draw(words()),
        dpf_ptr=draw(pointer),
        egress_ptr=draw(pointer),
        gas=draw(st.integers(0, profile.max_gas)),
        stack=stack,
        code=image,
        flags=draw(st.integers(0, 15)),
    )
    assume(fits(header, profile))
    return header


@dataclass(frozen=True)
class GeneratedProgram:
    """A program and the profile it was generated for (the profile may be a custom one)."""

    program: MachineProgram
    profile: TargetProfile


NAMES = st.sampled_from(["dpf", "kvs_get", "lb3", "x", "Paxos_2"])


def _free_slot(slot: int, taken: set[int], profile: TargetProfile) -> int:
    while slot in taken:
        slot = (slot + 1) % profile.code_slots_per_stage
    return slot


@st.composite
def _switch_bundles(
    draw: st.DrawFn, profile: TargetProfile, used: dict[int, set[int]], count: int
) -> list[PlacedBundle]:
    """In-switch bundles at fresh slots (only @switch PCs: in-switch code never names
    in-packet code)."""
    out: list[PlacedBundle] = []
    stages = [PROLOG_STAGE, *range(1, profile.num_eus + 1), EPILOG_STAGE]
    for _ in range(count):
        stage = draw(st.sampled_from(stages))
        taken = used.setdefault(stage, set())
        slot = _free_slot(draw(pcs(profile, 0)).index, taken, profile)
        taken.add(slot)
        bundle: StageBundle
        if stage == EPILOG_STAGE:
            bundle = draw_epilog(draw, profile)
        else:
            bundle = draw_bundle(draw, profile, prolog=stage == PROLOG_STAGE)
        label = f"{stage_name(stage)}_s{slot}"
        out.append(PlacedBundle(stage, PC(False, slot), bundle, label))
    return out


@st.composite
def packet_programs(draw: st.DrawFn, profile: TargetProfile) -> MachineProgram:
    """An in-packet program (>= 1 prolog, as the assembler requires), plus some in-switch
    bundles placed with ``@slot``."""
    image = draw(code_images(profile, min_prologs=1, max_bundles=draw(st.integers(1, 6))))
    app_id = draw(words())
    assume(fits(SwitchVMHeader(app_id=app_id, code=image), profile))
    placed = [
        PlacedBundle(stage, PC(True, index), bundle, f"{stage_name(stage)}_{index}")
        for stage, stage_list in image.stages()
        for index, bundle in enumerate(stage_list)
    ]
    placed += draw(_switch_bundles(profile, {}, draw(st.integers(0, 2))))
    entry = PC(True, draw(st.integers(0, len(image.prologs) - 1)))
    name = draw(NAMES)
    return MachineProgram(name, profile, Placement.PACKET, app_id, entry, tuple(placed))


@st.composite
def switch_programs(draw: st.DrawFn, profile: TargetProfile) -> MachineProgram:
    """An in-switch program: every bundle at a code-memory slot, entry at a prolog slot."""
    used: dict[int, set[int]] = {}
    placed = draw(_switch_bundles(profile, used, draw(st.integers(0, 4))))
    slot = _free_slot(draw(pcs(profile, 0)).index, used.get(PROLOG_STAGE, set()), profile)
    entry = PlacedBundle(
        PROLOG_STAGE, PC(False, slot), draw_bundle(draw, profile, prolog=True), f"prolog_s{slot}"
    )
    return MachineProgram(
        draw(NAMES),
        profile,
        Placement.SWITCH,
        draw(words()),
        entry.pc,
        (entry, *placed),
    )


@st.composite
def programs(draw: st.DrawFn) -> GeneratedProgram:
    profile = draw(profiles())
    program = draw(st.one_of(packet_programs(profile), switch_programs(profile)))
    return GeneratedProgram(program, profile)
