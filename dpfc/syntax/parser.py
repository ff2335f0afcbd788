"""The DPF parser: source text -> :class:`~dpfc.syntax.ast.Module`.

Contract: ``parse_module(source)`` returns the module's AST, every node carrying the exact
:class:`~dpfc.diagnostics.Span` of its text (a parenthesised expression's node spans the text
inside the parentheses; its parent spans them too), or raises
:class:`~dpfc.diagnostics.DiagnosticError` with named DPF50xx diagnostics. The grammar is
``grammar.lark`` next to this module, run by :mod:`dpfc.parsing` (LALR); a lark failure is
turned into words by :mod:`dpfc.syntax.syntax_errors`, and parsing goes on after it
(:mod:`dpfc.syntax.recovery`: up to ten syntax errors per file, no cascades). The checks
that the grammar leaves to this module (literal ranges, reserved words, assignment targets,
map key types, nesting depth) are made while building the tree, all of them reported
together with the parser's, in source order.

Shapes decided here rather than in the grammar: a call statement naming an epilog action
(``forward(d);``, ``drop();``, ...) becomes :class:`~dpfc.syntax.ast.Action`, ``x = e;``
becomes :class:`~dpfc.syntax.ast.Assign` and ``a[i] op= e;`` a
:class:`~dpfc.syntax.ast.Store`. Names are not resolved (that is :mod:`dpfc.sema`).
"""

from __future__ import annotations

import re
from functools import cache
from importlib import resources

from dpfc.catalog import codes
from dpfc.diagnostics import Diagnostic, DiagnosticError, SourceFile, Span
from dpfc.parsing import Leaf, Node
from dpfc.syntax import ast
from dpfc.syntax.recovery import parse_recovering
from dpfc.syntax.syntax_errors import KEYWORDS, deepest_bracket

# Call statements with these names are epilog actions, not expression statements.
ACTION_NAMES = frozenset(
    {
        "forward",
        "multicast",
        "set_port",
        "return_to_sender",
        "drop",
        "pass",
        "recirculate",
        "drop_code",
    }
)

# Deeper trees are refused: later phases recurse over them, and Python's stack is finite.
MAX_NESTING = 100

_INT_FORMS = re.compile(r"0[xX][0-9a-fA-F]+|0[bB][01]+|[0-9]+")
_MAX_WORD = 0xFFFF_FFFF


@cache
def grammar() -> str:
    """The text of ``grammar.lark`` (package data)."""
    return resources.files("dpfc.syntax").joinpath("grammar.lark").read_text(encoding="utf-8")


def parse_module(source: SourceFile) -> ast.Module:
    """Parse a whole ``.dpf`` file; raises :class:`DiagnosticError` on a syntax error."""
    try:
        tree, errors = parse_recovering(grammar(), source)
    except RecursionError:
        raise DiagnosticError(_too_deep(source, deepest_bracket(source.text))) from None
    if tree is None:
        raise DiagnosticError(errors)
    builder = _Builder(source)
    try:
        module = builder.module(tree)
    except _TooDeep as exc:
        raise DiagnosticError(_too_deep(source, exc.offset)) from None
    errors.extend(builder.errors)
    if errors:
        # The builder's errors (literals, reserved names) lie between the parser's.
        raise DiagnosticError(sorted(errors, key=_position))
    return module


def _position(diag: Diagnostic) -> int:
    return diag.span.start if diag.span is not None else -1


def parse_int_literal(text: str) -> int | None:
    """The value of an integer literal as written (``0x8000_0000``), or None if malformed."""
    digits = text.replace("_", "")
    if not _INT_FORMS.fullmatch(digits):
        return None
    return int(digits, 0) if digits[:2].lower() in ("0x", "0b") else int(digits, 10)


class _TooDeep(Exception):
    def __init__(self, offset: int) -> None:
        super().__init__(offset)
        self.offset = offset


def _too_deep(source: SourceFile, offset: int) -> Diagnostic:
    span = Span(source, offset, offset + 1) if source.text else None
    return Diagnostic(
        codes.TOO_DEEP,
        f"nesting too deep: more than {MAX_NESTING} levels of expressions and blocks",
        span,
        hint="split the expression with `let` bindings",
    )


