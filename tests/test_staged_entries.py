"""The stage-structured program's control plane (dpfc.backends.p4.staged.entries).

The entries it writes, run through a model of the program's tables (tests/staged_model.py),
give what the instruction set says one EU does (docs/isa.md §3, dpfc.isa.semantics): the
registers after selection, memory and the ALU, the memory words, the next PC, HALT, and
the shift fault (which leaves every lane's memory as it was: the memory tables are keyed
by every lane's shift too) — for random EU bundles in random code slots and random
register values; the fault entries cover exactly the amounts the profile lacks.
The prolog's entries read the stack word, random word and metadata field the simulator's
prolog reads, and the epilog's push, steer and chain as the simulator's epilog, both for
the in-packet entries (the packet's fields in the key; an absent selector's fields
anything) and for bundles in code slots.
Every entry names a table, keys and an action the generated program has.
"""

from __future__ import annotations

import re
from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dpfc.backends.p4.staged import StagePlan, generate
from dpfc.backends.p4.staged.ends import PERM_METADATA
from dpfc.backends.p4.staged.entries import (
    Entry,
    EntryError,
    Ternary,
    constant_entries,
    direct_entry,
    epilog_entries,
    eu_entries,
    fixed_entries,
    fold16,
    hint,
    name,
    prolog_entries,
    prolog_refusal,
    segment_entry,
)
from dpfc.backends.p4.staged.faults import fault_cubes, shift_op_keys
from dpfc.backends.p4.staged.loads import (
    METADATA_LOADED,
    METADATA_SOURCES,
    METADATA_VALUES,
    PACKET_LENGTH,
    SWITCH_ID,
)
from dpfc.backends.p4.staged.packet import outside, packet_frame_entries, switch_id_entries
from dpfc.encoding import encode_pc
from dpfc.isa import (
    PC,
    AluOp,
    Bundle,
    Control,
    CtrlOp,
    EpilogBundle,
    Imm,
    MemOp,
    Register,
    Selector,
    SelectorKind,
    Steering,
)
from dpfc.isa.semantics import alu, branch_taken, hash_word, memory
from dpfc.target import BUILTIN_PROFILES
from tests.staged_model import EuState, PrologResult, lookup, run_epilog, run_eu, run_prolog
from tests.strategies import draw_bundle, draw_epilog, words

PROFILE = BUILTIN_PROFILES["tofino1_fit"]
PLAN = StagePlan.for_profile(PROFILE)
PC_T, PC_N = PC(False, 12), PC(False, 13)
WORD = 0xFFFF_FFFF
Case = tuple[Bundle, dict[str, int], int, int]
Outcome = tuple[dict[str, int], int, bool, bool]
FIXED = fixed_entries(PROFILE, PLAN)
PACKET = packet_frame_entries(PLAN)


def reference(
    bundle: Bundle, regs: dict[str, int], lanes_memory: dict[int, dict[int, int]]
) -> Outcome:
    """One EU per docs/isa.md §3: (registers, next PC, halted, fault)."""
    selected = dict(regs)
    for sel in bundle.selectors:
        dest = name(sel.dest)
        if sel.kind is SelectorKind.MOV:
            assert sel.source is not None
            selected[dest] = regs[name(sel.source)]
        elif sel.kind is SelectorKind.HASH:
            selected[dest] = hash_word(PROFILE.hash_for_lane(sel.dest.lane), regs[dest])
        else:
            selected[dest] = sel.value
    shifts = {0, *PROFILE.shift_amounts}
    fault = any(
        op in (AluOp.LSH, AluOp.RSH) and selected[f"b{i}"] & 31 not in shifts
        for i, op in enumerate(bundle.alu)
    )
    out = dict(regs)
    for i in range(PLAN.lanes):
        lane = lanes_memory.setdefault(i, {})
        new, loaded = memory(bundle.mem[i], lane.get(regs[f"a{i}"], 0), selected[f"b{i}"])
        if bundle.mem[i] is not MemOp.NOP and not fault:  # a fault: no unit runs (R14)
            lane[regs[f"a{i}"]] = new
        out[f"b{i}"] = selected[f"b{i}"] if loaded is None else loaded
        out[f"a{i}"] = alu(bundle.alu[i], selected[f"a{i}"], selected[f"b{i}"])
    ctrl = bundle.control

    def value(operand: object) -> int:
        return operand.value if isinstance(operand, Imm) else regs[name(operand)]  # type: ignore[arg-type]

    taken = ctrl.op in (CtrlOp.JMP, CtrlOp.HALT) or branch_taken(
        ctrl.op, value(ctrl.x), value(ctrl.y)
    )
    pc = ctrl.taken if taken else ctrl.not_taken
    assert pc is not None
    return out, encode_pc(pc), ctrl.op is CtrlOp.HALT, fault


