"""The greedy scheduler's prolog: which register each input word is loaded into.

:func:`greedy_prolog` loads every input: the stack words in register order (a parameter by
POP, its extra copies and the PEEK word by PEEK), then metadata and random words in the free
registers. With ``preferences`` a word goes to the registers EU0 wants it in (the address
register of an EU0 memory lane, the A register of a hash lane), so that the first step need
not move it. It returns the loads and the register state after the prolog (register ->
operation id, ``JUNK`` or the zero constant where nothing was loaded), or raises
:class:`~dpfc.schedule.greedy.facts.NoFit` when the inputs outnumber the registers.

Not responsible for: the steps after the prolog (:mod:`.step`), or choosing between
the variants (:mod:`.scheduler`).
"""

from __future__ import annotations

from dpfc.isa import SelectorKind
from dpfc.schedule.greedy.facts import JUNK, Facts, NoFit
from dpfc.schedule.problem.tree import Kind
from dpfc.schedule.schedule import PrologLoad


def greedy_prolog(
    facts: Facts, bindings: dict[str, tuple[int, int]], *, preferences: bool
) -> tuple[list[PrologLoad], list[int]]:
    """The prolog loads, in register order, and the register state they leave."""
    p = facts.p
    params = {o.index: o.id for o in p.ops if o.kind is Kind.PARAM}
    peek = next((o.id for o in p.ops if o.kind is Kind.PEEK), None)
    others = [o.id for o in p.ops if o.kind in (Kind.META, Kind.RAND)]
    items: list[tuple[int, int | None]] = [(i, params.get(i)) for i in range(p.params)]
    if peek is not None:
        items.append((p.params, peek))
    if len(items) + len(others) > facts.nregs:
        raise NoFit
    prefs = _input_preferences(facts, bindings) if preferences else {}
    reserve = len(others)
    chosen: list[list[int]] = []
    last = -1
    for j, (_, op_id) in enumerate(items):
        highest = facts.nregs - 1 - (len(items) - 1 - j) - reserve
        wanted = [] if op_id is None else prefs.get(op_id, [])
        regs = [r for r in wanted if last < r <= highest]
        if not regs:
            regs = [last + 1]
        chosen.append(regs)
        last = regs[-1]
    state = [JUNK if facts.zero is None else facts.zero] * facts.nregs
    loads: dict[int, PrologLoad] = {}
    for (position, op_id), regs in zip(items, chosen, strict=True):
        for r in regs:
            popped = position < p.params and r == regs[-1]
            kind = SelectorKind.POP if popped else SelectorKind.PEEK
            loads[r] = PrologLoad(facts.regs[r], kind, op_id)
            state[r] = JUNK if op_id is None else op_id
    for op_id in others:
        free = [r for r in prefs.get(op_id, []) if r not in loads]
        free += [r for r in reversed(range(facts.nregs)) if r not in loads]
        if not free:
            raise NoFit
        r = free[0]
        kind = SelectorKind.LOAD_MD if facts.op(op_id).kind is Kind.META else SelectorKind.RAND
        loads[r] = PrologLoad(facts.regs[r], kind, op_id)
        state[r] = op_id
    return [loads[r] for r in sorted(loads)], state


def _input_preferences(facts: Facts, bindings: dict[str, tuple[int, int]]) -> dict[int, list[int]]:
    """Input -> registers where EU0 wants it (sorted)."""
    L = facts.lanes
    out: dict[int, set[int]] = {}
    for o in facts.p.ops:
        if o.id in facts.p.same_word:
            continue  # a constant's optional HASH (.materialise): never used here
        if o.kind is Kind.HASH and _is_input(facts, o.operands[0]):
            assert o.lane is not None
            out.setdefault(o.operands[0], set()).add(o.lane)
        if o.kind is Kind.MEM and o.owner == 0 and o.array is not None:
            where = bindings.get(o.array)
            if where is None or where[0] != 0:
                continue
            lane = where[1]
            if _is_input(facts, o.operands[0]):
                out.setdefault(o.operands[0], set()).add(lane)
            if len(o.operands) > 1 and _is_input(facts, o.operands[1]):
                out.setdefault(o.operands[1], set()).add(L + lane)
    return {op_id: sorted(regs) for op_id, regs in out.items()}


def _is_input(facts: Facts, op_id: int) -> bool:
    return facts.op(op_id).kind in (Kind.PARAM, Kind.PEEK, Kind.META, Kind.RAND)
