"""Lane memory, address translation and the control plane's validation of the simulator.

* Translation (docs/isa.md §6 items 13–15): the paper's segment example, direct mappings
  over segments, the null segment as the lowest-priority catch-all, unmapped accesses
  (no effect, LOAD/FA* give 0, counted and reported), per (EU, lane) address spaces.
* The first-fit allocator: unit tests and a hypothesis state machine against a model.
* Capacity limits of the profile, exactly at the limit and one over, on a small profile.
* Every ControlPlane error path raises SwitchRefused with its code and leaves the
  switch exactly as it was (tables, memory words, allocators, ``usage()``), including
  calls on several pipes where only a later pipe fails.
"""

from __future__ import annotations

import copy
import itertools
import re
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from dpfc.asm import assemble_text
from dpfc.backends.sim import (
    ControlPlane,
    Destination,
    PassResult,
    Segment,
    Switch,
)
from dpfc.catalog import codes
from dpfc.encoding import SwitchVMHeader
from dpfc.isa.bundle import (
    EPILOG_STAGE,
    PC,
    PROLOG_STAGE,
    Bundle,
    CodeImage,
    Control,
    EpilogBundle,
    Register,
    Selector,
)
from dpfc.isa.opcodes import AluOp, CtrlOp, MemOp, SelectorKind
from dpfc.packet.build import PacketSpec, build_packet
from dpfc.packet.wire import parse_packet
from dpfc.switch import WORD_SPACE, FirstFitAllocator, SwitchRefused
from dpfc.target import BUILTIN_PROFILES
from dpfc.target.profile import DirectMappingLanes, TargetProfile
from tests.conftest import ROOT
from tests.sim_install import word

P = BUILTIN_PROFILES["tofino1"]
L = P.lanes
T = 7  # the tenant under test
OTHER = 8
A = [Register.a(i) for i in range(L)]
B = [Register.b(i) for i in range(L)]
PK0 = PC(True, 0)

# A small profile keeps capacity tests fast: every limit is a handful of entries.
SMALL = replace(
    P,
    name="small",
    memory_words_per_lane=8,
    direct_entries_per_lane=3,
    direct_mapping_lanes=DirectMappingLanes.FIRST,
    segments_per_lane=2,
    permission_entries=4,
    forwarding_entries=4,
    code_slots_per_stage=4,
    const_table_entries=4,
)


def new_switch(
    profile: TargetProfile = P, *, pipes: int = 1, tenants: tuple[int, ...] = (T,)
) -> Switch:
    sw = Switch("s1", profile, pipes=pipes)
    for tenant in tenants:
        sw.control.authorize(tenant)
    sw.control.set_default_port(1)
    return sw


# -- running one EU bundle over memory ----------------------------------------------------
def mem_bundle(ops: dict[int, MemOp]) -> Bundle:
    return Bundle(
        (),
        (AluOp.NOP,) * L,
        tuple(ops.get(lane, MemOp.NOP) for lane in range(L)),
        Control(CtrlOp.HALT, PK0),
    )


LOAD_ALL = Bundle(
    tuple(Selector(r, SelectorKind.POP) for r in (*A, *B)),
    (AluOp.NOP,) * L,
    (MemOp.NOP,) * L,
    Control(CtrlOp.JMP, PK0),
)
PUSH_ALL = EpilogBundle(push=(*A, *B))


def run_memory(
    sw: Switch,
    ops: dict[int, MemOp],
    addresses: list[int],
    data: list[int] | None = None,
    *,
    eu: int = 0,
    tenant: int = T,
) -> tuple[PassResult, list[int]]:
    """Run ``ops`` (lane -> op) in EU ``eu`` with A[i] = addresses[i], B[i] = data[i];
    returns the pass result and the registers B0..B3 after it."""
    data = data or [0] * L
    skip = Bundle((), (AluOp.NOP,) * L, (MemOp.NOP,) * L, Control(CtrlOp.JMP, PK0))
    eus = (*((skip,) for _ in range(eu)), (mem_bundle(ops),))
    code = CodeImage((LOAD_ALL,), eus, (PUSH_ALL,))
    header = SwitchVMHeader(dpf_ptr=PK0, stack=(*addresses, *data), code=code)
    result = sw.process(build_packet(PacketSpec(tenant, header), sw.profile).frame, 0)
    assert result.verdict == "pass", result.reason
    out = parse_packet(result.outputs[0][1], sw.profile).header
    assert out is not None
    return result, list(out.stack[L : 2 * L])


def lane_words(sw: Switch, eu: int = 0, lane: int = 0, pipe: int = 0) -> list[int]:
    return list(sw.control.pipes[pipe].lanes[eu][lane].words)


# -- the paper's segment example (§3.6.1, docs/isa.md §6 item 15) ---------------------------
def test_paper_segment_example() -> None:
    sw = new_switch(tenants=(T, OTHER))
    # two words are already taken (physical 0 and 1) by another tenant
    sw.control.map_segment(OTHER, 0, 0, 0x0, 2)
    [segment] = sw.control.map_segment(T, 0, 0, 0x4, 4)
    assert segment == Segment(tenant=T, vbase=0x4, size=4, pbase=0x2)  # first fit
    assert segment.mask == 0xFFFF_FFFC
    assert segment.offset == -2
    assert segment.translate(0x6) == 0x4
    memory = sw.control.pipes[0].lanes[0][0]
    assert [memory.translate(T, v) for v in range(0x3, 0x9)] == [None, 2, 3, 4, 5, None]
    # the data path agrees: a STORE to virtual 0x6 lands in physical word 0x4
    run_memory(sw, {0: MemOp.STORE}, [0x6, 0, 0, 0], [0xCAFE, 0, 0, 0])
    assert lane_words(sw)[:8] == [0, 0, 0, 0, 0xCAFE, 0, 0, 0]
    assert sw.control.read_memory(T, 0, 0, 0x4, 4) == [0, 0, 0xCAFE, 0]
    assert sw.control.read_memory(OTHER, 0, 0, 0x0, 2) == [0, 0]


