"""The verifier's Z3 adapter: bit-vector terms, and the questions asked about them.

Contract: :class:`Words` is one formula context (a Z3 context of its own, so that answers do
not depend on what was asked before): it makes constants and variables of a width, the
operations of docs/isa.md's semantics on them (:class:`Term` wraps a Z3 bit-vector or
Boolean term and gives it Python operators), and decides claims. :meth:`Words.prove` asks
whether a Boolean term holds for every value of its variables and answers with an
:class:`Answer`: ``proved``, ``refuted`` with a counterexample (each variable's value), or
``unknown`` with Z3's reason. Every question runs under a resource limit (Z3's ``rlimit``,
:data:`PROVE_RLIMIT` by default), never a clock: the same question gets the same answer on
any machine under any load. :meth:`Words.value` evaluates a term with its variables given
(what the tests compare with the concrete semantics).

The scheduler's adapter (:mod:`dpfc.schedule.z3.adapter`) is Boolean only; this one is the
bit-vector theory (QF_BV, and arrays for memories), hence a second adapter module.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import z3

# Resource units (Z3 rlimit) for one claim about one DPF's code: a claim over 32-bit words
# with a few multiplications-free paths takes far fewer (chosen on the 2-core development
# machine, where one million units take about 0.1-0.5 s).
PROVE_RLIMIT = 50_000_000


class Term:
    """A bit-vector (or Boolean) term of one :class:`Words` context."""

    __slots__ = ("ast",)

    def __init__(self, ast: z3.ExprRef) -> None:
        self.ast = ast

    # -- widths --------------------------------------------------------------------------
    @property
    def width(self) -> int:
        """Bits of a bit-vector term (0 for a Boolean)."""
        return int(self.ast.size()) if z3.is_bv(self.ast) else 0

    # -- arithmetic and logic (modulo 2^width) -------------------------------------------
    def __add__(self, other: Term) -> Term:
        return Term(self.ast + other.ast)

    def __sub__(self, other: Term) -> Term:
        return Term(self.ast - other.ast)

    def __mul__(self, other: Term) -> Term:
        return Term(self.ast * other.ast)

    def __and__(self, other: Term) -> Term:
        return Term(self.ast & other.ast)

    def __or__(self, other: Term) -> Term:
        return Term(self.ast | other.ast)

    def __xor__(self, other: Term) -> Term:
        return Term(self.ast ^ other.ast)

    def __neg__(self) -> Term:
        return Term(-self.ast)

    def __invert__(self) -> Term:
        return Term(~self.ast)

    def shl(self, amount: Term) -> Term:
        return Term(self.ast << amount.ast)

    def lshr(self, amount: Term) -> Term:
        return Term(z3.LShR(self.ast, amount.ast))

    def bits(self, high: int, low: int) -> Term:
        return Term(z3.Extract(high, low, self.ast))

    def zext(self, width: int) -> Term:
        return Term(z3.ZeroExt(width - self.width, self.ast))

    # -- comparisons (Boolean terms) -----------------------------------------------------
    def eq(self, other: Term) -> Term:
        return Term(self.ast == other.ast)

    def ne(self, other: Term) -> Term:
        return Term(self.ast != other.ast)

    def ult(self, other: Term) -> Term:
        return Term(z3.ULT(self.ast, other.ast))

    def ule(self, other: Term) -> Term:
        return Term(z3.ULE(self.ast, other.ast))

    def ugt(self, other: Term) -> Term:
        return Term(z3.UGT(self.ast, other.ast))

    def slt(self, other: Term) -> Term:
        return Term(self.ast < other.ast)

    def sgt(self, other: Term) -> Term:
        return Term(self.ast > other.ast)

    # -- Booleans ------------------------------------------------------------------------
    def land(self, other: Term) -> Term:
        return Term(z3.And(self.ast, other.ast))

    def lor(self, other: Term) -> Term:
        return Term(z3.Or(self.ast, other.ast))

    def lnot(self) -> Term:
        return Term(z3.Not(self.ast))

    def implies(self, other: Term) -> Term:
        return Term(z3.Implies(self.ast, other.ast))

    def __repr__(self) -> str:
        return f"Term({self.ast})"


@dataclass(frozen=True)
class Answer:
    """What a claim came to: ``proved``, ``refuted`` (``counterexample``: each variable's
    value, by name) or ``unknown`` (``reason``: why Z3 gave up, e.g. its resource limit);
    for :meth:`Words.example`, ``found`` (the values) or ``none``."""

    verdict: str
    counterexample: Mapping[str, int] = field(default_factory=dict)
    reason: str = ""

    @property
    def proved(self) -> bool:
        return self.verdict == "proved"


class Valuation:
    """Terms evaluated under fixed inputs (:meth:`Words.valuation`)."""

    def __init__(self, pairs: list[tuple[z3.ExprRef, z3.ExprRef]]) -> None:
        self.pairs = pairs

    def of(self, term: Term) -> int:
        """The term's value (a Boolean: 1 or 0); every variable must have been given."""
        ast = z3.substitute(term.ast, *self.pairs) if self.pairs else term.ast
        result = z3.simplify(ast)
        if z3.is_true(result):
            return 1
        if z3.is_false(result):
            return 0
        if not z3.is_bv_value(result):
            raise ValueError(f"the term still has variables: {result}")
        return int(result.as_long())


