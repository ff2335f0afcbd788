"""Hypothesis strategies for DPF syntax trees (:mod:`dpfc.syntax.ast`).

:func:`modules` draws *syntactically* well-formed modules: every tree is one the parser can
produce, so ``parse_module(format_module(t)) == t`` must hold for all of them. They are not
type-correct or name-correct (a name may be unbound, a `bool` may be added to a `u32`); a
generator of well-typed programs should build on :func:`exprs` / :func:`stmts` with its own
environment. The shapes the parser never produces are avoided: a call statement naming an
epilog action is an :class:`~dpfc.syntax.ast.Action` (never an ``ExprStmt``), only ``hash``
takes a type argument, maps have a key type and arrays do not, and no name is a keyword or
``hash`` (``hash <`` always opens a hash call).

All nodes carry :data:`SPAN`, a dummy span (spans take no part in ``==``). Strategy objects
are built once (``@cache``): building them per draw dominated the run time.
"""

from __future__ import annotations

from functools import cache

from hypothesis import strategies as st

from dpfc.diagnostics import SourceFile, Span
from dpfc.syntax import ACTION_NAMES, KEYWORDS, ast

SPAN = Span(SourceFile("<generated>", ""), 0, 0)

_POOL = (
    "a",
    "b",
    "x",
    "key",
    "K",
    "values0",
    "hits",
    "_tmp",
    "i",
    "countmin",
    "min",
    "max",
    "select",
    "fetch_add",
    "rand",
    "peek",
    "forward",
    "drop",
    "pass",
    "drop_code",
    "tofino1",
    "in_",
    "iff",
    "meta_",
    "u64",
)

_FIRST = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_"
identifiers: st.SearchStrategy[str] = st.one_of(
    st.sampled_from(_POOL),
    st.builds(
        lambda first, rest: first + rest,
        st.sampled_from(_FIRST),
        st.text(_FIRST + "0123456789", max_size=6),
    ).filter(lambda s: s not in KEYWORDS and s != "hash"),
)

paths: st.SearchStrategy[tuple[str, ...]] = st.lists(identifiers, min_size=1, max_size=3).map(tuple)

types: st.SearchStrategy[ast.TypeRef] = st.sampled_from(list(ast.TypeName)).map(
    lambda n: ast.TypeRef(span=SPAN, name=n)
)


@st.composite
def int_lits(draw: st.DrawFn) -> ast.IntLit:
    """A literal in 0..2^32-1, with no text or with text as a person might write it."""
    value = draw(
        st.one_of(
            st.integers(0, 300),
            st.integers(0, 0xFFFF_FFFF),
            st.sampled_from([0xFFFF, 0x10000, 0x8000_0000, 0xFFFF_FFFF]),
        )
    )
    style = draw(st.sampled_from(["", "dec", "hex", "HEX", "bin", "sep"]))
    text = {
        "": "",
        "dec": str(value),
        "hex": hex(value),
        "HEX": f"0X{value:X}",
        "bin": bin(value),
        "sep": f"0x{value:_x}",
    }[style]
    return ast.IntLit(span=SPAN, value=value, text=text)


@cache
def _names() -> st.SearchStrategy[ast.Name]:
    return paths.map(lambda p: ast.Name(span=SPAN, parts=p))


@cache
def _leaves() -> st.SearchStrategy[ast.Expr]:
    return st.one_of(
        int_lits(),
        st.booleans().map(lambda b: ast.BoolLit(span=SPAN, value=b)),
        _names(),
        identifiers.map(lambda f: ast.Meta(span=SPAN, field=f)),
        st.just(ast.Call(span=SPAN, func="rand", args=())),
    )


def _extend(children: st.SearchStrategy[ast.Expr]) -> st.SearchStrategy[ast.Expr]:
    args = st.lists(children, max_size=3).map(tuple)
    return st.one_of(
        st.builds(
            lambda op, left, right: ast.Binary(span=SPAN, op=op, left=left, right=right),
            st.sampled_from(list(ast.BinaryOp)),
            children,
            children,
        ),
        st.builds(
            lambda op, e: ast.Unary(span=SPAN, op=op, operand=e),
            st.sampled_from(list(ast.UnaryOp)),
            children,
        ),
        st.builds(lambda e, t: ast.Cast(span=SPAN, expr=e, type=t), children, types),
        st.builds(lambda a, i: ast.Index(span=SPAN, array=a, index=i), _names(), children),
        st.builds(lambda f, a: ast.Call(span=SPAN, func=f, args=a), identifiers, args),
        st.builds(
            lambda lane, a: ast.Call(span=SPAN, func="hash", args=a, type_args=(lane,)),
            children,
            args,
        ),
    )


@cache
def exprs(max_leaves: int = 12) -> st.SearchStrategy[ast.Expr]:
    """Any expression tree (precedence and parentheses are the printer's business)."""
    return st.recursive(_leaves(), _extend, max_leaves=max_leaves)