def test_segments_of_a_tenant_with_several_sizes() -> None:
    sw = new_switch()
    sw.control.map_segment(T, 0, 0, 0x10, 16)
    sw.control.map_segment(T, 0, 0, 0x8, 8)
    sw.control.map_segment(T, 0, 0, 0x21, 1)
    memory = sw.control.pipes[0].lanes[0][0]
    assert memory.translate(T, 0x10) == 0 and memory.translate(T, 0x1F) == 15
    assert memory.translate(T, 0x8) == 16 and memory.translate(T, 0xF) == 23
    assert memory.translate(T, 0x21) == 24
    assert memory.translate(T, 0x20) is None and memory.translate(T, 0x7) is None


def test_direct_mapping_takes_priority_over_a_segment() -> None:
    sw = new_switch()
    [segment] = sw.control.map_segment(T, 0, 0, 0x0, 8)
    sw.control.write_memory(T, 0, 0, 0x0, list(range(100, 108)))
    [physical] = sw.control.map_direct(T, 0, 0, 0x5, value=55)
    assert physical == 8  # after the segment's words
    assert sw.control.read_memory(T, 0, 0, 0x4, 3) == [104, 55, 106]
    _, b = run_memory(sw, {0: MemOp.LOAD}, [0x5, 0, 0, 0])
    assert b[0] == 55
    run_memory(sw, {0: MemOp.STORE}, [0x5, 0, 0, 0], [77, 0, 0, 0])
    words = lane_words(sw)
    assert words[segment.pbase + 5] == 105  # the segment's word 5 is untouched
    assert words[physical] == 77
    # removing the direct mapping uncovers the segment again
    sw.control.unmap_direct(T, 0, 0, 0x5)
    assert sw.control.read_memory(T, 0, 0, 0x5) == [105]


def test_null_segment_catches_misses_at_the_lowest_priority() -> None:
    sw = new_switch()
    [null] = sw.control.map_null_segment(T, 1, 2)
    sw.control.map_segment(T, 1, 2, 0x100, 16)
    sw.control.map_direct(T, 1, 2, 0x7, value=7)
    sw.control.write_memory(T, 1, 2, 0x100, [0x100 + i for i in range(16)])
    assert null.size == WORD_SPACE and null.words == 1
    sw.control.write_memory(T, 1, 2, 0xDEAD, [0x0BAD])  # lands in the null word
    _, b = run_memory(sw, {2: MemOp.LOAD}, [0, 0, 0x7, 0], eu=1)
    assert b[2] == 7
    _, b = run_memory(sw, {2: MemOp.LOAD}, [0, 0, 0x10F, 0], eu=1)
    assert b[2] == 0x10F
    for miss in (0, 0x6, 0x8, 0xFF, 0x110, 0xFFFF_FFFF):
        _, b = run_memory(sw, {2: MemOp.LOAD}, [0, 0, miss, 0], eu=1)
        assert b[2] == 0x0BAD, hex(miss)
    # a FAADD at one miss address is seen at every other miss address
    run_memory(sw, {2: MemOp.FAADD}, [0, 0, 0x1234_5678, 0], [0, 0, 1, 0], eu=1)
    assert sw.control.read_memory(T, 1, 2, 0x42) == [0x0BAE]
    assert sw.control.stats(T).unmapped == 0
    assert sw.control.usage().words == 1 + 16 + 1


def test_null_segment_over_a_range() -> None:
    sw = new_switch()
    sw.control.map_null_segment(T, 0, 3, vaddr=0x1000, size=0x1000)
    sw.control.write_memory(T, 0, 3, 0x1ABC, [9])
    _, b = run_memory(sw, {3: MemOp.LOAD}, [0, 0, 0, 0x1FFF], [0, 0, 0, 5])
    assert b[3] == 9
    _, b = run_memory(sw, {3: MemOp.LOAD}, [0, 0, 0, 0x2000], [0, 0, 0, 5])
    assert b[3] == 0  # outside the range: unmapped
    assert sw.control.stats(T).unmapped == 1


@pytest.mark.parametrize("op", [op for op in MemOp if op is not MemOp.NOP], ids=lambda o: o.name)
def test_unmapped_access_has_no_effect_and_is_counted(op: MemOp) -> None:
    sw = new_switch(tenants=(T, OTHER))
    # the unmapped address of T is mapped for OTHER, and T has other words on the lane
    sw.control.map_direct(OTHER, 0, 0, 0x40, value=0x1111)
    sw.control.map_direct(T, 0, 0, 0x41, value=0x2222)
    sw.control.map_direct(T, 0, 1, 0x40, value=0x3333)
    before = lane_words(sw)
    result, b = run_memory(sw, {0: op, 1: MemOp.LOAD}, [0x40, 0x40, 0, 0], [0xFFFF_FFFF, 0, 0, 0])
    assert lane_words(sw) == before
    assert sw.control.read_memory(OTHER, 0, 0, 0x40) == [0x1111]
    # LOAD and FA* write 0 into B0; STORE leaves it; lane 1 (mapped) works normally
    assert b[0] == (0xFFFF_FFFF if op is MemOp.STORE else 0)
    assert b[1] == 0x3333
    assert result.verdict == "pass"  # execution continues
    stats = sw.control.stats(T)
    assert stats.unmapped == 1
    assert sw.control.stats(OTHER).unmapped == 0
    [report] = sw.control.pipes[0].reports
    assert (report.tenant, report.kind) == (T, "unmapped")
    assert "0x40" in report.detail and op.name in report.detail


