"""Line syntax of ``.dpfasm`` assembly: one directive, bundle head or instruction per line.

Each line is parsed on its own (so one bad line does not hide errors on the others) into an
:class:`AsmLine`. The grammar is deliberately small; the meaning of names (mnemonics,
registers, stages) is decided by :mod:`dpfc.asm.assembler`.
"""

from __future__ import annotations

from dataclasses import dataclass

from dpfc.catalog import codes
from dpfc.diagnostics import Diagnostic, SourceFile, Span
from dpfc.parsing import Leaf, Node, SyntaxFailure, parse

GRAMMAR = r"""
start: directive | head | instruction |
directive: "." NAME dir_arg*
?dir_arg: NAME -> name | NUMBER -> number | SYMBOL -> symbol
head: NAME NAME? slot? ":"
slot: "@" NUMBER
instruction: NAME (operand ("," operand)*)?
?operand: NAME -> name
        | SYMBOL -> symbol
        | NUMBER -> number
        | "[" NAME "]" -> mem
        | "@" NAME ":" NUMBER -> pcref
NAME: /[A-Za-z_][A-Za-z0-9_]*/
SYMBOL.2: /[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)+/
NUMBER: /-?(0[xX]_*[0-9a-fA-F][0-9a-fA-F_]*|0[bB]_*[01][01_]*|[0-9][0-9_]*)/
COMMENT: /[;#][^\n]*/
%ignore COMMENT
%ignore /[ \t\r]+/
"""

_TOKEN_WORDS = {
    "NAME": "a name",
    "SYMBOL": "a symbol",
    "NUMBER": "a number",
    "COLON": "`:`",
    "COMMA": "`,`",
    "LSQB": "`[`",
    "RSQB": "`]`",
    "AT": "`@`",
    "DOT": "`.`",
    "$END": "end of line",
}


@dataclass(frozen=True)
class Operand:
    kind: str  # "name", "symbol" (``module.dpf``), "number", "mem", "pcref"
    text: str  # name / register / number text; for pcref the location word
    number: int | None
    span: Span


@dataclass(frozen=True)
class Directive:
    name: str
    args: tuple[Operand, ...]
    span: Span


@dataclass(frozen=True)
class Head:
    stage: str
    stage_span: Span
    label: str | None
    label_span: Span | None
    slot: int | None
    slot_span: Span | None
    span: Span


@dataclass(frozen=True)
class Instruction:
    mnemonic: str
    mnemonic_span: Span
    operands: tuple[Operand, ...]
    span: Span


AsmLine = Directive | Head | Instruction


def parse_number(text: str) -> int:
    clean = text.replace("_", "")
    negative = clean.startswith("-")
    if negative:
        clean = clean[1:]
    value = int(clean, 0) if clean[:2].lower() in ("0x", "0b") else int(clean, 10)
    return -value if negative else value


def _describe_expected(expected: frozenset[str]) -> str:
    if "NAME" in expected:  # a symbol (`kvs.empty`) is a kind of name; one word for both
        expected = expected - {"SYMBOL"}
    words = sorted({_TOKEN_WORDS.get(t, f"`{t}`") for t in expected})
    if not words:
        return ""
    if len(words) == 1:
        return words[0]
    return ", ".join(words[:-1]) + " or " + words[-1]


def parse_lines(source: SourceFile) -> tuple[list[AsmLine], list[Diagnostic]]:
    """Parse every line; returns the parsed lines and a diagnostic per bad line."""
    lines: list[AsmLine] = []
    diagnostics: list[Diagnostic] = []
    for number, start in enumerate(source.line_starts, start=1):
        text = source.line_text(number)
        try:
            tree = parse(GRAMMAR, text)
        except SyntaxFailure as failure:
            diagnostics.append(_syntax_diagnostic(source, start, text, failure))
            continue
        if not tree.children:
            continue
        lines.append(_build(source, start, tree.children[0]))
    return lines, diagnostics