@st.composite
def cases(draw: st.DrawFn) -> Case:
    bundle = draw_bundle(draw, PROFILE, next_count=1, epilog_count=1)
    regs = {r: draw(words()) for r in PLAN.registers}
    if draw(st.booleans()):  # shift amounts that hit the listed ones, and collisions
        regs["b0"] = draw(st.sampled_from([0, 1, 2, 3, 4, 16, 17, 31, 32]))
        regs["a1"] = regs["a0"]
    eu = draw(st.integers(0, PLAN.num_eus - 1))
    slot = draw(st.integers(0, PROFILE.code_slots_per_stage - 1))
    return bundle, regs, eu, slot


@given(cases())
def test_the_entries_run_an_eu_as_the_instruction_set_says(case: Case) -> None:
    bundle, regs, eu, slot = case
    entries = FIXED + eu_entries(PROFILE, PLAN, eu, slot, bundle)
    model_memory: dict[int, dict[int, int]] = {}
    got = run_eu(PROFILE, PLAN, eu, entries, slot, EuState(dict(regs), model_memory))
    reference_memory: dict[int, dict[int, int]] = {}
    want_regs, want_pc, want_halt, want_fault = reference(bundle, regs, reference_memory)
    assert got.fault == want_fault
    # a faulting EU leaves memory as it was (R14): the memory tables skip their access
    assert {k: v for k, v in model_memory.items() if v} == {
        k: v for k, v in reference_memory.items() if v
    }
    if want_fault:
        return  # the packet is dropped: its registers and PC are not observable
    assert (got.registers, got.next_pc, got.halted) == (want_regs, want_pc, want_halt)


def test_every_entry_names_a_table_key_and_action_of_the_program() -> None:
    text = generate(PROFILE)
    tables: dict[str, tuple[set[str], set[str]]] = {}
    for found in re.finditer(r"table (\w+) \{\s*key = \{(.*?)\}\s*actions = \{(.*?)\}", text, re.S):
        keys = set(re.findall(r'@name\("(\w+)"\)', found.group(2)))
        actions = {a.strip() for a in found.group(3).split(";") if a.strip()}
        tables[found.group(1)] = (keys, actions)
    bundle = Bundle(
        (Selector(Register.b(0), SelectorKind.LOAD_IMM, value=7),),
        (AluOp.ADD, AluOp.NOP),
        (MemOp.FAADD, MemOp.NOP),
        Control(CtrlOp.BLT, PC_T, Register.a(0), Imm(9), PC_N),
    )
    entries: list[Entry] = FIXED + PACKET + eu_entries(PROFILE, PLAN, 1, 3, bundle)
    prolog = Bundle(
        (Selector(Register.a(0), SelectorKind.POP),),
        (AluOp.NOP,) * 2,
        (MemOp.NOP,) * 2,
        Control(CtrlOp.JMP, PC_T),
    )
    entries += prolog_entries(PROFILE, PLAN, 5, prolog)
    epilog = EpilogBundle((Register.b(1), Register.a(0)), Steering("forward", Imm(9)), PC_T)
    entries += epilog_entries(PROFILE, PLAN, 2, epilog)
    entries += epilog_entries(
        PROFILE, PLAN, 3, EpilogBundle(steering=Steering("forward", Register.a(1)))
    )
    entries += [direct_entry(PLAN, 0, 1, 3, 77, 5), segment_entry(PLAN, 3, 0, 1, 0x100, 0x100, 0)]
    for entry in entries:
        keys, actions = tables[entry.table]
        assert {k for k, _ in entry.keys} == keys, entry.table
        assert entry.action in actions, (entry.table, entry.action)


