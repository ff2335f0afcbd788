"""One step of the greedy scheduler: the actions one tree node runs in one EU.

:meth:`StepPlanner.plan_step` builds the step of node ``t`` in EU ``eu`` from the registers
``entry`` holds, given the memory operations of ``t`` already ``placed`` in earlier EUs. It
adds actions one at a time and keeps each only if the plan can still be realised
(:func:`~dpfc.schedule.greedy.realise.try_plan`), in this order:

1. the node's memory operations whose address is in place (the binding of a pinned or
   bound array fixes EU and lane; a free array takes the first lane that works, and the
   binding, recorded in the shared ``bindings``, holds on every path);
2. the branch, once every memory operation of the node is placed (in the profile's last EU
   only when all children are leaves with no memory operation);
3. needed pure operations whose operands are available, critical path first, including
   those of descendants when speculating, on the lane where the result is needed as an
   address (once per such lane); a HASH feeding its lane's ALU or memory unit in the same
   EU is fused, and one whose operand is already in its lane is placed alone;
4. for a leaf, the exit, once every memory operation is placed;
5. staging moves for the next EU (an address into its lane's A register, a hash operand
   into its lane, a constant needed in an A register into a B register).

It raises :class:`~dpfc.schedule.greedy.facts.NoFit` when a live value is already lost.
Not responsible for: the selectors that realise a plan (:mod:`.realise`), the
prolog (:mod:`.prolog`), or walking the tree and assembling the Schedule
(:mod:`.scheduler`).
"""

from __future__ import annotations

from dataclasses import dataclass

from dpfc.isa import AluOp, MemOp
from dpfc.schedule.greedy.facts import Facts, NoFit, Plan, Where
from dpfc.schedule.greedy.realise import Realised, try_plan
from dpfc.schedule.problem.tree import Branch, Exit, Kind
from dpfc.target import MemoryAddress


@dataclass
class _Current:
    """The step under construction: the best plan so far and its realisation."""

    facts: Facts
    t: int
    eu: int
    entry: list[int]
    placed: set[int]
    plan: Plan
    realised: Realised

    def attempt(self, candidate: Plan) -> bool:
        """Adopt ``candidate`` if it can be realised."""
        realised = try_plan(self.facts, self.t, self.eu, self.entry, self.placed, candidate)
        if realised is None:
            return False
        self.plan, self.realised = candidate, realised
        return True


