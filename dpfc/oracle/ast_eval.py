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
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from dpfc.ir.interp import Inputs, Outcome
from dpfc.isa.semantics import hash_word, to_signed
from dpfc.syntax import ast
from dpfc.target.profile import BUILTIN_PROFILES, TargetProfile

WORD_MASK = 0xFFFF_FFFF


class EvalError(Exception):
    """The program is not one the checker accepts (the oracle assumes checked input)."""


# -- types ------------------------------------------------------------------------------------

# The evaluator only needs to know whether a value is signed: None stands for an untyped
# integer (a literal, a loop variable), which takes the type of the other operand.
_Type = ast.TypeName | None


def _join(a: _Type, b: _Type) -> _Type:
    if ast.TypeName.I32 in (a, b):
        return ast.TypeName.I32
    if ast.TypeName.U32 in (a, b):
        return ast.TypeName.U32
    if ast.TypeName.BOOL in (a, b):
        return ast.TypeName.BOOL
    return None


@dataclass
class _Value:
    word: int
    type: _Type


# -- the program: modules, and names resolved across imports ----------------------------------


@dataclass(frozen=True)
class _Memory:
    key: str  # the name in Inputs.memory / Outcome.memory
    size: int
    elem: ast.TypeName


@dataclass
class _ModuleView:
    key: str
    tree: ast.Module
    imports: dict[str, str] = field(default_factory=dict)  # local name -> module key
    consts: dict[str, ast.ConstDecl] = field(default_factory=dict)
    memories: dict[str, ast.MemoryDecl] = field(default_factory=dict)
    dpfs: dict[str, ast.DpfDecl] = field(default_factory=dict)


def _module_key(tree: ast.Module, fallback: str) -> str:
    return ".".join(tree.name) if tree.name is not None else fallback


class Program:
    """The modules of a program, by module key, with their imports resolved.

    ``imports`` maps each module key to {local name: module key}; without it an import is
    matched against the module keys by its dotted path, then by its last component. Arrays
    and DPFs are named as the IR names them: their own name in ``main``, ``m.name`` in a
    module whose key ends in ``m`` (``stdlib.countmin`` -> ``countmin.row0``).
    """

    def __init__(
        self,
        modules: Mapping[str, ast.Module],
        main: str,
        imports: Mapping[str, Mapping[str, str]] | None = None,
    ) -> None:
        self.main = main
        self.modules: dict[str, _ModuleView] = {}
        for key, tree in modules.items():
            view = _ModuleView(key, tree)
            for item in tree.items:
                if isinstance(item, ast.ConstDecl):
                    view.consts[item.name] = item
                elif isinstance(item, ast.MemoryDecl):
                    view.memories[item.name] = item
                elif isinstance(item, ast.DpfDecl):
                    view.dpfs[item.name] = item
            self.modules[key] = view
        for view in self.modules.values():
            if imports is not None and view.key in imports:
                view.imports = dict(imports[view.key])
                continue
            for item in view.tree.items:
                if isinstance(item, ast.Import):
                    view.imports[item.local_name] = self._find_module(item.path)

    def _find_module(self, path: tuple[str, ...]) -> str:
        dotted = ".".join(path)
        if dotted in self.modules:
            return dotted
        matches = [k for k in self.modules if k.split(".")[-1] == path[-1]]
        if len(matches) == 1:
            return matches[0]
        raise EvalError(f"module `{dotted}` is not loaded")

    def module(self, key: str) -> _ModuleView:
        return self.modules[key]

    def ir_name(self, module: str, name: str) -> str:
        return name if module == self.main else f"{module.split('.')[-1]}.{name}"

    def lookup(self, module: str, parts: tuple[str, ...]) -> tuple[str, str]:
        """(module key, item name) of a possibly qualified name seen in ``module``."""
        if len(parts) == 1:
            return module, parts[0]
        head = ".".join(parts[:-1])
        imported = self.modules[module].imports.get(head)
        if imported is None:
            raise EvalError(f"unknown module `{head}`")
        return imported, parts[-1]


def program_from(program: Any) -> Program:
    """A :class:`Program` from the checker's result (``dpfc.sema.CheckedProgram``), its
    loaded program (``dpfc.sema.Program``), a {key: tree} mapping or a single tree.

    Only the trees and what each import names are taken from the checker.
    """
    if isinstance(program, Program):
        return program
    if isinstance(program, ast.Module):
        key = _module_key(program, "main")
        return Program({key: program}, key)
    loaded = getattr(program, "program", program)  # CheckedProgram -> its loaded Program
    modules = getattr(loaded, "modules", None)
    if isinstance(modules, Mapping) and isinstance(getattr(loaded, "main", None), str):
        trees = {str(k): m.tree for k, m in modules.items()}
        imports = {str(k): dict(m.imports) for k, m in modules.items()}
        return Program(trees, loaded.main, imports)
    if isinstance(program, Mapping):
        trees = {str(k): v for k, v in program.items()}
        return Program(trees, next(iter(trees)))
    raise EvalError(f"not a program: {program!r}")


