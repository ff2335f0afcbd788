"""The DPF parser's tree -> AST of a module's declarations: items, memory, attributes.

Contract: :class:`ModuleBuilder` turns the tree :mod:`dpfc.parsing` returns for a whole
``.dpf`` file into an :class:`~dpfc.syntax.ast.Module`: the ``module``, ``import``, ``app``
and ``const`` declarations, memory declarations (checking the shape of a ``map`` / ``array``
declaration, DPF5018), attributes and DPF declarations with their parameters. The bodies,
expressions, names and types inside them are built by the :class:`~.bodies.BodyBuilder` it
holds, which also collects every error found (``errors``) and refuses a nesting too deep.

Not responsible for: statements and expressions (:mod:`.bodies`), parsing the text
(:mod:`.parser`).
"""

from __future__ import annotations

import dpfc.syntax.ast as ast
from dpfc.catalog import codes
from dpfc.diagnostics import Diagnostic, SourceFile, Span
from dpfc.parsing import Node
from dpfc.syntax.bodies import BodyBuilder, child, leaves_of, subtrees


class ModuleBuilder:
    """Turns the grammar's tree of a file into the module's AST, its bodies built by a
    :class:`~.bodies.BodyBuilder`."""

    def __init__(self, source: SourceFile) -> None:
        self.body = BodyBuilder(source)

    @property
    def errors(self) -> list[Diagnostic]:
        """The errors found so far, in the order they were found."""
        return self.body.errors

    def module(self, tree: Node) -> ast.Module:
        items = tuple(self.item(node) for node in subtrees(tree))
        return ast.Module(span=Span(self.body.source, 0, len(self.body.source.text)), items=items)

    def item(self, node: Node) -> ast.Item:
        span = self.body.span(node)
        if node.rule == "module_decl":
            return ast.ModuleDecl(span=span, path=self.body.dotted(subtrees(node)[0]))
        if node.rule == "import_decl":
            aliases = leaves_of(node, "NAME")
            return ast.Import(
                span=span,
                path=self.body.dotted(subtrees(node)[0]),
                alias=self.body.ident(aliases[0]) if aliases else None,
            )
        if node.rule == "app_decl":
            values = subtrees(node)
            return ast.AppDecl(
                span=span,
                name=self.body.name_leaf(node),
                value=self.body.expr(values[0]) if values else None,
            )
        if node.rule == "const_decl":
            type_node = child(node, "type")
            return ast.ConstDecl(
                span=span,
                name=self.body.name_leaf(node),
                type=self.body.type_ref(type_node) if type_node is not None else None,
                value=self.body.expr(subtrees(node)[-1]),
            )
        if node.rule == "memory_decl":
            return self.memory(node)
        assert node.rule == "dpf_decl", node.rule
        params_node = child(node, "params")
        params = () if params_node is None else tuple(self.param(p) for p in subtrees(params_node))
        block = child(node, "block")
        assert block is not None
        return ast.DpfDecl(
            span=span,
            attrs=self.attributes(node),
            name=self.body.name_leaf(node),
            params=params,
            body=self.body.block(block),
        )

    def memory(self, node: Node) -> ast.MemoryDecl:
        (mapping,) = leaves_of(node, "DIRECT", "SEGMENT")
        (kind_leaf,) = leaves_of(node, "ARRAY", "MAP")
        name = self.body.name_leaf(node)
        types = [self.body.type_ref(t) for t in subtrees(node) if t.rule == "type"]
        kind = ast.MemoryKind(kind_leaf.value)
        if kind is ast.MemoryKind.MAP and len(types) == 1:
            self.body.error(
                codes.MEMORY_SHAPE,
                f"map `{name}` needs a key type",
                types[0].span,
                hint=f"write `{name}: u32 -> {types[0].name.value}[size]`",
            )
        if kind is ast.MemoryKind.ARRAY and len(types) == 2:
            self.body.error(
                codes.MEMORY_SHAPE,
                f"array `{name}` has no key type",
                Span(self.body.source, types[0].span.start, types[1].span.end),
                hint=f"write `{name}: {types[1].name.value}[size]`, or declare a `map`",
            )
        return ast.MemoryDecl(
            span=self.body.span(node),
            attrs=self.attributes(node),
            mapping=ast.Mapping(mapping.value),
            kind=kind,
            name=name,
            key_type=types[0] if len(types) == 2 else None,
            elem_type=types[-1],
            size=self.body.expr(subtrees(node)[-1]),
        )

    def attributes(self, node: Node) -> tuple[ast.Attribute, ...]:
        attrs = child(node, "attrs")
        if attrs is None:
            return ()
        out: list[ast.Attribute] = []
        for attr in subtrees(attrs):
            args: list[ast.Expr] = []
            kwargs: list[tuple[str, ast.Expr]] = []
            arg_list = child(attr, "attr_args")
            for arg in subtrees(arg_list) if arg_list is not None else []:
                if arg.rule == "attr_kwarg":
                    kwargs.append((self.body.name_leaf(arg), self.body.expr(subtrees(arg)[0])))
                else:
                    args.append(self.body.expr(subtrees(arg)[0]))
            out.append(
                ast.Attribute(
                    span=self.body.span(attr),
                    name=self.body.name_leaf(attr),
                    args=tuple(args),
                    kwargs=tuple(kwargs),
                )
            )
        return tuple(out)

    def param(self, node: Node) -> ast.Param:
        type_node = child(node, "type")
        assert type_node is not None
        return ast.Param(
            span=self.body.span(node),
            name=self.body.name_leaf(node),
            type=self.body.type_ref(type_node),
        )