def _nodes(node: Node) -> list[Node]:
    return [c for c in node.children if isinstance(c, Node)]


def _leaves(node: Node, *types: str) -> list[Leaf]:
    return [c for c in node.children if isinstance(c, Leaf) and c.type in types]


def _child(node: Node, rule: str) -> Node | None:
    for child in node.children:
        if isinstance(child, Node) and child.rule == rule:
            return child
    return None


class _Builder:
    """Turns the grammar's tree into AST nodes, collecting the errors it finds."""

    def __init__(self, source: SourceFile) -> None:
        self.source = source
        self.errors: list[Diagnostic] = []
        self.depth = 0

    def span(self, item: Node | Leaf) -> Span:
        return Span(self.source, item.start, item.end)

    def error(
        self, code: str, message: str, item: Node | Leaf | Span, hint: str | None = None
    ) -> None:
        span = item if isinstance(item, Span) else self.span(item)
        self.errors.append(Diagnostic(code, message, span, hint=hint))

    def enter(self, node: Node) -> None:
        self.depth += 1
        if self.depth > MAX_NESTING:
            raise _TooDeep(node.start)

    # -- names and types ------------------------------------------------------------------

    def ident(self, leaf: Leaf) -> str:
        if leaf.value in KEYWORDS:
            self.error(
                codes.KEYWORD_AS_NAME,
                f"`{leaf.value}` is a keyword and cannot be used as a name",
                leaf,
                hint=f"rename it, e.g. `{leaf.value}_`",
            )
        return leaf.value

    def name_leaf(self, node: Node) -> str:
        return self.ident(_leaves(node, "NAME")[0])

    def dotted(self, node: Node) -> tuple[str, ...]:
        return tuple(self.ident(leaf) for leaf in _leaves(node, "NAME"))

    def qualified(self, node: Node) -> ast.Name:
        return ast.Name(span=self.span(node), parts=self.dotted(node))

    def type_ref(self, node: Node) -> ast.TypeRef:
        leaf = node.leaves()[0]
        return ast.TypeRef(span=self.span(node), name=ast.TypeName(leaf.value))

    # -- module items ---------------------------------------------------------------------

    def module(self, tree: Node) -> ast.Module:
        items = tuple(self.item(node) for node in _nodes(tree))
        return ast.Module(span=Span(self.source, 0, len(self.source.text)), items=items)

    def item(self, node: Node) -> ast.Item:
        span = self.span(node)
        if node.rule == "module_decl":
            return ast.ModuleDecl(span=span, path=self.dotted(_nodes(node)[0]))
        if node.rule == "import_decl":
            aliases = _leaves(node, "NAME")
            return ast.Import(
                span=span,
                path=self.dotted(_nodes(node)[0]),
                alias=self.ident(aliases[0]) if aliases else None,
            )
        if node.rule == "app_decl":
            values = _nodes(node)
            return ast.AppDecl(
                span=span,
                name=self.name_leaf(node),
                value=self.expr(values[0]) if values else None,
            )
        if node.rule == "const_decl":
            type_node = _child(node, "type")
            return ast.ConstDecl(
                span=span,
                name=self.name_leaf(node),
                type=self.type_ref(type_node) if type_node is not None else None,
                value=self.expr(_nodes(node)[-1]),
            )
        if node.rule == "memory_decl":
            return self.memory(node)
        assert node.rule == "dpf_decl", node.rule
        params_node = _child(node, "params")
        params = () if params_node is None else tuple(self.param(p) for p in _nodes(params_node))
        block = _child(node, "block")
        assert block is not None
        return ast.DpfDecl(
            span=span,
            attrs=self.attributes(node),
            name=self.name_leaf(node),
            params=params,
            body=self.block(block),
        )

    def memory(self, node: Node) -> ast.MemoryDecl:
        (mapping,) = _leaves(node, "DIRECT", "SEGMENT")
        (kind_leaf,) = _leaves(node, "ARRAY", "MAP")
        name = self.name_leaf(node)
        types = [self.type_ref(t) for t in _nodes(node) if t.rule == "type"]
        kind = ast.MemoryKind(kind_leaf.value)
        if kind is ast.MemoryKind.MAP and len(types) == 1:
            self.error(
                codes.MEMORY_SHAPE,
                f"map `{name}` needs a key type",
                types[0].span,
                hint=f"write `{name}: u32 -> {types[0].name.value}[size]`",
            )
        if kind is ast.MemoryKind.ARRAY and len(types) == 2:
            self.error(
                codes.MEMORY_SHAPE,
                f"array `{name}` has no key type",
                Span(self.source, types[0].span.start, types[1].span.end),
                hint=f"write `{name}: {types[1].name.value}[size]`, or declare a `map`",
            )
        return ast.MemoryDecl(
            span=self.span(node),
            attrs=self.attributes(node),
            mapping=ast.Mapping(mapping.value),
            kind=kind,
            name=name,
            key_type=types[0] if len(types) == 2 else None,
            elem_type=types[-1],
            size=self.expr(_nodes(node)[-1]),
        )

    def attributes(self, node: Node) -> tuple[ast.Attribute, ...]:
        attrs = _child(node, "attrs")
        if attrs is None:
            return ()
        out: list[ast.Attribute] = []
        for attr in _nodes(attrs):
            args: list[ast.Expr] = []
            kwargs: list[tuple[str, ast.Expr]] = []
            arg_list = _child(attr, "attr_args")
            for arg in _nodes(arg_list) if arg_list is not None else []:
                if arg.rule == "attr_kwarg":
                    kwargs.append((self.name_leaf(arg), self.expr(_nodes(arg)[0])))
                else:
                    args.append(self.expr(_nodes(arg)[0]))
            out.append(
                ast.Attribute(
                    span=self.span(attr),
                    name=self.name_leaf(attr),
                    args=tuple(args),
                    kwargs=tuple(kwargs),
                )
            )
        return tuple(out)

    def param(self, node: Node) -> ast.Param:
        type_node = _child(node, "type")
        assert type_node is not None
        return ast.Param(
            span=self.span(node), name=self.name_leaf(node), type=self.type_ref(type_node)
        )

    # -- statements -----------------------------------------------------------------------

    def block(self, node: Node) -> ast.Block:
        self.enter(node)
        stmts = tuple(self.stmt(s) for s in _nodes(node))
        self.depth -= 1
        return ast.Block(span=self.span(node), stmts=stmts)

    def stmt(self, node: Node) -> ast.Stmt:
        span = self.span(node)
        rule = node.rule
        if rule == "let_stmt":
            type_node = _child(node, "type")
            return ast.Let(
                span=span,
                name=self.name_leaf(node),
                type=self.type_ref(type_node) if type_node is not None else None,
                value=self.expr(_nodes(node)[-1]),
            )
        if rule == "assign_stmt":
            return self.assignment(node)
        if rule == "expr_stmt":
            expr = self.expr(_nodes(node)[0])
            if isinstance(expr, ast.Call) and expr.func in ACTION_NAMES and not expr.type_args:
                return ast.Action(span=span, name=expr.func, args=expr.args)
            return ast.ExprStmt(span=span, expr=expr)
        if rule == "if_stmt":
            return self.if_stmt(node)
        if rule == "for_stmt":
            start, end, body = _nodes(node)
            return ast.For(
                span=span,
                var=self.name_leaf(node),
                start=self.expr(start),
                end=self.expr(end),
                body=self.block(body),
            )
        if rule == "push_stmt":
            return ast.Push(span=span, values=self.args(_child(node, "args")))
        if rule == "chain_stmt":
            return ast.Chain(span=span, target=self.qualified(_nodes(node)[0]))
        assert rule == "return_stmt", rule
        return ast.Return(span=span)

    def if_stmt(self, node: Node) -> ast.If:
        self.enter(node)
        parts = _nodes(node)
        orelse: ast.Block | ast.If | None = None
        if len(parts) == 3:
            tail = parts[2]
            orelse = self.block(tail) if tail.rule == "block" else self.if_stmt(tail)
        result = ast.If(
            span=self.span(node),
            cond=self.expr(parts[0]),
            then=self.block(parts[1]),
            orelse=orelse,
        )
        self.depth -= 1
        return result

    def assignment(self, node: Node) -> ast.Stmt:
        target_node, value_node = _nodes(node)
        (op,) = _leaves(node, "EQ", "PLUS_EQ", "AND_EQ", "OR_EQ")
        target = self.expr(target_node)
        value = self.expr(value_node)
        span = self.span(node)
        if isinstance(target, ast.Index):
            return ast.Store(span=span, target=target, op=ast.StoreOp(op.value), value=value)
        if isinstance(target, ast.Name) and len(target.parts) == 1:
            if op.value != "=":
                self.error(
                    codes.COMPOUND_ON_LOCAL,
                    f"`{op.value}` applies only to array elements",
                    op,
                    hint=f"write `{target.parts[0]} = {target.parts[0]} {op.value[0]} ...;`",
                )
            return ast.Assign(span=span, name=target.parts[0], value=value)
        what = f"`{target.text}`" if isinstance(target, ast.Name) else "this expression"
        self.error(
            codes.BAD_ASSIGN_TARGET,
            f"cannot assign to {what}",
            target_node,
            hint="only locals (`x = e;`) and array elements (`arr[i] = e;`) can be assigned",
        )
        return ast.ExprStmt(span=span, expr=value)

    def args(self, node: Node | None) -> tuple[ast.Expr, ...]:
        return () if node is None else tuple(self.expr(a) for a in _nodes(node))

    # -- expressions ----------------------------------------------------------------------

    def expr(self, node: Node) -> ast.Expr:
        self.enter(node)
        result = self._expr(node)
        self.depth -= 1
        return result

    def _expr(self, node: Node) -> ast.Expr:
        span = self.span(node)
        rule = node.rule
        if rule == "paren":
            return self.expr(_nodes(node)[0])
        if rule == "int_lit":
            return self.int_lit(node.leaves()[0])
        if rule == "bool_lit":
            return ast.BoolLit(span=span, value=node.leaves()[0].value == "true")
        if rule == "name":
            return ast.Name(span=span, parts=self.dotted(_nodes(node)[0]))
        if rule == "meta":
            return ast.Meta(span=span, field=self.name_leaf(node))
        if rule == "binary":
            left, op, right = node.children
            assert isinstance(left, Node) and isinstance(op, Leaf) and isinstance(right, Node)
            return ast.Binary(
                span=span, op=ast.BinaryOp(op.value), left=self.expr(left), right=self.expr(right)
            )
        if rule == "unary":
            op, operand = node.children
            assert isinstance(op, Leaf) and isinstance(operand, Node)
            return ast.Unary(span=span, op=ast.UnaryOp(op.value), operand=self.expr(operand))
        if rule == "cast":
            inner, type_node = _nodes(node)
            return ast.Cast(span=span, expr=self.expr(inner), type=self.type_ref(type_node))
        if rule == "index":
            array, index = _nodes(node)
            return ast.Index(span=span, array=self.qualified(array), index=self.expr(index))
        if rule == "call":
            return ast.Call(
                span=span, func=self.name_leaf(node), args=self.args(_child(node, "args"))
            )
        assert rule == "hash_call", rule
        type_arg = _nodes(node)[0]
        return ast.Call(
            span=span,
            func="hash",
            args=self.args(_child(node, "args")),
            type_args=(self.expr(type_arg),),
        )

    def int_lit(self, leaf: Leaf) -> ast.IntLit:
        value = parse_int_literal(leaf.value)
        if value is None:
            self.error(
                codes.MALFORMED_INT,
                f"malformed integer literal `{leaf.value}`",
                leaf,
                hint="integers are decimal, 0x hexadecimal or 0b binary, with optional `_` separators",
            )
            value = 0
        elif value > _MAX_WORD:
            self.error(
                codes.INT_TOO_LARGE,
                f"integer literal `{leaf.value}` does not fit in 32 bits",
                leaf,
                hint="the largest value is 0xffff_ffff (4294967295); negative numbers use unary `-`",
            )
            value = 0
        return ast.IntLit(span=self.span(leaf), value=value, text=leaf.value)
