"""Syntax errors of the DPF language in words: a lark failure -> one named DPF50xx diagnostic.

Contract: :func:`syntax_diagnostic` takes the :class:`~dpfc.parsing.SyntaxFailure` of a
``.dpf`` parse (where parsing stopped, the token found there, the terminals the LALR tables
would have accepted) and returns a :class:`~dpfc.diagnostics.Diagnostic` that says what is
wrong the way a person would ("expected `;` after statement", "unclosed `{`"), never lark's
terminal names. The rules are tried from the most specific (a bad character, an unclosed or
mismatched delimiter, a chained comparison) to the most general (``unexpected X; expected
A or B``). Delimiters are matched by a small scan of the text before the failure, which also
finds the token before it (to put "expected `;`" just after the statement it ends).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from dpfc.catalog import codes
from dpfc.diagnostics import Diagnostic, Note, SourceFile, Span, did_you_mean
from dpfc.parsing import SyntaxFailure

KEYWORDS = frozenset(
    [
        "module",
        "import",
        "as",
        "app",
        "const",
        "direct",
        "segment",
        "array",
        "map",
        "dpf",
        "let",
        "if",
        "else",
        "for",
        "in",
        "push",
        "chain",
        "return",
        "true",
        "false",
        "u32",
        "i32",
        "bool",
        "meta",
    ]
)

_OPEN = {"(": ")", "[": "]", "{": "}"}
_CLOSE = {")": "(", "]": "[", "}": "{"}

_TOKEN = re.compile(
    r"(?P<skip>//[^\n]*|\s+)|(?P<word>[A-Za-z0-9_]+)"
    r"|(?P<op>\.\.|->|<<|>>|<=|>=|==|!=|&&|\|\||\+=|&=|\|=|.)",
    re.DOTALL,
)

# Terminal names -> words for "expected ..." lists.
_WORDS = {
    "SEMICOLON": "`;`",
    "COMMA": "`,`",
    "COLON": "`:`",
    "LPAR": "`(`",
    "RPAR": "`)`",
    "LBRACE": "`{`",
    "RBRACE": "`}`",
    "LSQB": "`[`",
    "RSQB": "`]`",
    "DOT": "`.`",
    "DOTDOT": "`..`",
    "ARROW": "`->`",
    "AT": "`@`",
    "EQ": "`=`",
    "GT": "`>`",
    "NAME": "a name",
    "INT": "an integer",
    "HASH_LT": "`hash<`",
}
_BINARY_OPS = frozenset(
    [
        "OROR",
        "ANDAND",
        "EQEQ",
        "NE",
        "LE",
        "GE",
        "LT",
        "GT",
        "BAR",
        "CARET",
        "AMP",
        "SHL",
        "SHR",
        "PLUS",
        "MINUS",
        "STAR",
    ]
)
_COMPARISONS = frozenset(["EQEQ", "NE", "LE", "GE", "LT", "GT"])
_ASSIGN_OPS = frozenset(["EQ", "PLUS_EQ", "AND_EQ", "OR_EQ"])
# Tokens that may continue an expression that is complete so far.
_CONTINUATIONS = _BINARY_OPS | {"AS", "LSQB", "LPAR", "DOT"}
_EXPR_STARTS = frozenset(
    ["INT", "NAME", "LPAR", "MINUS", "TILDE", "BANG", "TRUE", "FALSE", "META", "HASH_LT"]
)
_TYPES = frozenset({"U32", "I32", "BOOL"})
_ITEM_STARTS = frozenset(["MODULE", "IMPORT", "APP", "CONST", "AT", "DIRECT", "SEGMENT", "DPF"])
_CLOSERS = {"RPAR": ")", "RSQB": "]", "RBRACE": "}"}
_CLOSER_NAMES = {"(": "RPAR", "[": "RSQB"}


@dataclass(frozen=True)
class Token:
    text: str
    start: int
    end: int


def _tokens_before(text: str, offset: int) -> list[Token]:
    out: list[Token] = []
    for match in _TOKEN.finditer(text, 0, offset):
        if match.lastgroup != "skip":
            out.append(Token(match.group(), match.start(), match.end()))
    return out


def tokenize(text: str) -> list[Token]:
    """The tokens of ``text`` as this module sees them (words, operators, any other
    character alone; comments and blanks skipped): enough to match delimiters and find
    statement boundaries, which is all :mod:`dpfc.syntax.recovery` needs."""
    return _tokens_before(text, len(text))


def _open_delimiters(tokens: list[Token]) -> list[Token]:
    """The delimiters still open after ``tokens`` (mismatches before them are ignored)."""
    stack: list[Token] = []
    for token in tokens:
        if token.text in _OPEN:
            stack.append(token)
        elif token.text in _CLOSE and stack and stack[-1].text == _CLOSE[token.text]:
            stack.pop()
    return stack


def deepest_bracket(text: str) -> int:
    """The offset of the first bracket at the greatest nesting depth of ``text`` (0 if none)."""
    depth = best = offset = 0
    for token in _tokens_before(text, len(text)):
        if token.text in _OPEN:
            depth += 1
            if depth > best:
                best, offset = depth, token.start
        elif token.text in _CLOSE:
            depth = max(depth - 1, 0)
    return offset


def _describe(expected: frozenset[str]) -> str:
    """``{SEMICOLON, RPAR}`` -> "`)` or `;`", with groups for expressions and operators."""
    words: list[str] = []
    rest = set(expected)
    if {"INT", "NAME", "LPAR"} <= rest:
        words.append("an expression")
        rest -= _EXPR_STARTS
    if rest >= _TYPES:
        words.append("a type")
        rest -= _TYPES
    if len(rest & _BINARY_OPS) > 3:
        words.append("an operator")
        rest -= _BINARY_OPS | {"AS", "LSQB", "DOT"}
    if len(rest & _ASSIGN_OPS) > 1:
        words.append("`=`")
        rest -= _ASSIGN_OPS
    words.extend(sorted(_WORDS.get(t, f"`{t.lower()}`") for t in rest))
    if len(words) <= 1:
        return "".join(words)
    return ", ".join(words[:-1]) + " or " + words[-1]


def _found(failure: SyntaxFailure) -> str:
    return "end of file" if failure.found_type == "EOF" else f"`{failure.found}`"


def syntax_diagnostic(source: SourceFile, failure: SyntaxFailure) -> Diagnostic:
    """The named diagnostic for a failed parse of ``source``."""
    text = source.text
    # lark places end of input at the last token; the scan must see every token.
    offset = len(text) if failure.found_type == "EOF" else min(failure.offset, len(text))
    here = Span(source, offset, offset + max(len(failure.found), 1))
    if failure.found_type == "CHAR":
        return _bad_character(source, offset)
    tokens = _tokens_before(text, offset)
    open_delims = _open_delimiters(tokens)
    after = _after(source, tokens)
    expected = failure.accepts or failure.expected
    if failure.found_type == "EOF" and open_delims:
        opener = open_delims[-1]
        return Diagnostic(
            codes.UNCLOSED,
            f"unclosed `{opener.text}`",
            after,
            notes=(Note(f"`{opener.text}` opened here", Span(source, opener.start, opener.end)),),
            hint=f"add the missing `{_OPEN[opener.text]}`",
        )
    if failure.found_type in _CLOSERS:
        closer = _CLOSERS[failure.found_type]
        if not open_delims:
            return Diagnostic(codes.MISMATCHED_CLOSE, f"unmatched `{closer}`", here)
        opener = open_delims[-1]
        if _OPEN[opener.text] != closer:
            return Diagnostic(
                codes.MISMATCHED_CLOSE,
                f"mismatched `{closer}`: expected `{_OPEN[opener.text]}`",
                here,
                notes=(
                    Note(f"`{opener.text}` opened here", Span(source, opener.start, opener.end)),
                ),
            )
    if (
        failure.found_type in ("SEMICOLON", "LBRACE", "RBRACE")
        and open_delims
        and open_delims[-1].text in "(["
        and _CLOSER_NAMES[open_delims[-1].text] in expected
    ):
        opener = open_delims[-1]
        return Diagnostic(
            codes.UNCLOSED,
            f"unclosed `{opener.text}`",
            here,
            notes=(Note(f"`{opener.text}` opened here", Span(source, opener.start, opener.end)),),
            hint=f"add the missing `{_OPEN[opener.text]}` before {_found(failure)}",
        )
    found = _found(failure)
    in_body = bool(open_delims) and open_delims[-1].text == "{"
    previous = tokens[-1].text if tokens else ""
    if failure.found_type in _COMPARISONS and expected & {"OROR", "ANDAND"}:
        return Diagnostic(
            codes.CHAINED_COMPARISON,
            "comparison operators cannot be chained",
            here,
            hint="write `a < b && b < c`, or add parentheses",
        )
    if "GT" in expected and expected <= {"GT", "DOT"}:
        return Diagnostic(
            codes.HASH_ARGUMENT,
            f"expected `>` after the lane of `hash<...>`, found {found}",
            here,
            hint="the lane is a literal or a constant name; put an expression in parentheses",
        )
    if previous == "else" and expected & {"SEMICOLON", "EQ"}:
        else_token = tokens[-1]
        return Diagnostic(
            codes.ELSE_WITHOUT_IF,
            "`else` without a preceding `if`",
            Span(source, else_token.start, else_token.end),
            hint="`else` must follow the `}` of an `if` block",
        )
    if "NAME" in expected and failure.found in KEYWORDS:
        return Diagnostic(
            codes.KEYWORD_AS_NAME,
            f"`{failure.found}` is a keyword and cannot be used as a name",
            here,
        )
    if not open_delims and "CONST" in expected:
        return Diagnostic(
            codes.EXPECTED_ITEM,
            f"expected a declaration (module, import, app, const, memory or dpf), found {found}",
            here,
            hint="statements belong inside a `dpf` body"
            if failure.found in _STMT_WORDS
            else _misspelt(failure, _ITEM_WORDS),
        )
    if not open_delims and "DPF" in expected:
        return Diagnostic(
            codes.DANGLING_ATTRIBUTE,
            f"expected a memory or `dpf` declaration after the attributes, found {found}",
            here,
            hint="attributes (`@name(...)`) apply only to memory and `dpf` declarations",
        )
    rest = expected - {"SEMICOLON"}
    if "SEMICOLON" in expected and (
        rest <= _CONTINUATIONS | _ASSIGN_OPS if in_body else rest <= _CONTINUATIONS
    ):
        where = "statement" if in_body else "declaration"
        hint = None if failure.found_type == "EOF" else f"found {found} here"
        if previous == "return":
            hint = "`return` takes no value: results leave through `push(...)`"
        elif in_body:
            hint = _misspelt_statement(tokens) or hint
        return Diagnostic(codes.EXPECTED_SEMI, f"expected `;` after {where}", after, hint=hint)
    if {"INT", "NAME", "LPAR"} <= expected:
        return Diagnostic(
            codes.EXPECTED_EXPR, f"expected {_describe(expected)}, found {found}", here
        )
    if expected >= _TYPES:
        return Diagnostic(
            codes.EXPECTED_TYPE,
            f"expected a type (u32, i32 or bool), found {found}",
            here,
            hint=_misspelt(failure, ("u32", "i32", "bool")),
        )
    if expected == {"NAME"}:
        return Diagnostic(codes.EXPECTED_NAME, f"expected a name, found {found}", here)
    if "LBRACE" in expected and "SEMICOLON" not in expected:
        hint = "use `==` to compare" if failure.found_type == "EQ" else None
        return Diagnostic(
            codes.EXPECTED_BLOCK, f"expected `{{` to open a block, found {found}", here, hint=hint
        )
    return Diagnostic(
        codes.UNEXPECTED_TOKEN,
        f"unexpected {found}; expected {_describe(expected)}"
        if expected
        else f"unexpected {found}",
        here,
        hint=_misspelt(failure, [t.lower() for t in expected if t.lower() in KEYWORDS]),
    )


_STMT_WORDS = frozenset({"let", "if", "for", "push", "chain", "return"})
_ITEM_WORDS = ("module", "import", "app", "const", "direct", "segment", "dpf")


def _misspelt(failure: SyntaxFailure, keywords: Sequence[str]) -> str | None:
    """A "did you mean" for a name found where one of ``keywords`` belongs (`dfp`, `u23`)."""
    if failure.found_type != "NAME":
        return None
    return did_you_mean(failure.found, keywords)


def _misspelt_statement(tokens: list[Token]) -> str | None:
    """A "did you mean `let`?" when a statement starts with a near-miss of its keyword: the
    parser takes `lett` for an expression and trips on the name after it (`lett x = 1;`)."""
    if len(tokens) < 2 or tokens[-1].text in KEYWORDS or not tokens[-1].text.isidentifier():
        return None
    before = tokens[-2].text
    if before not in ("{", "}", ";"):
        return None
    # `else` only follows the `}` of an `if` block.
    words = sorted(_STMT_WORDS | {"else"}) if before == "}" else sorted(_STMT_WORDS)
    return did_you_mean(tokens[-1].text, words)


def _after(source: SourceFile, tokens: list[Token]) -> Span:
    """A one-character span just after the last token (where a missing `;` belongs)."""
    end = tokens[-1].end if tokens else 0
    return Span(source, end, end + 1)


def _bad_character(source: SourceFile, offset: int) -> Diagnostic:
    char = source.text[offset : offset + 1]
    shown = f"`{char}`" if char.isprintable() and not char.isspace() else f"U+{ord(char):04X}"
    span = Span(source, offset, offset + 1)
    if char in "/%":
        nxt = source.text[offset + 1 : offset + 2]
        hint = (
            "comments start with `//`"
            if nxt == "*"
            else "there is no division or remainder: use `>>` and `&` for powers of two"
        )
        return Diagnostic(codes.NO_SUCH_OPERATOR, f"`{char}` is not an operator", span, hint=hint)
    return Diagnostic(codes.UNEXPECTED_CHAR, f"unexpected character {shown}", span)
