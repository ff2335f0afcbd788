"""The symbolic semantics (dpfc.verify.semantics) against the concrete one (dpfc.isa.semantics).

Every operation, with concrete words substituted for its variables, gives the concrete
result (hypothesis, random words and the boundary words); the prover proves identities that
hold and refutes one that does not, with a counterexample the concrete semantics confirms.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dpfc.isa import AluOp, CtrlOp, MemOp
from dpfc.isa import semantics as concrete
from dpfc.target import HASH_FUNCTIONS
from dpfc.verify import Term, Words, alu, branch_taken, hash_word, memory
from dpfc.verify.bitvec import PROVE_RLIMIT

BOUNDARY = (0, 1, 31, 32, 0x7FFF_FFFF, 0x8000_0000, 0xFFFF_FFFE, 0xFFFF_FFFF)
word = st.one_of(st.sampled_from(BOUNDARY), st.integers(0, 0xFFFF_FFFF))


@dataclass(frozen=True)
class Built:
    """One context with every operation applied to the variables x and y (built once)."""

    words: Words
    alus: dict[AluOp, Term]
    memories: dict[MemOp, tuple[Term, Term | None]]
    branches: dict[CtrlOp, Term]
    hashes: dict[str, Term]


@pytest.fixture(scope="module")
def built() -> Built:
    w = Words()
    x, y = w.var("x"), w.var("y")
    return Built(
        w,
        {op: alu(w, op, x, y) for op in AluOp},
        {op: memory(w, op, x, y) for op in MemOp},
        {op: branch_taken(w, op, x, y) for op in CtrlOp},
        {f.name: hash_word(w, f, x) for f in HASH_FUNCTIONS.values()},
    )


@given(word, word)
def test_each_operation_is_the_concrete_one(built: Built, a: int, b: int) -> None:
    w, at = built.words, {"x": a, "y": b}
    for op, term in built.alus.items():
        assert w.value(term, at) == concrete.alu(op, a, b), op
    for mem, (new, to_b) in built.memories.items():
        want_new, want_b = concrete.memory(mem, a, b)
        assert w.value(new, at) == want_new, mem
        assert (None if to_b is None else w.value(to_b, at)) == want_b, mem
    for ctrl, taken in built.branches.items():
        assert bool(w.value(taken, at)) == concrete.branch_taken(ctrl, a, b), ctrl
    for function in HASH_FUNCTIONS.values():
        assert w.value(built.hashes[function.name], at) == concrete.hash_word(function, a)


def test_the_prover_proves_what_holds_and_refutes_what_does_not() -> None:
    w = Words()
    x, y = w.var("x"), w.var("y")
    assert w.prove(alu(w, AluOp.SUB, alu(w, AluOp.ADD, x, y), y).eq(x)).proved
    taken_lt = branch_taken(w, CtrlOp.BLT, x, y)
    taken_gt = branch_taken(w, CtrlOp.BGT, y, x)
    assert w.prove(taken_lt.eq(taken_gt)).proved  # x < y is y > x
    # x >> 1 << 1 == x only for even x: refuted, and the counterexample is odd
    once = alu(w, AluOp.LSH, alu(w, AluOp.RSH, x, w.const(1)), w.const(1))
    answer = w.prove(once.eq(x))
    assert answer.verdict == "refuted"
    odd = answer.counterexample["x"]
    assert concrete.alu(AluOp.LSH, concrete.alu(AluOp.RSH, odd, 1), 1) != odd


def test_a_claim_beyond_the_resource_limit_is_unknown_with_the_reason() -> None:
    """min(x, y) < max(x, y) unless x = y: proved under the default limit, unknown, with
    Z3's reason, under a limit of one unit (a count of steps, never a clock)."""
    for rlimit, verdict in ((1, "unknown"), (PROVE_RLIMIT, "proved")):
        w = Words(rlimit=rlimit)
        x, y = w.var("x"), w.var("y")
        ordered = alu(w, AluOp.MIN, x, y).ult(alu(w, AluOp.MAX, x, y))
        answer = w.prove(ordered.lor(x.eq(y)))
        assert answer.verdict == verdict
        assert ("resource limit" in answer.reason) == (verdict == "unknown")