def test_unmapped_accesses_in_several_lanes_are_each_counted() -> None:
    sw = new_switch()
    run_memory(sw, {lane: MemOp.FAADD for lane in range(L)}, [1, 2, 3, 4], [1, 1, 1, 1], eu=3)
    assert sw.control.stats(T).unmapped == 4
    assert len(sw.control.pipes[0].reports) == 4
    assert sw.control.usage().words == 0


def test_each_eu_and_lane_has_its_own_address_space() -> None:
    sw = new_switch()
    for eu in range(P.num_eus):
        for lane in range(L):
            sw.control.map_direct(T, eu, lane, 0x9, value=eu * 10 + lane)
    for eu in range(P.num_eus):
        _, b = run_memory(sw, {lane: MemOp.LOAD for lane in range(L)}, [0x9] * L, eu=eu)
        assert b == [eu * 10 + lane for lane in range(L)]
    assert sw.control.usage().direct_entries == P.num_eus * L


def test_words_are_zeroed_when_reallocated() -> None:
    sw = new_switch(tenants=(T, OTHER))
    sw.control.map_segment(T, 0, 0, 0x0, 4)
    sw.control.write_memory(T, 0, 0, 0x0, [1, 2, 3, 4])
    sw.control.unmap_segment(T, 0, 0, 0x0)
    [segment] = sw.control.map_segment(OTHER, 0, 0, 0x0, 4)
    assert segment.pbase == 0  # the same words, reused
    assert sw.control.read_memory(OTHER, 0, 0, 0x0, 4) == [0, 0, 0, 0]


def test_deauthorize_frees_everything_the_tenant_owns() -> None:
    sw = new_switch(tenants=(T, OTHER))
    c = sw.control
    c.map_segment(T, 0, 0, 0x0, 4)
    c.map_null_segment(T, 2, 1)
    c.map_direct(T, 3, 3, 0x5, value=1)
    c.map_direct(OTHER, 3, 3, 0x5, value=2)
    c.set_constant(T, 3, 0x33)
    c.set_forwarding(T, 1, Destination(port=2))
    c.set_multicast_group(T, 1, [Destination(port=2)])
    run_memory(sw, {0: MemOp.LOAD}, [0x9, 0, 0, 0])  # some counters for T
    assert c.stats(T).unmapped == 1
    c.deauthorize(T)
    usage = c.usage()
    assert (usage.words, usage.direct_entries, usage.segments) == (1, 1, 0)
    assert (usage.permission_entries, usage.forwarding_entries) == (1, 0)
    assert c.read_memory(OTHER, 3, 3, 0x5) == [2]
    memory = sw.control.pipes[0].lanes[0][0]
    assert memory.allocator.free_ranges == [(0, P.memory_words_per_lane)]
    pipe = sw.pipes[0]
    assert T not in pipe.constants and T not in pipe.forwarding and T not in pipe.multicast
    # a new tenant with the same id starts from nothing: no constants, no counters
    c.authorize(T)
    assert c.stats(T).unmapped == 0
    const = Bundle(
        (Selector(B[0], SelectorKind.LOAD_CONST, value=3),),
        (AluOp.NOP,) * L,
        (MemOp.NOP,) * L,
        Control(CtrlOp.HALT, PK0),
    )
    code = CodeImage((LOAD_ALL,), ((const,),), (PUSH_ALL,))
    header = SwitchVMHeader(dpf_ptr=PK0, stack=(0,) * 4 + (9,) * 4, code=code)
    result = sw.process(build_packet(PacketSpec(T, header), P).frame, 0)
    out = parse_packet(result.outputs[0][1], P).header
    assert out is not None
    assert out.stack[L] == 0


# -- the first-fit allocator ----------------------------------------------------------------
def test_allocator_first_fit_in_address_order() -> None:
    alloc = FirstFitAllocator(16)
    assert [alloc.allocate(n) for n in (2, 3, 4)] == [0, 2, 5]
    assert alloc.used == 9
    assert alloc.free_ranges == [(9, 7)]
    assert alloc.allocate(8) is None  # 7 left
    assert alloc.find(7) == 9
    assert alloc.free_ranges == [(9, 7)]  # find does not allocate
    assert alloc.allocate(7) == 9
    assert alloc.free_ranges == []
    assert alloc.allocate(1) is None


def test_allocator_reuses_the_first_hole_that_fits() -> None:
    alloc = FirstFitAllocator(20)
    starts = [alloc.allocate(2) for _ in range(10)]
    assert starts == list(range(0, 20, 2))
    alloc.free(2, 2)  # hole of 2 at 2
    alloc.free(8, 2)
    alloc.free(10, 2)  # merged: hole of 4 at 8
    assert alloc.free_ranges == [(2, 2), (8, 4)]
    assert alloc.allocate(3) == 8  # skips the hole that is too small
    assert alloc.allocate(2) == 2  # the first hole fits now
    assert alloc.allocate(1) == 11
    assert alloc.free_ranges == []
    assert alloc.used == 20


def test_allocator_merges_with_both_neighbours() -> None:
    alloc = FirstFitAllocator(9)
    for _ in range(3):
        alloc.allocate(3)
    alloc.free(0, 3)
    alloc.free(6, 3)
    assert alloc.free_ranges == [(0, 3), (6, 3)]
    alloc.free(3, 3)
    assert alloc.free_ranges == [(0, 9)]
    assert alloc.used == 0
    assert alloc.allocate(9) == 0


def test_allocator_fragmentation_refuses_what_the_total_would_allow() -> None:
    alloc = FirstFitAllocator(8)
    for _ in range(4):
        alloc.allocate(2)
    alloc.free(0, 2)
    alloc.free(4, 2)
    assert alloc.capacity - alloc.used == 4
    assert alloc.allocate(3) is None


