"""Hypothesis strategies for random *valid* IR modules and for interpreter inputs.

:func:`ir_modules` draws a module with a few arrays and one function ``f`` built from a
sequence of regions, each appended to the current block:

* ``straight``: a few random instructions;
* ``diamond``: ``br c, T, E``; both arms compute, then a join block opens with phis
  ``[value from T, T], [value from E, E]``;
* ``triangle``: ``br c, T, J``; the join's phis take the head's value on the skip edge;
* ``guard``: ``br c, X, C`` (either order): ``X`` ends in its own ``exit``, ``C`` goes on.

Every op of :class:`~dpfc.ir.core.Op` can appear. Values are taken only from blocks that
dominate the use (the pools are copied into arms and rebuilt at joins), and the RMT rule
holds by construction: each path has its own set of arrays already accessed, so the two
arms of a diamond may touch the same array (a path-sensitive case the verifier must accept),
but nothing after the join may touch either arm's arrays again.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from hypothesis import strategies as st

from dpfc.ir.core import (
    COMPARE_OPS,
    FETCH_OPS,
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
from dpfc.ir.interp import Inputs
from dpfc.target.profile import DEFAULT_METADATA, DEFAULT_STEERING

BOUNDARY = (0, 1, 2, 31, 32, 255, 256, 0x7FFF_FFFF, 0x8000_0000, WORD_MASK)
WORD_BINARY = (Op.ADD, Op.SUB, Op.AND, Op.OR, Op.XOR, Op.SHL, Op.SHR, Op.MIN, Op.MAX, Op.MUL)
COMPARES = tuple(sorted(COMPARE_OPS, key=lambda op: op.value))
FETCHES = tuple(sorted(FETCH_OPS, key=lambda op: op.value))
META_NAMES = tuple(m.name for m in DEFAULT_METADATA)
HINTS = ("key", "x", "count", "hit_1", "value.lo")
KINDS = (
    "const",
    "bool_const",
    "param",
    "peek",
    "rand",
    "meta",
    "binary",
    "neg",
    "hash",
    "compare",
    "bool",
    "select",
    "zext",
    "memory",
)

words = st.one_of(st.sampled_from(BOUNDARY), st.integers(0, WORD_MASK))


@dataclass
class _Pools:
    """The values usable at the current point, and the arrays this path already accessed."""

    words: list[Instr] = field(default_factory=list)
    bools: list[Instr] = field(default_factory=list)
    used: set[str] = field(default_factory=set)

    def copy(self) -> _Pools:
        return _Pools(list(self.words), list(self.bools), set(self.used))

    def of(self, ty: Ty) -> list[Instr]:
        return self.bools if ty is Ty.BOOL else self.words


class _Builder:
    def __init__(self, draw: Any, arrays: list[str], params: int) -> None:
        self.draw = draw
        self.arrays = arrays
        self.params = params
        self.blocks: list[Block] = []
        self.count = 0

    def new_block(self) -> Block:
        label = "entry" if not self.blocks else f"b{self.count}"
        self.count += 1
        block = Block(label)
        self.blocks.append(block)
        return block

    def emit(self, block: Block, pools: _Pools, instr: Instr) -> Instr:
        if self.draw(st.integers(0, 5)) == 0:
            instr.hint = self.draw(st.sampled_from(HINTS))
        block.instrs.append(instr)
        if instr.ty is not None:
            pools.of(instr.ty).append(instr)
        return instr

    def const(self, block: Block, pools: _Pools, ty: Ty) -> Instr:
        value = self.draw(st.integers(0, 1)) if ty is Ty.BOOL else self.draw(words)
        return self.emit(block, pools, Instr(Op.CONST, [], ty, imm=value))

    def pick(self, block: Block, pools: _Pools, ty: Ty) -> Instr:
        pool = pools.of(ty)
        if not pool or self.draw(st.integers(0, 6)) == 0:
            return self.const(block, pools, ty)
        picked: Instr = self.draw(st.sampled_from(pool))
        return picked

    def instr(self, block: Block, pools: _Pools) -> None:
        draw = self.draw
        kind = draw(st.sampled_from(KINDS))
        word, boolean = Ty.WORD, Ty.BOOL
        new: Instr
        if kind == "const":
            self.const(block, pools, word)
            return
        if kind == "bool_const":
            self.const(block, pools, boolean)
            return
        if kind == "param":
            if not self.params:
                return
            new = Instr(Op.PARAM, [], imm=draw(st.integers(0, self.params - 1)))
        elif kind == "peek":
            new = Instr(Op.PEEK)
        elif kind == "rand":
            new = Instr(Op.RAND)
        elif kind == "meta":
            new = Instr(Op.META, symbol=draw(st.sampled_from(META_NAMES)))
        elif kind == "binary":
            op = draw(st.sampled_from(WORD_BINARY))
            new = Instr(op, [self.pick(block, pools, word), self.pick(block, pools, word)])
        elif kind == "neg":
            new = Instr(Op.NEG, [self.pick(block, pools, word)])
        elif kind == "hash":
            new = Instr(Op.HASH, [self.pick(block, pools, word)], imm=draw(st.integers(0, 3)))
        elif kind == "compare":
            op = draw(st.sampled_from(COMPARES))
            args = [self.pick(block, pools, word), self.pick(block, pools, word)]
            new = Instr(op, args, boolean)
        elif kind == "bool":
            op = draw(st.sampled_from((Op.AND, Op.OR, Op.XOR)))
            ty = draw(st.sampled_from((word, boolean)))
            new = Instr(op, [self.pick(block, pools, ty), self.pick(block, pools, ty)], ty)
        elif kind == "select":
            ty = draw(st.sampled_from((word, boolean)))
            cond = self.pick(block, pools, boolean)
            args = [cond, self.pick(block, pools, ty), self.pick(block, pools, ty)]
            new = Instr(Op.SELECT, args, ty)
        elif kind == "zext":
            new = Instr(Op.ZEXT, [self.pick(block, pools, boolean)])
        else:
            free = [a for a in self.arrays if a not in pools.used]
            if not free:
                return
            array = draw(st.sampled_from(free))
            pools.used.add(array)
            index = self.pick(block, pools, word)
            op = draw(st.sampled_from((Op.LOAD, Op.STORE, *FETCHES)))
            if op is Op.LOAD:
                new = Instr(op, [index], symbol=array)
            else:
                value = self.pick(block, pools, word)
                new = Instr(op, [index, value], None if op is Op.STORE else word, symbol=array)
        self.emit(block, pools, new)

    def straight(self, block: Block, pools: _Pools) -> None:
        for _ in range(self.draw(st.integers(0, 5))):
            self.instr(block, pools)

    def exit(self, block: Block, pools: _Pools) -> None:
        draw = self.draw
        pushes = [self.pick(block, pools, Ty.WORD) for _ in range(draw(st.integers(0, 3)))]
        action = draw(st.sampled_from(DEFAULT_STEERING))
        value = self.pick(block, pools, Ty.WORD) if action.takes_value else None
        chain = draw(st.sampled_from((None, None, "other", "lib.next")))
        block.term = Exit(pushes, action.name, value, chain, draw(st.booleans()))

    def branch(self, head: Block, pools: _Pools, then: str, orelse: str) -> None:
        cond = self.pick(head, pools, Ty.BOOL)
        head.term = Br(cond, then, orelse)

    def join(self, join: Block, arms: list[tuple[Block, _Pools]], before: _Pools) -> _Pools:
        """Open ``join`` with phis over ``arms``; the pools after it: ``before`` + phis."""
        after = before.copy()
        for _, arm_pools in arms:
            after.used |= arm_pools.used
        for _ in range(self.draw(st.integers(0, 2))):
            ty = self.draw(st.sampled_from((Ty.WORD, Ty.WORD, Ty.BOOL)))
            if not all(pools.of(ty) for _, pools in arms):
                continue
            args = [self.draw(st.sampled_from(pools.of(ty))) for _, pools in arms]
            phi = Instr(Op.PHI, args, ty, incoming=[block.label for block, _ in arms])
            join.instrs.append(phi)
            after.of(ty).append(phi)
        return after

    def region(self, block: Block, pools: _Pools) -> tuple[Block, _Pools]:
        kind = self.draw(st.sampled_from(("straight", "diamond", "triangle", "guard")))
        if kind == "straight":
            self.straight(block, pools)
            return block, pools
        if kind == "guard":
            out, on = self.new_block(), self.new_block()
            swap = self.draw(st.booleans())
            self.branch(block, pools, *((on.label, out.label) if swap else (out.label, on.label)))
            out_pools = pools.copy()
            self.straight(out, out_pools)
            self.exit(out, out_pools)
            return on, pools.copy()
        then = self.new_block()
        orelse = self.new_block() if kind == "diamond" else None
        join = self.new_block()
        self.branch(block, pools, then.label, orelse.label if orelse else join.label)
        then_pools = pools.copy()
        self.straight(then, then_pools)
        then.term = Jump(join.label)
        arms = [(then, then_pools)]
        if orelse is not None:
            else_pools = pools.copy()
            self.straight(orelse, else_pools)
            orelse.term = Jump(join.label)
            arms.append((orelse, else_pools))
        else:
            arms.append((block, pools))
        return join, self.join(join, arms, pools)


@st.composite
def ir_modules(draw: Any) -> Module:
    """A module ``gen`` with arrays ``a0..a{n-1}`` and one valid function ``f``."""
    arrays: dict[str, ArrayDecl] = {}
    for i in range(draw(st.integers(0, 4))):
        name = f"a{i}"
        pin = draw(st.sampled_from((None, None, (1, 0), (3, 2))))
        mapping = draw(st.sampled_from(("segment", "direct")))
        size = draw(st.sampled_from((1, 4, 8, 300)))
        arrays[name] = ArrayDecl(name, mapping, size, pin, draw(st.booleans()))
    params = draw(st.integers(0, 3))
    builder = _Builder(draw, list(arrays), params)
    block = builder.new_block()
    pools = _Pools()
    for _ in range(draw(st.integers(0, 4))):
        block, pools = builder.region(block, pools)
    builder.straight(block, pools)
    builder.exit(block, pools)
    attrs = draw(st.sampled_from(({}, {"placement": "packet"}, {"target": "tofino1"})))
    function = Function("f", params, builder.blocks, dict(attrs))
    app_id = draw(st.sampled_from((None, 7, 0x4B5601)))
    return Module("gen", app_id, arrays, [function])


@st.composite
def ir_inputs(draw: Any, module: Module) -> Inputs:
    """Inputs for ``module``: memory as dicts or lists, some words out of the arrays' range."""
    memory: dict[str, dict[int, int] | list[int]] = {}
    for name, decl in module.arrays.items():
        if draw(st.booleans()):
            memory[name] = draw(st.lists(words, max_size=min(decl.size, 10)))
        else:
            indexes = st.one_of(st.integers(0, decl.size + 2), st.sampled_from(BOUNDARY))
            memory[name] = draw(st.dictionaries(indexes, words, max_size=4))
    meta = draw(st.dictionaries(st.sampled_from(META_NAMES), words, max_size=len(META_NAMES)))
    return Inputs(
        stack=draw(st.lists(words, max_size=6)),
        memory=memory,
        meta=meta,
        rand=draw(st.lists(words, max_size=3)),
    )