# -- the evaluator ----------------------------------------------------------------------------


class _Return(Exception):
    """``return;``: leave the DPF body for the epilog."""


@dataclass
class _State:
    stack: list[int]
    nparams: int
    memory: dict[str, dict[int, int]]  # array -> {index: word}; absent words are 0
    meta: Mapping[str, int]
    rand: Iterator[int]
    pushed: list[int] = field(default_factory=list)
    steer: str = "pass"
    steer_value: int | None = None
    chain: str | None = None
    drop_code: bool = False
    rand_draws: int = 0


class _Evaluator:
    def __init__(self, program: Program, profile: TargetProfile) -> None:
        self.program = program
        self.profile = profile
        self.const_cache: dict[tuple[str, str], _Value] = {}
        self.const_busy: set[tuple[str, str]] = set()

    # -- names ------------------------------------------------------------------------------

    def const(self, module: str, name: str) -> _Value:
        key = (module, name)
        cached = self.const_cache.get(key)
        if cached is not None:
            return cached
        if key in self.const_busy:
            raise EvalError(f"constant `{name}` depends on itself")
        decl = self.program.module(module).consts.get(name)
        if decl is None:
            raise EvalError(f"unknown name `{name}` in module `{module}`")
        self.const_busy.add(key)
        value = _Frame(self, module, None).expr(decl.value)
        self.const_busy.discard(key)
        declared = decl.type.name if decl.type is not None else None
        result = _Value(value.word, declared or value.type or ast.TypeName.U32)
        self.const_cache[key] = result
        return result

    def memory(self, module: str, array: ast.Name) -> _Memory:
        owner, name = self.program.lookup(module, array.parts)
        decl = self.program.module(owner).memories.get(name)
        if decl is None:
            raise EvalError(f"`{array.text}` is not an array")
        size = _Frame(self, owner, None).expr(decl.size).word
        return _Memory(self.program.ir_name(owner, name), size, decl.elem_type.name)

    def const_int(self, module: str, expr: ast.Expr) -> int:
        return _Frame(self, module, None).expr(expr).word


