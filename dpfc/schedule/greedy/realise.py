"""Realising a step's plan: the selectors that carry it out without losing a live value.

:func:`try_plan` decides which values must survive the step of ``plan`` (*hard*: every
live value except constants LOAD_IMM can bring back, unless one is needed in an A register,
by the next step's extra demands, or by an epilog with no EU left; *soft*: the constants
worth keeping when a register is free) and returns a :class:`Realised` step, or None when no
selectors put every operand of the plan in place while every hard value stays in some
register, when an input or a placed memory result is needed but gone, or when a pure value
of the node's path would have to run after the path splits. Realisation then honours the
plan's staging wants where a free register (or a movable live value) allows, never at the
cost of a live value, and chooses the branch unit's sources in the profile's operand view.

Not responsible for: choosing the plan's actions (:mod:`.step`) or walking the tree
(:mod:`.scheduler`). Deterministic: every choice is ordered by register index.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from dpfc.isa import Register, SelectorKind
from dpfc.schedule.greedy.facts import JUNK, Facts, Plan
from dpfc.schedule.problem.tree import Branch, Kind
from dpfc.schedule.schedule import BranchUse, SelectorAssign, Source
from dpfc.target import BranchOperands


@dataclass
class Realised:
    """A realised step: its selectors, the register state after it, its branch."""

    selectors: tuple[SelectorAssign, ...]
    next_state: list[int]
    branch: BranchUse | None


def try_plan(
    facts: Facts, t: int, eu: int, entry: list[int], placed: set[int], plan: Plan
) -> Realised | None:
    """Selectors for ``plan`` keeping every live value, or None if there are none."""
    now_placed = placed | set(plan.mem.values())
    produced = {u for u, _ in plan.alu.values()}
    produced |= {m for m in plan.mem.values() if facts.op(m).has_result}
    produced |= {h for lane, h in plan.hashes.items() if lane not in plan.alu}
    held = set(entry) | produced
    live = facts.closure(facts.demand(t, now_placed, plan), held) | set(plan.extra_hard)
    hard: set[int] = set()
    for v in live:
        o = facts.op(v)
        if v not in held:
            if o.kind in (Kind.PARAM, Kind.PEEK, Kind.META, Kind.RAND):
                return None  # an input that is gone
            if o.kind is Kind.MEM and v in now_placed:
                return None
            # A pure value of this node or an ancestor cannot run after the split.
            split = plan.branch or plan.end
            if o.is_pure and split and o.owner in facts.path_nodes[t]:
                return None
            if v in plan.extra_hard:
                if o.kind is not Kind.CONST:
                    return None
                hard.add(v)
            continue
        if o.kind is Kind.CONST and v not in facts.a_side_consts:
            if v in plan.extra_hard or (plan.branch and eu == facts.last_eu):
                hard.add(v)
            continue
        hard.add(v)
    soft = {v for v in live if facts.op(v).kind is Kind.CONST} - hard
    return _realise(facts, t, eu, entry, plan, hard, soft)


def _realise(
    facts: Facts, t: int, eu: int, entry: list[int], plan: Plan, hard: set[int], soft: set[int]
) -> Realised | None:
    L, R = facts.lanes, facts.nregs
    sel = list(entry)
    source: dict[int, tuple[SelectorKind, int]] = {}  # reg -> (kind, source reg | op)
    immediates: set[int] = set()
    limit = facts.profile.immediates_per_bundle

    def load_imm(reg: int, const: int) -> bool:
        if const not in immediates and len(immediates) >= limit:
            return False
        immediates.add(const)
        source[reg] = (SelectorKind.LOAD_IMM, const)
        sel[reg] = const
        return True

    def bring(reg: int, value: int) -> bool:
        """Make ``reg``'s selected value ``value`` from the entry registers."""
        if entry[reg] == value:
            source.pop(reg, None)
            sel[reg] = value
            return True
        if value in entry:
            source[reg] = (SelectorKind.MOV, entry.index(value))
            sel[reg] = value
            return True
        if reg >= L and value != JUNK and facts.op(value).kind is Kind.CONST:
            return load_imm(reg, value)
        return False

    for lane, h in plan.hashes.items():
        if entry[lane] != facts.op(h).operands[0] or plan.fixed.get(lane, h) != h:
            return None
        source[lane] = (SelectorKind.HASH, h)
        sel[lane] = h
    for reg, value in sorted(plan.fixed.items()):
        if reg < L and plan.hashes.get(reg) == value:
            continue
        if not bring(reg, value):
            return None
    nxt = list(sel)
    clobbered: set[int] = set()
    for lane, (u, _) in plan.alu.items():
        nxt[lane] = u
        clobbered.add(lane)
    for lane, m in plan.mem.items():
        if facts.op(m).has_result:
            nxt[L + lane] = m
            clobbered.add(L + lane)
    busy = set(plan.fixed) | set(plan.hashes) | clobbered

    def slot_cost(reg: int) -> float | None:
        """How much overwriting free register ``reg`` costs (None: not allowed)."""
        if reg in busy:
            return None
        value = nxt[reg]
        copies = nxt.count(value)
        if value == JUNK:
            return 0
        if value in hard:
            return 2 if copies > 1 else None
        if value in soft:
            return 0.5 if copies > 1 else 1
        return 0

    def place(value: int, regs: Iterable[int]) -> bool:
        options: list[tuple[float, int, int, int]] = []
        for reg in regs:
            c = slot_cost(reg)
            if c is None:
                continue
            if value not in entry and not (reg >= L and facts.op(value).kind is Kind.CONST):
                continue
            # Prefer the high lanes (low lanes host more arrays and operands), then A.
            options.append((c, -(reg % L), reg // L, reg))
        for *_, reg in sorted(options):
            if bring(reg, value):  # changes nothing when it fails
                nxt[reg] = value
                busy.add(reg)
                return True
        return False

    def relocate(value: int, regs: Iterable[int]) -> bool:
        """Put ``value`` into one of ``regs`` by moving the live value there away."""
        if value not in entry:
            return False
        for reg in regs:
            if reg not in movable or reg in source or nxt[reg] != entry[reg]:
                continue
            held = nxt[reg]
            if not place(held, range(R)):
                continue
            busy.discard(reg)
            movable.discard(reg)
            return place(value, [reg])
        return False

    # Values needed later stay in some register.
    movable: set[int] = set()  # busy only to keep their (live) entry value
    for reg in range(R):
        if nxt[reg] in hard and nxt.count(nxt[reg]) == 1 and reg not in busy:
            busy.add(reg)
            movable.add(reg)
    missing = [v for v in sorted(hard) if v not in nxt]
    missing.sort(key=lambda v: v in entry)  # LOAD_IMM-only values first (B registers)
    for value in missing:
        if value not in nxt and not place(value, range(R)):
            return None
    for reg in range(R):
        if nxt[reg] in hard:
            busy.add(reg)
    # The branch.
    branch: BranchUse | None = None
    if plan.branch:
        end = facts.p.nodes[t].end
        assert isinstance(end, Branch)
        sources: list[Source] = []
        for operand in (end.x, end.y):
            found = _branch_source(facts, operand, entry, sel, plan, immediates, limit)
            if found is None:
                return None
            if isinstance(found, Register):  # later selectors must not change it
                busy.add(facts.regs.index(found))
                movable.discard(facts.regs.index(found))
            sources.append(found)
        branch = BranchUse(sources[0], sources[1])
    # Staging wants (never at the cost of a live value), one register each.
    claimed: set[int] = set()
    for value, where in plan.wants:
        regs = list(range(L, R)) if where == "B" else [r for r in where if isinstance(r, int)]
        regs = [r for r in regs if r not in claimed]
        holding = [r for r in regs if nxt[r] == value]
        if holding:
            claimed.add(holding[0])
            busy.add(holding[0])
            movable.discard(holding[0])
            continue
        if value in entry or facts.op(value).kind is Kind.CONST:
            before = set(busy)
            free = [r for r in regs if slot_cost(r) is not None]
            if place(value, free) or relocate(value, regs):
                claimed |= busy - before
    selectors = tuple(
        _selector(facts, reg, kind, what) for reg, (kind, what) in sorted(source.items())
    )
    return Realised(selectors, nxt, branch)


def _branch_source(
    facts: Facts,
    operand: int,
    entry: list[int],
    sel: list[int],
    plan: Plan,
    immediates: set[int],
    limit: int,
) -> Source | None:
    mode = facts.profile.branch_operands
    if mode is BranchOperands.ENTRY:
        view = entry
    else:
        view = list(sel)
        if mode is BranchOperands.LOADED:
            for lane, m in plan.mem.items():
                if facts.op(m).has_result:
                    view[facts.lanes + lane] = m
    if operand in view:
        return facts.regs[view.index(operand)]
    if facts.op(operand).kind is Kind.CONST:
        if operand not in immediates and len(immediates) >= limit:
            return None
        immediates.add(operand)
        return operand
    return None


def _selector(facts: Facts, reg: int, kind: SelectorKind, what: int) -> SelectorAssign:
    dest = facts.regs[reg]
    if kind is SelectorKind.MOV:
        return SelectorAssign(dest, kind, source=facts.regs[what])
    return SelectorAssign(dest, kind, op=what)
