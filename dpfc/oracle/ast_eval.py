"""The AST evaluator: runs a checked DPF directly from its syntax tree (the semantic oracle).

Contract: ``evaluate(program, dpf_name, inputs)`` runs one DPF of a checked program on
:class:`Inputs` (the stack top first, memory per array, metadata values, a rand stream) and
returns the :class:`Outcome` the IR interpreter (:mod:`dpfc.ir.interp`) returns for the
lowered DPF, so that the differential tests compare the two with ``==``.

It walks the tree statement by statement and shares nothing with the lowering: no SSA, no
unrolled copies, no IR op semantics. What it takes from elsewhere is the exact word
arithmetic of the hardware (:func:`dpfc.isa.semantics.hash_word`, ``to_signed``) and, when
the checker's program is given, the modules it loaded (name resolution only). The
semantics are docs/language.md's "Semantics summary":

* words are ints in ``[0, 2**32)``, bools 0/1; arithmetic wraps; ``*`` wraps;
* ``<<`` / ``>>`` shift by the right operand & 31, ``>>`` is logical;
* comparisons and ``min``/``max`` are signed when an operand is ``i32``, unsigned otherwise
  (a well-typed program never mixes the two; a literal adapts);
* ``&&`` / ``||`` evaluate both operands (they are bool AND/OR, not branches); ``==`` /
  ``!=`` also compare bools; ``x as bool`` is ``x != 0``; a ``bool`` parameter is bit 0 of
  its stack word;
* parameters pop ``stack[0]``, ``stack[1]``, ...; ``peek()`` reads ``stack[nparams]``;
  a missing entry reads 0;
* an index at or beyond an array's declared size reads 0 and writes nothing; fetch ops
  return the old word, and ``fetch_max`` / ``fetch_min`` compare unsigned;
* the output stack is the pushed values (first pushed on top) followed by
  ``stack[nparams:]``; the default steering is ``pass``; ``return`` ends the DPF.

The work is split by phase: :mod:`.eval_values` (words, operator arithmetic, the machine
state and memory bounds), :mod:`.eval_program` (modules and names across imports),
:mod:`.eval_frame` (the statement and expression walk); this module turns the
:class:`Inputs` into a state (as the IR interpreter reads them), binds the parameters, runs
the body and builds the :class:`Outcome`. It re-exports :class:`EvalError`,
:class:`Program`, :func:`program_from` and ``WORD_MASK``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from dpfc.ir.interp import Inputs, Outcome
from dpfc.oracle.eval_frame import Evaluator, Frame, ReturnFromDpf
from dpfc.oracle.eval_program import Program, program_from
from dpfc.oracle.eval_values import WORD_MASK, EvalError, State, Value
from dpfc.syntax import ast
from dpfc.target import DEFAULT_PROFILE, TargetProfile

__all__ = ["WORD_MASK", "EvalError", "Program", "evaluate", "program_from"]


def _cells(cells: Mapping[int, int] | Sequence[int]) -> dict[int, int]:
    if isinstance(cells, Mapping):
        return {int(i): int(w) & WORD_MASK for i, w in cells.items()}
    return {i: int(w) & WORD_MASK for i, w in enumerate(cells)}


def _rand_stream(rand: Iterator[int] | Sequence[int]) -> Iterator[int]:
    if isinstance(rand, Sequence):
        words = list(rand)

        def cycle() -> Iterator[int]:
            i = 0
            while True:
                yield words[i % len(words)] if words else 0
                i += 1

        return cycle()

    def drain(source: Iterator[int]) -> Iterator[int]:
        yield from source
        while True:  # an exhausted iterator gives 0s, as in the IR interpreter
            yield 0

    return drain(iter(rand))


def evaluate(
    program: Any, dpf_name: str, inputs: Inputs, profile: TargetProfile | None = None
) -> Outcome:
    """Run the DPF ``dpf_name`` of ``program`` on ``inputs`` by walking its syntax tree.

    ``program`` is anything :func:`program_from` takes (normally the checker's
    :class:`~dpfc.sema.CheckedProgram`); ``dpf_name`` a DPF of its main module. The hash
    functions of ``hash<k>`` are those of ``profile``, else ``inputs.profile``, else tofino1.
    """
    view = program_from(program)
    target = profile or inputs.profile or DEFAULT_PROFILE
    module = view.main
    dpf = view.module(module).dpfs.get(dpf_name)
    if dpf is None:
        raise EvalError(f"no DPF `{dpf_name}` in module `{module}`")
    stack = [w & WORD_MASK for w in inputs.stack]
    nparams = len(dpf.params)
    state = State(
        stack=stack,
        nparams=nparams,
        memory={name: _cells(cells) for name, cells in inputs.memory.items()},
        meta=inputs.meta,
        rand=_rand_stream(inputs.rand),
    )
    frame = Frame(Evaluator(view, target), module, state)
    for k, param in enumerate(dpf.params):
        word = stack[k] if k < len(stack) else 0
        if param.type.name is ast.TypeName.BOOL:
            word &= 1
        frame.scopes[0][param.name] = Value(word, param.type.name)
    with contextlib.suppress(ReturnFromDpf):
        frame.block(dpf.body)
    return Outcome(
        stack=state.pushed + stack[nparams:],
        steer=state.steer,
        steer_value=state.steer_value,
        chain=state.chain,
        drop_code=state.drop_code,
        memory=state.memory,
        rand_draws=state.rand_draws,
    )
