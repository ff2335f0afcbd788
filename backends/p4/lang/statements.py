"""P4-16 statements and declarations for the structured emitter, and whole programs.

Contract: statements and declarations render to indented lines (``lines(indent)``), the
same nodes giving the same text byte for byte; :func:`render` joins a :class:`Program`'s
declarations. Expressions, which render inline, are :mod:`.expressions`'.

Not responsible for checking that the program is valid P4, nor for anything SwitchVM.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from dpfc.backends.p4.lang.expressions import (
    Expr,
)


# -- statements ---------------------------------------------------------------------------------
class Stmt:
    def lines(self, indent: str) -> list[str]:
        raise NotImplementedError


@dataclass(frozen=True)
class Assign(Stmt):
    target: Expr
    value: Expr

    def lines(self, indent: str) -> list[str]:
        return [f"{indent}{self.target.p4()} = {self.value.p4()};"]


@dataclass(frozen=True)
class Do(Stmt):
    """An expression statement (a method or action call)."""

    call: Expr

    def lines(self, indent: str) -> list[str]:
        return [f"{indent}{self.call.p4()};"]


@dataclass(frozen=True)
class Var(Stmt):
    type: str
    name: str
    init: Expr | None = None

    def lines(self, indent: str) -> list[str]:
        value = f" = {self.init.p4()}" if self.init is not None else ""
        return [f"{indent}{self.type} {self.name}{value};"]


@dataclass(frozen=True)
class Return(Stmt):
    value: Expr

    def lines(self, indent: str) -> list[str]:
        return [f"{indent}return {self.value.p4()};"]


@dataclass(frozen=True)
class Comment(Stmt):
    text: str

    def lines(self, indent: str) -> list[str]:
        return [f"{indent}// {line}".rstrip() for line in self.text.splitlines()]


@dataclass(frozen=True)
class If(Stmt):
    cond: Expr
    then: Sequence[Stmt]
    other: Sequence[Stmt] = ()

    def lines(self, indent: str) -> list[str]:
        out = [f"{indent}if ({self.cond.p4()}) {{"]
        out += _block(self.then, indent + "    ")
        if self.other:
            if len(self.other) == 1 and isinstance(self.other[0], If):
                nested = self.other[0].lines(indent)
                out.append(f"{indent}}} else {nested[0].lstrip()}")
                return out + nested[1:]
            out.append(f"{indent}}} else {{")
            out += _block(self.other, indent + "    ")
        out.append(f"{indent}}}")
        return out


def _block(stmts: Sequence[Stmt], indent: str) -> list[str]:
    out: list[str] = []
    for stmt in stmts:
        out += stmt.lines(indent)
    return out


def chain(cases: Sequence[tuple[Expr, Sequence[Stmt]]], default: Sequence[Stmt] = ()) -> list[Stmt]:
    """``if c1 {..} else if c2 {..} ... else {default}`` (an empty list when no case)."""
    result: list[Stmt] = list(default)
    for cond, body in reversed(cases):
        result = [If(cond, body, result)]
    return result


# -- declarations -------------------------------------------------------------------------------
class Decl:
    def lines(self, indent: str) -> list[str]:
        raise NotImplementedError


@dataclass(frozen=True)
class Header(Decl):
    name: str
    fields: Sequence[tuple[str, str]]  # (name, type)
    comment: str = ""
    keyword: str = "header"

    def lines(self, indent: str) -> list[str]:
        out = Comment(self.comment).lines(indent) if self.comment else []
        out.append(f"{indent}{self.keyword} {self.name} {{")
        out += [f"{indent}    {t} {f};" for f, t in self.fields]
        return [*out, f"{indent}}}"]


def struct(name: str, fields: Sequence[tuple[str, str]], comment: str = "") -> Header:
    return Header(name, fields, comment, keyword="struct")


@dataclass(frozen=True)
class Raw(Decl):
    """A line the architecture dictates verbatim (``#include``, the ``main`` package)."""

    text: str

    def lines(self, indent: str) -> list[str]:
        return [indent + line if line else "" for line in self.text.splitlines()]


@dataclass(frozen=True)
class Const(Decl):
    type: str
    name: str
    value: Expr

    def lines(self, indent: str) -> list[str]:
        return [f"{indent}const {self.type} {self.name} = {self.value.p4()};"]


@dataclass(frozen=True)
class Function(Decl):
    ret: str
    name: str
    params: Sequence[str]
    body: Sequence[Stmt]
    comment: str = ""

    def lines(self, indent: str) -> list[str]:
        out = Comment(self.comment).lines(indent) if self.comment else []
        out.append(f"{indent}{self.ret} {self.name}({', '.join(self.params)}) {{")
        return out + _block(self.body, indent + "    ") + [f"{indent}}}"]


def action(name: str, params: Sequence[str], body: Sequence[Stmt], comment: str = "") -> Function:
    return Function("action", name, params, body, comment)


@dataclass(frozen=True)
class Table(Decl):
    name: str
    keys: Sequence[tuple[Expr, str]]
    actions: Sequence[str]
    default: str
    size: int
    comment: str = ""
    # The control plane's name of each key (``@name``), in key order; none: p4c's own.
    key_names: Sequence[str] = ()
    # Annotations written before the table (``@stage(3)``: a placement the compiler honours).
    annotations: Sequence[str] = ()

    def lines(self, indent: str) -> list[str]:
        inner = indent + "    "
        out = Comment(self.comment).lines(indent) if self.comment else []
        out += [f"{indent}{note}" for note in self.annotations]
        out.append(f"{indent}table {self.name} {{")
        if self.keys:
            names = [f' @name("{name}")' for name in self.key_names] or [""] * len(self.keys)
            out.append(f"{inner}key = {{")
            out += [
                f"{inner}    {k.p4()} : {kind}{name};"
                for (k, kind), name in zip(self.keys, names, strict=True)
            ]
            out.append(f"{inner}}}")
        out.append(f"{inner}actions = {{ {'; '.join(self.actions)}; }}")
        out.append(f"{inner}default_action = {self.default};")
        out.append(f"{inner}size = {self.size};")
        return [*out, f"{indent}}}"]


@dataclass(frozen=True)
class Instance(Decl):
    """An extern instance (``register<bit<32>>(N) name;``)."""

    type: str
    args: Sequence[Expr]
    name: str
    comment: str = ""

    def lines(self, indent: str) -> list[str]:
        out = Comment(self.comment).lines(indent) if self.comment else []
        args = ", ".join(a.p4() for a in self.args)
        return [*out, f"{indent}{self.type}({args}) {self.name};"]


@dataclass(frozen=True)
class Implementation(Decl):
    """An extern instance that implements the extern's abstract methods (TNA's
    ``RegisterAction<..>(reg) name = { void apply(..) { .. } };``)."""

    type: str
    args: Sequence[Expr]
    name: str
    methods: Sequence[Function]
    comment: str = ""

    def lines(self, indent: str) -> list[str]:
        out = Comment(self.comment).lines(indent) if self.comment else []
        args = ", ".join(a.p4() for a in self.args)
        out.append(f"{indent}{self.type}({args}) {self.name} = {{")
        for method in self.methods:
            out += method.lines(indent + "    ")
        return [*out, f"{indent}}};"]


@dataclass(frozen=True)
class Select:
    keys: Sequence[Expr]
    cases: Sequence[tuple[str, str]]  # (keyset text, next state)

    def lines(self, indent: str) -> list[str]:
        keys = ", ".join(k.p4() for k in self.keys)
        out = [f"{indent}transition select({keys}) {{"]
        out += [f"{indent}    {keyset}: {state};" for keyset, state in self.cases]
        return [*out, f"{indent}}}"]


@dataclass(frozen=True)
class State(Decl):
    name: str
    body: Sequence[Stmt]
    transition: str | Select  # a state name, or a select
    comment: str = ""

    def lines(self, indent: str) -> list[str]:
        out = Comment(self.comment).lines(indent) if self.comment else []
        out.append(f"{indent}state {self.name} {{")
        out += _block(self.body, indent + "    ")
        if isinstance(self.transition, Select):
            out += self.transition.lines(indent + "    ")
        else:
            out.append(f"{indent}    transition {self.transition};")
        return [*out, f"{indent}}}"]


@dataclass(frozen=True)
class Block(Decl):
    """A parser or control: ``kind name(params) { locals; [apply { body }] }``."""

    kind: str  # "parser" | "control"
    name: str
    params: Sequence[str]
    locals: Sequence[Decl] = ()
    apply: Sequence[Stmt] = ()
    comment: str = ""

    def lines(self, indent: str) -> list[str]:
        inner = indent + "    "
        out = Comment(self.comment).lines(indent) if self.comment else []
        out.append(f"{indent}{self.kind} {self.name}({', '.join(self.params)}) {{")
        for decl in self.locals:
            out += decl.lines(inner)
        if self.kind == "control":
            out.append(f"{inner}apply {{")
            out += _block(self.apply, inner + "    ")
            out.append(f"{inner}}}")
        return [*out, f"{indent}}}"]


@dataclass
class Program:
    decls: list[Decl] = field(default_factory=list)

    def add(self, *decls: Decl) -> None:
        self.decls.extend(decls)


def render(program: Program) -> str:
    out: list[str] = []
    for decl in program.decls:
        out += decl.lines("")
        out.append("")
    return "\n".join(out).rstrip() + "\n"
