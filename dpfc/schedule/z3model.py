"""The Z3 encoding of a scheduling problem at a fixed EU count (the only module importing z3).

:class:`Z3Model` states "``problem`` runs in at most ``eus`` EUs" as constraints over small
integer variables and reads a :class:`~dpfc.schedule.schedule.Schedule` back from a model.
The driver (:mod:`.driver`) asks it for increasing EU counts: the first satisfiable count is
optimal, and the unsatisfiable count below it is the proof. Secondary objectives (bundles,
then instructions) are tightened with cardinality bounds, and :meth:`Z3Model.core` names the
source constraints that conflict when nothing fits.

**Encoding** (the machine semantics of :mod:`.schedule`'s docstring). For every tree node
``t`` and EU ``k`` there is a *copy* ``(t, k)`` of the EU's bundle, with

* ``ent[t][k][r]``: the operation whose result register ``r`` holds at the entry of EU ``k``
  on paths through ``t`` (``JUNK`` = nothing needed); ``ent[t][eus]`` is the state after
  the last EU;
* selector kind / MOV source / LOAD_IMM constant / HASH op per register, the selected value
  ``sel[t][k][r]``, an ALU op (and operand order) and a memory op per lane.

A node's own EUs run from one past its parent's branch EU (``br[parent] + 1``) to its own
branch EU ``br[t]`` (non-leaf) or its end EU ``end[t]`` (leaf); outside that range a copy is
forced empty and its states are free. The entry state of a node's first EU is its parent's
state there. The transition of an own copy is the machine rule: selectors read ``ent`` and
write ``sel``; ALU results overwrite ``A[i]`` and LOAD/atomic results ``B[i]`` in the next
entry state. Operands are equalities on these states, so data dependencies, register
pressure (one value per register) and liveness follow without further constraints.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import z3

from dpfc.isa.bundle import RegClass, Register
from dpfc.isa.opcodes import AluOp, MemOp, SelectorKind
from dpfc.schedule.bounds import compute_bounds
from dpfc.schedule.limits import FEASIBILITY_RLIMIT, WallClockGuard
from dpfc.schedule.problem import INPUT_KINDS, Branch, Exit, Kind, Operation, Problem
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

JUNK = -1
NONE = -1  # "no operation" in ALU / memory / HASH choices

# Selector kinds of the encoding (not the machine's SelectorKind numbers).
SEL_NONE, SEL_MOV, SEL_IMM, SEL_HASH = -1, 0, 1, 2

STEERING_IMMEDIATE_MAX = 0xFFFF
COUNT_BITS = 16


@dataclass(frozen=True)
class Group:
    """A named group of constraints that can be switched off to explain a failure."""

    key: str  # e.g. "pin:values0", "immediates", "exit:3"
    literal: z3.BoolRef


class Z3Model:
    """Problem + EU count -> constraints. ``solve()``; then ``schedule()`` or ``core()``."""

    def __init__(
        self,
        problem: Problem,
        eus: int,
        *,
        seed: int = 0,
        rlimit: int = FEASIBILITY_RLIMIT,
        guard: WallClockGuard | None = None,
    ):
        self.problem = problem
        self.profile = problem.profile
        self.eus = eus
        self.lanes = problem.profile.lanes
        self.regs = [Register.a(i) for i in range(self.lanes)]
        self.regs += [Register.b(i) for i in range(self.lanes)]
        self.nregs = len(self.regs)
        # A context of its own: Z3's search depends on the order terms were created in, so a
        # shared context would make the schedule depend on what was solved before.
        self.ctx = z3.Context()
        # Everything is a small bit-vector or a Boolean: the QF_BV solver bit-blasts the
        # model to SAT (several times faster on the proofs than the default solver).
        self.solver = z3.SolverFor("QF_BV", ctx=self.ctx)
        self.seed = seed
        # A resource limit, never a clock: answers must not depend on the machine's speed.
        self.rlimit = rlimit
        self.guard = guard or WallClockGuard(None)
        self.reason = ""  # why the last check answered "unknown"
        self._rlimit_total = 0  # resource units this model's context has used so far
        self.solver.set("random_seed", seed)
        self.solver.set("rlimit", rlimit)
        self.groups: dict[str, Group] = {}
        self.bimm: dict[tuple[int, str], z3.BoolRef] = {}
        self.ops = problem.ops
        # Operation ids, registers, EUs and -1 as signed bit-vectors (one bit of headroom).
        largest = max(len(problem.ops), self.nregs, eus + 2, 8)
        self.width = largest.bit_length() + 2
        self.consts = [o for o in problem.ops if o.kind is Kind.CONST]
        self.zero = next((o.id for o in self.consts if o.value == 0), JUNK)
        self.result_mem = [o.id for o in problem.ops if o.kind is Kind.MEM and o.has_result]
        self._descendants = {n.id: self._subtree(n.id) for n in problem.nodes}
        # Redundant constraints from the earliest-EU bounds: they cut the search (above all
        # the proofs that one EU fewer is impossible) without removing any schedule.
        self.bounds = compute_bounds(problem)
        self._build()

    # -- helpers -------------------------------------------------------------------------------
    def _subtree(self, node: int) -> set[int]:
        out = {node}
        for child in self.problem.nodes[node].children:
            out |= self._subtree(child)
        return out

    def _group(self, key: str) -> z3.BoolRef:
        if key not in self.groups:
            self.groups[key] = Group(key, z3.Bool(f"group:{key}", ctx=self.ctx))
        return self.groups[key].literal

    def _add(self, key: str | None, *constraints: z3.BoolRef | bool) -> None:
        for c in constraints:
            if key is None:
                self.solver.add(c)
            else:
                self.solver.add(z3.Implies(self._group(key), c))

    def _var(self, name: str) -> z3.BitVecRef:
        """A small signed integer: a bit-vector, so that Z3 bit-blasts the model to SAT."""
        return z3.BitVec(name, self.width, ctx=self.ctx)

    def _count(self, conditions: Iterable[z3.BoolRef]) -> z3.BitVecRef:
        """How many of ``conditions`` hold (16-bit, never overflows here)."""
        one = z3.BitVecVal(1, COUNT_BITS, ctx=self.ctx)
        zero = z3.BitVecVal(0, COUNT_BITS, ctx=self.ctx)
        terms = [z3.If(c, one, zero) for c in conditions]
        return z3.Sum(terms) if terms else zero

    @staticmethod
    def _one_of(var: z3.BitVecRef, values: Iterable[int]) -> z3.BoolRef:
        options = [var == v for v in values]
        return z3.Or(options) if options else z3.BoolVal(False, ctx=var.ctx)

    # -- construction -----------------------------------------------------------------------------
    def _build(self) -> None:
        p = self.problem
        K, R, L = self.eus, self.nregs, self.lanes
        nodes = p.nodes
        self.br: dict[int, z3.BitVecRef] = {}
        self.end: dict[int, z3.BitVecRef] = {}
        self.start: dict[int, z3.BitVecRef | int] = {}
        for node in nodes:
            if isinstance(node.end, Branch):
                self.br[node.id] = self._var(f"br_{node.id}")
            else:
                self.end[node.id] = self._var(f"end_{node.id}")
        for node in nodes:
            self.start[node.id] = 0 if node.parent is None else self.br[node.parent] + 1
        last = self.profile.num_eus - 1
        for t, var in [*self.br.items(), *self.end.items()]:
            self._add(None, var >= self.bounds.last[t])
        for t, var in self.br.items():
            start = self.start[t]
            # A branch before the profile's last EU selects bundles of the next EU, which
            # must exist within the EU budget; in the last EU it selects epilogs.
            self._add(None, var >= start, z3.Or(var <= K - 2, z3.And(var == last, last == K - 1)))
        for t, var in self.end.items():
            start = self.start[t]
            self._add(
                None,
                z3.If(
                    start == self.profile.num_eus, var == last, z3.And(var >= start, var <= K - 1)
                ),
            )

        # own[t][k]: the copy (t, k) is a bundle of node t.
        self.own = [[self._own(n.id, k) for k in range(K)] for n in nodes]

        # States.
        self.ent = [
            [[self._var(f"ent_{n.id}_{k}_{r}") for r in range(R)] for k in range(K + 1)]
            for n in nodes
        ]
        self.sel = [
            [[self._var(f"sel_{n.id}_{k}_{r}") for r in range(R)] for k in range(K)] for n in nodes
        ]
        self.sk = [
            [[self._var(f"sk_{n.id}_{k}_{r}") for r in range(R)] for k in range(K)] for n in nodes
        ]
        self.msrc = [
            [[self._var(f"msrc_{n.id}_{k}_{r}") for r in range(R)] for k in range(K)] for n in nodes
        ]
        self.imm = [
            [[self._var(f"imm_{n.id}_{k}_{r}") for r in range(R)] for k in range(K)] for n in nodes
        ]
        self.hsel = [
            [[self._var(f"hash_{n.id}_{k}_{i}") for i in range(L)] for k in range(K)] for n in nodes
        ]
        self.alu = [
            [[self._var(f"alu_{n.id}_{k}_{i}") for i in range(L)] for k in range(K)] for n in nodes
        ]
        self.swap = [
            [[z3.Bool(f"swap_{n.id}_{k}_{i}", ctx=self.ctx) for i in range(L)] for k in range(K)]
            for n in nodes
        ]
        self.mem = [
            [[self._var(f"mem_{n.id}_{k}_{i}") for i in range(L)] for k in range(K)] for n in nodes
        ]

        # Array bindings.
        self.bind_eu: dict[str, z3.BitVecRef] = {}
        self.bind_lane: dict[str, z3.BitVecRef] = {}
        accessed = sorted({o.array for o in p.ops if o.kind is Kind.MEM and o.array is not None})
        for name in accessed:
            eu, lane = self._var(f"beu_{name}"), self._var(f"bln_{name}")
            self.bind_eu[name], self.bind_lane[name] = eu, lane
            self._add(None, eu >= 0, eu < K, lane >= 0, lane < L)
            info = p.arrays.get(name)
            if info is not None and info.pin is not None:
                self._add(f"pin:{name}", eu == info.pin[0], lane == info.pin[1])

        self._prolog()
        for node in nodes:
            t = node.id
            parent = node.parent
            if parent is not None:
                for k in range(K + 1):
                    tie = z3.And([self.ent[t][k][r] == self.ent[parent][k][r] for r in range(R)])
                    self._add(None, z3.Implies(self.start[t] == k, tie))
            for k in range(K):
                self._copy(t, k)
            if isinstance(node.end, Branch):
                self._branch(t, node.end)
            else:
                self._exit(t, node.end)
            self._memory_once(t)
        self._immediates()
        if p.placement == "packet":
            limit = self.profile.packet_bundles_per_stage
            for k in range(K):
                count = self._count(self.own[n.id][k] for n in nodes)
                self._add("packet-bundles", count <= limit)

    def _own(self, t: int, k: int) -> z3.BoolRef:
        last_var = self.br.get(t, self.end.get(t))
        assert last_var is not None
        return z3.And(self.start[t] <= k, k <= last_var)

    def _prolog(self) -> None:
        p = self.problem
        R = self.nregs
        params = p.params
        param_op = {o.index: o.id for o in p.ops if o.kind is Kind.PARAM}
        peek = next((o.id for o in p.ops if o.kind is Kind.PEEK), None)
        others = [o.id for o in p.ops if o.kind in (Kind.META, Kind.RAND)]
        rands = [o.id for o in p.ops if o.kind is Kind.RAND]
        max_pos = params if peek is not None else params - 1
        self.pos = [self._var(f"pos_{r}") for r in range(R)]
        entry = self.ent[0][0]
        for r in range(R):
            pos = self.pos[r]
            self._add(None, pos >= -1, pos <= max_pos)
            for position in range(max_pos + 1):
                word = peek if position == params else param_op.get(position, JUNK)
                self._add(None, z3.Implies(pos == position, entry[r] == word))
            self._add(None, z3.Implies(pos == -1, self._one_of(entry[r], [*others, self.zero])))
        for r in range(R):
            for r2 in range(r + 1, R):
                both = z3.And(self.pos[r] >= 0, self.pos[r2] >= 0)
                self._add(None, z3.Implies(both, self.pos[r] <= self.pos[r2]))
        for position in range(params):
            self._add(None, z3.Or([self.pos[r] == position for r in range(R)]))
        self.prolog_loads = [
            z3.Or(self.pos[r] >= 0, self._one_of(entry[r], others)) for r in range(R)
        ]
        for op in rands:  # each RAND selector draws its own word
            self._add(None, self._count(entry[r] == op for r in range(R)) <= 1)

    def _candidates(self, t: int, k: int, kind: Kind, lane: int | None = None) -> list[Operation]:
        """Pure ops copy (t, k) may run: owned by t or a descendant (speculation), and not
        before their earliest EU."""
        below = self._descendants[t]
        run = self.bounds.run
        return [
            o
            for o in self.ops
            if o.kind is kind
            and o.owner in below
            and (lane is None or o.lane == lane)
            and run[o.id] <= k
        ]

    def _copy(self, t: int, k: int) -> None:
        R, L = self.nregs, self.lanes
        own = self.own[t][k]
        ent, nxt, sel = self.ent[t][k], self.ent[t][k + 1], self.sel[t][k]
        sk, msrc, imm = self.sk[t][k], self.msrc[t][k], self.imm[t][k]
        hsel, alu, swap, mem = self.hsel[t][k], self.alu[t][k], self.swap[t][k], self.mem[t][k]
        const_ids = [o.id for o in self.consts]
        # Only values that can exist by EU k may be in a register at its entry.
        absent = [o.id for o in self.ops if o.has_result and self.bounds.entry[o.id] > k]
        for r in range(R):
            for value in absent:
                self._add(None, ent[r] != value)
        for r, reg in enumerate(self.regs):
            kinds = [SEL_NONE, SEL_MOV]
            kinds.append(SEL_IMM if reg.cls is RegClass.B else SEL_HASH)
            if reg.cls is RegClass.B and not const_ids:
                kinds.remove(SEL_IMM)
            self._add(None, self._one_of(sk[r], kinds), z3.Implies(z3.Not(own), sk[r] == SEL_NONE))
            # Fix the free variables of unused choices, so that models are canonical.
            self._add(
                None,
                z3.If(
                    sk[r] == SEL_MOV, z3.And(msrc[r] >= 0, msrc[r] < R, msrc[r] != r), msrc[r] == -1
                ),
            )
            if reg.cls is RegClass.B and const_ids:
                self._add(
                    None, z3.If(sk[r] == SEL_IMM, self._one_of(imm[r], const_ids), imm[r] == JUNK)
                )
            else:
                self._add(None, imm[r] == JUNK)
            moved = z3.Or([z3.And(msrc[r] == r2, sel[r] == ent[r2]) for r2 in range(R) if r2 != r])
            self._add(None, z3.Implies(sk[r] == SEL_NONE, sel[r] == ent[r]))
            self._add(None, z3.Implies(sk[r] == SEL_MOV, moved))
            self._add(None, z3.Implies(sk[r] == SEL_IMM, sel[r] == imm[r]))
        for i in range(L):
            a, b = i, L + i
            hashes = self._candidates(t, k, Kind.HASH, lane=i)
            self._add(None, self._one_of(hsel[i], [NONE, *(o.id for o in hashes)]))
            self._add(None, (sk[a] == SEL_HASH) == (hsel[i] != NONE))
            for o in hashes:
                self._add(
                    None,
                    z3.Implies(hsel[i] == o.id, z3.And(sel[a] == o.id, ent[a] == o.operands[0])),
                )
            alus = self._candidates(t, k, Kind.ALU)
            self._add(None, self._one_of(alu[i], [NONE, *(o.id for o in alus)]))
            self._add(None, z3.Implies(z3.Not(own), alu[i] == NONE))
            self._add(None, z3.Implies(alu[i] == NONE, z3.Not(swap[i])))
            for o in alus:
                placed = alu[i] == o.id
                if o.alu is AluOp.NEG:
                    self._add(
                        None, z3.Implies(placed, z3.And(sel[a] == o.operands[0], z3.Not(swap[i])))
                    )
                    continue
                x, y = o.operands
                straight = z3.And(sel[a] == x, sel[b] == y)
                if o.commutative and x != y:
                    crossed = z3.And(sel[a] == y, sel[b] == x)
                    self._add(None, z3.Implies(placed, z3.If(swap[i], crossed, straight)))
                else:
                    self._add(None, z3.Implies(placed, z3.And(straight, z3.Not(swap[i]))))
            mems = [
                o
                for o in self.ops
                if o.kind is Kind.MEM and o.owner == t and self.bounds.run[o.id] <= k
            ]
            self._add(None, self._one_of(mem[i], [NONE, *(o.id for o in mems)]))
            self._add(None, z3.Implies(z3.Not(own), mem[i] == NONE))
            address_view = sel if self.profile.memory_address is MemoryAddress.SELECTED else ent
            for o in mems:
                assert o.array is not None
                placed = mem[i] == o.id
                need = [
                    self.bind_eu[o.array] == k,
                    self.bind_lane[o.array] == i,
                    address_view[a] == o.operands[0],
                ]
                if o.mem is not MemOp.LOAD:
                    need.append(sel[b] == o.operands[1])
                self._add(None, z3.Implies(placed, z3.And(need)))
            # Next entry state (only constrained where the copy is the node's own bundle).
            results = [o.id for o in mems if o.has_result]
            loaded = (
                z3.Or([mem[i] == m for m in results])
                if results
                else z3.BoolVal(False, ctx=self.ctx)
            )
            self._add(
                None,
                z3.Implies(own, nxt[a] == z3.If(alu[i] != NONE, alu[i], sel[a])),
                z3.Implies(own, nxt[b] == z3.If(loaded, mem[i], sel[b])),
            )

    def _branch_view(self, t: int, k: int) -> list[z3.BitVecRef]:
        mode = self.profile.branch_operands
        if mode is BranchOperands.ENTRY:
            return self.ent[t][k]
        view = list(self.sel[t][k])
        if mode is BranchOperands.LOADED:
            L = self.lanes
            mems = [o.id for o in self.ops if o.kind is Kind.MEM and o.owner == t and o.has_result]
            for i in range(L):
                mem = self.mem[t][k][i]
                loaded = (
                    z3.Or([mem == m for m in mems]) if mems else z3.BoolVal(False, ctx=self.ctx)
                )
                view[L + i] = z3.If(loaded, mem, view[L + i])
        return view

    def _branch(self, t: int, branch: Branch) -> None:
        for name, operand in (("x", branch.x), ("y", branch.y)):
            is_const = self.ops[operand].kind is Kind.CONST
            as_imm = (
                z3.Bool(f"bimm_{t}_{name}", ctx=self.ctx)
                if is_const
                else z3.BoolVal(False, ctx=self.ctx)
            )
            self.bimm[t, name] = as_imm
            for k in range(self.eus):
                view = self._branch_view(t, k)
                held = z3.Or([view[r] == operand for r in range(self.nregs)])
                self._add(None, z3.Implies(self.br[t] == k, z3.Or(as_imm, held)))

    def branch_immediate(self, t: int, name: str) -> z3.BoolRef:
        """True if operand ``name`` ("x"/"y") of node t's branch is an immediate."""
        return self.bimm[t, name]

    def _exit(self, t: int, exit_: Exit) -> None:
        needed = list(exit_.push)
        if exit_.steer_value is not None:
            op = self.ops[exit_.steer_value]
            if not (op.kind is Kind.CONST and op.value <= STEERING_IMMEDIATE_MAX):
                needed.append(exit_.steer_value)
        for k in range(self.eus):
            state = self.ent[t][k + 1]
            held = [
                z3.Or([state[r] == v for r in range(self.nregs)]) for v in dict.fromkeys(needed)
            ]
            if held:
                self._add(f"exit:{t}", z3.Implies(self.end[t] == k, z3.And(held)))

    def _memory_once(self, t: int) -> None:
        for o in self.ops:
            if o.kind is Kind.MEM and o.owner == t:
                count = self._count(
                    self.mem[t][k][i] == o.id for k in range(self.eus) for i in range(self.lanes)
                )
                self._add(None, count == 1)

    def _immediates(self) -> None:
        limit = self.profile.immediates_per_bundle
        for node in self.problem.nodes:
            t = node.id
            for k in range(self.eus):
                used = []
                for const in self.consts:
                    uses = [self.imm[t][k][r] == const.id for r in range(self.lanes, self.nregs)]
                    if isinstance(node.end, Branch):
                        for name, operand in (("x", node.end.x), ("y", node.end.y)):
                            if operand == const.id:
                                uses.append(z3.And(self.br[t] == k, self.branch_immediate(t, name)))
                    used.append(z3.Or(uses))
                if used:
                    self._add("immediates", self._count(used) <= limit)

    # -- objectives --------------------------------------------------------------------------------
    def bundle_count(self) -> z3.BitVecRef:
        return self._count(own for row in self.own for own in row)

    def _instructions(self) -> list[z3.BoolRef]:
        """One condition per possible prolog load, EU selector and ALU op (memory ops and
        branches are fixed by the program)."""
        terms: list[z3.BoolRef] = list(self.prolog_loads)
        for n in self.problem.nodes:
            for k in range(self.eus):
                terms += [s != SEL_NONE for s in self.sk[n.id][k]]
                terms += [a != NONE for a in self.alu[n.id][k]]
        return terms

    def instruction_count(self) -> z3.BitVecRef:
        return self._count(self._instructions())

    # -- solving -----------------------------------------------------------------------------------
    def _fresh(self, rlimit: int) -> z3.Solver:
        # A fresh, non-incremental solver: Z3's QF_BV solver bit-blasts only when it is not
        # used incrementally (push/pop), several times faster here.
        fresh = z3.SolverFor("QF_BV", ctx=self.ctx)
        fresh.set("random_seed", self.seed)
        fresh.set("rlimit", rlimit)
        fresh.add(self.solver.assertions())
        fresh.add(self._literals())
        return fresh

    def _run(self, check: Callable[[], z3.CheckSatResult], reason: Callable[[], str]) -> str:
        """``check`` under the wall-clock guard; "sat", "unsat" or "unknown" (``self.reason``
        says why: the resource limit, normally)."""
        with self.guard.watch(self.ctx.interrupt):
            result = check()
        self.reason = "" if result != z3.unknown else _reason(reason())
        return str(result)

    def solve(self, extra: Sequence[z3.BoolRef] = ()) -> tuple[str, Schedule | None]:
        """("sat", schedule), ("unsat", None) or ("unknown", None) (resource limit), with
        every constraint group on and the ``extra`` constraints added for this call only."""
        if extra:
            fresh = self._fresh(self.rlimit)
            fresh.add(list(extra))
            result = self._run(fresh.check, fresh.reason_unknown)
            return result, (self._read(fresh.model()) if result == "sat" else None)
        result = self._run(lambda: self.solver.check(*self._literals()), self.solver.reason_unknown)
        return result, (self.schedule() if result == "sat" else None)

    def improve(
        self, start: tuple[int, int], floor: tuple[int, int], rlimit: int
    ) -> tuple[Schedule | None, bool]:
        """Lower the bundles, then the instructions, at this EU count, from ``start`` (the
        best schedule's counts) towards ``floor`` (lower bounds), never raising either.

        A descent: "at most the best count minus one" is asked again and again (a sat
        answer's schedule is read with its own counts, which often jump down several
        steps); an unsat answer proves the count minimal among schedules no worse than
        the start in the other count; an unknown answer ends the descent. The questions
        share ``rlimit`` resource units (counted from Z3's own statistics, so the descent
        is deterministic). Returns the best schedule found (None: none better than the
        start) and whether both counts are proven minimal."""
        best: Schedule | None = None
        counts = list(start)
        left = rlimit
        proven = True
        terms = ([own for row in self.own for own in row], self._instructions())
        sums = [self._count(group) for group in terms]
        for index in range(2):
            while counts[index] > floor[index] and left > 0:
                fresh = self._fresh(left)
                # Sums of bit-vectors, not pseudo-Boolean AtMost: measured faster here.
                fresh.add([sums[i] <= counts[i] - (i == index) for i in range(2)])
                result = self._run(fresh.check, fresh.reason_unknown)
                left -= self._spent(fresh)
                if result == "unsat":
                    break
                if result != "sat":
                    proven = False
                    left = 0
                    break
                model = fresh.model()
                best = self._read(model)
                counts = [
                    sum(z3.is_true(model.eval(t, model_completion=True)) for t in group)
                    for group in terms
                ]
            else:
                proven = proven and counts[index] <= floor[index]
        return best, proven

    def _spent(self, solver: z3.Solver) -> int:
        """The resource units used since the last call (Z3's deterministic step count,
        cumulative over this model's context)."""
        try:
            total = int(solver.statistics().get_key_value("rlimit count"))
        except z3.Z3Exception:
            return 0
        spent, self._rlimit_total = total - self._rlimit_total, total
        return spent

    def _literals(self) -> list[z3.BoolRef]:
        return [g.literal for g in self.groups.values()]

    def core(self) -> list[str] | None:
        """After an unsat ``solve()``: the keys of a minimal set of conflicting groups (None
        if the core could not be computed within the resource limit)."""
        self.solver.set("core.minimize", True)
        literals = {str(g.literal): g.key for g in self.groups.values()}
        result = self._run(lambda: self.solver.check(*self._literals()), self.solver.reason_unknown)
        if result != "unsat":
            return None
        return sorted(
            literals[str(lit)] for lit in self.solver.unsat_core() if str(lit) in literals
        )

    # -- reading a model ---------------------------------------------------------------------------
    def schedule(self) -> Schedule:
        """The schedule of the current model (after a sat check)."""
        return self._read(self.solver.model())

    def _read(self, model: z3.ModelRef) -> Schedule:
        def val(expr: z3.BitVecRef | int) -> int:
            if isinstance(expr, int):
                return expr
            return int(model.eval(expr, model_completion=True).as_signed_long())

        def true(expr: z3.BoolRef) -> bool:
            return bool(z3.is_true(model.eval(expr, model_completion=True)))

        p = self.problem
        L = self.lanes
        spans: list[NodeSpan] = []
        for node in p.nodes:
            first = val(self.start[node.id])
            last = val(self.br[node.id]) if node.id in self.br else val(self.end[node.id])
            spans.append(NodeSpan(node.id, first, last))
        steps: list[Step] = []
        for node in p.nodes:
            t = node.id
            span = spans[t]
            for k in span.eus():
                selectors: list[SelectorAssign] = []
                for r, reg in enumerate(self.regs):
                    kind = val(self.sk[t][k][r])
                    if kind == SEL_MOV:
                        src = self.regs[val(self.msrc[t][k][r])]
                        selectors.append(SelectorAssign(reg, SelectorKind.MOV, source=src))
                    elif kind == SEL_IMM:
                        selectors.append(
                            SelectorAssign(reg, SelectorKind.LOAD_IMM, op=val(self.imm[t][k][r]))
                        )
                    elif kind == SEL_HASH:
                        selectors.append(
                            SelectorAssign(
                                reg, SelectorKind.HASH, op=val(self.hsel[t][k][reg.lane])
                            )
                        )
                alus = []
                mems = []
                for i in range(L):
                    a = val(self.alu[t][k][i])
                    if a != NONE:
                        alus.append(LaneOp(i, a, swapped=true(self.swap[t][k][i])))
                    m = val(self.mem[t][k][i])
                    if m != NONE:
                        mems.append(LaneOp(i, m))
                branch = None
                if isinstance(node.end, Branch) and k == span.last_eu:
                    view = [val(v) for v in self._branch_view(t, k)]
                    branch = BranchUse(
                        self._source(node.end.x, view, true(self.branch_immediate(t, "x"))),
                        self._source(node.end.y, view, true(self.branch_immediate(t, "y"))),
                    )
                steps.append(
                    Step(
                        t,
                        k,
                        tuple(sorted(selectors, key=lambda s: s.dest)),
                        tuple(alus),
                        tuple(mems),
                        branch,
                    )
                )
        exits: list[ExitUse] = []
        for node in p.nodes:
            if not isinstance(node.end, Exit):
                continue
            state = [val(v) for v in self.ent[node.id][spans[node.id].last_eu + 1]]
            push = tuple(self._register(v, state) for v in node.end.push)
            steer: Source | None = None
            if node.end.steer_value is not None:
                op = self.ops[node.end.steer_value]
                if node.end.steer_value in state:
                    steer = self._register(node.end.steer_value, state)
                elif op.kind is Kind.CONST:
                    steer = op.id
            exits.append(ExitUse(node.id, push, steer))
        prolog = self._prolog_loads([val(v) for v in self.pos], [val(v) for v in self.ent[0][0]])
        bindings = {
            name: (val(self.bind_eu[name]), val(self.bind_lane[name])) for name in self.bind_eu
        }
        return Schedule(p, prolog, tuple(spans), tuple(steps), tuple(exits), bindings, "z3")

    def _register(self, op: int, state: list[int]) -> Register:
        return self.regs[state.index(op)]

    def _source(self, op: int, view: list[int], immediate: bool) -> Source:
        if immediate or op not in view:
            return op
        return self.regs[view.index(op)]

    def _prolog_loads(self, positions: list[int], entry: list[int]) -> tuple[PrologLoad, ...]:
        p = self.problem
        loads: list[PrologLoad] = []
        last_reader: dict[int, int] = {}
        for r, position in enumerate(positions):
            if position >= 0:
                last_reader[position] = r
        for r, reg in enumerate(self.regs):
            position = positions[r]
            op = entry[r]
            if position >= 0:
                popped = position < p.params and last_reader[position] == r
                kind = SelectorKind.POP if popped else SelectorKind.PEEK
                loads.append(PrologLoad(reg, kind, op if op != JUNK else None))
            elif op != JUNK and self.ops[op].kind in INPUT_KINDS:
                kind = SelectorKind.LOAD_MD if self.ops[op].kind is Kind.META else SelectorKind.RAND
                loads.append(PrologLoad(reg, kind, op))
        return tuple(loads)


def solver_version() -> str:
    """The z3 version: schedules depend on it (the schedule cache keys on it)."""
    return str(z3.get_version_string())


def _reason(text: str) -> str:
    """Z3's reason for "unknown", in the words the reports use."""
    if "resource" in text or "rlimit" in text:
        return "resource limit"
    if "cancel" in text or "interrupt" in text:
        return "interrupted"
    return text or "unknown"