class Words:
    """One formula context: terms, and the claims decided about them (module docstring)."""

    def __init__(self, *, rlimit: int = PROVE_RLIMIT) -> None:
        self.context = z3.Context()
        self.rlimit = rlimit
        self.variables: dict[str, Term] = {}
        self.memories: dict[str, Term] = {}

    # -- terms ---------------------------------------------------------------------------
    def const(self, value: int, width: int = 32) -> Term:
        return Term(z3.BitVecVal(value % (1 << width), width, ctx=self.context))

    def var(self, name: str, width: int = 32) -> Term:
        """The variable ``name`` of ``width`` bits (the same term for the same name)."""
        if name not in self.variables:
            self.variables[name] = Term(z3.BitVec(name, width, ctx=self.context))
        term = self.variables[name]
        assert term.width == width, f"variable {name} has {term.width} bits, not {width}"
        return term

    def true(self) -> Term:
        return Term(z3.BoolVal(True, ctx=self.context))

    def ite(self, condition: Term, then: Term, otherwise: Term) -> Term:
        return Term(z3.If(condition.ast, then.ast, otherwise.ast))

    def concat(self, parts: Sequence[Term]) -> Term:
        """The parts side by side, the first the most significant."""
        if len(parts) == 1:
            return parts[0]
        return Term(z3.Concat(*(part.ast for part in parts)))

    def all_of(self, terms: Sequence[Term]) -> Term:
        return Term(z3.And(*(t.ast for t in terms))) if terms else self.true()

    def any_of(self, terms: Sequence[Term]) -> Term:
        return Term(z3.Or(*(t.ast for t in terms))) if terms else self.true().lnot()

    # -- memories: arrays from 32-bit addresses to 32-bit words ---------------------------
    def memory(self, name: str) -> Term:
        """The memory ``name`` as it was before the DPF ran (a variable of its own)."""
        if name not in self.memories:
            sort = z3.BitVecSort(32, ctx=self.context)
            self.memories[name] = Term(z3.Array(name, sort, sort))
        return self.memories[name]

    @staticmethod
    def select(memory: Term, address: Term) -> Term:
        return Term(z3.Select(memory.ast, address.ast))

    @staticmethod
    def store(memory: Term, address: Term, value: Term) -> Term:
        return Term(z3.Store(memory.ast, address.ast, value.ast))

    # -- questions -----------------------------------------------------------------------
    def value(
        self,
        term: Term,
        given: Mapping[str, int],
        memories: Mapping[str, Mapping[int, int]] | None = None,
    ) -> int:
        """``term`` with each variable named in ``given`` replaced by its value and each
        memory named in ``memories`` by its words (0 where none is given); a Boolean gives
        1 or 0. Every variable and memory of ``term`` must be given."""
        return self.valuation(given, memories).of(term)

    def valuation(
        self, given: Mapping[str, int], memories: Mapping[str, Mapping[int, int]] | None = None
    ) -> Valuation:
        """The values of :meth:`value`, for many terms under the same inputs (the inputs'
        terms are built once)."""
        pairs = [
            (self.variables[name].ast, self.const(v, self.variables[name].width).ast)
            for name, v in given.items()
            if name in self.variables
        ]
        sort = z3.BitVecSort(32, ctx=self.context)
        for name, words in (memories or {}).items():
            if name not in self.memories:
                continue
            array = z3.K(sort, z3.BitVecVal(0, 32, ctx=self.context))
            for address, word in sorted(words.items()):
                array = z3.Store(array, self.const(address).ast, self.const(word).ast)
            pairs.append((self.memories[name].ast, array))
        return Valuation(pairs)

    def example(self, condition: Term) -> Answer:
        """Inputs under which ``condition`` holds: ``found`` with each variable's value
        (``counterexample``), ``none`` when no input does, or ``unknown`` with the reason."""
        answer = self.prove(condition.lnot())
        if answer.verdict == "proved":
            return Answer("none")
        if answer.verdict == "refuted":
            return Answer("found", answer.counterexample)
        return answer

    def prove(self, claim: Term) -> Answer:
        """Whether ``claim`` (a Boolean term) holds for every value of its variables."""
        solver = z3.SolverFor("QF_ABV", ctx=self.context)
        solver.set("rlimit", self.rlimit)
        solver.add(z3.Not(claim.ast))
        result = solver.check()
        if result == z3.unsat:
            return Answer("proved")
        if result == z3.sat:
            model = solver.model()
            values = {
                name: int(model.eval(term.ast, model_completion=True).as_long())
                for name, term in sorted(self.variables.items())
            }
            return Answer("refuted", values)
        return Answer("unknown", reason=str(solver.reason_unknown()))


__all__ = ["PROVE_RLIMIT", "Answer", "Term", "Valuation", "Words"]