@given(words(), st.integers(0, 45_055))
def test_a_direct_entry_gives_the_physical_word_as_the_register_index(
    virtual: int, physical: int
) -> None:
    entry = direct_entry(PLAN, 0, 1, 3, virtual, physical)
    assert dict(entry.keys) == {"slot": 3, "r_a1": virtual}
    assert fold16(virtual) ^ dict(entry.params)["entry"] == physical


@given(st.integers(0, 16), words(), st.integers(0, 45_055), st.data())
def test_a_segment_entry_adds_the_offset_to_its_base(
    log_size: int, virtual: int, physical: int, data: st.DataObject
) -> None:
    size = 1 << log_size
    virtual, physical = virtual - virtual % size, physical - physical % size
    entry = segment_entry(PLAN, 1, 0, 2, virtual, size, physical)
    offset = data.draw(st.integers(0, size - 1))
    key = dict(entry.keys)["r_a0"]
    assert isinstance(key, Ternary)
    address = virtual + offset
    assert address & key.mask == key.value
    assert (address + size) & key.mask != key.value or address + size > WORD
    assert fold16(address) ^ dict(entry.params)["entry"] == physical + offset


def test_a_segment_not_aligned_to_its_size_is_refused() -> None:
    with pytest.raises(EntryError, match="multiple of its size"):
        segment_entry(PLAN, 0, 0, 0, 0x1000, 0x2000, 0)
    with pytest.raises(EntryError, match="powers of two"):
        segment_entry(PLAN, 0, 0, 0, 0, 3, 0)


def test_a_selector_the_program_lacks_is_refused() -> None:
    bundle = Bundle(
        (Selector(Register.a(0), SelectorKind.LOAD_MD, value=9),),
        (AluOp.NOP,) * 2,
        (MemOp.NOP,) * 2,
        Control(CtrlOp.JMP, PC_T),
    )
    with pytest.raises(EntryError, match="LOAD_MD 9"):
        prolog_entries(PROFILE, PLAN, 0, bundle)


def test_the_successor_hint_names_the_register_of_the_steering_value() -> None:
    assert hint(EpilogBundle(steering=Steering("forward", Register.b(1)))) == 0x11 + 1
    assert hint(EpilogBundle(steering=Steering("forward", Imm(3)))) == 0


def prolog_reference(
    bundle: Bundle, stack: list[int], md: dict[int, int], rnd: tuple[int, int]
) -> tuple[dict[str, int], int]:
    """The simulator's prolog (backends/sim/stages.py, run_prolog): selectors in destination
    order, POP takes the top word, PEEK reads it, an empty stack gives 0; the k-th RAND is
    the program's k-th random word (the last one after the second); registers and pops."""
    regs = {r: 0 for r in PLAN.registers}
    words, rands = list(stack), 0
    for sel in bundle.selectors:
        if sel.kind in (SelectorKind.POP, SelectorKind.PEEK):
            value = words[0] if words else 0
            if sel.kind is SelectorKind.POP and words:
                words.pop(0)
        elif sel.kind is SelectorKind.RAND:
            value, rands = rnd[min(rands, len(rnd) - 1)], rands + 1
        else:
            value = md.get(sel.value, 0)
        regs[name(sel.dest)] = value
    pops = sum(sel.kind is SelectorKind.POP for sel in bundle.selectors)
    return regs, pops


@st.composite
def prologs(draw: st.DrawFn) -> tuple[Bundle, list[int], dict[str, int]]:
    bundle = draw_bundle(draw, PROFILE, prolog=True, next_count=1)
    stack = draw(st.lists(words(), max_size=2 * PLAN.lanes + 1))
    # an absent selector's fields: 0 on bmv2, anything on Tofino (the validity bit decides)
    packet = {f"pro_sel_{r}_kind": draw(st.integers(0, 7)) for r in PLAN.registers}
    packet["pro_head_pct"] = encode_pc(bundle.control.taken)
    for sel in bundle.selectors:
        dest = f"pro_sel_{name(sel.dest)}"
        operand = sel.value if sel.kind is SelectorKind.LOAD_MD else 0
        packet |= {f"{dest}_valid": 1, f"{dest}_kind": int(sel.kind), f"{dest}_operand": operand}
    return bundle, stack, packet


SWITCH = 0x5A  # the operator's switch id (configure)