def test_allocator_of_capacity_zero() -> None:
    alloc = FirstFitAllocator(0)
    assert alloc.free_ranges == []
    assert alloc.allocate(1) is None
    assert alloc.find(1) is None


class AllocatorMachine(RuleBasedStateMachine):
    """FirstFitAllocator against a list of booleans (True = word in use)."""

    CAPACITY = 48

    def __init__(self) -> None:
        super().__init__()
        self.alloc = FirstFitAllocator(self.CAPACITY)
        self.model = [False] * self.CAPACITY
        self.blocks: list[tuple[int, int]] = []

    def model_first_fit(self, size: int) -> int | None:
        run = 0
        for index, used in enumerate(self.model):
            run = 0 if used else run + 1
            if run == size:
                return index - size + 1
        return None

    @rule(size=st.integers(1, 20))
    def allocate(self, size: int) -> None:
        expected = self.model_first_fit(size)
        assert self.alloc.find(size) == expected
        start = self.alloc.allocate(size)
        assert start == expected
        if start is not None:
            assert not any(self.model[start : start + size])
            self.model[start : start + size] = [True] * size
            self.blocks.append((start, size))

    @precondition(lambda self: bool(self.blocks))
    @rule(data=st.data())
    def free(self, data: st.DataObject) -> None:
        start, size = self.blocks.pop(data.draw(st.integers(0, len(self.blocks) - 1)))
        self.alloc.free(start, size)
        self.model[start : start + size] = [False] * size

    @invariant()
    def free_ranges_are_sorted_merged_and_exact(self) -> None:
        ranges = self.alloc.free_ranges
        for (s1, n1), (s2, _) in itertools.pairwise(ranges):
            assert s1 + n1 < s2  # sorted, disjoint and never adjacent (merged)
        assert all(n > 0 for _, n in ranges)
        free = [False] * self.CAPACITY
        for start, length in ranges:
            free[start : start + length] = [True] * length
        assert free == [not used for used in self.model]
        assert self.alloc.used == sum(self.model)


TestAllocatorMachine = AllocatorMachine.TestCase
TestAllocatorMachine.settings = settings(
    settings.default, stateful_step_count=40, max_examples=min(settings.default.max_examples, 300)
)


# -- capacity limits of the profile ---------------------------------------------------------
def small(tenants: tuple[int, ...] = (T,), pipes: int = 1) -> Switch:
    return new_switch(SMALL, pipes=pipes, tenants=tenants)


def refused(code: str, call: Callable[[], object]) -> None:
    with pytest.raises(SwitchRefused) as info:
        call()
    assert info.value.code == code, info.value


def test_segments_per_lane_limit() -> None:
    sw = small(tenants=(T, OTHER))
    sw.control.map_segment(T, 0, 1, 0x0, 1)
    sw.control.map_null_segment(OTHER, 0, 1)  # a null segment takes a TCAM entry too
    refused("DPF4008", lambda: sw.control.map_segment(T, 0, 1, 0x10, 1))
    refused("DPF4008", lambda: sw.control.map_null_segment(T, 0, 1))
    sw.control.map_segment(T, 0, 2, 0x10, 1)  # another lane has its own table
    sw.control.unmap_segment(OTHER, 0, 1, 0)
    sw.control.map_segment(T, 0, 1, 0x10, 1)  # freed entry reused
    assert sw.control.usage().segments == 3


def test_direct_entries_per_lane_limit() -> None:
    sw = small(tenants=(T, OTHER))
    sw.control.map_direct(T, 1, 0, 1)
    sw.control.map_direct(T, 1, 0, 2)
    sw.control.map_direct(OTHER, 1, 0, 1)  # the table is shared by the tenants
    refused("DPF4009", lambda: sw.control.map_direct(OTHER, 1, 0, 2))
    sw.control.map_direct(OTHER, 2, 0, 2)
    assert sw.control.usage().direct_entries == 4


def test_direct_mapping_lanes_first() -> None:
    sw = small()
    sw.control.map_direct(T, 3, 0, 1)
    for lane in range(1, L):
        refused("DPF4009", lambda lane=lane: sw.control.map_direct(T, 3, lane, 1))
        sw.control.map_segment(T, 3, lane, 0, 1)  # segments still work on those lanes
    all_lanes = new_switch(replace(SMALL, direct_mapping_lanes=DirectMappingLanes.ALL))
    all_lanes.control.map_direct(T, 3, 3, 1)


def test_memory_words_per_lane_limit() -> None:
    sw = small()
    sw.control.map_segment(T, 2, 2, 0x0, 4)
    refused("DPF4007", lambda: sw.control.map_segment(T, 2, 2, 0x8, 8))  # 4 words left
    sw.control.map_segment(T, 2, 2, 0x8, 4)  # exactly the rest of the lane
    sw.control.map_direct(T, 2, 0, 0)  # lane 0 has its own words
    refused("DPF4007", lambda: sw.control.map_segment(T, 2, 3, 0x0, 16))
    sw.control.map_segment(T, 2, 3, 0x0, 8)  # exactly the lane
    refused("DPF4007", lambda: sw.control.map_null_segment(T, 2, 3))
    assert sw.control.usage().words == 4 + 4 + 1 + 8


def test_memory_words_limit_with_direct_mappings() -> None:
    sw = new_switch(replace(SMALL, direct_entries_per_lane=100))
    for vaddr in range(8):
        sw.control.map_direct(T, 0, 0, vaddr)
    refused("DPF4007", lambda: sw.control.map_direct(T, 0, 0, 8))


def test_permission_entries_limit() -> None:
    sw = small(tenants=(1, 2, 3))
    sw.control.authorize(4)
    refused("DPF4003", lambda: sw.control.authorize(5))
    sw.control.authorize(3, app_id=5)  # replacing an entry needs no room
    sw.control.deauthorize(1)
    sw.control.authorize(5)
    assert sw.control.usage().permission_entries == SMALL.permission_entries


