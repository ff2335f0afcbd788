"""The AST evaluator's entry point: one DPF of a checked program, run on IR-style inputs.

Contract: :func:`evaluate` as the package :mod:`dpfc.oracle.ast_eval` states it. This module
turns the :class:`~dpfc.ir.interp.Inputs` into a :class:`~.values.State` the way the IR
interpreter reads them (words masked, memory as ``{index: word}``, an exhausted or empty
rand stream giving 0s), binds the parameters (a ``bool`` parameter is bit 0 of its stack
word), runs the body until it ends or returns, and builds the
:class:`~dpfc.ir.interp.Outcome` (pushed values, then ``stack[nparams:]``).

Not responsible for the walk itself (:mod:`.frame`), names across modules
(:mod:`.program`) or word arithmetic (:mod:`.values`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from dpfc.ir import Inputs, Outcome
from dpfc.oracle.ast_eval.frame import Evaluator, Frame, ReturnFromDpf
from dpfc.oracle.ast_eval.program import program_from
from dpfc.oracle.ast_eval.values import WORD_MASK, EvalError, State, Value
from dpfc.syntax import ast
from dpfc.target import DEFAULT_PROFILE, TargetProfile

__all__ = ["evaluate"]


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
