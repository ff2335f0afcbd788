"""The DPF parser's tree -> AST of DPF bodies: statements, expressions, names and types.

Contract: :class:`BodyBuilder` turns the subtrees :mod:`dpfc.parsing` (lark, LALR) returns
for ``grammar.lark`` into AST nodes, every node carrying the exact
:class:`~dpfc.diagnostics.Span` of its text (a parenthesised expression's node spans the text
inside the parentheses; its parent spans them too). It makes the checks the grammar leaves
to it (integer literals, DPF5002/5003; reserved words as names, DPF5010; assignment targets,
DPF5016/5017) and collects them in ``errors`` instead of stopping; a tree nested deeper than
:data:`MAX_NESTING` raises :class:`NestingTooDeep`, reported as :func:`nesting_too_deep`
(DPF5022). A call statement naming an epilog action (:data:`ACTION_NAMES`) becomes
:class:`~dpfc.syntax.ast.Action`, ``x = e;`` an :class:`~dpfc.syntax.ast.Assign` and
``a[i] op= e;`` a :class:`~dpfc.syntax.ast.Store`. Names are not resolved (that is
:mod:`dpfc.sema`). :func:`subtrees`, :func:`leaves_of` and :func:`child` read a tree node.

Not responsible for: module items, memory declarations and attributes
(:mod:`.declarations`), parsing the text and recovering from syntax errors (:mod:`.parser`,
:mod:`.recovery`).
"""

from __future__ import annotations

import re

import dpfc.syntax.ast as ast
from dpfc.catalog import codes
from dpfc.diagnostics import Diagnostic, SourceFile, Span
from dpfc.parsing import Leaf, Node
from dpfc.syntax.syntax_errors import KEYWORDS

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


def parse_int_literal(text: str) -> int | None:
    """The value of an integer literal as written (``0x8000_0000``), or None if malformed."""
    digits = text.replace("_", "")
    if not _INT_FORMS.fullmatch(digits):
        return None
    return int(digits, 0) if digits[:2].lower() in ("0x", "0b") else int(digits, 10)


class NestingTooDeep(Exception):
    """The tree nests deeper than :data:`MAX_NESTING` at ``offset`` of the text."""

    def __init__(self, offset: int) -> None:
        super().__init__(offset)
        self.offset = offset


def nesting_too_deep(source: SourceFile, offset: int) -> Diagnostic:
    """The DPF5022 diagnostic of a nesting too deep at ``offset``."""
    span = Span(source, offset, offset + 1) if source.text else None
    return Diagnostic(
        codes.TOO_DEEP,
        f"nesting too deep: more than {MAX_NESTING} levels of expressions and blocks",
        span,
        hint="split the expression with `let` bindings",
    )


def subtrees(node: Node) -> list[Node]:
    return [c for c in node.children if isinstance(c, Node)]


def leaves_of(node: Node, *types: str) -> list[Leaf]:
    return [c for c in node.children if isinstance(c, Leaf) and c.type in types]


def child(node: Node, rule: str) -> Node | None:
    for child in node.children:
        if isinstance(child, Node) and child.rule == rule:
            return child
    return None


class BodyBuilder:
    """Turns the grammar's tree of names, types, statements and expressions into AST nodes,
    collecting the errors it finds."""

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
            raise NestingTooDeep(node.start)

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
        return self.ident(leaves_of(node, "NAME")[0])

    def dotted(self, node: Node) -> tuple[str, ...]:
        return tuple(self.ident(leaf) for leaf in leaves_of(node, "NAME"))

    def qualified(self, node: Node) -> ast.Name:
        return ast.Name(span=self.span(node), parts=self.dotted(node))

    def type_ref(self, node: Node) -> ast.TypeRef:
        leaf = node.leaves()[0]
        return ast.TypeRef(span=self.span(node), name=ast.TypeName(leaf.value))

    # -- statements -----------------------------------------------------------------------

    def block(self, node: Node) -> ast.Block:
        self.enter(node)
        stmts = tuple(self.stmt(s) for s in subtrees(node))
        self.depth -= 1
        return ast.Block(span=self.span(node), stmts=stmts)

    def stmt(self, node: Node) -> ast.Stmt:
        span = self.span(node)
        rule = node.rule
        if rule == "let_stmt":
            type_node = child(node, "type")
            return ast.Let(
                span=span,
                name=self.name_leaf(node),
                type=self.type_ref(type_node) if type_node is not None else None,
                value=self.expr(subtrees(node)[-1]),
            )
        if rule == "assign_stmt":
            return self.assignment(node)
        if rule == "expr_stmt":
            expr = self.expr(subtrees(node)[0])
            if isinstance(expr, ast.Call) and expr.func in ACTION_NAMES and not expr.type_args:
                return ast.Action(span=span, name=expr.func, args=expr.args)
            return ast.ExprStmt(span=span, expr=expr)
        if rule == "if_stmt":
            return self.if_stmt(node)
        if rule == "for_stmt":
            start, end, body = subtrees(node)
            return ast.For(
                span=span,
                var=self.name_leaf(node),
                start=self.expr(start),
                end=self.expr(end),
                body=self.block(body),
            )
        if rule == "push_stmt":
            return ast.Push(span=span, values=self.args(child(node, "args")))
        if rule == "chain_stmt":
            return ast.Chain(span=span, target=self.qualified(subtrees(node)[0]))
        assert rule == "return_stmt", rule
        return ast.Return(span=span)

    def if_stmt(self, node: Node) -> ast.If:
        self.enter(node)
        parts = subtrees(node)
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
        target_node, value_node = subtrees(node)
        (op,) = leaves_of(node, "EQ", "PLUS_EQ", "AND_EQ", "OR_EQ")
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
        return () if node is None else tuple(self.expr(a) for a in subtrees(node))

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
            return self.expr(subtrees(node)[0])
        if rule == "int_lit":
            return self.int_lit(node.leaves()[0])
        if rule == "bool_lit":
            return ast.BoolLit(span=span, value=node.leaves()[0].value == "true")
        if rule == "name":
            return ast.Name(span=span, parts=self.dotted(subtrees(node)[0]))
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
            inner, type_node = subtrees(node)
            return ast.Cast(span=span, expr=self.expr(inner), type=self.type_ref(type_node))
        if rule == "index":
            array, index = subtrees(node)
            return ast.Index(span=span, array=self.qualified(array), index=self.expr(index))
        if rule == "call":
            return ast.Call(
                span=span, func=self.name_leaf(node), args=self.args(child(node, "args"))
            )
        assert rule == "hash_call", rule
        type_arg = subtrees(node)[0]
        return ast.Call(
            span=span,
            func="hash",
            args=self.args(child(node, "args")),
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
