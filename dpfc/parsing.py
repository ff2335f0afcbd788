"""The lark adapter: the only module of dpfc that imports lark.

Grammars are compiled once (LALR, with positions) and their trees are converted to the
plain :class:`Node`/:class:`Leaf` types below, so that the rest of dpfc never sees a lark
object. A syntax error becomes a :class:`SyntaxFailure` naming the offending token and the
terminals that would have been accepted there; callers turn it into a Diagnostic with
their own wording.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import lark
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken


@dataclass(frozen=True)
class Leaf:
    type: str
    value: str
    start: int
    end: int


@dataclass(frozen=True)
class Node:
    rule: str
    children: tuple[Node | Leaf, ...]
    start: int
    end: int

    def leaves(self) -> list[Leaf]:
        out: list[Leaf] = []
        for child in self.children:
            out.extend([child] if isinstance(child, Leaf) else child.leaves())
        return out


@dataclass(frozen=True)
class SyntaxFailure(Exception):
    """Where parsing stopped, what was found there and what was expected."""

    offset: int
    found: str  # the offending text ("" at end of input)
    found_type: str  # terminal name, "CHAR" for an unlexable character, "EOF"
    expected: frozenset[str]
    # The terminals the parser really accepts at the failure (``expected`` is LALR's merged
    # lookahead, a superset); empty when lark cannot tell.
    accepts: frozenset[str] = frozenset()


@cache
def _parser(grammar: str, start: str) -> lark.Lark:
    # cache=True: lark keeps the LALR tables in a temporary file keyed by the grammar, the
    # options and lark's version, so a CLI run does not rebuild them (about 0.5 s).
    return lark.Lark(
        grammar,
        parser="lalr",
        start=start,
        propagate_positions=True,
        maybe_placeholders=False,
        cache=True,
    )


def parse(grammar: str, text: str, start: str = "start") -> Node:
    """Parse ``text``; raises :class:`SyntaxFailure` on a syntax error."""
    try:
        tree = _parser(grammar, start).parse(text)
    except UnexpectedCharacters as exc:
        raise SyntaxFailure(
            exc.pos_in_stream or 0,
            text[exc.pos_in_stream or 0 : (exc.pos_in_stream or 0) + 1],
            "CHAR",
            frozenset(exc.allowed or ()),
        ) from None
    except UnexpectedEOF as exc:
        raise SyntaxFailure(len(text), "", "EOF", frozenset(exc.expected or ())) from None
    except UnexpectedToken as exc:
        token = exc.token
        pos = token.start_pos if token.start_pos is not None else len(text)
        kind = "EOF" if token.type == "$END" else token.type
        raise SyntaxFailure(
            pos,
            "" if kind == "EOF" else str(token),
            kind,
            frozenset(exc.expected or ()),
            _accepts(exc),
        ) from None
    except UnexpectedInput as exc:  # pragma: no cover - other lark error kinds
        raise SyntaxFailure(
            getattr(exc, "pos_in_stream", 0) or 0, "", "CHAR", frozenset()
        ) from None
    return _convert_root(tree)


def _accepts(exc: UnexpectedToken) -> frozenset[str]:
    parser = exc.interactive_parser
    if parser is None:
        return frozenset()
    accepted: set[str] = parser.accepts()  # type: ignore[no-untyped-call]
    return frozenset(t for t in accepted if t != "$END")


def _convert(item: lark.Tree[lark.Token] | lark.Token, fallback: int) -> Node | Leaf:
    if isinstance(item, lark.Token):
        start = item.start_pos if item.start_pos is not None else fallback
        end = item.end_pos if item.end_pos is not None else start + len(item)
        return Leaf(item.type, str(item), start, end)
    children = tuple(_convert(c, fallback) for c in item.children)
    meta = item.meta
    meta_start: int | None = getattr(meta, "start_pos", None)
    meta_end: int | None = getattr(meta, "end_pos", None)
    if meta_start is None:
        meta_start = children[0].start if children else fallback
        meta_end = children[-1].end if children else fallback
    return Node(
        str(item.data), children, meta_start, meta_end if meta_end is not None else meta_start
    )


def _convert_root(tree: lark.Tree[lark.Token]) -> Node:
    node = _convert(tree, 0)
    assert isinstance(node, Node)
    return node
