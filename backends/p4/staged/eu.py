"""One Execution Unit as two Tofino stages of small match-action tables.

Contract: :func:`eu_stages` returns EU ``k``'s two stages (:mod:`.plan` numbers them):

* **stage 1 (selection, translation, comparison, code).** One selector table per register
  keyed by the EU's PC and the in-packet selector (kind, operand): its actions copy the
  EU-entry value of a register, the lane's CRC of its own A register (HASH), an in-switch
  immediate (action data) or an in-packet one into the register's *selected copy*; the
  default keeps the register. Translation per lane: the direct table (tenant slot, A exact)
  and the segment table (tenant slot, A ternary) match in parallel and write their halves
  of the register index. The comparison table writes the three words and the direction
  bit of :mod:`dpfc.backends.p4.branch_tcam`. The code table sets the ALU, memory and
  control opcodes and the two PCs, from action data (in-switch) or the packet's fields.
* **stage 2 (memory, ALU, branch).** Per lane, the memory table picks one of the lane
  register's four actions by opcode (the index: XOR16 of A and the translation's words,
  docs/p4.md), or none when a shift of any lane of the EU faults (its keys hold every
  lane's ALU opcode and shift amount, :mod:`.faults`), the ALU table computes on the
  selected copies (keyed by opcode and the shift amount, so a shift is an action of its
  own; a faulting shift sets the lane's fault flag, and no later EU runs), and the branch
  table is the resolution TCAM. The in-packet immediates of the next EU are loaded here.

Selected copies are the push headers (:mod:`.headers`); registers are ``meta.r_*``. The
units (CRC, identity moves, lane memories, ``min`` / ``max``) are the
:class:`~.arch.StagedArch`'s.
"""

from __future__ import annotations

from dpfc.backends.p4.lang import Assign, Bin, Expr, Lit, Stmt, lit, n
from dpfc.target import TargetProfile

from . import externs
from .arch import StagedArch
from .egress import PHASE_KEY
from .faults import AMOUNT_BITS, alu_table_size, memory_table_size
from .plan import StagePlan
from .units import Part, guarded

meta, hdr = n("meta"), n("hdr")
CODE_ENTRIES_IN_PACKET = 8  # in-packet entries beside the code slots (pc, validity bits)


def reg(r: str) -> Expr:
    return meta.dot(f"r_{r}")


def copy(plan: StagePlan, r: str) -> Expr:
    """The selected copy of register ``r``: a push header's word."""
    return hdr.dot("push").at(plan.registers.index(r)).dot("w")


def pc(k: int) -> Expr:
    return meta.dot(f"pc{k}")


CONSTANT_ENTRIES = 4096  # the tenants' LOAD_CONST entries one B selector table holds


def code_size(profile: TargetProfile) -> int:
    return profile.code_slots_per_stage + CODE_ENTRIES_IN_PACKET


def eu_stages(profile: TargetProfile, plan: StagePlan, k: int, arch: StagedArch) -> Part:
    part = Part()
    stage1, stage2 = Part(), Part()
    _selectors(stage1, profile, plan, k, arch)
    _translation(stage1, profile, plan, k)
    _comparison(stage1, profile, plan, k)
    _code(stage1, profile, plan, k)
    _memory(stage2, profile, plan, k, arch)
    _alu(stage2, profile, plan, k, arch)
    _branch(stage2, plan, k)
    part.decls += stage1.decls + stage2.decls
    part.apply += guarded(stage1.apply + stage2.apply, plan.lanes)
    if k + 1 < plan.num_eus:
        part.add(load_immediates(plan, k + 1, plan.execute(k), arch))
    return part


def load_immediates(plan: StagePlan, k: int, stage: int, arch: StagedArch) -> Part:
    """EU ``k``'s in-packet immediates into meta.ci0/ci1, in ``stage`` (before EU k)."""
    del plan
    part = Part()
    for j in (0, 1):
        source = hdr.dot(f"eu{k}_imm{j}").dot("v")
        decls, load = arch.identity(f"eu{k}_imm{j}_unit", meta.dot(f"ci{j}"), source)
        part.decls += decls
        part.always(f"eu{k}_load_imm{j}", stage, load)
    return part