def test_forwarding_entries_limit() -> None:
    sw = small(tenants=(T, OTHER))
    sw.control.set_forwarding(T, 0, Destination(port=1))
    sw.control.set_forwarding(T, 5, Destination(port=1))
    sw.control.set_multicast_group(OTHER, 0, [Destination(port=2), Destination(port=3)])
    refused("DPF4014", lambda: sw.control.set_forwarding(T, 1, Destination(port=1)))
    sw.control.set_forwarding(T, 0, Destination(port=5))  # replacing needs no room
    refused(
        "DPF4014",
        lambda: sw.control.set_multicast_group(OTHER, 0, [Destination(port=i) for i in range(3)]),
    )
    sw.control.set_multicast_group(OTHER, 0, [Destination(port=4)])  # shrinks the group
    sw.control.set_forwarding(T, 1, Destination(port=1))
    assert sw.control.usage().forwarding_entries == SMALL.forwarding_entries


def test_code_slots_limit() -> None:
    """Every slot of a stage can hold a word; one beyond the stage is refused. (The linker
    refuses images that need more slots than a stage has: tests/test_link.py.)"""
    sw = small()
    sw.control.install_code(EPILOG_STAGE, SMALL.code_slots_per_stage - 1, EMPTY_EPILOG)
    refused(
        "DPF4012",
        lambda: sw.control.install_code(EPILOG_STAGE, SMALL.code_slots_per_stage, EMPTY_EPILOG),
    )
    for slot in range(SMALL.code_slots_per_stage - 1):
        sw.control.install_code(EPILOG_STAGE, slot, EMPTY_EPILOG)
    assert sw.control.usage().code_slots == SMALL.code_slots_per_stage
    sw.control.remove_code(EPILOG_STAGE, 2)
    assert sw.control.code_at(EPILOG_STAGE, 2) is None


def test_constant_table_limit() -> None:
    sw = small()
    sw.control.set_constant(T, SMALL.const_table_entries - 1, 1)
    refused("DPF4015", lambda: sw.control.set_constant(T, SMALL.const_table_entries, 1))


# -- every control-plane error leaves the switch unchanged ------------------------------------
def snapshot(sw: Switch) -> Any:
    """Everything a control-plane call could change, on every pipe, plus ``usage()``."""
    pipes = []
    for pipe in sw.control.pipes:
        lanes = [
            [
                (
                    dict(m.direct),
                    {t: frozenset(s.all()) for t, s in m.segments.items()},
                    m.segment_count,
                    list(m.allocator.free_ranges),
                    m.allocator.used,
                    list(m.words),
                )
                for m in eu
            ]
            for eu in pipe.lanes
        ]
        pipes.append(
            (
                dict(pipe.permissions),
                {stage: dict(slots) for stage, slots in pipe.code.items() if slots},
                copy.deepcopy(pipe.forwarding),
                copy.deepcopy(pipe.multicast),
                copy.deepcopy(pipe.constants),
                dict(pipe.routes),
                pipe.default_port,
                {t: replace(s) for t, s in pipe.stats.items()},
                lanes,
            )
        )
    usages = [sw.control.usage(pipes=i) for i in range(len(sw.control.pipes))]
    return pipes, sw.control.usage(), usages


def populated() -> Switch:
    """Two pipes of the small profile with asymmetric state, so that a call on both pipes
    can pass its checks on pipe 0 and fail on pipe 1."""
    sw = Switch("s1", SMALL, pipes=2)
    c = sw.control
    c.authorize(1, app_id=0x11)
    c.authorize(2, unauthorized="pass", metadata=True)
    c.authorize(3, pipes=0)  # tenant 3 exists on pipe 0 only (pipe 0: 3 of 4 entries)
    c.authorize(4, pipes=1)
    c.authorize(6, pipes=1)  # pipe 1's permission table is full (1, 2, 4, 6)
    c.map_segment(1, 0, 1, 0x0, 4)
    c.map_segment(1, 0, 1, 0x10, 2, pipes=1)  # pipe 1 only: EU0/1 segment table full
    c.map_segment(1, 0, 2, 0x0, 8, pipes=1)  # pipe 1 only: EU0/2 words all used
    c.map_segment(1, 0, 3, 0x0, 2, pipes=1)  # pipe 1 only
    c.map_segment(1, 1, 1, 0x0, 2, pipes=0)  # pipe 0 only
    c.map_null_segment(2, 1, 3)
    c.map_direct(1, 0, 0, 0x5, value=55)
    c.map_direct(1, 0, 0, 0x6, value=66, pipes=1)  # pipe 1 only
    c.map_direct(2, 0, 0, 0x5, value=22, pipes=1)  # pipe 1's EU0/0 direct table is full
    c.map_direct(1, 1, 0, 0x3, value=33, pipes=0)  # pipe 0 only
    c.write_memory(1, 0, 1, 0x0, [1, 2, 3, 4])
    c.set_constant(1, 0, 0xC0)
    c.set_forwarding(1, 0, Destination(port=3))
    c.set_forwarding(1, 1, Destination(port=4), pipes=0)  # pipe 0 only: 3 of 4 entries
    c.set_multicast_group(2, 0, [Destination(port=5)])
    c.set_forwarding(2, 2, Destination(port=6), pipes=1)
    c.set_forwarding(2, 4, Destination(port=7), pipes=1)  # pipe 1's table is full
    c.install_code(EPILOG_STAGE, 0, EMPTY_EPILOG)
    c.install_code(EPILOG_STAGE, 1, EMPTY_EPILOG, pipes=0)  # pipe 0 only
    c.set_route(bytes([10, 0, 0, 2]), 7)
    c.set_default_port(9)
    return sw


