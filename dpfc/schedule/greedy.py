"""The greedy list scheduler: a fast, deterministic baseline and the Z3 fallback.

:func:`greedy_schedule` returns a complete :class:`~dpfc.schedule.schedule.Schedule` for a
:class:`~dpfc.schedule.problem.Problem` that obeys every machine rule of
:mod:`dpfc.schedule.schedule` (the checker, :mod:`.check`, must accept it), or None when its
heuristics cannot fit the DPF into the EUs allowed. It never raises on a valid Problem. It
is not optimal: the Z3 scheduler is compared against it.

**Algorithm.** The prolog loads every input, stack words in register order, placing a word
in the register its first use wants (the address register of an EU0 memory lane, the A
register of a hash lane; PEEK+POP duplicates a word). Then the tree is walked from the root,
depth first, simulating the registers symbolically (register -> operation id). For each
tree node, EU after EU, one step is built by adding actions one at a time and keeping each
only if the step can still be *realised* (:meth:`_Scheduler._realise`: selectors that put
every operand in place while every value still needed later stays in some register):

1. the node's memory operations whose address is in place (the binding of a pinned or
   bound array fixes EU and lane; a free array takes the first lane that works, and the
   binding is shared by all paths);
2. the branch, once every memory operation of the node is placed and its operands are
   visible (a branch in the profile's last EU only when all children are leaves);
3. needed pure operations whose operands are available (critical path first), including
   those of descendants (speculation: harmless, it only writes a register), on the lane
   where the result is needed as an address, once per such lane; a HASH feeding the lane's
   ALU in the same EU is fused;
4. for a leaf, the exit, as soon as every value it pushes is in a register;
5. staging moves for the next EU (an address into its lane's A register, a hash operand
   into its lane, a constant needed in an A register into a B register).

A value is *live* after an EU if a consumer still pending on some path below needs it, or
needs a pure value not held anywhere that is computed from it. Live values are never
overwritten; constants may be (LOAD_IMM brings them back) unless they are needed in an A
register or by an epilog with no EU left. Several variants (prolog preferences, speculation)
are tried and the best schedule (EUs, then bundles, then selectors) is returned.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from dpfc.isa.bundle import Register
from dpfc.isa.opcodes import AluOp, MemOp, SelectorKind
from dpfc.schedule.problem import Branch, Exit, Kind, Operation, Problem
from dpfc.schedule.schedule import (
    BranchUse,
    ExitUse,
    LaneOp,
    NodeSpan,
    PrologLoad,
    Schedule,
    SelectorAssign,
    Source,
    Step,
)
from dpfc.target.profile import BranchOperands, MemoryAddress

JUNK = -1  # a register whose value nothing can use
_Where = str | tuple[int, ...]
STEERING_IMMEDIATE_MAX = 0xFFFF


class _NoFit(Exception):
    """The current variant cannot fit (internal; never escapes :func:`greedy_schedule`)."""


@dataclass(frozen=True)
class _Variant:
    prolog_preferences: bool
    speculate: bool


VARIANTS = (
    _Variant(prolog_preferences=True, speculate=True),
    _Variant(prolog_preferences=True, speculate=False),
    _Variant(prolog_preferences=False, speculate=True),
    _Variant(prolog_preferences=False, speculate=False),
)


def greedy_schedule(problem: Problem, *, max_eus: int | None = None) -> Schedule | None:
    """A valid schedule of ``problem`` in at most ``max_eus`` EUs (default: the profile's),
    or None if the heuristics cannot fit it. Deterministic."""
    limit = problem.profile.num_eus if max_eus is None else min(max_eus, problem.profile.num_eus)
    if limit < 1:
        return None
    best: Schedule | None = None
    for variant in VARIANTS:
        try:
            schedule = _Scheduler(problem, variant).run()
        except _NoFit:
            continue
        if schedule.eus_used > limit:
            continue
        if best is None or _quality(schedule) < _quality(best):
            best = schedule
    return best


def _quality(schedule: Schedule) -> tuple[int, int, int]:
    return (schedule.eus_used, schedule.bundle_count(), schedule.selector_count())


@dataclass
class _Plan:
    """The actions chosen so far for one step (registers are indices: A lanes, then B)."""

    alu: dict[int, tuple[int, bool]] = field(default_factory=dict)  # lane -> (op, swapped)
    hashes: dict[int, int] = field(default_factory=dict)  # lane -> HASH op (selector)
    mem: dict[int, int] = field(default_factory=dict)  # lane -> MEM op
    fixed: dict[int, int] = field(default_factory=dict)  # register -> its selected value
    branch: bool = False
    end: bool = False  # a leaf's exit
    extra_hard: frozenset[int] = frozenset()  # values the next state must hold
    # Staging: (value, where), where = "B" (any B register) or a tuple of A registers; each
    # want takes a register of its own.
    wants: tuple[tuple[int, _Where], ...] = ()

    def copy(self) -> _Plan:
        return _Plan(
            dict(self.alu),
            dict(self.hashes),
            dict(self.mem),
            dict(self.fixed),
            self.branch,
            self.end,
            self.extra_hard,
            self.wants,
        )

    def require(self, reg: int, value: int) -> bool:
        """Fix the selected value of ``reg``; False if it is fixed to another value."""
        if self.fixed.get(reg, value) != value:
            return False
        self.fixed[reg] = value
        return True


@dataclass
class _Realised:
    selectors: tuple[SelectorAssign, ...]
    next_state: list[int]
    branch: BranchUse | None


@dataclass
class _Current:
    """The step under construction: the best plan so far and its realisation."""

    scheduler: _Scheduler
    t: int
    eu: int
    entry: list[int]
    placed: set[int]
    plan: _Plan
    realised: _Realised

    def attempt(self, candidate: _Plan) -> bool:
        """Adopt ``candidate`` if it can be realised."""
        realised = self.scheduler._try(self.t, self.eu, self.entry, self.placed, candidate)
        if realised is None:
            return False
        self.plan, self.realised = candidate, realised
        return True


class _Scheduler:
    def __init__(self, problem: Problem, variant: _Variant) -> None:
        self.p = problem
        self.variant = variant
        self.profile = problem.profile
        self.lanes = problem.profile.lanes
        self.nregs = 2 * self.lanes
        self.last_eu = problem.profile.num_eus - 1
        self.regs = [Register.a(i) for i in range(self.lanes)]
        self.regs += [Register.b(i) for i in range(self.lanes)]
        self.zero = next((o.id for o in problem.ops if o.kind is Kind.CONST and o.value == 0), None)
        self.subtree: dict[int, list[int]] = {}
        for node in reversed(problem.nodes):
            below = [node.id]
            for child in node.children:
                below += self.subtree[child]
            self.subtree[node.id] = below
        self.path_nodes = {n.id: set(problem.ancestors(n.id)) for n in problem.nodes}
        self.height = self._heights()
        self.a_side_consts = self._a_side_consts()
        self.bindings: dict[str, tuple[int, int]] = {
            name: info.pin for name, info in problem.arrays.items() if info.pin is not None
        }
        self.spans: dict[int, NodeSpan] = {}
        self.steps: list[Step] = []
        self.exits: list[ExitUse] = []

    # -- static facts ------------------------------------------------------------------------
    def op(self, op_id: int) -> Operation:
        return self.p.ops[op_id]

    def _heights(self) -> dict[int, int]:
        """Longest chain of pure consumers below each operation (critical path first)."""
        users: dict[int, list[int]] = {o.id: [] for o in self.p.ops}
        for o in self.p.ops:
            for x in o.operands:
                users[x].append(o.id)
        height: dict[int, int] = {}
        for o in reversed(self.p.ops):
            height[o.id] = 1 + max((height.get(u, 0) for u in users[o.id]), default=0)
        return height

    def _a_side_consts(self) -> set[int]:
        """Constants that some operation needs in an A register (LOAD_IMM only writes B)."""
        out: set[int] = set()
        for o in self.p.ops:
            in_a = o.kind in (Kind.MEM, Kind.HASH) or (o.kind is Kind.ALU and not o.commutative)
            if in_a and self.op(o.operands[0]).kind is Kind.CONST:
                out.add(o.operands[0])
        return out

    def exit_values(self, leaf: int) -> list[int]:
        end = self.p.nodes[leaf].end
        assert isinstance(end, Exit)
        values = list(end.push)
        if end.steer_value is not None and not self._steer_immediate(end.steer_value):
            values.append(end.steer_value)
        return values

    def _steer_immediate(self, op_id: int) -> bool:
        o = self.op(op_id)
        return o.kind is Kind.CONST and o.value <= STEERING_IMMEDIATE_MAX

    def mem_ops(self, node: int) -> list[int]:
        return [x for x in self.p.nodes[node].ops if self.op(x).kind is Kind.MEM]

    # -- the walk ------------------------------------------------------------------------------
    def run(self) -> Schedule:
        prolog, state = self._prolog()
        self._node(0, 0, state)
        if self.p.placement == "packet":
            per_eu: dict[int, int] = {}
            for step in self.steps:
                per_eu[step.eu] = per_eu.get(step.eu, 0) + 1
            if any(n > self.profile.packet_bundles_per_stage for n in per_eu.values()):
                raise _NoFit
        accessed = {o.array for o in self.p.ops if o.kind is Kind.MEM and o.array is not None}
        return Schedule(
            self.p,
            tuple(prolog),
            tuple(self.spans[n.id] for n in self.p.nodes),
            tuple(sorted(self.steps, key=lambda s: (s.node, s.eu))),
            tuple(sorted(self.exits, key=lambda e: e.node)),
            {name: where for name, where in sorted(self.bindings.items()) if name in accessed},
            "greedy",
        )

    def _node(self, t: int, first_eu: int, state: list[int]) -> None:
        node = self.p.nodes[t]
        if first_eu > self.last_eu:
            # The parent branched in the last EU: the epilog reads the registers it left.
            if not isinstance(node.end, Exit) or self.mem_ops(t):
                raise _NoFit
            self.spans[t] = NodeSpan(t, first_eu, self.last_eu)
            self.exits.append(self._exit_use(t, state))
            return
        placed: set[int] = set()
        for eu in range(first_eu, self.last_eu + 1):
            plan, realised = self._step(t, eu, state, placed)
            placed.update(plan.mem.values())
            self.steps.append(self._make_step(t, eu, plan, realised))
            state = realised.next_state
            if plan.branch:
                assert isinstance(node.end, Branch)
                self.spans[t] = NodeSpan(t, first_eu, eu)
                self._node(node.end.taken, eu + 1, state)
                self._node(node.end.not_taken, eu + 1, state)
                return
            if plan.end:
                self.spans[t] = NodeSpan(t, first_eu, eu)
                self.exits.append(self._exit_use(t, state))
                return
        raise _NoFit

    def _exit_use(self, t: int, state: list[int]) -> ExitUse:
        end = self.p.nodes[t].end
        assert isinstance(end, Exit)
        push = tuple(self.regs[self._find(state, v)] for v in end.push)
        steer: Source | None = None
        if end.steer_value is not None:
            steer = (
                end.steer_value
                if self._steer_immediate(end.steer_value)
                else self.regs[self._find(state, end.steer_value)]
            )
        return ExitUse(t, push, steer)

    @staticmethod
    def _find(state: list[int], value: int) -> int:
        if value not in state:
            raise _NoFit
        return state.index(value)

    def _make_step(self, t: int, eu: int, plan: _Plan, realised: _Realised) -> Step:
        return Step(
            t,
            eu,
            realised.selectors,
            tuple(LaneOp(lane, op, swapped) for lane, (op, swapped) in sorted(plan.alu.items())),
            tuple(LaneOp(lane, op) for lane, op in sorted(plan.mem.items())),
            realised.branch,
        )

    # -- the prolog ------------------------------------------------------------------------------
    def _prolog(self) -> tuple[list[PrologLoad], list[int]]:
        p = self.p
        params = {o.index: o.id for o in p.ops if o.kind is Kind.PARAM}
        peek = next((o.id for o in p.ops if o.kind is Kind.PEEK), None)
        others = [o.id for o in p.ops if o.kind in (Kind.META, Kind.RAND)]
        items: list[tuple[int, int | None]] = [(i, params.get(i)) for i in range(p.params)]
        if peek is not None:
            items.append((p.params, peek))
        if len(items) + len(others) > self.nregs:
            raise _NoFit
        prefs = self._input_preferences() if self.variant.prolog_preferences else {}
        reserve = len(others)
        chosen: list[list[int]] = []
        last = -1
        for j, (_, op_id) in enumerate(items):
            highest = self.nregs - 1 - (len(items) - 1 - j) - reserve
            wanted = [] if op_id is None else prefs.get(op_id, [])
            regs = [r for r in wanted if last < r <= highest]
            if not regs:
                regs = [last + 1]
            chosen.append(regs)
            last = regs[-1]
        state = [JUNK if self.zero is None else self.zero] * self.nregs
        loads: dict[int, PrologLoad] = {}
        for (position, op_id), regs in zip(items, chosen, strict=True):
            for r in regs:
                popped = position < p.params and r == regs[-1]
                kind = SelectorKind.POP if popped else SelectorKind.PEEK
                loads[r] = PrologLoad(self.regs[r], kind, op_id)
                state[r] = JUNK if op_id is None else op_id
        for op_id in others:
            free = [r for r in prefs.get(op_id, []) if r not in loads]
            free += [r for r in reversed(range(self.nregs)) if r not in loads]
            if not free:
                raise _NoFit
            r = free[0]
            kind = SelectorKind.LOAD_MD if self.op(op_id).kind is Kind.META else SelectorKind.RAND
            loads[r] = PrologLoad(self.regs[r], kind, op_id)
            state[r] = op_id
        return [loads[r] for r in sorted(loads)], state

    def _input_preferences(self) -> dict[int, list[int]]:
        """Input -> registers where EU0 wants it (sorted)."""
        L = self.lanes
        out: dict[int, set[int]] = {}
        for o in self.p.ops:
            if o.id in self.p.same_word:
                continue  # a constant's optional HASH (.materialise): never used here
            if o.kind is Kind.HASH and self._is_input(o.operands[0]):
                assert o.lane is not None
                out.setdefault(o.operands[0], set()).add(o.lane)
            if o.kind is Kind.MEM and o.owner == 0 and o.array is not None:
                where = self.bindings.get(o.array)
                if where is None or where[0] != 0:
                    continue
                lane = where[1]
                if self._is_input(o.operands[0]):
                    out.setdefault(o.operands[0], set()).add(lane)
                if len(o.operands) > 1 and self._is_input(o.operands[1]):
                    out.setdefault(o.operands[1], set()).add(L + lane)
        return {op_id: sorted(regs) for op_id, regs in out.items()}

    def _is_input(self, op_id: int) -> bool:
        return self.op(op_id).kind in (Kind.PARAM, Kind.PEEK, Kind.META, Kind.RAND)

    # -- liveness ----------------------------------------------------------------------------------
    def _demand(self, t: int, placed: set[int], plan: _Plan) -> set[int]:
        """Values consumers still pending after this step (in t's subtree) use directly."""
        out: set[int] = set()
        if plan.end:
            return set(self.exit_values(t))
        for n in self.subtree[t]:
            node = self.p.nodes[n]
            for m in self.mem_ops(n):
                if m not in placed:
                    out.update(self.op(m).operands)
            if isinstance(node.end, Branch):
                if not (n == t and plan.branch):
                    out.update((node.end.x, node.end.y))
            else:
                out.update(self.exit_values(n))
        return out

    def _closure(self, base: Iterable[int], held: set[int]) -> set[int]:
        """Every value needed: ``base``, and the operands of needed pure values not held."""
        live: set[int] = set()
        stack = list(base)
        while stack:
            v = stack.pop()
            if v in live:
                continue
            live.add(v)
            o = self.op(v)
            if v not in held and o.is_pure:
                stack.extend(o.operands)
        return live

    # -- one step --------------------------------------------------------------------------------
    def _step(self, t: int, eu: int, entry: list[int], placed: set[int]) -> tuple[_Plan, _Realised]:
        node = self.p.nodes[t]
        empty = self._try(t, eu, entry, placed, _Plan())
        if empty is None:
            raise _NoFit  # a value is already lost: cannot happen when every step kept them
        cur = _Current(self, t, eu, entry, placed, _Plan(), empty)
        # 1. Memory operations of the node.
        for m in self.mem_ops(t):
            if m in placed:
                continue
            for lane in self._mem_lanes(t, m, eu, cur.plan):
                candidate = self._with_mem(cur.plan, m, lane, entry)
                if candidate is not None and cur.attempt(candidate):
                    array = self.op(m).array
                    assert array is not None
                    self.bindings.setdefault(array, (eu, lane))
                    break
        all_placed = all(m in placed or m in cur.plan.mem.values() for m in self.mem_ops(t))
        # 2. The branch.
        if isinstance(node.end, Branch) and all_placed:
            # After a branch in the last EU only epilogs run: no memory operation is left.
            bare_leaves = all(
                self.p.nodes[c].is_leaf and not self.mem_ops(c) for c in node.children
            )
            if eu < self.last_eu or bare_leaves:
                candidate = cur.plan.copy()
                candidate.branch = True
                if eu == self.last_eu:
                    extra = {v for c in node.children for v in self.exit_values(c)}
                    candidate.extra_hard = frozenset(extra)
                cur.attempt(candidate)
        # 3. Pure operations.
        self._place_pure(cur)
        # 4. A leaf's exit.
        if isinstance(node.end, Exit) and all_placed:
            candidate = cur.plan.copy()
            candidate.end = True
            candidate.extra_hard = frozenset(self.exit_values(t))
            cur.attempt(candidate)
        # 5. Staging for the next EU.
        if not cur.plan.end:
            for want in self._wants(t, eu, entry, placed, cur.plan):
                candidate = cur.plan.copy()
                candidate.wants = (*cur.plan.wants, want)
                cur.attempt(candidate)
        return cur.plan, cur.realised

    def _mem_lanes(self, t: int, m: int, eu: int, plan: _Plan) -> list[int]:
        o = self.op(m)
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
        info = self.p.arrays.get(array)
        lanes: list[int] = []
        for lane in range(self.lanes):
            direct = info is not None and info.mapping == "direct"
            if direct and not self.profile.lane_has_direct_mapping(lane):
                continue
            if any(w == (eu, lane) and a != array for a, w in self.bindings.items()):
                continue
            lanes.append(lane)
        return lanes

    def _with_mem(self, plan: _Plan, m: int, lane: int, entry: list[int]) -> _Plan | None:
        o = self.op(m)
        candidate = plan.copy()
        address = o.operands[0]
        if self.profile.memory_address is MemoryAddress.ENTRY:
            if entry[lane] != address:
                return None
        elif not self._source_a(candidate, address, lane, entry):
            return None
        if o.mem is not MemOp.LOAD and not self._source_b(candidate, o.operands[1], lane, entry):
            return None
        candidate.mem[lane] = m
        return candidate

    def _source_a(self, plan: _Plan, value: int, lane: int, entry: list[int]) -> bool:
        """Make the selected A[lane] ``value``: a MOV/keep of an entry value, or a HASH."""
        o = self.op(value)
        if value in entry:
            return plan.require(lane, value)
        if o.kind is Kind.HASH and o.lane == lane and entry[lane] == o.operands[0]:
            if plan.hashes.get(lane, value) != value:
                return False
            plan.hashes[lane] = value
            return plan.require(lane, value)
        return False

    def _source_b(self, plan: _Plan, value: int, lane: int, entry: list[int]) -> bool:
        if value in entry or self.op(value).kind is Kind.CONST:
            return plan.require(self.lanes + lane, value)
        return False

    def _place_pure(self, cur: _Current) -> None:
        t, entry, placed = cur.t, cur.entry, cur.placed
        held = set(entry)
        live = self._closure(self._demand(t, placed, cur.plan), held)
        allowed = set(self.subtree[t]) if self.variant.speculate else {t}
        allowed |= self.path_nodes[t]
        missing = sorted(
            (v for v in live if v not in held and self.op(v).is_pure),
            key=lambda v: (-self.height[v], v),
        )
        targets = self._address_targets(t, placed, cur.plan)
        for u in missing:
            o = self.op(u)
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
            o = self.op(u)
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

    def _address_targets(self, t: int, placed: set[int], plan: _Plan) -> dict[int, set[int]]:
        """Value -> lanes whose A register should hold it next (addresses, hash operands)."""
        out: dict[int, set[int]] = {}
        for n in self.subtree[t]:
            for m in self.mem_ops(n):
                if m in placed or m in plan.mem.values():
                    continue
                o = self.op(m)
                assert o.array is not None
                where = self.bindings.get(o.array)
                if where is not None:
                    out.setdefault(o.operands[0], set()).add(where[1])
        for o in self.p.ops:
            if o.kind is Kind.HASH and o.owner in self.subtree[t] and o.id not in self.p.same_word:
                assert o.lane is not None
                out.setdefault(o.operands[0], set()).add(o.lane)
        return out

    def _alu_lanes(self, u: int, entry: list[int], targets: set[int], plan: _Plan) -> list[int]:
        o = self.op(u)
        L = self.lanes

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

    def _with_alu(self, plan: _Plan, u: int, lane: int, entry: list[int]) -> _Plan | None:
        o = self.op(u)
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
            if entry[lane] == y or self.op(x).kind is Kind.CONST:
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
        self, t: int, eu: int, entry: list[int], placed: set[int], plan: _Plan
    ) -> list[tuple[int, _Where]]:
        """Staging moves for the next EU, most urgent first."""
        out: list[tuple[int, _Where]] = []
        produced = {u for u, _ in plan.alu.values()} | set(plan.hashes.values())
        held = set(entry) | produced | set(plan.mem.values())
        live = self._closure(self._demand(t, placed, plan), held)
        pending: list[tuple[int, int]] = []  # (binding EU or a large number, mem op)
        for n in self.subtree[t]:
            for m in self.mem_ops(n):
                if m not in placed and m not in plan.mem.values():
                    array = self.op(m).array
                    assert array is not None
                    where = self.bindings.get(array)
                    pending.append((where[0] if where is not None else self.last_eu + 1, m))
        claimed: set[int] = set()
        for bound_eu, m in sorted(pending):
            o = self.op(m)
            assert o.array is not None
            address = o.operands[0]
            if self.op(address).kind is Kind.CONST and address not in entry:
                out.append((address, "B"))
            if self.profile.memory_address is not MemoryAddress.ENTRY:
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
            o = self.op(v)
            if v in held or not o.is_pure:
                continue
            if o.kind is Kind.HASH:
                assert o.lane is not None
                out.append((o.operands[0], (o.lane,)))
            for x in o.operands[:1]:
                if self.op(x).kind is Kind.CONST and x not in entry:
                    out.append((x, "B"))
        return out

    # -- realisation -------------------------------------------------------------------------------
    def _try(
        self, t: int, eu: int, entry: list[int], placed: set[int], plan: _Plan
    ) -> _Realised | None:
        """Selectors for ``plan`` keeping every live value, or None if there are none."""
        now_placed = placed | set(plan.mem.values())
        produced = {u for u, _ in plan.alu.values()}
        produced |= {m for m in plan.mem.values() if self.op(m).has_result}
        produced |= {h for lane, h in plan.hashes.items() if lane not in plan.alu}
        held = set(entry) | produced
        live = self._closure(self._demand(t, now_placed, plan), held) | set(plan.extra_hard)
        hard: set[int] = set()
        for v in live:
            o = self.op(v)
            if v not in held:
                if o.kind in (Kind.PARAM, Kind.PEEK, Kind.META, Kind.RAND):
                    return None  # an input that is gone
                if o.kind is Kind.MEM and v in now_placed:
                    return None
                # A pure value of this node or an ancestor cannot run after the split.
                split = plan.branch or plan.end
                if o.is_pure and split and o.owner in self.path_nodes[t]:
                    return None
                if v in plan.extra_hard:
                    if o.kind is not Kind.CONST:
                        return None
                    hard.add(v)
                continue
            if o.kind is Kind.CONST and v not in self.a_side_consts:
                if v in plan.extra_hard or (plan.branch and eu == self.last_eu):
                    hard.add(v)
                continue
            hard.add(v)
        soft = {v for v in live if self.op(v).kind is Kind.CONST} - hard
        return self._realise(t, eu, entry, plan, hard, soft)

    def _realise(
        self, t: int, eu: int, entry: list[int], plan: _Plan, hard: set[int], soft: set[int]
    ) -> _Realised | None:
        L, R = self.lanes, self.nregs
        sel = list(entry)
        source: dict[int, tuple[SelectorKind, int]] = {}  # reg -> (kind, source reg | op)
        immediates: set[int] = set()
        limit = self.profile.immediates_per_bundle

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
            if reg >= L and value != JUNK and self.op(value).kind is Kind.CONST:
                return load_imm(reg, value)
            return False

        for lane, h in plan.hashes.items():
            if entry[lane] != self.op(h).operands[0] or plan.fixed.get(lane, h) != h:
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
            if self.op(m).has_result:
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
                if value not in entry and not (reg >= L and self.op(value).kind is Kind.CONST):
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
            end = self.p.nodes[t].end
            assert isinstance(end, Branch)
            sources: list[Source] = []
            for operand in (end.x, end.y):
                found = self._branch_source(operand, entry, sel, plan, immediates, limit)
                if found is None:
                    return None
                if isinstance(found, Register):  # later selectors must not change it
                    busy.add(self.regs.index(found))
                    movable.discard(self.regs.index(found))
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
            if value in entry or self.op(value).kind is Kind.CONST:
                before = set(busy)
                free = [r for r in regs if slot_cost(r) is not None]
                if place(value, free) or relocate(value, regs):
                    claimed |= busy - before
        selectors = tuple(
            self._selector(reg, kind, what) for reg, (kind, what) in sorted(source.items())
        )
        return _Realised(selectors, nxt, branch)

    def _branch_source(
        self,
        operand: int,
        entry: list[int],
        sel: list[int],
        plan: _Plan,
        immediates: set[int],
        limit: int,
    ) -> Source | None:
        mode = self.profile.branch_operands
        if mode is BranchOperands.ENTRY:
            view = entry
        else:
            view = list(sel)
            if mode is BranchOperands.LOADED:
                for lane, m in plan.mem.items():
                    if self.op(m).has_result:
                        view[self.lanes + lane] = m
        if operand in view:
            return self.regs[view.index(operand)]
        if self.op(operand).kind is Kind.CONST:
            if operand not in immediates and len(immediates) >= limit:
                return None
            immediates.add(operand)
            return operand
        return None

    def _selector(self, reg: int, kind: SelectorKind, what: int) -> SelectorAssign:
        dest = self.regs[reg]
        if kind is SelectorKind.MOV:
            return SelectorAssign(dest, kind, source=self.regs[what])
        return SelectorAssign(dest, kind, op=what)