def _selectors(
    part: Part, profile: TargetProfile, plan: StagePlan, k: int, arch: StagedArch
) -> None:
    for r in plan.registers:
        target = copy(plan, r)
        name = plan.selector(k, r)
        acts = [part.action(f"{name}_keep", [], [Assign(target, reg(r))])]
        for y in plan.registers:
            if y != r:
                acts.append(part.action(f"{name}_mov_{y}", [], [Assign(target, reg(y))]))
        if r.startswith("a"):
            crc = profile.hash_for_lane(int(r[1:]))
            decls, body = arch.crc(f"eu{k}_crc_{r}", crc, target, reg(r))
            part.decls += decls
            acts.append(part.action(f"{name}_hash", [], body))
        else:
            acts.append(part.action(f"{name}_imm", ["bit<32> v"], [Assign(target, n("v"))]))
            for j in (0, 1):
                ci = meta.dot(f"ci{j}")
                acts.append(part.action(f"{name}_ci{j}", [], [Assign(target, ci)]))
        sel = hdr.dot(f"eu{k}_sel_{r}")
        keys = [(pc(k), "ternary"), (sel.dot("isValid").call(), "ternary")]
        keys += [(sel.dot("kind"), "ternary"), (sel.dot("operand"), "ternary")]
        size = code_size(profile)
        if plan.constants and r.startswith("b"):  # LOAD_CONST: an entry per tenant constant
            keys.append((meta.dot("slot"), "ternary"))
            size += CONSTANT_ENTRIES
        part.table(name, plan.select(k), keys, acts, f"{name}_keep()", size)


def _translation(part: Part, profile: TargetProfile, plan: StagePlan, k: int) -> None:
    for i in range(plan.lanes):
        a, slot = reg(f"a{i}"), meta.dot("slot")
        d, s = plan.direct(k, i), plan.segment(k, i)
        hit_d = part.action(
            f"{d}_hit",
            ["bit<16> entry"],
            [Assign(meta.dot(f"daddr{i}"), n("entry")), Assign(meta.dot(f"dok{i}"), lit(1))],
        )
        hit_s = part.action(
            f"{s}_hit",
            ["bit<16> entry"],
            [Assign(meta.dot(f"saddr{i}"), n("entry")), Assign(meta.dot(f"sok{i}"), lit(1))],
        )
        # a miss clears what an earlier EU's hit left: the index folds in both words
        miss_d = part.action(
            f"{d}_miss",
            [],
            [Assign(meta.dot(f"daddr{i}"), Lit(0, 16)), Assign(meta.dot(f"dok{i}"), lit(0))],
        )
        miss_s = part.action(
            f"{s}_miss",
            [],
            [Assign(meta.dot(f"saddr{i}"), Lit(0, 16)), Assign(meta.dot(f"sok{i}"), lit(0))],
        )
        size_d, size_s = profile.direct_entries_per_lane, profile.segments_per_lane
        # with an egress pass its mappings are the egress pipeline's (:mod:`.egress`)
        phase = [(meta.dot(PHASE_KEY), "exact")] if plan.egress_pass else []
        part.table(
            d,
            plan.select(k),
            [(slot, "exact"), *phase, (a, "exact")],
            [hit_d, miss_d],
            f"{d}_miss()",
            size_d,
        )
        part.table(
            s,
            plan.select(k),
            [(slot, "exact"), *phase, (a, "ternary")],
            [hit_s, miss_s],
            f"{s}_miss()",
            size_s,
        )