HASH_INTO_B = Bundle(
    (Selector(B[0], SelectorKind.HASH),),
    (AluOp.NOP,) * L,
    (MemOp.NOP,) * L,
    Control(CtrlOp.JMP, PC(False, 0)),
)
POP_IN_EU = Bundle(
    (Selector(A[0], SelectorKind.POP),),
    (AluOp.NOP,) * L,
    (MemOp.NOP,) * L,
    Control(CtrlOp.JMP, PC(False, 0)),
)
GOOD_EU = word(1, Bundle.empty(L, PC(False, 0)), SMALL)
EMPTY_EPILOG = word(EPILOG_STAGE, EpilogBundle(), SMALL)
# LOAD_CONST 10 is fine on tofino1 but beyond SMALL's 4 constants (DPF1016 at install time).
BAD_FOR_SMALL = assemble_text(
    ".placement switch\nprolog p:\n JMP e\neu0 e:\n LOAD_CONST B0, 10\n HALT x\nepilog x:\n FWD drop\n",
    "bad",
    P,
).switch_slots()[1][0]

Call = Callable[[ControlPlane], object]
ERROR_CASES: list[tuple[str, str, Call]] = [
    # DPF4016: pipes
    ("no_pipe", "DPF4016", lambda c: c.authorize(5, pipes=2)),
    ("no_pipe_in_list", "DPF4016", lambda c: c.map_direct(1, 0, 0, 9, pipes=[0, 5])),
    ("empty_pipe_list", "DPF4016", lambda c: c.authorize(5, pipes=[])),
    ("negative_pipe", "DPF4016", lambda c: c.set_constant(1, 0, 1, pipes=-1)),
    ("read_bad_pipe", "DPF4016", lambda c: c.read_memory(1, 0, 1, 0, pipe=2)),
    ("usage_bad_pipe", "DPF4016", lambda c: c.usage(pipes=[1, 2])),
    # DPF4001: tenant ids
    ("tenant_negative", "DPF4001", lambda c: c.authorize(-1)),
    ("tenant_too_big", "DPF4001", lambda c: c.authorize(1 << 24)),
    ("tenant_not_int", "DPF4001", lambda c: c.authorize("1")),  # type: ignore[arg-type]
    (
        "owner_too_big",
        "DPF4001",
        lambda c: c.install_code(EPILOG_STAGE, 2, EMPTY_EPILOG, owners=[1, 1 << 24]),
    ),
    ("stats_bad_tenant", "DPF4001", lambda c: c.stats(-5)),
    # DPF4002: not authorized (on every targeted pipe)
    ("unknown_tenant", "DPF4002", lambda c: c.map_segment(9, 0, 0, 0, 1)),
    ("tenant_on_pipe0_only_map", "DPF4002", lambda c: c.map_direct(3, 1, 0, 1)),
    ("tenant_on_pipe0_only_deauthorize", "DPF4002", lambda c: c.deauthorize(3)),
    ("tenant_on_pipe0_only_update", "DPF4002", lambda c: c.update_permissions(3, metadata=True)),
    ("tenant_on_pipe0_only_const", "DPF4002", lambda c: c.set_constant(3, 0, 1)),
    (
        "tenant_on_pipe0_only_forwarding",
        "DPF4002",
        lambda c: c.set_forwarding(3, 0, Destination(port=1)),
    ),
    ("read_unknown_tenant", "DPF4002", lambda c: c.read_memory(4, 0, 0, 0, pipe=0)),
    # DPF4003: permission table full on pipe 1 only
    ("permissions_full_on_pipe1", "DPF4003", lambda c: c.authorize(5)),
    # DPF4018 / DPF4013 / DPF4019: permission entry values
    ("app_id_too_big", "DPF4018", lambda c: c.authorize(5, app_id=1 << 32, pipes=0)),
    ("extra_app_id_negative", "DPF4018", lambda c: c.authorize(1, app_ids=[3, -1])),
    ("update_app_id", "DPF4018", lambda c: c.set_app_token(1, -1)),
    ("default_dpf_in_packet", "DPF4013", lambda c: c.authorize(1, default_dpf=PC(True, 0))),
    ("default_dpf_beyond_slots", "DPF4013", lambda c: c.set_default_dpf(1, PC(False, 4))),
    ("default_dpf_not_pc", "DPF4013", lambda c: c.authorize(1, default_dpf=3)),  # type: ignore[arg-type]
    ("unauthorized_action", "DPF4019", lambda c: c.authorize(1, unauthorized="maybe")),
    ("update_unknown_field", "DPF4019", lambda c: c.update_permissions(1, colour="red")),
    ("update_unauthorized_action", "DPF4019", lambda c: c.update_permissions(2, unauthorized="x")),
    # DPF4004: EU and lane
    ("bad_eu", "DPF4004", lambda c: c.map_direct(1, 4, 0, 1)),
    ("negative_eu", "DPF4004", lambda c: c.map_segment(1, -1, 0, 0, 1)),
    ("bad_lane", "DPF4004", lambda c: c.map_null_segment(1, 0, 4)),
    ("read_bad_lane", "DPF4004", lambda c: c.read_memory(1, 0, 7, 0)),
    ("unmap_bad_eu", "DPF4004", lambda c: c.unmap_direct(1, 9, 0, 5)),
    # DPF4021: a pipeline other than ingress and egress
    ("unknown_pipeline", "DPF4021", lambda c: c.map_segment(1, 0, 0, 0, 1, pipeline="middle")),
    ("read_unknown_pipeline", "DPF4021", lambda c: c.read_memory(1, 0, 0, 0, pipeline="")),
    # DPF4005: addresses and segment shapes
    ("vaddr_negative", "DPF4005", lambda c: c.map_direct(1, 1, 0, -1)),
    ("vaddr_too_big", "DPF4005", lambda c: c.map_segment(1, 1, 0, 1 << 32, 1)),
    ("segment_size_not_power_of_two", "DPF4005", lambda c: c.map_segment(1, 1, 0, 0, 3)),
    ("segment_size_zero", "DPF4005", lambda c: c.map_segment(1, 1, 0, 0, 0)),
    ("segment_too_big", "DPF4005", lambda c: c.map_null_segment(1, 1, 0, 0, 1 << 33)),
    ("segment_misaligned", "DPF4005", lambda c: c.map_segment(1, 1, 0, 2, 4)),
    ("read_past_the_space", "DPF4005", lambda c: c.read_memory(1, 0, 1, 0xFFFF_FFFF, 2)),
    ("write_past_the_space", "DPF4005", lambda c: c.write_memory(1, 0, 1, 0xFFFF_FFFF, [1, 2])),
    # DPF4006: overlaps
    ("segment_overlap", "DPF4006", lambda c: c.map_segment(1, 0, 1, 0x2, 2, pipes=0)),
    ("segment_overlap_on_pipe1", "DPF4006", lambda c: c.map_segment(1, 0, 3, 0x1, 1, pipes=[0, 1])),
    ("second_null_segment", "DPF4006", lambda c: c.map_null_segment(2, 1, 3)),
    # DPF4007: words
    ("no_words_on_pipe1", "DPF4007", lambda c: c.map_segment(1, 0, 2, 0x20, 1)),
    ("segment_larger_than_lane", "DPF4007", lambda c: c.map_segment(1, 2, 2, 0x0, 16)),
    # DPF4008: segment table full on pipe 1
    ("segments_full_on_pipe1", "DPF4008", lambda c: c.map_segment(1, 0, 1, 0x20, 1)),
    # DPF4009: direct tables
    ("direct_full_on_pipe1", "DPF4009", lambda c: c.map_direct(1, 0, 0, 0x7)),
    ("no_direct_table_on_lane", "DPF4009", lambda c: c.map_direct(1, 0, 1, 0x7)),
    # DPF4010: duplicate direct mapping (on pipe 1 only)
    ("duplicate_direct_on_pipe1", "DPF4010", lambda c: c.map_direct(1, 0, 0, 0x6)),
    ("duplicate_direct", "DPF4010", lambda c: c.map_direct(1, 0, 0, 0x5, pipes=0)),
    # DPF4011: missing mappings and entries
    ("unmap_missing_direct", "DPF4011", lambda c: c.unmap_direct(1, 0, 0, 0x9)),
    ("unmap_direct_missing_on_pipe0", "DPF4011", lambda c: c.unmap_direct(1, 0, 0, 0x6)),
    ("unmap_direct_missing_on_pipe1", "DPF4011", lambda c: c.unmap_direct(1, 1, 0, 0x3)),
    ("unmap_missing_segment", "DPF4011", lambda c: c.unmap_segment(1, 0, 1, 0x8)),
    ("unmap_segment_missing_on_pipe0", "DPF4011", lambda c: c.unmap_segment(1, 0, 1, 0x10)),
    ("unmap_segment_missing_on_pipe1", "DPF4011", lambda c: c.unmap_segment(1, 1, 1, 0x0)),
    ("read_unmapped", "DPF4011", lambda c: c.read_memory(1, 0, 1, 0x3, 2)),
    ("write_partly_unmapped", "DPF4011", lambda c: c.write_memory(1, 0, 1, 0x2, [7, 8, 9])),
    ("write_unmapped_on_pipe0", "DPF4011", lambda c: c.write_memory(1, 0, 0, 0x6, [1])),
    ("write_unmapped_on_pipe1", "DPF4011", lambda c: c.write_memory(1, 1, 0, 0x3, [1])),
    ("remove_missing_forwarding", "DPF4011", lambda c: c.remove_forwarding(1, 5)),
    ("remove_forwarding_on_pipe0_only", "DPF4011", lambda c: c.remove_forwarding(1, 1)),
    # DPF4015: values
    ("direct_value_too_big", "DPF4015", lambda c: c.map_direct(1, 1, 0, 1, value=1 << 32)),
    ("write_negative_value", "DPF4015", lambda c: c.write_memory(1, 0, 1, 0x0, [1, -1])),
    ("read_negative_count", "DPF4015", lambda c: c.read_memory(1, 0, 1, 0x0, -1)),
    ("constant_index", "DPF4015", lambda c: c.set_constant(1, 4, 1)),
    ("constant_value", "DPF4015", lambda c: c.set_constant(1, 0, 1 << 32)),
    # DPF4012 and the bundle checker's codes: code memory
    ("bad_stage", "DPF4012", lambda c: c.install_code(5, 0, GOOD_EU)),
    ("bad_slot", "DPF4012", lambda c: c.install_code(1, 4, GOOD_EU)),
    ("negative_slot", "DPF4012", lambda c: c.install_code(1, -1, GOOD_EU)),
    # an EU word in the epilog's code memory, and the reverse: not a word of that stage
    ("epilog_slot_with_bundle", "DPF3050", lambda c: c.install_code(EPILOG_STAGE, 2, GOOD_EU)),
    ("eu_slot_with_epilog", "DPF3050", lambda c: c.install_code(1, 0, EMPTY_EPILOG)),
    ("code_not_a_word", "DPF4012", lambda c: c.install_code(1, 0, Bundle.empty(L, PC(False, 0)))),  # type: ignore[arg-type]
    ("remove_bad_stage", "DPF4012", lambda c: c.remove_code(30, 0)),
    ("code_at_bad_slot", "DPF4012", lambda c: c.code_at(PROLOG_STAGE, 99)),
    ("hash_into_b", "DPF1014", lambda c: c.install_code(2, 0, word(2, HASH_INTO_B, SMALL))),
    ("prolog_kind_in_eu", "DPF1012", lambda c: c.install_code(2, 0, word(2, POP_IN_EU, SMALL))),
    (
        "const_beyond_table",
        "DPF1016",
        lambda c: c.install_code(1, 0, word(1, BAD_FOR_SMALL, SMALL)),
    ),
    # DPF4020: empty code slot (on pipe 1 only)
    ("remove_empty_slot", "DPF4020", lambda c: c.remove_code(1, 0)),
    ("remove_slot_missing_on_pipe1", "DPF4020", lambda c: c.remove_code(EPILOG_STAGE, 1)),
    # DPF4014: steering tables
    ("forwarding_index", "DPF4014", lambda c: c.set_forwarding(1, 1 << 16, Destination(port=1))),
    ("destination_empty", "DPF4014", lambda c: c.set_forwarding(1, 0, Destination())),
    ("destination_not_destination", "DPF4014", lambda c: c.set_forwarding(1, 0, 3)),  # type: ignore[arg-type]
    (
        "destination_short_ip",
        "DPF4014",
        lambda c: c.set_forwarding(1, 0, Destination(ip_dst=b"\x01\x02\x03")),
    ),
    (
        "destination_short_mac",
        "DPF4014",
        lambda c: c.set_forwarding(1, 0, Destination(port=1, eth_dst=b"\x02" * 5)),
    ),
    ("forwarding_full_on_pipe1", "DPF4014", lambda c: c.set_forwarding(2, 3, Destination(port=1))),
    ("multicast_empty", "DPF4014", lambda c: c.set_multicast_group(1, 0, [])),
    (
        "multicast_group_index",
        "DPF4014",
        lambda c: c.set_multicast_group(1, -1, [Destination(port=1)]),
    ),
    (
        "multicast_full_on_pipe1",
        "DPF4014",
        lambda c: c.set_multicast_group(2, 0, [Destination(port=1)] * 2),
    ),
    ("route_short_ip", "DPF4014", lambda c: c.set_route(b"\x0a\x00\x00", 1)),
    # DPF4017: ports
    ("destination_port", "DPF4017", lambda c: c.set_forwarding(1, 0, Destination(port=32))),
    ("route_port", "DPF4017", lambda c: c.set_route(bytes(4), -1)),
    ("default_port", "DPF4017", lambda c: c.set_default_port(99)),
]