class _Frame:
    """One DPF body being run (or, with ``state`` None, a constant expression)."""

    def __init__(self, ev: _Evaluator, module: str, state: _State | None) -> None:
        self.ev = ev
        self.module = module
        self.state = state
        self.scopes: list[dict[str, _Value]] = [{}]

    def need_state(self) -> _State:
        if self.state is None:
            raise EvalError("not a constant expression")
        return self.state

    # -- locals -----------------------------------------------------------------------------

    def local(self, name: str) -> _Value | None:
        for scope in reversed(self.scopes):
            if name in scope:
                return scope[name]
        return None

    def assign(self, name: str, value: _Value) -> None:
        for scope in reversed(self.scopes):
            if name in scope:
                scope[name] = _Value(value.word, scope[name].type)
                return
        raise EvalError(f"assignment to unknown local `{name}`")

    # -- statements -------------------------------------------------------------------------

    def block(self, block: ast.Block) -> None:
        self.scopes.append({})
        try:
            for stmt in block.stmts:
                self.stmt(stmt)
        finally:
            self.scopes.pop()

    def stmt(self, stmt: ast.Stmt) -> None:
        state = self.need_state()
        if isinstance(stmt, ast.Let):
            value = self.expr(stmt.value)
            declared = stmt.type.name if stmt.type is not None else None
            word = value.word & 1 if declared is ast.TypeName.BOOL else value.word
            self.scopes[-1][stmt.name] = _Value(word, declared or value.type or ast.TypeName.U32)
        elif isinstance(stmt, ast.Assign):
            self.assign(stmt.name, self.expr(stmt.value))
        elif isinstance(stmt, ast.Store):
            self.store(stmt)
        elif isinstance(stmt, ast.ExprStmt):
            self.expr(stmt.expr)
        elif isinstance(stmt, ast.If):
            self.if_(stmt)
        elif isinstance(stmt, ast.For):
            start = self.expr(stmt.start).word
            end = self.expr(stmt.end).word
            for i in range(start, end):
                self.scopes.append({stmt.var: _Value(i, None)})
                try:
                    self.block(stmt.body)
                finally:
                    self.scopes.pop()
        elif isinstance(stmt, ast.Push):
            state.pushed.extend(self.expr(v).word for v in stmt.values)
        elif isinstance(stmt, ast.Action):
            self.action(stmt, state)
        elif isinstance(stmt, ast.Chain):
            owner, name = self.ev.program.lookup(self.module, stmt.target.parts)
            state.chain = self.ev.program.ir_name(owner, name)
        elif isinstance(stmt, ast.Return):
            raise _Return
        else:  # pragma: no cover - the Stmt union is closed
            raise EvalError(f"unknown statement {stmt!r}")

    def if_(self, stmt: ast.If) -> None:
        if self.expr(stmt.cond).word & 1:
            self.block(stmt.then)
        elif isinstance(stmt.orelse, ast.If):
            self.if_(stmt.orelse)
        elif isinstance(stmt.orelse, ast.Block):
            self.block(stmt.orelse)

    def action(self, stmt: ast.Action, state: _State) -> None:
        if stmt.name == "drop_code":
            state.drop_code = True
            return
        state.steer = stmt.name
        state.steer_value = self.expr(stmt.args[0]).word if stmt.args else None

    def store(self, stmt: ast.Store) -> None:
        state = self.need_state()
        mem = self.ev.memory(self.module, stmt.target.array)
        index = self.expr(stmt.target.index).word
        value = self.expr(stmt.value).word
        old = _read(state, mem, index)
        if stmt.op is ast.StoreOp.SET:
            new = value
        elif stmt.op is ast.StoreOp.ADD:
            new = (old + value) & WORD_MASK
        elif stmt.op is ast.StoreOp.AND:
            new = old & value
        else:
            new = old | value
        _write(state, mem, index, new)

    # -- expressions ------------------------------------------------------------------------

    def expr(self, expr: ast.Expr) -> _Value:
        if isinstance(expr, ast.IntLit):
            return _Value(expr.value & WORD_MASK, None)
        if isinstance(expr, ast.BoolLit):
            return _Value(int(expr.value), ast.TypeName.BOOL)
        if isinstance(expr, ast.Name):
            return self.name(expr)
        if isinstance(expr, ast.Meta):
            state = self.need_state()
            return _Value(state.meta.get(expr.field, 0) & WORD_MASK, ast.TypeName.U32)
        if isinstance(expr, ast.Index):
            state = self.need_state()
            mem = self.ev.memory(self.module, expr.array)
            return _Value(_read(state, mem, self.expr(expr.index).word), mem.elem)
        if isinstance(expr, ast.Unary):
            return self.unary(expr)
        if isinstance(expr, ast.Binary):
            return self.binary(expr)
        if isinstance(expr, ast.Call):
            return self.call(expr)
        if isinstance(expr, ast.Cast):
            value = self.expr(expr.expr)
            target = expr.type.name
            if target is ast.TypeName.BOOL:
                return _Value(int(value.word != 0), target)
            return _Value(value.word, target)
        raise EvalError(f"unknown expression {expr!r}")  # pragma: no cover

    def name(self, expr: ast.Name) -> _Value:
        if len(expr.parts) == 1:
            found = self.local(expr.parts[0])
            if found is not None:
                return found
        owner, name = self.ev.program.lookup(self.module, expr.parts)
        return self.ev.const(owner, name)

    def unary(self, expr: ast.Unary) -> _Value:
        value = self.expr(expr.operand)
        if expr.op is ast.UnaryOp.NEG:
            return _Value(-value.word & WORD_MASK, value.type)
        if expr.op is ast.UnaryOp.NOT:
            return _Value(~value.word & WORD_MASK, value.type)
        return _Value(1 - (value.word & 1), ast.TypeName.BOOL)

    def binary(self, expr: ast.Binary) -> _Value:
        op = expr.op
        left = self.expr(expr.left)
        right = self.expr(expr.right)
        a, b = left.word, right.word
        kind = _join(left.type, right.type)
        if op in _COMPARE:
            if kind is ast.TypeName.I32:
                a, b = to_signed(a), to_signed(b)
            return _Value(int(_COMPARE[op](a, b)), ast.TypeName.BOOL)
        if op is ast.BinaryOp.AND:
            return _Value(a & b & 1, ast.TypeName.BOOL)
        if op is ast.BinaryOp.OR:
            return _Value((a | b) & 1, ast.TypeName.BOOL)
        return _Value(_arith(op, a, b), kind)

    def call(self, expr: ast.Call) -> _Value:
        func = expr.func
        if func == "hash":
            lane = self.ev.const_int(self.module, expr.type_args[0])
            value = self.expr(expr.args[0]).word
            return _Value(hash_word(self.ev.profile.hash_for_lane(lane), value), ast.TypeName.U32)
        if func in ("min", "max"):
            left, right = self.expr(expr.args[0]), self.expr(expr.args[1])
            kind = _join(left.type, right.type)
            pick = min if func == "min" else max
            key = to_signed if kind is ast.TypeName.I32 else None
            return _Value(pick(left.word, right.word, key=key), kind)
        if func == "select":
            cond = self.expr(expr.args[0])
            yes, no = self.expr(expr.args[1]), self.expr(expr.args[2])
            return _Value(yes.word if cond.word & 1 else no.word, _join(yes.type, no.type))
        state = self.need_state()
        if func == "rand":
            state.rand_draws += 1
            return _Value(next(state.rand) & WORD_MASK, ast.TypeName.U32)
        if func == "peek":
            n = state.nparams
            word = state.stack[n] if n < len(state.stack) else 0
            return _Value(word & WORD_MASK, ast.TypeName.U32)
        if func in _FETCH:
            target = expr.args[0]
            if not isinstance(target, ast.Index):
                raise EvalError(f"`{func}` needs an array element")
            mem = self.ev.memory(self.module, target.array)
            index = self.expr(target.index).word
            data = self.expr(expr.args[1]).word
            old = _read(state, mem, index)
            _write(state, mem, index, _FETCH[func](old, data))
            return _Value(old, mem.elem)
        raise EvalError(f"unknown builtin `{func}`")