def _comparison(part: Part, profile: TargetProfile, plan: StagePlan, k: int) -> None:
    name = plan.compare(k)

    def words(x: Expr, y: Expr, a: Expr, b: Expr, rev: Expr) -> list[Stmt]:
        return [
            Assign(meta.dot("xr"), x ^ y),
            Assign(meta.dot("an"), x & y),
            Assign(meta.dot("dd"), Bin("|-|", a, b)),
            Assign(meta.dot("rev"), rev),
        ]

    # xor and and are symmetric: one action per unordered pair computes lo |-| hi, and the
    # entry's ``rev`` says whether that is x |-| y (0) or y |-| x (1) (branch_tcam).
    acts: list[str] = []
    regs = plan.registers
    rev = n("rev")
    for at, x in enumerate(regs):
        for y in regs[at + 1 :]:
            body = words(reg(x), reg(y), reg(x), reg(y), rev)
            acts.append(part.action(f"{name}_{x}_{y}", ["bit<8> rev"], body))
        v = n("v")
        body = words(reg(x), v, v, reg(x), lit(1))
        acts.append(part.action(f"{name}_{x}_imm", ["bit<32> v"], body))
        ci = meta.dot("ci0")  # an in-packet branch immediate is slot 0 (format version 2)
        acts.append(
            part.action(f"{name}_{x}_ci0", ["bit<8> rev"], words(reg(x), ci, reg(x), ci, rev))
        )
    const = [Assign(meta.dot(f), n(f)) for f in ("xr", "an", "dd", "rev")]
    acts.append(
        part.action(
            f"{name}_const", ["bit<32> xr", "bit<32> an", "bit<32> dd", "bit<8> rev"], const
        )
    )
    br = hdr.dot(f"eu{k}_br")
    keys = [(pc(k), "ternary"), (br.dot("x"), "ternary"), (br.dot("y"), "ternary")]
    part.table(name, plan.select(k), keys, acts, f"{name}_const(0, 0, 0, 0)", code_size(profile))


def _code(part: Part, profile: TargetProfile, plan: StagePlan, k: int) -> None:
    name = plan.code(k)
    lanes = range(plan.lanes)
    params = [f"bit<8> alu{i}" for i in lanes] + [f"bit<8> mem{i}" for i in lanes]
    params += ["bit<8> ctrl", "bit<16> pct", "bit<16> pcn", "bit<8> hint_t", "bit<8> hint_n"]
    body: list[Stmt] = [Assign(meta.dot(f"alu{i}"), n(f"alu{i}")) for i in lanes]
    body += [Assign(meta.dot(f"mem{i}"), n(f"mem{i}")) for i in lanes]
    body += [Assign(meta.dot(f), n(f)) for f in ("ctrl", "pct", "pcn", "hint_t", "hint_n")]
    acts = [part.action(f"{name}_switch", params, body)]
    head, br = hdr.dot(f"eu{k}_head"), hdr.dot(f"eu{k}_br")
    alu, mem = hdr.dot(f"eu{k}_alu"), hdr.dot(f"eu{k}_mem")
    for with_alu in (False, True):
        for with_mem in (False, True):
            out: list[Stmt] = [
                Assign(meta.dot(f"alu{i}"), alu.dot(f"op{i}").cast(8) if with_alu else Lit(0, 8))
                for i in lanes
            ]
            out += [
                Assign(meta.dot(f"mem{i}"), mem.dot(f"op{i}").cast(8) if with_mem else Lit(0, 8))
                for i in lanes
            ]
            out += [Assign(meta.dot("ctrl"), head.dot("ctrl").cast(8))]
            out += [
                Assign(meta.dot("pct"), head.dot("pct")),
                Assign(meta.dot("pcn"), br.dot("pcn")),
            ]
            suffix = ("a" if with_alu else "") + ("m" if with_mem else "")
            acts.append(part.action(f"{name}_packet{suffix}", [], out))
    keys = [(pc(k), "ternary"), (alu.dot("isValid").call(), "ternary")]
    keys += [(mem.dot("isValid").call(), "ternary")]
    part.table(name, plan.select(k), keys, [*acts, "NoAction"], "NoAction()", code_size(profile))