@given(prologs(), st.tuples(words(), words()), st.integers(0, 503), st.booleans())
def test_the_prolog_entries_read_what_the_simulator_reads(
    case: tuple[Bundle, list[int], dict[str, int]],
    rnd: tuple[int, int],
    slot: int,
    metadata: bool,
) -> None:
    """The simulator's registers; a LOAD_MD of a tenant without the metadata bit (R5), or
    of a field the program lacks, refuses the prolog (nothing runs, the packet drops)."""
    bundle, stack, packet = case
    md = {index: 0x100 + index for index in METADATA_SOURCES}  # md4: the IPv4 total length
    reads = {**md, PACKET_LENGTH: md[PACKET_LENGTH] + 14, **METADATA_VALUES, SWITCH_ID: SWITCH}
    want_regs, want_pops = prolog_reference(bundle, stack, reads, rnd)
    loads = {sel.value for sel in bundle.selectors if sel.kind is SelectorKind.LOAD_MD}
    refused = bool(loads) and (not metadata or not loads <= set(METADATA_LOADED))
    perm = PERM_METADATA if metadata else 0
    want = (want_regs, encode_pc(bundle.control.taken), want_pops)

    def check(got: PrologResult) -> None:
        assert got.refused == refused
        assert refused or (got.registers, got.pc0, got.npops) == want

    fixed = FIXED + PACKET + switch_id_entries(PLAN, SWITCH)
    check(run_prolog(PLAN, fixed, 0x8000, packet, stack, md, rnd, perm))
    if not loads <= set(METADATA_LOADED):
        return  # in-switch: refused (test_a_selector_the_program_lacks_is_refused)
    rands = sum(sel.kind is SelectorKind.RAND for sel in bundle.selectors)
    if rands > 2:
        return  # in-switch: refused
    own = prolog_entries(PROFILE, PLAN, slot, bundle, SWITCH)
    installed = [*fixed, *prolog_refusal(PLAN), *own]
    check(run_prolog(PLAN, installed, slot, {}, stack, md, rnd, perm))  # no in-packet code


def test_a_tenant_without_the_metadata_bit_runs_no_prolog_of_an_empty_slot() -> None:
    """An empty in-switch slot runs nothing either way; without the metadata bit the
    fixed refusal answers (drop), with it the table's default (prolog_none: pass)."""
    fixed = [*FIXED, *PACKET, *prolog_refusal(PLAN)]
    assert run_prolog(PLAN, fixed, 7, {}, [], {0: 0, 1: 0, 4: 0}, (0, 0), 0).refused
    with pytest.raises(AssertionError, match="no prolog code entry"):
        run_prolog(PLAN, fixed, 7, {}, [], {0: 0, 1: 0, 4: 0}, (0, 0), PERM_METADATA)


@pytest.mark.parametrize(("values", "count"), [((0, 1, 2, 3, 4, 5, 6), 6), ((0,), 8), ((), 1)])
def test_outside_covers_exactly_the_other_values(values: tuple[int, ...], count: int) -> None:
    keys = outside(values, 8)
    assert len(keys) == count
    for value in range(256):
        hits = sum(value & k.mask == k.value for k in keys)
        assert hits == (0 if value in values else 1)


@st.composite
def epilogs(draw: st.DrawFn) -> tuple[EpilogBundle, dict[str, int], dict[str, int]]:
    """An epilog the program runs (no HDR_MOD, no NEXT_PC from a register), registers, and
    its in-packet fields."""
    bundle = draw_epilog(draw, PROFILE, prolog_count=1)
    if bundle.hdr_mod or isinstance(bundle.next_pc, Register):
        bundle = EpilogBundle(bundle.push, bundle.steering, None)
    regs = {r: draw(words()) for r in PLAN.registers}
    action = PROFILE.steering_by_name(bundle.steering.action)
    assert action is not None
    packet = {"ep_head_n_push": len(bundle.push), "ep_head_steer": action.code}
    for j, register in enumerate(bundle.push):
        packet |= {f"ep_push{j}_valid": 1, f"ep_push{j}_r": register.code}
    value = bundle.steering.value
    if isinstance(value, Register):
        packet |= {"ep_steer_reg_valid": 1, "ep_steer_reg_v": value.code}
    elif isinstance(value, Imm):
        packet |= {"ep_steer_imm_valid": 1, "ep_steer_imm_v": value.value}
    if bundle.next_pc is not None:
        assert isinstance(bundle.next_pc, PC)
        packet |= {"ep_next_pc_valid": 1, "ep_next_pc_v": encode_pc(bundle.next_pc)}
    return bundle, regs, packet


