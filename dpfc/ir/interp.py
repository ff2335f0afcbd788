"""The reference interpreter of the IR: runs one function on concrete inputs (the oracle).

Contract: ``run_function(module, name, inputs)`` runs the DPF ``name`` of a verified module
on :class:`Inputs` and returns its :class:`Outcome`. On IR that passes
:func:`dpfc.ir.verify.verify_module` it never raises; malformed IR raises
:class:`InterpError`. The semantics are docs/language.md's "Semantics summary" and
docs/ir.md's op table:

* words are ints in ``[0, 2**32)``, bools 0/1; ADD/SUB/NEG/MUL wrap; SHL/SHR shift by
  ``b & 31`` (SHR is logical); MIN/MAX and the fetch min/max compare unsigned — the ALU and
  memory units of :mod:`dpfc.isa.semantics` compute them, so IR and hardware agree;
* compares are the branch unit's conditions (``branch_taken``): ``ugt`` is BGT, ``ult`` BLT,
  ``sgt``/``slt`` BSGT/BSLT (two's complement), ``eq`` BEQ, ``test`` BSET (``a & b != 0``),
  and ``ne``/``uge``/``ule``/``sge``/``sle`` their negations;
* ``param k`` is ``stack[k]`` and ``peek`` is ``stack[params]`` (0 when absent); ``meta f``
  is ``inputs.meta[f]`` (0 when absent); ``rand`` draws the next word of ``inputs.rand``;
  ``hash k, x`` is the CRC of lane ``k`` of the profile (``hash_word``);
* a memory op with an index at or beyond the array's declared size is unmapped: LOAD and
  the fetch ops return 0 and nothing is written; absent memory words are 0;
* a phi takes the value of the block control came from (all phis of a block at once);
* ``exit`` ends the run: the outgoing stack is the pushed values (the first pushed on top)
  followed by ``stack[params:]``.

The steering value is kept as the full word: the switch uses its low 16 bits, but a DPF
that computes a wider value is still observably different in the IR, and the checker and
the encoder are where the width is enforced.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

from dpfc.ir.core import WORD_MASK, Block, Br, Exit, Function, Instr, Jump, Module, Op
from dpfc.ir.evaluate import MEM_OPS, fold_op
from dpfc.isa import hash_word, memory
from dpfc.target import DEFAULT_PROFILE, TargetProfile

MemoryContents = Mapping[str, Mapping[int, int] | Sequence[int]]


class InterpError(Exception):
    """The function is not valid IR (the interpreter assumes verified input)."""


@dataclass
class Inputs:
    """What a DPF reads. ``memory``: array -> {index: word} or a list of words (index =
    position); absent words are 0. ``rand``: a sequence (cycled; empty gives 0s) or an
    iterator (0 once exhausted; an iterator is consumed by the run). ``profile``: the hash
    functions of ``hash`` (default tofino1)."""

    stack: Sequence[int] = ()
    memory: MemoryContents = field(default_factory=dict)
    meta: Mapping[str, int] = field(default_factory=dict)
    rand: Iterator[int] | Sequence[int] = ()
    profile: TargetProfile | None = None


class Outcome:
    """What a DPF leaves: the outgoing stack, the epilog, the final memory, and a trace.

    ``stack`` is a tuple (top first); ``memory`` is canonical — array -> {index: word} with
    zero words and all-zero arrays left out — so outcomes compare by meaning however their
    memory was given (lists or dicts). ``path`` (labels of the blocks run), ``accesses``
    (memory ops executed, out-of-bounds ones included) and ``rand_draws`` describe the run
    and are not part of ``==``.
    """

    __slots__ = (
        "accesses",
        "chain",
        "drop_code",
        "memory",
        "path",
        "rand_draws",
        "stack",
        "steer",
        "steer_value",
    )

    def __init__(
        self,
        stack: Sequence[int],
        steer: str = "pass",
        steer_value: int | None = None,
        chain: str | None = None,
        drop_code: bool = False,
        memory: MemoryContents | None = None,
        path: Sequence[str] = (),
        accesses: int = 0,
        rand_draws: int = 0,
    ) -> None:
        self.stack: tuple[int, ...] = tuple(w & WORD_MASK for w in stack)
        self.steer = steer
        self.steer_value = steer_value
        self.chain = chain
        self.drop_code = drop_code
        self.memory: dict[str, dict[int, int]] = canonical_memory(memory or {})
        self.path: tuple[str, ...] = tuple(path)
        self.accesses = accesses
        self.rand_draws = rand_draws

    def _key(self) -> tuple[object, ...]:
        return (
            self.stack,
            self.steer,
            self.steer_value,
            self.chain,
            self.drop_code,
            self.memory,
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Outcome):
            return NotImplemented
        return self._key() == other._key()

    __hash__ = None  # type: ignore[assignment]  # mutable, compared by value

    def __repr__(self) -> str:
        return (
            f"Outcome(stack={self.stack!r}, steer={self.steer!r}, "
            f"steer_value={self.steer_value!r}, chain={self.chain!r}, "
            f"drop_code={self.drop_code!r}, memory={self.memory!r}, path={self.path!r})"
        )


def canonical_memory(contents: MemoryContents) -> dict[str, dict[int, int]]:
    """array -> {index: word} with only the non-zero words, arrays and indexes sorted."""
    out: dict[str, dict[int, int]] = {}
    for name in sorted(contents):
        words = _words(contents[name])
        nonzero = {i: w for i, w in sorted(words.items()) if w}
        if nonzero:
            out[name] = nonzero
    return out


def _words(cells: Mapping[int, int] | Sequence[int]) -> dict[int, int]:
    if isinstance(cells, Mapping):
        return {int(i): int(w) & WORD_MASK for i, w in cells.items()}
    return {i: int(w) & WORD_MASK for i, w in enumerate(cells)}


def evaluate_op(op: Op, args: Sequence[int], imm: int | None = None) -> int:
    """The value of a pure op (ALU, compare, select, zext, const) on operand words."""
    if op is Op.CONST and imm is not None:
        return imm & WORD_MASK
    value = fold_op(op, list(args))
    if value is None:
        raise InterpError(f"`{op.value}` is not a pure op")
    return value


class _Run:
    def __init__(self, module: Module, function: Function, inputs: Inputs) -> None:
        self.module = module
        self.function = function
        self.stack = tuple(w & WORD_MASK for w in inputs.stack)
        self.meta = inputs.meta
        self.profile = inputs.profile or DEFAULT_PROFILE
        self.memory = {name: _words(cells) for name, cells in inputs.memory.items()}
        self.draw = _rand_source(inputs.rand)
        self.values: dict[int, int] = {}
        self.accesses = 0
        self.rand_draws = 0

    def read(self, value: Instr) -> int:
        try:
            return self.values[id(value)]
        except KeyError:
            raise InterpError(f"`{value.op.value}` is read before it is computed") from None

    def run(self) -> Outcome:
        blocks: dict[str, Block] = {}
        for block in self.function.blocks:
            blocks.setdefault(block.label, block)
        if not self.function.blocks:
            raise InterpError(f"`@{self.function.name}` has no blocks")
        block = self.function.blocks[0]
        previous: str | None = None
        path: list[str] = []
        while True:
            if block.label in path:
                raise InterpError(f"control flow returns to block `{block.label}`")
            path.append(block.label)
            self.enter(block.instrs, previous)
            term = block.term
            if isinstance(term, Exit):
                return self.exit(term, path)
            if isinstance(term, Br):
                target = term.then if self.read(term.cond) else term.orelse
            elif isinstance(term, Jump):
                target = term.target
            else:
                raise InterpError(f"block `{block.label}` has no terminator")
            successor = blocks.get(target)
            if successor is None:
                raise InterpError(f"block `{block.label}` jumps to unknown `{target}`")
            previous = block.label
            block = successor

    def enter(self, instrs: list[Instr], previous: str | None) -> None:
        # The phis of a block read their inputs at the edge, all at once.
        phis = [i for i in instrs if i.op is Op.PHI]
        chosen: list[tuple[Instr, int]] = []
        for phi in phis:
            if previous is None or previous not in phi.incoming:
                raise InterpError(f"phi has no value for the edge from `{previous}`")
            arg = phi.args[phi.incoming.index(previous)]
            chosen.append((phi, self.read(arg)))
        for phi, word in chosen:
            self.values[id(phi)] = word
        for instr in instrs:
            if instr.op is not Op.PHI:
                result = self.execute(instr)
                if result is not None:
                    self.values[id(instr)] = result

    def execute(self, instr: Instr) -> int | None:
        op = instr.op
        args = [self.read(a) for a in instr.args]
        if op is Op.PARAM:
            return self.stack_word(instr.imm)
        if op is Op.PEEK:
            return self.stack_word(self.function.params)
        if op is Op.RAND:
            self.rand_draws += 1
            return self.draw() & WORD_MASK
        if op is Op.META:
            return self.meta.get(instr.symbol or "", 0) & WORD_MASK
        if op is Op.HASH:
            lanes = self.profile.hash_functions
            if instr.imm is None or not 0 <= instr.imm < len(lanes) or len(args) != 1:
                raise InterpError(f"invalid hash function index {instr.imm}")
            return hash_word(self.profile.hash_for_lane(instr.imm), args[0])
        if op in MEM_OPS:
            return self.access(instr, args)
        if op is Op.CONST and instr.imm is None:
            raise InterpError("a constant without a value")
        try:
            return evaluate_op(op, args, instr.imm)
        except IndexError:
            raise InterpError(f"`{op.value}` has too few operands") from None

    def stack_word(self, index: int | None) -> int:
        if index is None or index < 0:
            raise InterpError("a stack read without an index")
        return self.stack[index] if index < len(self.stack) else 0

    def access(self, instr: Instr, args: list[int]) -> int | None:
        decl = self.module.arrays.get(instr.symbol or "")
        if decl is None or len(args) != (1 if instr.op is Op.LOAD else 2):
            raise InterpError(f"invalid memory op on `{instr.symbol}`")
        self.accesses += 1
        index = args[0]
        returns_value = instr.op is not Op.STORE
        if index >= decl.size:  # unmapped: reads 0, writes nothing
            return 0 if returns_value else None
        cells = self.memory.setdefault(decl.name, {})
        data = args[1] if len(args) > 1 else 0
        new, old = memory(MEM_OPS[instr.op], cells.get(index, 0), data)
        cells[index] = new
        return old if returns_value else None

    def exit(self, term: Exit, path: list[str]) -> Outcome:
        pushed = [self.read(v) for v in term.push]
        value = self.read(term.steer_value) if term.steer_value is not None else None
        return Outcome(
            stack=pushed + list(self.stack[self.function.params :]),
            steer=term.steer,
            steer_value=value,
            chain=term.chain,
            drop_code=term.drop_code,
            memory=self.memory,
            path=path,
            accesses=self.accesses,
            rand_draws=self.rand_draws,
        )


def _rand_source(rand: Iterator[int] | Sequence[int]) -> Callable[[], int]:
    if isinstance(rand, Sequence):
        words = list(rand)
        position = 0

        def cycle() -> int:
            nonlocal position
            if not words:
                return 0
            word = words[position % len(words)]
            position += 1
            return word

        return cycle
    iterator = iter(rand)
    return lambda: next(iterator, 0)


def run_function(module: Module, name: str, inputs: Inputs) -> Outcome:
    """Run the DPF ``name`` of ``module`` on ``inputs`` (see the module docstring)."""
    try:
        function = module.function(name)
    except KeyError:
        raise InterpError(f"no DPF `@{name}` in module `{module.name}`") from None
    return _Run(module, function, inputs).run()