def _memory(part: Part, profile: TargetProfile, plan: StagePlan, k: int, arch: StagedArch) -> None:
    for i in range(plan.lanes):
        name, b = plan.memory(k, i), reg(f"b{i}")
        op, data = meta.dot(f"mem{i}"), copy(plan, f"b{i}")
        unit, index_unit = f"eu{k}_lane{i}", f"eu{k}_index{i}"
        part.decls += arch.lane_memory(unit, index_unit, profile.memory_words_per_lane, op, data)
        index = [(reg(f"a{i}"), 32), (meta.dot(f"daddr{i}"), 16), (meta.dot(f"saddr{i}"), 16)]
        acts = []
        for action, _ops in externs.REGISTER_ACTIONS:
            body = arch.memory_access(unit, index_unit, action, index, op, data, b)
            acts.append(part.action(f"{name}_{action}", [], body))
        # keep: mask all ones; LOAD or FA* of an unmapped address: 0 (docs/simulator.md R11)
        keep = [Assign(b, data & n("mask"))]
        acts.append(part.action(f"{name}_keep", ["bit<32> mask"], keep))
        keys = [(op, "ternary"), (meta.dot(f"dok{i}"), "ternary"), (meta.dot(f"sok{i}"), "ternary")]
        keys += fault_keys(plan)
        size = memory_table_size(profile, plan.lanes)
        part.table(name, plan.execute(k), keys, acts, f"{name}_keep(0xFFFFFFFF)", size)


def fault_keys(plan: StagePlan) -> list[tuple[Expr, str]]:
    """Every lane's ALU opcode and the shift amount of its selected B copy (:mod:`.faults`):
    a lane's memory table skips its access when any lane of the EU faults."""
    keys: list[tuple[Expr, str]] = []
    for j in range(plan.lanes):
        amount = copy(plan, f"b{j}").slice(AMOUNT_BITS - 1, 0)
        keys += [(meta.dot(f"alu{j}"), "ternary"), (amount, "ternary")]
    return keys


def _alu(part: Part, profile: TargetProfile, plan: StagePlan, k: int, arch: StagedArch) -> None:
    for i in range(plan.lanes):
        name, a = plan.alu(k, i), reg(f"a{i}")
        x, y = copy(plan, f"a{i}"), copy(plan, f"b{i}")
        results: dict[str, Expr] = {
            "keep": x,
            "add": x + y,
            "sub": x - y,
            "and": x & y,
            "or": x | y,
            "xor": x ^ y,
            "neg": Lit(0, 32) - x,
            "min": arch.minimum(x, y),
            "max": arch.maximum(x, y),
        }
        for amount in profile.shift_amounts:
            results[f"lsh{amount}"] = x << amount
            results[f"rsh{amount}"] = x >> amount
        # keep(fault): a shift by an amount the ALU lacks faults the packet (R14); the flag
        # is the lane's own (two tables of a stage cannot write one field)
        keep = [Assign(a, results.pop("keep")), Assign(meta.dot(f"fault{i}"), n("fault"))]
        acts = [part.action(f"{name}_keep", ["bit<8> fault"], keep)]
        acts += [
            part.action(f"{name}_{op}", [], [Assign(a, value)]) for op, value in results.items()
        ]
        keys = [(meta.dot(f"alu{i}"), "ternary"), (y, "ternary")]
        size = alu_table_size(profile)
        part.table(name, plan.execute(k), keys, acts, f"{name}_keep(0)", size)


def _branch(part: Part, plan: StagePlan, k: int) -> None:
    name, last = plan.branch(k), k + 1 == plan.num_eus
    after = meta.dot("epc") if last else pc(k + 1)
    # The successor hint (which register holds the epilog's steering value, + 1; 0 none)
    # goes with the epilog's PC: the epilog stage needs it before its code table answers.
    hint_t = Assign(meta.dot("nsrc"), meta.dot("hint_t"))
    hint_n = Assign(meta.dot("nsrc"), meta.dot("hint_n"))
    halt = [Assign(meta.dot("epc"), meta.dot("pct")), Assign(meta.dot("halt"), lit(1)), hint_t]
    acts = [
        part.action(
            f"{name}_taken", [], [Assign(after, meta.dot("pct"))] + ([hint_t] if last else [])
        ),
        part.action(
            f"{name}_not_taken", [], [Assign(after, meta.dot("pcn"))] + ([hint_n] if last else [])
        ),
        part.action(f"{name}_halt", [], halt),
    ]
    keys = [(meta.dot(f), "ternary") for f in ("ctrl", "rev", "xr", "an", "dd")]
    part.table(name, plan.execute(k), keys, acts, f"{name}_taken()", 64)
