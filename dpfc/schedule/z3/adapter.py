"""The Z3 adapter: the only module of dpfc that imports z3.

:class:`Formula` is the formula of one model in a Z3 context of its own: the term
constructors the encoding (:mod:`.program`, :mod:`.states`) builds every constraint with,
the named groups of constraints that can be switched off to explain a failure, and the
solvers that decide the formula — a persistent ``QF_BV`` solver with every group as an
assumption (:meth:`Formula.solve`, :meth:`Formula.core`), a fresh solver per question
(:meth:`Formula.decide`) and Z3's MaxSAT (:class:`Optimisation`). Everything is Boolean.

Z3's search depends on the order terms were created in: the constructors create exactly
the terms their callers ask for, in that order, and a context of its own per formula keeps
the answer from depending on what was solved before. Every solver runs under a resource
limit (Z3's ``rlimit``), never a clock (:mod:`.limits`); the wall-clock guard only
interrupts. A valuation (:data:`Valuation`) is handed to a ``read`` function before the
units spent are counted, because reading a model costs units too.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TypeAlias, TypeVar

import z3

from dpfc.schedule.z3.limits import WallClockGuard

PAIRWISE_MAX = 8  # at-most-one over this many literals: pairwise clauses, above: a PB constraint

Lit: TypeAlias = z3.BoolRef  # a Boolean term of a formula's context
Valuation = Callable[[Lit], bool]  # whether a literal is true in the model Z3 found
Read = TypeVar("Read")  # what a caller reads from a valuation (a schedule)


@dataclass(frozen=True)
class Group:
    """A named group of constraints that can be switched off to explain a failure."""

    key: str  # e.g. "pin:values0", "immediates", "exit:3"
    literal: Lit


class Formula:
    """One model's constraints in a Z3 context of its own, and the solvers that decide them.

    ``seed`` and ``rlimit`` configure every solver; ``guard`` interrupts a solver call at
    the wall-clock deadline. Constraints are collected by :meth:`add` and
    :meth:`add_at_most` and asserted once, as one conjunction, by :meth:`close`."""

    def __init__(self, *, seed: int, rlimit: int, guard: WallClockGuard) -> None:
        self.context = z3.Context()
        # Everything is Boolean: the QF_BV solver bit-blasts (here: only Tseitin) to SAT.
        self.solver = z3.SolverFor("QF_BV", ctx=self.context)
        self.seed = seed
        # A resource limit, never a clock: answers must not depend on the machine's speed.
        self.rlimit = rlimit
        self.guard = guard
        self.reason = ""  # why the last check answered "unknown"
        self.units_used = 0  # resource units this formula's context has used so far
        self.solver.set("random_seed", seed)
        self.solver.set("rlimit", rlimit)
        self.groups: dict[str, Group] = {}
        self.true = z3.BoolVal(True, ctx=self.context)
        self.false = z3.BoolVal(False, ctx=self.context)
        self.constraints: list[Lit] = []
        self.conjunction = self.true  # every constraint, once :meth:`close` ran

    # -- terms -----------------------------------------------------------------------------------
    def variable(self, name: str) -> Lit:
        return z3.Bool(name, ctx=self.context)

    # Constructors through Z3's C API: the Python API's coercions cost more than the
    # solving on small models (every literal is a BoolRef of this context already).
    def _wrap(self, ast: z3.Ast) -> Lit:
        return z3.BoolRef(ast, self.context)

    def _array(self, terms: Sequence[Lit]) -> z3.Ast:
        array = (z3.Ast * len(terms))()
        for index, term in enumerate(terms):
            array[index] = term.as_ast()
        return array

    def _nary(self, make: Callable[..., z3.Ast], terms: Sequence[Lit]) -> Lit:
        return self._wrap(make(self.context.ref(), len(terms), self._array(terms)))

    def any_of(self, terms: Iterable[Lit]) -> Lit:
        listed = [t for t in terms if t is not self.false]
        if not listed:
            return self.false
        return listed[0] if len(listed) == 1 else self._nary(z3.Z3_mk_or, listed)

    def all_of(self, terms: Iterable[Lit]) -> Lit:
        listed = [t for t in terms if t is not self.true]
        if not listed:
            return self.true
        return listed[0] if len(listed) == 1 else self._nary(z3.Z3_mk_and, listed)

    def negation(self, term: Lit) -> Lit:
        return self._wrap(z3.Z3_mk_not(self.context.ref(), term.as_ast()))

    def implies(self, premise: Lit, conclusion: Lit) -> Lit:
        ref = self.context.ref()
        return self._wrap(z3.Z3_mk_implies(ref, premise.as_ast(), conclusion.as_ast()))

    def at_most(self, terms: Sequence[Lit], bound: int) -> Lit:
        """At most ``bound`` of ``terms`` hold (a pseudo-Boolean constraint)."""
        ref = self.context.ref()
        return self._wrap(z3.Z3_mk_atmost(ref, len(terms), self._array(terms), bound))

    def at_least(self, terms: Sequence[Lit], bound: int) -> Lit:
        ref = self.context.ref()
        return self._wrap(z3.Z3_mk_atleast(ref, len(terms), self._array(terms), bound))

    # -- constraints -----------------------------------------------------------------------------
    def group(self, key: str) -> Lit:
        """The literal that switches the group ``key`` on (created on first use)."""
        if key not in self.groups:
            self.groups[key] = Group(key, self.variable(f"group:{key}"))
        return self.groups[key].literal

    def add(self, key: str | None, *constraints: Lit) -> None:
        """Add ``constraints``, in the group ``key`` (None: always on)."""
        for c in constraints:
            self.constraints.append(c if key is None else self.implies(self.group(key), c))

    def add_at_most(self, key: str | None, literals: Iterable[Lit], bound: int) -> None:
        """At most ``bound`` of ``literals`` hold (pairwise clauses for a small at-most-one)."""
        listed = [lit for lit in literals if lit is not self.false]
        if len(listed) <= bound:
            return
        if bound == 1 and len(listed) <= PAIRWISE_MAX:
            pairs = itertools.combinations(listed, 2)
            self.add(key, *(self.any_of([self.negation(a), self.negation(b)]) for a, b in pairs))
        else:
            self.add(key, self.at_most(listed, bound))

    def close(self) -> None:
        """Assert the constraints as one conjunction (copying thousands of assertions
        through the Python API costs more than solving the small models)."""
        self.conjunction = self.all_of(self.constraints)
        self._assert_into(self.solver)

    def group_literals(self) -> list[Lit]:
        return [g.literal for g in self.groups.values()]

    def _assert_into(self, solver: z3.Solver) -> None:
        z3.Z3_solver_assert(self.context.ref(), solver.solver, self.conjunction.as_ast())

    # -- solving ---------------------------------------------------------------------------------
    def run_check(self, check: Callable[[], z3.CheckSatResult], reason: Callable[[], str]) -> str:
        """``check`` under the wall-clock guard; "sat", "unsat" or "unknown" (``self.reason``
        says why: the resource limit, normally)."""
        with self.guard.watch(self.context.interrupt):
            result = check()
        self.reason = "" if result != z3.unknown else _reason(reason())
        return str(result)

    def solve(self, read: Callable[[Valuation], Read]) -> tuple[str, Read | None]:
        """("sat", what ``read`` makes of the model), ("unsat", None) or ("unknown", None),
        with every group on (as assumptions, so that :meth:`core` can follow)."""
        solver = self.solver
        result = self.run_check(lambda: solver.check(*self.group_literals()), solver.reason_unknown)
        return result, (read(_valuation(solver.model())) if result == "sat" else None)

    def decide(
        self, logic: str, rlimit: int, read: Callable[[Valuation], Read]
    ) -> tuple[str, Read | None, int]:
        """The formula on a fresh solver of configuration ``logic`` ("QF_BV" or "QF_FD")
        limited to ``rlimit`` units: the answer, what ``read`` makes of a model, the units
        spent. (A fresh, non-incremental solver: Z3's QF_BV solver bit-blasts only when it
        is not used incrementally (push/pop), several times faster here.)"""
        fresh = z3.SolverFor(logic, ctx=self.context)
        fresh.set("random_seed", self.seed)
        fresh.set("rlimit", rlimit)
        self._assert_into(fresh)
        fresh.add(self.group_literals())
        result = self.run_check(fresh.check, fresh.reason_unknown)
        found = read(_valuation(fresh.model())) if result == "sat" else None
        return result, found, self.units_spent(fresh)

    def optimisation(self, rlimit: int, fixed: Sequence[Lit]) -> Optimisation:
        """Z3's MaxSAT over this formula, every group on and ``fixed`` asserted, limited to
        ``rlimit`` units; the caller adds the soft constraints."""
        return Optimisation(self, rlimit, fixed)

    def units_spent(self, solver: z3.Solver | z3.Optimize) -> int:
        """The resource units used since the last call (Z3's deterministic step count,
        cumulative over this formula's context)."""
        try:
            total = int(solver.statistics().get_key_value("rlimit count"))
        except z3.Z3Exception:
            return 0
        spent, self.units_used = total - self.units_used, total
        return spent

    def core(self) -> list[str] | None:
        """After an unsat :meth:`solve`: the keys of a minimal set of conflicting groups (None
        if the core could not be computed within the resource limit)."""
        solver = self.solver
        solver.set("core.minimize", True)
        literals = {str(g.literal): g.key for g in self.groups.values()}
        result = self.run_check(lambda: solver.check(*self.group_literals()), solver.reason_unknown)
        if result != "unsat":
            return None
        return sorted(literals[str(lit)] for lit in solver.unsat_core() if str(lit) in literals)


class Optimisation:
    """One MaxSAT question (core-guided: every answer it gives is optimal): the soft
    constraints "this term is false" in named groups, minimised lexicographically in the
    order the groups were first named."""

    def __init__(self, formula: Formula, rlimit: int, fixed: Sequence[Lit]) -> None:
        self.formula = formula
        self.optimize = z3.Optimize(ctx=formula.context)
        self.optimize.set("random_seed", formula.seed)
        self.optimize.set("rlimit", rlimit)
        self.optimize.add(formula.conjunction, *formula.group_literals(), *fixed)

    def prefer_false(self, term: Lit, group: str) -> None:
        self.optimize.add_soft(self.formula.negation(term), 1, group)

    def check(self, read: Callable[[Valuation], Read]) -> tuple[str, Read | None, int]:
        """The answer, what ``read`` makes of the optimal model, and the units spent."""
        optimize = self.optimize
        result = self.formula.run_check(optimize.check, optimize.reason_unknown)
        found = read(_valuation(optimize.model())) if result == "sat" else None
        return result, found, self.formula.units_spent(optimize)


def _valuation(model: z3.ModelRef) -> Valuation:
    def true(term: Lit) -> bool:
        return bool(z3.is_true(model.eval(term, model_completion=True)))

    return true


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