class StepPlanner:
    """Plans the steps of one greedy run; adds the bindings it makes to ``bindings``."""

    def __init__(
        self, facts: Facts, bindings: dict[str, tuple[int, int]], *, speculate: bool
    ) -> None:
        self.facts = facts
        self.bindings = bindings
        self.speculate = speculate

    def plan_step(
        self, t: int, eu: int, entry: list[int], placed: set[int]
    ) -> tuple[Plan, Realised]:
        """The plan of node ``t``'s step in ``eu`` and its realisation (see the module)."""
        node = self.facts.p.nodes[t]
        empty = try_plan(self.facts, t, eu, entry, placed, Plan())
        if empty is None:
            raise NoFit  # a value is already lost: cannot happen when every step kept them
        cur = _Current(self.facts, t, eu, entry, placed, Plan(), empty)
        # 1. Memory operations of the node.
        for m in self.facts.mem_ops(t):
            if m in placed:
                continue
            for lane in self._mem_lanes(t, m, eu, cur.plan):
                candidate = self._with_mem(cur.plan, m, lane, entry)
                if candidate is not None and cur.attempt(candidate):
                    array = self.facts.op(m).array
                    assert array is not None
                    self.bindings.setdefault(array, (eu, lane))
                    break
        all_placed = all(m in placed or m in cur.plan.mem.values() for m in self.facts.mem_ops(t))
        # 2. The branch.
        if isinstance(node.end, Branch) and all_placed:
            # After a branch in the last EU only epilogs run: no memory operation is left.
            bare_leaves = all(
                self.facts.p.nodes[c].is_leaf and not self.facts.mem_ops(c) for c in node.children
            )
            if eu < self.facts.last_eu or bare_leaves:
                candidate = cur.plan.copy()
                candidate.branch = True
                if eu == self.facts.last_eu:
                    extra = {v for c in node.children for v in self.facts.exit_values(c)}
                    candidate.extra_hard = frozenset(extra)
                cur.attempt(candidate)
        # 3. Pure operations.
        self._place_pure(cur)
        # 4. A leaf's exit.
        if isinstance(node.end, Exit) and all_placed:
            candidate = cur.plan.copy()
            candidate.end = True
            candidate.extra_hard = frozenset(self.facts.exit_values(t))
            cur.attempt(candidate)
        # 5. Staging for the next EU.
        if not cur.plan.end:
            for want in self._wants(t, eu, entry, placed, cur.plan):
                candidate = cur.plan.copy()
                candidate.wants = (*cur.plan.wants, want)
                cur.attempt(candidate)
        return cur.plan, cur.realised

    def _mem_lanes(self, t: int, m: int, eu: int, plan: Plan) -> list[int]:
        o = self.facts.op(m)
        assert o.array is not None
        where = self.bindings.get(o.array)
        if where is not None:
            return [where[1]] if where[0] == eu and where[1] not in plan.mem else []
        lanes = self._free_lanes(o.array, eu)
        return [lane for lane in lanes if lane not in plan.mem]

    def _free_lanes(self, array: str, eu: int) -> list[int]:
        """Lanes of ``eu`` where free ``array`` may be bound: none another array holds, on
        any path — two arrays in one lane would share its virtual address space (the
        linker's DPF7004), however exclusive their paths."""
        info = self.facts.p.arrays.get(array)
        lanes: list[int] = []
        for lane in range(self.facts.lanes):
            direct = info is not None and info.mapping == "direct"
            if direct and not self.facts.profile.lane_has_direct_mapping(lane):
                continue
            if any(w == (eu, lane) and a != array for a, w in self.bindings.items()):
                continue
            lanes.append(lane)
        return lanes

    def _with_mem(self, plan: Plan, m: int, lane: int, entry: list[int]) -> Plan | None:
        o = self.facts.op(m)
        candidate = plan.copy()
        address = o.operands[0]
        if self.facts.profile.memory_address is MemoryAddress.ENTRY:
            if entry[lane] != address:
                return None
        elif not self._source_a(candidate, address, lane, entry):
            return None
        if o.mem is not MemOp.LOAD and not self._source_b(candidate, o.operands[1], lane, entry):
            return None
        candidate.mem[lane] = m
        return candidate

    def _source_a(self, plan: Plan, value: int, lane: int, entry: list[int]) -> bool:
        """Make the selected A[lane] ``value``: a MOV/keep of an entry value, or a HASH."""
        o = self.facts.op(value)
        if value in entry:
            return plan.require(lane, value)
        if o.kind is Kind.HASH and o.lane == lane and entry[lane] == o.operands[0]:
            if plan.hashes.get(lane, value) != value:
                return False
            plan.hashes[lane] = value
            return plan.require(lane, value)
        return False

    def _source_b(self, plan: Plan, value: int, lane: int, entry: list[int]) -> bool:
        if value in entry or self.facts.op(value).kind is Kind.CONST:
            return plan.require(self.facts.lanes + lane, value)
        return False

    def _place_pure(self, cur: _Current) -> None:
        t, entry, placed = cur.t, cur.entry, cur.placed
        held = set(entry)
        live = self.facts.closure(self.facts.demand(t, placed, cur.plan), held)
        allowed = set(self.facts.subtree[t]) if self.speculate else {t}
        allowed |= self.facts.path_nodes[t]
        missing = sorted(
            (v for v in live if v not in held and self.facts.op(v).is_pure),
            key=lambda v: (-self.facts.height[v], v),
        )
        targets = self._address_targets(t, placed, cur.plan)
        for u in missing:
            o = self.facts.op(u)
            if o.owner not in allowed or o.kind is Kind.HASH:
                continue  # a HASH is fused into its user's lane, or placed alone below
            wanted = targets.get(u, set())
            done = 0
            for lane in self._alu_lanes(u, entry, wanted, cur.plan):
                if lane in cur.plan.alu or (done and lane not in wanted):
                    continue
                candidate = self._with_alu(cur.plan, u, lane, entry)
                if candidate is not None and cur.attempt(candidate):
                    done += 1
        for u in missing:
            o = self.facts.op(u)
            if o.kind is not Kind.HASH or o.owner not in allowed:
                continue
            plan = cur.plan
            assert o.lane is not None
            if u in plan.hashes.values() or o.lane in plan.alu or o.lane in plan.hashes:
                continue
            if entry[o.lane] != o.operands[0] or o.lane in plan.fixed:
                continue
            candidate = plan.copy()
            candidate.hashes[o.lane] = u
            cur.attempt(candidate)

    def _address_targets(self, t: int, placed: set[int], plan: Plan) -> dict[int, set[int]]:
        """Value -> lanes whose A register should hold it next (addresses, hash operands)."""
        out: dict[int, set[int]] = {}
        for n in self.facts.subtree[t]:
            for m in self.facts.mem_ops(n):
                if m in placed or m in plan.mem.values():
                    continue
                o = self.facts.op(m)
                assert o.array is not None
                where = self.bindings.get(o.array)
                if where is not None:
                    out.setdefault(o.operands[0], set()).add(where[1])
        for o in self.facts.p.ops:
            if (
                o.kind is Kind.HASH
                and o.owner in self.facts.subtree[t]
                and o.id not in self.facts.p.same_word
            ):
                assert o.lane is not None
                out.setdefault(o.operands[0], set()).add(o.lane)
        return out

    def _alu_lanes(self, u: int, entry: list[int], targets: set[int], plan: Plan) -> list[int]:
        o = self.facts.op(u)
        L = self.facts.lanes

        def cost(lane: int) -> tuple[int, int]:
            score = 0
            if lane in targets:
                score -= 10
            if entry[lane] in o.operands:
                score -= 2
            if len(o.operands) > 1 and entry[L + lane] in o.operands:
                score -= 1
            if lane in plan.mem:
                score += 1
            return (score, lane)

        return sorted((lane for lane in range(L) if lane not in plan.alu), key=cost)

    def _with_alu(self, plan: Plan, u: int, lane: int, entry: list[int]) -> Plan | None:
        o = self.facts.op(u)
        if o.alu is AluOp.NEG:
            candidate = plan.copy()
            if not self._source_a(candidate, o.operands[0], lane, entry):
                return None
            candidate.alu[lane] = (u, False)
            return candidate
        x, y = o.operands
        orders = [(x, y, False)]
        if o.commutative and x != y:
            orders.append((y, x, True))
            if entry[lane] == y or self.facts.op(x).kind is Kind.CONST:
                orders.reverse()
        for a, b, swapped in orders:
            candidate = plan.copy()
            if self._source_a(candidate, a, lane, entry) and self._source_b(
                candidate, b, lane, entry
            ):
                candidate.alu[lane] = (u, swapped)
                return candidate
        return None

    def _wants(
        self, t: int, eu: int, entry: list[int], placed: set[int], plan: Plan
    ) -> list[tuple[int, Where]]:
        """Staging moves for the next EU, most urgent first."""
        out: list[tuple[int, Where]] = []
        produced = {u for u, _ in plan.alu.values()} | set(plan.hashes.values())
        held = set(entry) | produced | set(plan.mem.values())
        live = self.facts.closure(self.facts.demand(t, placed, plan), held)
        pending: list[tuple[int, int]] = []  # (binding EU or a large number, mem op)
        for n in self.facts.subtree[t]:
            for m in self.facts.mem_ops(n):
                if m not in placed and m not in plan.mem.values():
                    array = self.facts.op(m).array
                    assert array is not None
                    where = self.bindings.get(array)
                    pending.append((where[0] if where is not None else self.facts.last_eu + 1, m))
        claimed: set[int] = set()
        for bound_eu, m in sorted(pending):
            o = self.facts.op(m)
            assert o.array is not None
            address = o.operands[0]
            if self.facts.op(address).kind is Kind.CONST and address not in entry:
                out.append((address, "B"))
            if self.facts.profile.memory_address is not MemoryAddress.ENTRY:
                continue
            where = self.bindings.get(o.array)
            if where is not None:
                if bound_eu == eu + 1:
                    claimed.add(where[1])
                out.append((address, (where[1],)))
                continue
            lanes = self._free_lanes(o.array, eu + 1)
            out.append((address, tuple(lane for lane in lanes if lane not in claimed)))
        for v in sorted(live):
            o = self.facts.op(v)
            if v in held or not o.is_pure:
                continue
            if o.kind is Kind.HASH:
                assert o.lane is not None
                out.append((o.operands[0], (o.lane,)))
            for x in o.operands[:1]:
                if self.facts.op(x).kind is Kind.CONST and x not in entry:
                    out.append((x, "B"))
        return out