def _syntax_diagnostic(
    source: SourceFile, line_start: int, text: str, failure: SyntaxFailure
) -> Diagnostic:
    offset = line_start + failure.offset
    expected = _describe_expected(failure.expected)
    number = _glued_number(text, failure.offset)
    if number is not None:
        start, end = number
        return Diagnostic(
            codes.ASM_SYNTAX,
            f"malformed number `{text[start:end]}`",
            Span(source, line_start + start, line_start + end),
            hint="numbers are decimal, 0x hexadecimal or 0b binary, with optional `_` separators",
        )
    hint = None
    if "COMMA" in failure.expected and failure.found_type in ("NAME", "NUMBER", "LSQB", "AT"):
        hint = "separate operands with `,`"
    if failure.found_type == "CHAR":
        message = f"unexpected character `{failure.found}`"
    elif failure.found_type == "EOF":
        message = "unexpected end of line"
    elif failure.found_type in ("NAME", "NUMBER"):
        message = f"unexpected {failure.found_type.lower()} `{failure.found}`"
    else:
        message = f"unexpected `{failure.found}`"
    if expected:
        message += f"; expected {expected}"
    length = max(len(failure.found), 1)
    return Diagnostic(codes.ASM_SYNTAX, message, Span(source, offset, offset + length), hint=hint)


def _glued_number(text: str, offset: int) -> tuple[int, int] | None:
    """The ``[start, end)`` of a number with junk glued to it (``0x1g``), if ``offset`` is in one."""
    if not 0 < offset < len(text):
        return None
    if not (_is_word_char(text[offset - 1]) and _is_word_char(text[offset])):
        return None
    start = offset
    while start > 0 and _is_word_char(text[start - 1]):
        start -= 1
    if not text[start].isdigit():
        return None
    if start > 0 and text[start - 1] == "-":
        start -= 1
    end = offset
    while end < len(text) and _is_word_char(text[end]):
        end += 1
    return start, end


def _is_word_char(char: str) -> bool:
    return char.isalnum() or char == "_"


def _span(source: SourceFile, base: int, item: Node | Leaf) -> Span:
    return Span(source, base + item.start, base + max(item.end, item.start + 1))


def _operand(source: SourceFile, base: int, node: Node | Leaf) -> Operand:
    assert isinstance(node, Node)
    leaves = node.leaves()
    span = _span(source, base, node)
    if node.rule == "number":
        return Operand("number", leaves[0].value, parse_number(leaves[0].value), span)
    if node.rule in ("name", "symbol"):
        return Operand(node.rule, leaves[0].value, None, span)
    if node.rule == "mem":
        return Operand("mem", leaves[0].value, None, span)
    return Operand("pcref", leaves[0].value, parse_number(leaves[1].value), span)


def _build(source: SourceFile, base: int, node: Node | Leaf) -> AsmLine:
    assert isinstance(node, Node)
    span = _span(source, base, node)
    if node.rule == "directive":
        name_leaf = node.children[0]
        assert isinstance(name_leaf, Leaf)
        args = tuple(_operand(source, base, c) for c in node.children[1:])
        return Directive(name_leaf.value, args, span)
    if node.rule == "head":
        names = [c for c in node.children if isinstance(c, Leaf) and c.type == "NAME"]
        slots = [c for c in node.children if isinstance(c, Node) and c.rule == "slot"]
        slot_leaf = slots[0].leaves()[0] if slots else None
        return Head(
            stage=names[0].value,
            stage_span=_span(source, base, names[0]),
            label=names[1].value if len(names) > 1 else None,
            label_span=_span(source, base, names[1]) if len(names) > 1 else None,
            slot=parse_number(slot_leaf.value) if slot_leaf else None,
            slot_span=_span(source, base, slots[0]) if slots else None,
            span=span,
        )
    mnemonic = node.children[0]
    assert isinstance(mnemonic, Leaf)
    operands = tuple(_operand(source, base, c) for c in node.children[1:])
    return Instruction(mnemonic.value, _span(source, base, mnemonic), operands, span)