@given(epilogs(), st.integers(0, 503))
def test_the_epilog_entries_push_steer_and_chain_as_the_simulator(
    case: tuple[EpilogBundle, dict[str, int], dict[str, int]], slot: int
) -> None:
    bundle, regs, packet = case
    action = PROFILE.steering_by_name(bundle.steering.action)
    assert action is not None
    value = bundle.steering.value
    sval = regs[name(value)] & 0xFFFF if isinstance(value, Register) else 0
    sval = value.value & 0xFFFF if isinstance(value, Imm) else sval
    next_pc = encode_pc(bundle.next_pc) if isinstance(bundle.next_pc, PC) else None
    want = ([regs[name(r)] for r in bundle.push], action.code, sval, next_pc)
    got = run_epilog(PLAN, FIXED + PACKET, 0x8000, packet, regs, 0)
    assert (got.pushed, got.steer, got.value, got.next_pc) == want
    installed = FIXED + PACKET + epilog_entries(PROFILE, PLAN, slot, bundle)
    got = run_epilog(PLAN, installed, slot, {}, regs, hint(bundle))  # no in-packet code
    assert (got.pushed, got.steer, got.value, got.next_pc) == want


@given(st.sets(st.integers(1, 31)))
def test_the_fault_cubes_cover_exactly_the_faulting_amounts(amounts: set[int]) -> None:
    profile = replace(PROFILE, shift_amounts=tuple(sorted(amounts)))
    covered = {x for v, m in fault_cubes(profile) for x in range(32) if x & m == v}
    assert covered == set(range(1, 32)) - amounts
    opcodes = {op for v, m in shift_op_keys() for op in AluOp if op & m == v}
    assert opcodes == {AluOp.LSH, AluOp.RSH}


def test_a_faulting_shift_in_one_lane_keeps_the_other_lanes_memory() -> None:
    bundle = Bundle(
        (Selector(Register.b(1), SelectorKind.LOAD_IMM, value=3),),
        (AluOp.NOP, AluOp.LSH),
        (MemOp.STORE, MemOp.FAADD),
        Control(CtrlOp.JMP, PC_T),
    )
    entries = FIXED + eu_entries(PROFILE, PLAN, 2, 1, bundle)
    lanes = {0: {5: 1}, 1: {6: 2}}
    regs = {"a0": 5, "a1": 6, "b0": 9, "b1": 0}
    got = run_eu(PROFILE, PLAN, 2, entries, 1, EuState(regs, lanes))
    assert got.fault
    assert lanes == {0: {5: 1}, 1: {6: 2}}


def test_load_const_reads_the_tenants_own_constant() -> None:
    """A profile with a LOAD_CONST table: the B selectors key on the tenant's slot; in-switch
    code holds each tenant's value (0 for a constant not set), in-packet code the entries
    :func:`constant_entries` adds per set constant over the fixed 0."""
    profile = replace(PROFILE, const_table_entries=256)
    plan = StagePlan.for_profile(profile)
    assert plan.constants and not PLAN.constants
    bundle = Bundle(
        (Selector(Register.b(1), SelectorKind.LOAD_CONST, value=5),),
        (AluOp.NOP,) * 2,
        (MemOp.NOP,) * 2,
        Control(CtrlOp.JMP, PC_T),
    )
    installed = eu_entries(profile, plan, 0, 3, bundle, constants={1: {5: 77}, 2: {4: 9}})
    for tenant, want in ((1, 77), (2, 0), (9, 0)):
        found = lookup(installed, "eu0_sel_b1", {"pc0": 3, "slot": tenant})
        assert found is not None and dict(found.params) == {"v": want}
    fixed = fixed_entries(profile, plan) + constant_entries(plan, 1, 5, 77)
    packet = {"pc0": 0x8000, "eu0_sel_b1_valid": 1, "eu0_sel_b1_kind": 3, "eu0_sel_b1_operand": 5}
    for tenant, want in ((1, 77), (2, 0)):
        found = lookup(fixed, "eu0_sel_b1", {**packet, "slot": tenant})
        assert found is not None and found.action == "eu0_sel_b1_imm"
        assert dict(found.params) == {"v": want}
