"""Random valid IR functions and a small independent IR evaluator, for the pass tests.

:func:`random_module` builds, from one integer seed, a module with one function ``f``: an
acyclic CFG (every block reachable; edges only go forward in block order), SSA values that
respect dominance, phis with one entry per predecessor, and every memory array accessed at
most once (so the RMT rule holds on every path). The shapes are biased towards what the
passes rewrite: constants, multiplications by constants, repeated expressions, identities,
constant branches, diamonds with phis, selects on compares, unused loads.

:func:`evaluate_function` runs a function on :class:`Inputs` (the semantics of
docs/language.md, written here independently of ``dpfc.ir.interp``); :func:`check_ssa`
checks the structural invariants the passes must keep.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from dpfc.ir.cfg import immediate_dominators, predecessors
from dpfc.ir.core import (
    COMPARE_OPS,
    WORD_MASK,
    ArrayDecl,
    Block,
    Br,
    Exit,
    Function,
    Instr,
    Jump,
    Module,
    Op,
    Ty,
)
from dpfc.isa.semantics import hash_word, to_signed
from dpfc.passes.rewrite import terminator_values
from dpfc.target.profile import BUILTIN_PROFILES

PROFILE = BUILTIN_PROFILES["tofino1"]
META_NAMES = tuple(m.name for m in PROFILE.metadata)
ARRAYS = tuple(f"a{i}" for i in range(6))
ARRAY_SIZE = 8
INTERESTING = (0, 1, 2, 3, 5, 7, 10, 31, 32, 255, 0x8000_0000, 0x7FFF_FFFF, WORD_MASK)
WORD_BINARY = (Op.ADD, Op.SUB, Op.AND, Op.OR, Op.XOR, Op.SHL, Op.SHR, Op.MIN, Op.MAX)
FETCHES = (Op.FETCH_ADD, Op.FETCH_AND, Op.FETCH_OR, Op.FETCH_MAX, Op.FETCH_MIN)
STEERS = ("pass", "drop", "return_to_sender", "forward", "multicast")
PARAMS = 2


# ---------------------------------------------------------------------------- generator


class _Builder:
    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.arrays = list(ARRAYS)
        self.pools: dict[Ty, list[Instr]] = {Ty.WORD: [], Ty.BOOL: []}
        rng.shuffle(self.arrays)

    def const(self, out: list[Instr], ty: Ty = Ty.WORD) -> Instr:
        rng = self.rng
        if ty is Ty.BOOL:
            value = rng.randint(0, 1)
        else:
            value = rng.choice(INTERESTING) if rng.random() < 0.8 else rng.getrandbits(32)
        instr = Instr(Op.CONST, [], ty, imm=value)
        out.append(instr)
        self.pools[ty].append(instr)
        return instr

    def pick(self, pool: list[Instr], out: list[Instr], ty: Ty) -> Instr:
        if not pool or self.rng.random() < 0.15:
            return self.const(out, ty)
        # Recent values are likelier: chains of dependent ops exercise the folds.
        rng = self.rng
        return pool[max(0, len(pool) - 1 - int(rng.expovariate(0.4)))]

    def instr(self, words: list[Instr], bools: list[Instr], out: list[Instr]) -> None:
        rng = self.rng
        kind = rng.choices(
            ["const", "input", "binary", "mul", "same", "neg", "compare", "bool", "select",
             "zext", "hash", "memory"],
            [2, 2, 6, 2, 2, 1, 3, 1, 3, 1, 1, 2],
        )[0]  # fmt: skip
        new: Instr
        if kind == "const":
            self.const(out, rng.choice([Ty.WORD, Ty.BOOL]))
            return
        if kind == "input":
            choice = rng.randrange(4)
            if choice == 0:
                new = Instr(Op.PARAM, [], imm=rng.randrange(PARAMS))
            elif choice == 1:
                new = Instr(Op.PEEK)
            elif choice == 2:
                new = Instr(Op.RAND)
            else:
                new = Instr(Op.META, [], symbol=rng.choice(META_NAMES))
        elif kind in ("binary", "same"):
            op = rng.choice(WORD_BINARY)
            a = self.pick(words, out, Ty.WORD)
            if kind == "same":
                # an identity / absorbing constant, or the same operand twice
                b = a if rng.random() < 0.4 else self.const(out)
            else:
                b = self.pick(words, out, Ty.WORD)
            new = Instr(op, [a, b] if rng.random() < 0.7 else [b, a])
        elif kind == "mul":
            a = self.pick(words, out, Ty.WORD)
            c = self.const(out)
            new = Instr(Op.MUL, [a, c] if rng.random() < 0.7 else [c, a])
        elif kind == "neg":
            new = Instr(Op.NEG, [self.pick(words, out, Ty.WORD)])
        elif kind == "compare":
            op = rng.choice(sorted(COMPARE_OPS, key=lambda o: o.value))
            new = Instr(
                op, [self.pick(words, out, Ty.WORD), self.pick(words, out, Ty.WORD)], Ty.BOOL
            )
        elif kind == "bool":
            op = rng.choice([Op.AND, Op.OR, Op.XOR])
            new = Instr(
                op, [self.pick(bools, out, Ty.BOOL), self.pick(bools, out, Ty.BOOL)], Ty.BOOL
            )
        elif kind == "select":
            ty = Ty.BOOL if rng.random() < 0.2 else Ty.WORD
            pool = bools if ty is Ty.BOOL else words
            cond = self.pick(bools, out, Ty.BOOL)
            if ty is Ty.WORD and cond.op in (Op.ULT, Op.ULE, Op.UGT, Op.UGE) and rng.random() < 0.6:
                x, y = cond.args
                args = [cond, x, y] if rng.random() < 0.5 else [cond, y, x]
            else:
                args = [cond, self.pick(pool, out, ty), self.pick(pool, out, ty)]
            new = Instr(Op.SELECT, args, ty)
        elif kind == "zext":
            new = Instr(Op.ZEXT, [self.pick(bools, out, Ty.BOOL)])
        elif kind == "hash":
            new = Instr(Op.HASH, [self.pick(words, out, Ty.WORD)], imm=rng.randrange(4))
        else:
            if not self.arrays:
                return
            array = self.arrays.pop()
            index = self.const(out) if rng.random() < 0.3 else self.pick(words, out, Ty.WORD)
            if index.op is Op.CONST and rng.random() < 0.8:
                index.imm = rng.randrange(ARRAY_SIZE + 2)
            choice = rng.randrange(3)
            if choice == 0:
                new = Instr(Op.LOAD, [index], symbol=array)
            elif choice == 1:
                new = Instr(Op.STORE, [index, self.pick(words, out, Ty.WORD)], None, symbol=array)
            else:
                op = rng.choice(FETCHES)
                new = Instr(op, [index, self.pick(words, out, Ty.WORD)], symbol=array)
        out.append(new)
        if new.ty is Ty.WORD:
            words.append(new)
        elif new.ty is Ty.BOOL:
            bools.append(new)


# Diamonds and triangles (if-conversion's shapes), nested and in sequence.
SHAPES: tuple[list[list[int]], ...] = (
    [[1, 2], [3], [3], []],
    [[1, 2], [2], []],
    [[1, 3], [2, 3], [3], []],
    [[1, 2], [3], [3], [4, 5], [6], [6], []],
    [[1, 4], [2, 3], [4], [4], []],
    [[1, 2], [3], [3], [4, 5], [], []],
)


def _random_shape(rng: random.Random) -> list[list[int]]:
    count = rng.choice([1, 2, 3, 4, 4, 5, 6, 7])
    succs: list[list[int]] = []
    for i in range(count):
        later = list(range(i + 1, count))
        kind = rng.random() if later else 1.0
        if kind < 0.5:
            pair = sorted({rng.choice(later), rng.choice(later)})
            succs.append(pair if len(pair) == 2 else pair * 2)
        elif kind < 0.8:
            succs.append([rng.choice(later)])
        else:
            succs.append([])
    return succs


def random_module(seed: int) -> Module:
    """A module with arrays ``a0..a5`` and one random function ``f`` (see the module doc)."""
    rng = random.Random(seed)
    builder = _Builder(rng)
    succs = rng.choice(SHAPES) if rng.random() < 0.35 else _random_shape(rng)
    count = len(succs)
    labels = ["entry", *(f"b{i}" for i in range(1, count))]
    live = {0}
    for i in range(count):  # edges go forward: one sweep finds every reachable block
        if i in live:
            live.update(succs[i])
    keep = sorted(live)
    labels = [labels[i] for i in keep]
    succs = [[keep.index(t) for t in succs[i]] for i in keep]
    blocks = [Block(label) for label in labels]
    function = Function("f", PARAMS, blocks)
    for i, block in enumerate(blocks):  # placeholder terminators, fixed below
        s = succs[i]
        if len(s) == 2:
            block.term = Br(Instr(Op.CONST, [], Ty.BOOL, imm=0), labels[s[0]], labels[s[1]])
        elif len(s) == 1:
            block.term = Jump(labels[s[0]])
    idom = immediate_dominators(function)
    preds = predecessors(function)
    avail: dict[str, tuple[list[Instr], list[Instr]]] = {}
    for block in blocks:
        if block.label == "entry":
            words: list[Instr] = []
            bools: list[Instr] = []
        else:
            words, bools = (list(p) for p in avail[idom[block.label]])
        builder.pools = {Ty.WORD: words, Ty.BOOL: bools}
        out: list[Instr] = []
        phi_preds = preds[block.label]
        if phi_preds and rng.random() < 0.7:
            for _ in range(rng.randint(1, 2)):
                ty = Ty.BOOL if rng.random() < 0.2 else Ty.WORD
                args = []
                for pred in phi_preds:
                    pool = avail[pred][1 if ty is Ty.BOOL else 0]
                    args.append(rng.choice(pool) if pool and rng.random() < 0.8 else None)
                if any(a is None for a in args):
                    continue  # a phi needs values from every predecessor
                phi = Instr(Op.PHI, [a for a in args if a is not None], ty, incoming=phi_preds)
                phi.incoming = list(phi_preds)
                out.append(phi)
                (bools if ty is Ty.BOOL else words).append(phi)
        body: list[Instr] = []
        if block.label == "entry":  # unknown inputs, so that not everything folds away
            for index in range(rng.randint(1, PARAMS)):
                body.append(Instr(Op.PARAM, [], imm=index))
                words.append(body[-1])
        for _ in range(rng.choice([0, 1, 1, 2, 3, 4, 6])):
            builder.instr(words, bools, body)
        if isinstance(block.term, Br):
            if rng.random() < 0.1:
                cond = builder.const(body, Ty.BOOL)
            else:
                cond = builder.pick(bools, body, Ty.BOOL)
                if cond.op is Op.CONST and rng.random() < 0.8:
                    x, y = builder.pick(words, body, Ty.WORD), builder.pick(words, body, Ty.WORD)
                    cond = Instr(rng.choice([Op.ULT, Op.UGT, Op.EQ]), [x, y], Ty.BOOL)
                    body.append(cond)
            block.term.cond = cond
        elif isinstance(block.term, Exit):
            pushes = [builder.pick(words, body, Ty.WORD) for _ in range(rng.randint(0, 3))]
            steer = rng.choice(STEERS)
            value = (
                builder.pick(words, body, Ty.WORD) if steer in ("forward", "multicast") else None
            )
            chain = "other" if rng.random() < 0.2 else None
            block.term = Exit(pushes, steer, value, chain, rng.random() < 0.2)
        block.instrs = out + body
        avail[block.label] = (words, bools)
    arrays = {name: ArrayDecl(name, "segment", ARRAY_SIZE) for name in ARRAYS}
    return Module("gen", None, arrays, [function])


# ---------------------------------------------------------------------------- evaluator


@dataclass
class Inputs:
    stack: list[int]
    memory: dict[str, list[int]]
    meta: dict[str, int]
    rand: list[int]


@dataclass
class Outcome:
    stack: list[int]
    steer: str
    steer_value: int | None
    chain: str | None
    drop_code: bool
    memory: dict[str, list[int]]
    rand_draws: int
    path: list[str] = field(default_factory=list, compare=False)


def random_inputs(rng: random.Random) -> Inputs:
    def word() -> int:
        return rng.choice(INTERESTING) if rng.random() < 0.5 else rng.getrandbits(32)

    return Inputs(
        stack=[word() for _ in range(rng.randint(0, PARAMS + 2))],
        memory={a: [word() for _ in range(ARRAY_SIZE)] for a in ARRAYS},
        meta={m: word() for m in META_NAMES},
        rand=[word() for _ in range(8)],
    )


def _compare(op: Op, a: int, b: int) -> bool:
    sa, sb = to_signed(a), to_signed(b)
    table = {
        Op.EQ: a == b,
        Op.NE: a != b,
        Op.ULT: a < b,
        Op.ULE: a <= b,
        Op.UGT: a > b,
        Op.UGE: a >= b,
        Op.SLT: sa < sb,
        Op.SLE: sa <= sb,
        Op.SGT: sa > sb,
        Op.SGE: sa >= sb,
        Op.TEST: (a & b) != 0,
    }
    return table[op]


def _binary(op: Op, a: int, b: int) -> int:
    table = {
        Op.ADD: a + b,
        Op.SUB: a - b,
        Op.AND: a & b,
        Op.OR: a | b,
        Op.XOR: a ^ b,
        Op.SHL: a << (b & 31),
        Op.SHR: a >> (b & 31),
        Op.MIN: min(a, b),
        Op.MAX: max(a, b),
        Op.MUL: a * b,
    }
    return table[op] & WORD_MASK


def evaluate_function(module: Module, name: str, inputs: Inputs) -> Outcome:
    """Run ``name`` on ``inputs`` (out-of-bounds indexes read 0 and write nothing)."""
    function = module.function(name)
    stack = inputs.stack
    memory = {k: list(v) for k, v in inputs.memory.items()}
    draws = 0
    values: dict[int, int] = {}
    block = function.blocks[0]
    previous: str | None = None
    path = []
    while True:
        path.append(block.label)
        phis = [i for i in block.instrs if i.op is Op.PHI]
        incoming = {id(p): values[id(p.args[p.incoming.index(previous)])] for p in phis if previous}
        values.update(incoming)
        for instr in block.instrs:
            if instr.op is Op.PHI:
                continue
            args = [values[id(a)] for a in instr.args]
            op = instr.op
            result: int | None
            if op is Op.CONST:
                result = instr.imm
            elif op is Op.PARAM:
                assert instr.imm is not None
                result = stack[instr.imm] if instr.imm < len(stack) else 0
            elif op is Op.PEEK:
                result = stack[function.params] if function.params < len(stack) else 0
            elif op is Op.RAND:
                result = inputs.rand[draws % len(inputs.rand)]
                draws += 1
            elif op is Op.META:
                assert instr.symbol is not None
                result = inputs.meta[instr.symbol]
            elif op in COMPARE_OPS:
                result = int(_compare(op, args[0], args[1]))
            elif op is Op.NEG:
                result = -args[0] & WORD_MASK
            elif op is Op.SELECT:
                result = args[1] if args[0] else args[2]
            elif op is Op.ZEXT:
                result = args[0]
            elif op is Op.HASH:
                assert instr.imm is not None
                result = hash_word(PROFILE.hash_for_lane(instr.imm), args[0])
            elif op in (Op.AND, Op.OR, Op.XOR) and instr.ty is Ty.BOOL:
                result = _binary(op, args[0], args[1]) & 1
            elif op in (Op.LOAD, Op.STORE, *FETCHES):
                assert instr.symbol is not None
                cells = memory[instr.symbol]
                index = args[0]
                old = cells[index] if index < len(cells) else 0
                result = None if op is Op.STORE else old
                if op is not Op.LOAD and index < len(cells):
                    data = args[1]
                    new = {
                        Op.STORE: data,
                        Op.FETCH_ADD: (old + data) & WORD_MASK,
                        Op.FETCH_AND: old & data,
                        Op.FETCH_OR: old | data,
                        Op.FETCH_MAX: max(old, data),
                        Op.FETCH_MIN: min(old, data),
                    }[op]
                    cells[index] = new
            else:
                result = _binary(op, args[0], args[1])
            if result is not None:
                values[id(instr)] = result
        term = block.term
        previous = block.label
        if isinstance(term, Br):
            block = function.block(term.then if values[id(term.cond)] else term.orelse)
        elif isinstance(term, Jump):
            block = function.block(term.target)
        else:
            pushed = [values[id(v)] for v in term.push]
            rest = stack[function.params :]
            steer_value = None if term.steer_value is None else values[id(term.steer_value)]
            return Outcome(
                pushed + rest, term.steer, steer_value, term.chain, term.drop_code, memory,
                draws, path,
            )  # fmt: skip


# ---------------------------------------------------------------------------- checker


def _type_problems(instr: Instr) -> list[str]:
    op = instr.op
    types = [a.ty for a in instr.args]
    expected: list[Ty | None]
    if op is Op.ZEXT:
        expected = [Ty.BOOL]
    elif op is Op.SELECT:
        expected = [Ty.BOOL, instr.ty, instr.ty]
    elif op is Op.PHI or op in (Op.AND, Op.OR, Op.XOR):
        expected = [instr.ty] * len(types)
    else:
        expected = [Ty.WORD] * len(types)
    if types != expected:
        return [f"{op.value} has operands {types}, expected {expected}"]
    return []


def check_ssa(function: Function) -> list[str]:
    """Structural problems: dominance of every use, phi entries == predecessors, labels."""
    problems: list[str] = []
    labels = [b.label for b in function.blocks]
    if len(set(labels)) != len(labels):
        problems.append("duplicate labels")
    for block in function.blocks:
        for successor in block.successors():
            if successor not in labels:
                problems.append(f"{block.label} jumps to unknown {successor}")
    if problems:
        return problems
    idom = immediate_dominators(function)
    preds = predecessors(function)
    where: dict[int, tuple[str, int]] = {}
    for block in function.blocks:
        for index, instr in enumerate(block.instrs):
            where[id(instr)] = (block.label, index)

    def dominates(a: str, b: str) -> bool:
        while True:
            if a == b:
                return True
            if idom.get(b, b) == b:
                return False
            b = idom[b]

    def available(value: Instr, label: str, index: int) -> bool:
        if id(value) not in where:
            return False
        vlabel, vindex = where[id(value)]
        if vlabel == label:
            return vindex < index
        return dominates(vlabel, label)

    for instr in function.instrs():
        problems.extend(_type_problems(instr))
    for block in function.blocks:
        term = block.term
        if isinstance(term, Br) and term.cond.ty is not Ty.BOOL:
            problems.append(f"branch of {block.label} on a word")
        if isinstance(term, Exit) and any(v.ty is not Ty.WORD for v in terminator_values(term)):
            problems.append(f"exit of {block.label} pushes a bool")
        if block.label not in idom:
            problems.append(f"{block.label} is unreachable")
            continue
        seen_body = False
        for index, instr in enumerate(block.instrs):
            if instr.op is Op.PHI:
                if seen_body:
                    problems.append(f"phi after a non-phi in {block.label}")
                if sorted(instr.incoming) != sorted(preds[block.label]):
                    problems.append(f"phi in {block.label}: {instr.incoming} != preds")
                for value, pred in zip(instr.args, instr.incoming, strict=True):
                    if pred in idom and not available(value, pred, 1 << 30):
                        problems.append(f"phi operand in {block.label} not available from {pred}")
                continue
            seen_body = True
            for value in instr.args:
                if not available(value, block.label, index):
                    problems.append(f"{instr.op.value} in {block.label} uses an unavailable value")
        for value in terminator_values(block.term):
            if not available(value, block.label, 1 << 30):
                problems.append(f"terminator of {block.label} uses an unavailable value")
    return problems