def _read(state: _State, mem: _Memory, index: int) -> int:
    if index >= mem.size:  # unmapped: reads 0
        return 0
    return state.memory.get(mem.key, {}).get(index, 0)


def _write(state: _State, mem: _Memory, index: int, value: int) -> None:
    if index >= mem.size:  # unmapped: writes nothing
        return
    state.memory.setdefault(mem.key, {})[index] = value & WORD_MASK


def _cells(cells: Mapping[int, int] | Sequence[int]) -> dict[int, int]:
    if isinstance(cells, Mapping):
        return {int(i): int(w) & WORD_MASK for i, w in cells.items()}
    return {i: int(w) & WORD_MASK for i, w in enumerate(cells)}


def _arith(op: ast.BinaryOp, a: int, b: int) -> int:
    if op is ast.BinaryOp.ADD:
        return (a + b) & WORD_MASK
    if op is ast.BinaryOp.SUB:
        return (a - b) & WORD_MASK
    if op is ast.BinaryOp.MUL:
        return (a * b) & WORD_MASK
    if op is ast.BinaryOp.BIT_AND:
        return a & b
    if op is ast.BinaryOp.BIT_OR:
        return a | b
    if op is ast.BinaryOp.BIT_XOR:
        return a ^ b
    if op is ast.BinaryOp.SHL:
        return (a << (b & 31)) & WORD_MASK
    if op is ast.BinaryOp.SHR:
        return a >> (b & 31)
    raise EvalError(f"unknown operator `{op.value}`")  # pragma: no cover


_COMPARE = {
    ast.BinaryOp.EQ: lambda a, b: a == b,
    ast.BinaryOp.NE: lambda a, b: a != b,
    ast.BinaryOp.LT: lambda a, b: a < b,
    ast.BinaryOp.LE: lambda a, b: a <= b,
    ast.BinaryOp.GT: lambda a, b: a > b,
    ast.BinaryOp.GE: lambda a, b: a >= b,
}


# FAMAX / FAMIN compare unsigned whatever the array's element type (docs/isa.md decision 5).
_FETCH: dict[str, Callable[[int, int], int]] = {
    "fetch_add": lambda old, data: (old + data) & WORD_MASK,
    "fetch_and": lambda old, data: old & data,
    "fetch_or": lambda old, data: old | data,
    "fetch_max": max,
    "fetch_min": min,
}


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
    target = profile or inputs.profile or BUILTIN_PROFILES["tofino1"]
    module = view.main
    dpf = view.module(module).dpfs.get(dpf_name)
    if dpf is None:
        raise EvalError(f"no DPF `{dpf_name}` in module `{module}`")
    stack = [w & WORD_MASK for w in inputs.stack]
    nparams = len(dpf.params)
    state = _State(
        stack=stack,
        nparams=nparams,
        memory={name: _cells(cells) for name, cells in inputs.memory.items()},
        meta=inputs.meta,
        rand=_rand_stream(inputs.rand),
    )
    frame = _Frame(_Evaluator(view, target), module, state)
    for k, param in enumerate(dpf.params):
        word = stack[k] if k < len(stack) else 0
        if param.type.name is ast.TypeName.BOOL:
            word &= 1
        frame.scopes[0][param.name] = _Value(word, param.type.name)
    with contextlib.suppress(_Return):
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