@pytest.mark.parametrize(
    ("code", "call"), [(c, f) for _, c, f in ERROR_CASES], ids=[n for n, _, _ in ERROR_CASES]
)
def test_control_plane_error_changes_nothing(code: str, call: Call) -> None:
    sw = populated()
    before = snapshot(sw)
    with pytest.raises(SwitchRefused) as info:
        call(sw.control)
    assert info.value.code == code, info.value
    assert info.value.message and code in str(info.value)
    assert snapshot(sw) == before


def test_error_cases_cover_every_code_the_control_plane_raises() -> None:
    # every rule of the control plane is the switch contract's request ledger's
    source = "".join(
        path.read_text(encoding="utf-8")
        for path in sorted((ROOT / "dpfc/switch/ledger").glob("*.py"))
    )
    named = {name: code for name, code in vars(codes).items() if name.isupper()}
    raised = {named[name] for name in re.findall(r"\bcodes\.([A-Z_0-9]+)", source)}
    covered = {code for _, code, _ in ERROR_CASES}
    assert raised <= covered
    assert raised >= {"DPF4001", "DPF4011", "DPF4020"}


def test_populated_switch_is_really_asymmetric() -> None:
    # the multi-pipe cases above rely on this state; check it so they stay meaningful
    sw = populated()
    c = sw.control
    assert c.permissions(3, pipe=0) is not None and c.permissions(3, pipe=1) is None
    p0, p1 = c.usage(pipes=0), c.usage(pipes=1)
    assert p1.permission_entries == SMALL.permission_entries
    assert p1.forwarding_entries == SMALL.forwarding_entries
    assert p0.forwarding_entries < SMALL.forwarding_entries
    assert sw.pipes[1].lanes[0][1].segment_count == SMALL.segments_per_lane
    assert sw.pipes[1].lanes[0][2].allocator.free_ranges == []
    assert len(sw.pipes[1].lanes[0][0].direct) == SMALL.direct_entries_per_lane
    # the same calls succeed on pipe 0 alone, so on both pipes it is pipe 1 that refuses
    c.map_segment(1, 0, 2, 0x20, 1, pipes=0)
    c.map_segment(1, 0, 1, 0x20, 1, pipes=0)
    c.map_segment(1, 0, 3, 0x1, 1, pipes=0)
    c.map_direct(1, 0, 0, 0x7, pipes=0)
    c.map_direct(1, 0, 0, 0x6, pipes=0)
    c.write_memory(1, 1, 0, 0x3, [1], pipes=0)
    c.unmap_direct(1, 1, 0, 0x3, pipes=0)
    c.unmap_segment(1, 1, 1, 0x0, pipes=0)
    c.remove_forwarding(1, 1, pipes=0)
    c.set_multicast_group(2, 0, [Destination(port=1)] * 2, pipes=0)
    c.set_forwarding(2, 3, Destination(port=1), pipes=0)
    c.remove_code(EPILOG_STAGE, 1, pipes=0)
    c.authorize(5, pipes=0)


def test_successful_multi_pipe_calls_change_every_pipe() -> None:
    sw = populated()
    c = sw.control
    c.map_direct(2, 2, 0, 0x1, value=3)
    assert [c.read_memory(2, 2, 0, 0x1, pipe=i) for i in (0, 1)] == [[3], [3]]
    c.write_memory(2, 2, 0, 0x1, [4], pipes=1)
    assert [c.read_memory(2, 2, 0, 0x1, pipe=i) for i in (0, 1)] == [[3], [4]]