@cache
def _indexes() -> st.SearchStrategy[ast.Index]:
    return st.builds(lambda a, i: ast.Index(span=SPAN, array=a, index=i), _names(), exprs(4))


@cache
def _simple_stmts() -> st.SearchStrategy[ast.Stmt]:
    small = exprs(5)
    expr_stmts = small.filter(lambda e: not (isinstance(e, ast.Call) and e.func in ACTION_NAMES))
    return st.one_of(
        st.builds(
            lambda n, t, v: ast.Let(span=SPAN, name=n, type=t, value=v),
            identifiers,
            st.none() | types,
            small,
        ),
        st.builds(lambda n, v: ast.Assign(span=SPAN, name=n, value=v), identifiers, small),
        st.builds(
            lambda t, op, v: ast.Store(span=SPAN, target=t, op=op, value=v),
            _indexes(),
            st.sampled_from(list(ast.StoreOp)),
            small,
        ),
        expr_stmts.map(lambda e: ast.ExprStmt(span=SPAN, expr=e)),
        st.lists(small, max_size=3).map(lambda v: ast.Push(span=SPAN, values=tuple(v))),
        st.builds(
            lambda n, a: ast.Action(span=SPAN, name=n, args=a),
            st.sampled_from(sorted(ACTION_NAMES)),
            st.lists(small, max_size=1).map(tuple),
        ),
        _names().map(lambda n: ast.Chain(span=SPAN, target=n)),
        st.just(ast.Return(span=SPAN)),
    )


def _blocks(stmt: st.SearchStrategy[ast.Stmt]) -> st.SearchStrategy[ast.Block]:
    return st.lists(stmt, max_size=3).map(lambda s: ast.Block(span=SPAN, stmts=tuple(s)))


def _compound(children: st.SearchStrategy[ast.Stmt]) -> st.SearchStrategy[ast.Stmt]:
    blocks = _blocks(children)
    ifs = st.deferred(
        lambda: st.builds(
            lambda c, t, e: ast.If(span=SPAN, cond=c, then=t, orelse=e),
            exprs(5),
            blocks,
            st.none() | blocks | ifs,
        )
    )
    fors = st.builds(
        lambda v, s, e, b: ast.For(span=SPAN, var=v, start=s, end=e, body=b),
        identifiers,
        exprs(3),
        exprs(3),
        blocks,
    )
    return ifs | fors


@cache
def stmts() -> st.SearchStrategy[ast.Stmt]:
    return st.recursive(_simple_stmts(), _compound, max_leaves=6)


@cache
def _attributes() -> st.SearchStrategy[tuple[ast.Attribute, ...]]:
    attribute = st.builds(
        lambda n, a, k: ast.Attribute(span=SPAN, name=n, args=a, kwargs=k),
        identifiers,
        st.lists(exprs(3), max_size=2).map(tuple),
        st.lists(st.tuples(identifiers, exprs(3)), max_size=2).map(tuple),
    )
    return st.lists(attribute, max_size=2).map(tuple)


@st.composite
def _memory(draw: st.DrawFn) -> ast.MemoryDecl:
    kind = draw(st.sampled_from(list(ast.MemoryKind)))
    return ast.MemoryDecl(
        span=SPAN,
        attrs=draw(_attributes()),
        mapping=draw(st.sampled_from(list(ast.Mapping))),
        kind=kind,
        name=draw(identifiers),
        key_type=draw(types) if kind is ast.MemoryKind.MAP else None,
        elem_type=draw(types),
        size=draw(exprs(4)),
    )


@cache
def items() -> st.SearchStrategy[ast.Item]:
    return st.one_of(
        paths.map(lambda p: ast.ModuleDecl(span=SPAN, path=p)),
        st.builds(
            lambda p, a: ast.Import(span=SPAN, path=p, alias=a), paths, st.none() | identifiers
        ),
        st.builds(
            lambda n, v: ast.AppDecl(span=SPAN, name=n, value=v),
            identifiers,
            st.none() | exprs(3),
        ),
        st.builds(
            lambda n, t, v: ast.ConstDecl(span=SPAN, name=n, type=t, value=v),
            identifiers,
            st.none() | types,
            exprs(6),
        ),
        _memory(),
        st.builds(
            lambda a, n, p, b: ast.DpfDecl(span=SPAN, attrs=a, name=n, params=p, body=b),
            _attributes(),
            identifiers,
            st.lists(
                st.builds(lambda n, t: ast.Param(span=SPAN, name=n, type=t), identifiers, types),
                max_size=3,
            ).map(tuple),
            _blocks(stmts()),
        ),
    )


@cache
def modules() -> st.SearchStrategy[ast.Module]:
    return st.lists(items(), max_size=4).map(lambda i: ast.Module(span=SPAN, items=tuple(i)))
