"""A DPF's IR run symbolically, path by path: the other side of translation validation.

Contract: :func:`ir_paths` runs the function ``name`` of an IR module on the inputs of
:mod:`.machine` (the same variables of one :class:`~.bitvec.Words` context), by
docs/ir.md's op table, written apart from the IR interpreter: ``param k`` and ``peek``
read ``stack<k>`` and ``stack<params>``; ``meta f`` reads ``md<index of f>``; the k-th
``rand`` of the function (blocks, then instructions) reads the variable ``rands[k]`` names
(the schedule's draw of that operation, :func:`rand_names`); ``hash k`` is lane k's CRC;
an array's words are the memory of the (EU, lane) ``bindings`` give it (an array the
schedule left unbound, which the compiled code never accesses, a memory of its own), mapped
below its size (an index at or beyond it reads 0 and writes nothing). Words are 32-bit terms, bools
1-bit terms. Each :class:`IRPath` has its condition and the exit's outgoing stack (the
pushes, then ``stack[params:]``), steering, steering value, chain, ``drop_code`` and the
memories after it.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

from dpfc.ir import Block, Br, Exit, Function, Instr, Jump, Module, Op, Ty
from dpfc.isa import MemOp
from dpfc.target import TargetProfile

from .bitvec import Term, Words
from .semantics import hash_word, memory

FETCHES = {
    Op.FETCH_ADD: MemOp.FAADD,
    Op.FETCH_AND: MemOp.FAAND,
    Op.FETCH_OR: MemOp.FAOR,
    Op.FETCH_MAX: MemOp.FAMAX,
    Op.FETCH_MIN: MemOp.FAMIN,
    Op.LOAD: MemOp.LOAD,
    Op.STORE: MemOp.STORE,
}


UNBOUND = -1  # the EU of an array no binding places: (UNBOUND, its index among the arrays)


def memory_name(where: tuple[int, int]) -> str:
    """The memory variable of (EU, lane), as :mod:`.machine` names it (or of an array the
    schedule did not bind)."""
    eu, lane = where
    return f"mem_unbound{lane}" if eu == UNBOUND else f"mem{eu}_{lane}"


@dataclass(frozen=True)
class IRPath:
    condition: Term
    blocks: tuple[str, ...]
    stack: tuple[Term, ...]
    steer: str
    steer_value: Term | None
    chain: str | None
    drop_code: bool
    memories: dict[tuple[int, int], Term]


def rand_names(function: Function, order: Sequence[int]) -> list[str]:
    """The variable of each ``rand`` of ``function`` (in function order): ``rand<j>`` when
    the prolog's j-th draw holds it (``order[j]``: the schedule's ``rand_order``), else a
    variable of its own."""
    count = sum(i.op is Op.RAND for i in function.instrs())
    names = [f"ir_rand{k}" for k in range(count)]
    for j, k in enumerate(order):
        if 0 <= k < count:
            names[k] = f"rand{j}"
    return names


class _IRRun:
    def __init__(
        self,
        w: Words,
        module: Module,
        function: Function,
        profile: TargetProfile,
        bindings: Mapping[str, tuple[int, int]],
        rands: Sequence[str],
    ) -> None:
        self.w, self.module, self.function, self.profile = w, module, function, profile
        self.bindings, self.rands = bindings, rands
        self.blocks = {b.label: b for b in function.blocks}
        self.rand_index = {
            id(i): k for k, i in enumerate(i for i in function.instrs() if i.op is Op.RAND)
        }

    def paths(self) -> Iterator[IRPath]:
        yield from self._block(self.function.blocks[0], None, {}, [], [], {})

    def _block(
        self,
        block: Block,
        previous: str | None,
        values: dict[int, Term],
        conditions: list[Term],
        labels: list[str],
        memories: dict[tuple[int, int], Term],
    ) -> Iterator[IRPath]:
        values, memories = dict(values), dict(memories)
        labels = [*labels, block.label]
        phis = [
            (i, i.args[i.incoming.index(previous or "")]) for i in block.instrs if i.op is Op.PHI
        ]
        chosen = [(phi, values[id(arg)]) for phi, arg in phis]
        for phi, word in chosen:
            values[id(phi)] = word
        for instr in block.instrs:
            if instr.op is not Op.PHI:
                result = self._execute(instr, values, memories)
                if result is not None:
                    values[id(instr)] = result
        term = block.term
        if isinstance(term, Exit):
            yield self._exit(term, values, conditions, labels, memories)
        elif isinstance(term, Jump):
            yield from self._block(
                self.blocks[term.target], block.label, values, conditions, labels, memories
            )
        elif isinstance(term, Br):
            taken = values[id(term.cond)].eq(self.w.const(1, 1))
            for condition, target in ((taken, term.then), (taken.lnot(), term.orelse)):
                yield from self._block(
                    self.blocks[target],
                    block.label,
                    values,
                    [*conditions, condition],
                    labels,
                    memories,
                )

    def _execute(
        self, instr: Instr, values: dict[int, Term], memories: dict[tuple[int, int], Term]
    ) -> Term | None:
        w, op = self.w, instr.op
        args = [values[id(a)] for a in instr.args]
        if op is Op.CONST:
            return w.const(instr.imm or 0, 1 if instr.ty is Ty.BOOL else 32)
        if op is Op.PARAM:
            return w.var(f"stack{instr.imm}")
        if op is Op.PEEK:
            return w.var(f"stack{self.function.params}")
        if op is Op.RAND:
            return w.var(self.rands[self.rand_index[id(instr)]])
        if op is Op.META:
            field = self.profile.metadata_by_name(instr.symbol or "")
            return w.var(f"md{field.index}") if field is not None else w.const(0)
        if op is Op.HASH:
            return hash_word(w, self.profile.hash_for_lane(instr.imm or 0), args[0])
        if op in FETCHES:
            return self._access(instr, args, memories)
        return self._pure(op, args)

    def _pure(self, op: Op, args: list[Term]) -> Term:
        w = self.w
        one, zero = w.const(1, 1), w.const(0, 1)

        def flag(condition: Term) -> Term:
            return w.ite(condition, one, zero)

        a = args[0]
        b = args[1] if len(args) > 1 else a
        amount = b & w.const(31) if b.width == 32 else b
        table = {
            Op.ADD: lambda: a + b,
            Op.SUB: lambda: a - b,
            Op.AND: lambda: a & b,
            Op.OR: lambda: a | b,
            Op.XOR: lambda: a ^ b,
            Op.SHL: lambda: a.shl(amount),
            Op.SHR: lambda: a.lshr(amount),
            Op.NEG: lambda: -a,
            Op.MIN: lambda: w.ite(a.ult(b), a, b),
            Op.MAX: lambda: w.ite(a.ugt(b), a, b),
            Op.MUL: lambda: a * b,
            Op.EQ: lambda: flag(a.eq(b)),
            Op.NE: lambda: flag(a.ne(b)),
            Op.ULT: lambda: flag(a.ult(b)),
            Op.ULE: lambda: flag(a.ule(b)),
            Op.UGT: lambda: flag(a.ugt(b)),
            Op.UGE: lambda: flag(b.ule(a)),
            Op.SLT: lambda: flag(a.slt(b)),
            Op.SLE: lambda: flag(b.sgt(a).lnot()),
            Op.SGT: lambda: flag(a.sgt(b)),
            Op.SGE: lambda: flag(a.slt(b).lnot()),
            Op.TEST: lambda: flag((a & b).ne(w.const(0))),
            Op.SELECT: lambda: w.ite(a.eq(one), b, args[2]),
            Op.ZEXT: lambda: a.zext(32),
        }
        return table[op]()

    def _access(
        self, instr: Instr, args: list[Term], memories: dict[tuple[int, int], Term]
    ) -> Term | None:
        w = self.w
        decl = self.module.arrays[instr.symbol or ""]
        where = self.bindings.get(decl.name)
        if where is None:  # an array the compiled code never accesses: a memory of its own
            where = (UNBOUND, sorted(self.module.arrays).index(decl.name))
        array = memories.get(where, w.memory(memory_name(where)))
        index = args[0]
        mapped = index.ult(w.const(decl.size))
        data = args[1] if len(args) > 1 else w.const(0)
        op = FETCHES[instr.op]
        new, old = memory(w, op, w.select(array, index), data)
        if op is not MemOp.LOAD:
            memories[where] = w.ite(mapped, w.store(array, index, new), array)
        if old is None:
            return None
        return w.ite(mapped, old, w.const(0))

    def _exit(
        self,
        term: Exit,
        values: dict[int, Term],
        conditions: list[Term],
        labels: list[str],
        memories: dict[tuple[int, int], Term],
    ) -> IRPath:
        w = self.w
        pushed = [values[id(v)] for v in term.push]
        depth = self.function.params + any(i.op is Op.PEEK for i in self.function.instrs())
        rest = [w.var(f"stack{j}") for j in range(self.function.params, depth)]
        value = values[id(term.steer_value)] if term.steer_value is not None else None
        return IRPath(
            w.all_of(conditions),
            tuple(labels),
            tuple(pushed + rest),
            term.steer,
            value,
            term.chain,
            term.drop_code,
            memories,
        )


def ir_paths(
    w: Words,
    module: Module,
    name: str,
    profile: TargetProfile,
    bindings: Mapping[str, tuple[int, int]],
    rands: Sequence[str],
) -> list[IRPath]:
    """Every path of the function ``name`` (module docstring)."""
    return list(_IRRun(w, module, module.function(name), profile, bindings, rands).paths())


__all__ = ["UNBOUND", "IRPath", "ir_paths", "memory_name", "rand_names"]
