"""A model of the stage-structured program's tables, to check its control plane.

``run_eu`` executes one EU the way the program does: it looks up each table with the
entries :mod:`dpfc.backends.p4.staged.entries` writes (first match by priority, else the
table's default) and applies the action the program declares under that name, with the
meaning its P4 body has (read from the action's name: ``_mov_b1``, ``_lsh4`` ...). The
tests compare it with the instruction set's semantics (:mod:`dpfc.isa.semantics`), so a
wrong entry, a missing one or a wrong priority shows as a different register, memory word
or next PC. Memory is one dict per lane addressed by A (translation is not modelled).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from dpfc.backends.p4.staged.entries import Entry, Ternary
from dpfc.backends.p4.staged.plan import StagePlan
from dpfc.isa import MemOp
from dpfc.isa.semantics import hash_word, memory
from dpfc.target import TargetProfile

WORD = 0xFFFF_FFFF


def lookup(entries: Sequence[Entry], table: str, keys: Mapping[str, int]) -> Entry | None:
    found = [e for e in entries if e.table == table and _matches(e, keys)]
    return min(found, key=lambda e: e.priority) if found else None


def _matches(entry: Entry, keys: Mapping[str, int]) -> bool:
    for key, want in entry.keys:
        value = keys.get(key, 0)  # a field the pass did not set: an invalid header, 0
        if isinstance(want, Ternary):
            if value & want.mask != want.value & want.mask:
                return False
        elif value != want:
            return False
    return True


@dataclass
class EuState:
    registers: dict[str, int]
    memory: dict[int, dict[int, int]] = field(default_factory=dict)  # lane -> A -> word
    packet: dict[str, int] = field(default_factory=dict)  # in-packet fields (key names)
    ci: tuple[int, int] = (0, 0)  # the in-packet immediates


@dataclass(frozen=True)
class EuResult:
    registers: dict[str, int]
    next_pc: int
    halted: bool
    fault: bool


def run_eu(
    profile: TargetProfile,
    plan: StagePlan,
    eu: int,
    entries: Sequence[Entry],
    pc: int,
    state: EuState,
) -> EuResult:
    regs = state.registers
    keys: dict[str, int] = {f"pc{eu}": pc, **state.packet}
    selected: dict[str, int] = {}
    for r in plan.registers:
        table = plan.selector(eu, r)
        entry = lookup(entries, table, keys)
        action = entry.action.removeprefix(f"{table}_") if entry else "keep"
        params = dict(entry.params) if entry else {}
        if action == "keep":
            selected[r] = regs[r]
        elif action.startswith("mov_"):
            selected[r] = regs[action.removeprefix("mov_")]
        elif action == "hash":
            selected[r] = hash_word(profile.hash_for_lane(int(r[1:])), regs[r])
        elif action == "imm":
            selected[r] = params["v"]
        elif action in ("ci0", "ci1"):
            selected[r] = state.ci[int(action[2])]
        else:
            raise AssertionError(action)
    words = _compare(plan, eu, entries, keys, regs, state)
    code = lookup(entries, plan.code(eu), keys)
    assert code is not None, "no code entry"
    ops = dict(code.params)
    assert code.action.endswith("_switch"), code.action  # in-packet code: not modelled here
    out = dict(regs)
    fault = False
    for i in range(plan.lanes):  # memory before the ALU, as the program applies them
        op = MemOp(ops[f"mem{i}"])
        lane = state.memory.setdefault(i, {})
        old = lane.get(regs[f"a{i}"], 0)
        m_keys = {f"mem{i}": int(op), f"dok{i}": 1, f"sok{i}": 0}
        for j in range(plan.lanes):  # every lane's shift: the fault keys (faults.py)
            index = plan.registers.index(f"b{j}")
            m_keys[f"alu{j}"] = ops[f"alu{j}"]
            m_keys[f"selected{index}_4_0"] = selected[f"b{j}"] & 0x1F
        entry = lookup(entries, plan.memory(eu, i), m_keys)
        data = selected[f"b{i}"]
        if entry is None or entry.action.endswith("_keep"):
            mask = dict(entry.params)["mask"] if entry else WORD
            out[f"b{i}"] = data & mask
        else:
            new, loaded = memory(op, old, data)
            lane[regs[f"a{i}"]] = new
            out[f"b{i}"] = loaded if loaded is not None else data
        a_key = {f"alu{i}": ops[f"alu{i}"], f"selected{plan.registers.index(f'b{i}')}": data}
        entry = lookup(entries, plan.alu(eu, i), a_key)
        action = entry.action.removeprefix(f"{plan.alu(eu, i)}_") if entry else "keep"
        x, y = selected[f"a{i}"], data
        if action == "keep":
            out[f"a{i}"] = x
            fault |= bool(entry and dict(entry.params)["fault"])
        else:
            out[f"a{i}"] = _alu(action, x, y)
    b_keys = {"ctrl": ops["ctrl"], **words}
    entry = lookup(entries, plan.branch(eu), b_keys)
    outcome = entry.action.removeprefix(f"{plan.branch(eu)}_") if entry else "taken"
    next_pc = ops["pcn"] if outcome == "not_taken" else ops["pct"]
    return EuResult(out, next_pc, outcome == "halt", fault)


def _alu(action: str, x: int, y: int) -> int:
    if action.startswith(("lsh", "rsh")):
        amount = int(action[3:])
        return (x << amount) & WORD if action.startswith("lsh") else x >> amount
    return {
        "add": (x + y) & WORD,
        "sub": (x - y) & WORD,
        "and": x & y,
        "or": x | y,
        "xor": x ^ y,
        "neg": (-x) & WORD,
        "min": min(x, y),
        "max": max(x, y),
    }[action]


def _compare(
    plan: StagePlan,
    eu: int,
    entries: Sequence[Entry],
    keys: Mapping[str, int],
    regs: Mapping[str, int],
    state: EuState,
) -> dict[str, int]:
    table = plan.compare(eu)
    full = {f"eu{eu}_br_x": 0, f"eu{eu}_br_y": 0, **keys}
    entry = lookup(entries, table, full)
    if entry is None:
        return {"xr": 0, "an": 0, "dd": 0, "rev": 0}
    action, params = entry.action.removeprefix(f"{table}_"), dict(entry.params)
    if action == "const":
        return {k: params[k] for k in ("xr", "an", "dd", "rev")}
    x_name, y_name = action.split("_")
    x = regs[x_name]
    if y_name == "imm":
        v = params["v"]
        return {"xr": x ^ v, "an": x & v, "dd": max(v - x, 0), "rev": 1}
    y = state.ci[0] if y_name == "ci0" else regs[y_name]
    return {"xr": x ^ y, "an": x & y, "dd": max(x - y, 0), "rev": params["rev"]}


@dataclass(frozen=True)
class PrologResult:
    registers: dict[str, int]
    pc0: int
    npops: int
    refused: bool = False  # prolog_refused: nothing runs, the packet is dropped


def run_prolog(
    plan: StagePlan,
    entries: Sequence[Entry],
    ppc: int,
    packet: Mapping[str, int],
    stack: Sequence[int],
    md: Mapping[int, int],
    rnd: tuple[int, int],
    perm: int = 0xFF,
) -> PrologResult:
    """The prolog stage as the program runs it: each register's selector table (the parser's
    copies of the top stack words in ``pop<j>``), then ``prolog_code`` (EU0's PC: action
    data, or the packet's ``pro_head_pct``). ``md[4]`` is the IPv4 total length (the action
    adds the Ethernet header's 14 bytes); ``perm``: the tenant's permission bits."""
    keys: dict[str, int] = {"ppc": ppc, "perm": perm, **packet}
    registers = {}
    for r in plan.registers:
        table = plan.prolog_selector(r)
        entry = lookup(entries, table, keys)
        action = entry.action.removeprefix(f"{table}_") if entry else "zero"
        if action.startswith("pop"):
            j = int(action[3:])
            registers[r] = stack[j] if j < len(stack) else 0
        elif action.startswith("md"):
            index = int(action[2:])
            registers[r] = (md[index] + (14 if index == 4 else 0)) & 0xFFFF_FFFF
        elif action == "value":
            registers[r] = dict(entry.params)["value"] if entry else 0
        elif action.startswith("rnd"):
            registers[r] = rnd[int(action[3:])]
        else:
            assert action == "zero", action
            registers[r] = 0
    code = lookup(entries, "prolog_code", keys)
    assert code is not None, "no prolog code entry"
    if code.action == "prolog_refused":
        return PrologResult(registers, 0, 0, refused=True)
    params = dict(code.params)
    pc0 = params["pc"] if code.action == "prolog_switch" else packet.get("pro_head_pct", 0)
    assert code.action in ("prolog_switch", "prolog_packet"), code.action
    return PrologResult(registers, pc0, params["npops"])


@dataclass(frozen=True)
class EpilogResult:
    pushed: list[int]
    steer: int
    value: int
    next_pc: int | None  # None: the DPF pointer stays


def run_epilog(
    plan: StagePlan,
    entries: Sequence[Entry],
    epc: int,
    packet: Mapping[str, int],
    registers: Mapping[str, int],
    nsrc: int,
) -> EpilogResult:
    """The epilog stage as the program runs it: the push count, each push position's
    register, the code table (steering action, DPF pointer) and the steering value (a
    register's low 16 bits by the if-chain on ``nsrc`` or the packet's register byte, else
    ``epilog_values``)."""
    keys: dict[str, int] = {"epc": epc, **packet}
    count = lookup(entries, "epilog_pushes", keys)
    pushes = int(count.action.removeprefix("epilog_pushes")) if count else 0
    pushed = []
    for j in range(pushes):
        entry = lookup(entries, f"epilog_push{j}", keys)
        assert entry is not None, f"push {j}: no entry"
        pushed.append(registers[entry.action.removeprefix(f"epilog_push{j}_")])
    code = lookup(entries, "epilog_code", keys)
    action = code.action if code else "epilog_packet_stay"
    params = dict(code.params) if code else {}
    if action.startswith("epilog_switch"):
        steer, next_pc = params["steer"], params.get("next")
    else:
        steer = packet.get("ep_head_steer", 0)
        next_pc = packet.get("ep_next_pc_v", 0) if action == "epilog_packet" else None
    for r in plan.registers:
        code_r = plan.register_code(r)
        named = packet.get("ep_steer_reg_valid", 0) and packet.get("ep_steer_reg_v") == code_r
        if nsrc == code_r + 1 or named:
            return EpilogResult(pushed, steer, registers[r] & 0xFFFF, next_pc)
    entry = lookup(entries, "epilog_values", keys)
    if entry is not None and entry.action == "epilog_value":
        value = dict(entry.params)["value"]
    else:
        value = packet.get("ep_steer_imm_v", 0)
    return EpilogResult(pushed, steer, value, next_pc)
