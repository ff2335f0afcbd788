"""Syntax error recovery: several syntax errors of one file in one run, without cascades.

Contract: :func:`parse_recovering` parses a ``.dpf`` text and returns the grammar's tree (or
None when recovery had to stop) together with the DPF50xx diagnostics of every syntax error
it found, at most :data:`MAX_SYNTAX_ERRORS`, in source order. Spans point into the original
source.

How: the LALR parser stops at the first error; that error is worded by
:func:`~dpfc.syntax.syntax_errors.syntax_diagnostic`, then the text is repaired and parsed
again. A repair never moves a character, so every offset (and span) stays valid:

* a missing ``;`` (DPF5004) is written into the blank just after the statement, when there
  is one (``let x = 1\\n    let y = 2;``: the newline becomes ``;``);
* otherwise the whole statement that holds the error is blanked out (its characters become
  spaces, newlines stay): from just after the ``;``, ``{`` or ``}`` before it to its own
  ``;``, or to the ``}`` that closes a block it opened (an ``if``, a ``for``, a ``dpf``).

No cascades: what is reported next must be a mistake of the user, never of the repair.

* The next error must lie beyond the previous one, and a blanked statement must hold as
  many ``{`` as ``}``; otherwise recovery stops. Parentheses need no such check: the
  grammar has no ``;`` and no braces inside them, so a statement's unclosed ``(`` ends with
  the statement.
* An inserted ``;`` may be a wrong guess (``fro i in 0..3 {`` is a misspelt ``for``, not a
  statement ``fro``): unless the token after it starts a statement (``let``, ``}``, ...),
  an error before the end of the next statement is not reported; that statement is
  blanked silently.
* An error at the end of the file (an unclosed ``{``) is reported only while the last
  token is still the file's own (its place is "after the last token"); it ends recovery.
"""

from __future__ import annotations

from dataclasses import replace

from dpfc.catalog import codes
from dpfc.diagnostics import Diagnostic, Note, SourceFile, Span
from dpfc.parsing import Node, SyntaxFailure, parse
from dpfc.syntax.syntax_errors import Token, syntax_diagnostic, tokenize

# Beyond this many, the rest of the file is left for the next run (clang stops at 20,
# rustc never; ten fill a screen with carets and notes).
MAX_SYNTAX_ERRORS = 10

# Tokens that begin a statement or a declaration (or end a block): after an inserted `;`,
# the parse goes on from a fresh start there.
_STARTS = frozenset(
    {"let", "if", "for", "push", "chain", "return", "}"}
    | {"module", "import", "app", "const", "direct", "segment", "dpf", "@"}
)


def parse_recovering(grammar: str, source: SourceFile) -> tuple[Node | None, list[Diagnostic]]:
    """The tree of ``source`` (of its repaired text, when it had errors) and its syntax
    errors; the tree is None when the last error could not be recovered from.

    Raises RecursionError like :func:`dpfc.parsing.parse` (the caller reports nesting).
    """
    text = source.text
    errors: list[Diagnostic] = []
    last = -1
    quiet_until = -1  # errors up to here may come from the last repair: not reported
    while True:
        try:
            return parse(grammar, text), errors
        except SyntaxFailure as failure:
            at_end = failure.found_type == "EOF"
            offset = len(text) if at_end else failure.offset
            if offset <= last or (at_end and _last_end(text) != _last_end(source.text)):
                # No progress, or an end-of-file error whose place (after the last token)
                # a repair has moved: stop here.
                return None, errors
            last = offset
            if offset <= quiet_until:
                # Right after an inserted `;`, in the same statement: the guess was wrong
                # (`fro i in 0..3 {` is a misspelt `for`); drop the statement silently.
                repaired = _blank_statement(text, offset)
            elif len(errors) == MAX_SYNTAX_ERRORS:
                errors[-1] = _with_note(errors[-1], "more syntax errors follow; fix these first")
                return None, errors
            else:
                current = SourceFile(source.name, text)
                errors.append(_rebase(syntax_diagnostic(current, failure), source))
                if at_end:
                    return None, errors
                repaired = _insert_semicolon(text, errors[-1])
                if repaired is None:
                    repaired = _blank_statement(text, offset)
                elif failure.found not in _STARTS:
                    # What follows the `;` does not start a statement: if the `;` was not
                    # what was missing, its errors are the repair's, not the user's.
                    quiet_until = _next_boundary(repaired, errors[-1].span)
            if repaired is None:
                return None, errors
            text = repaired


def _last_end(text: str) -> int:
    tokens = tokenize(text)
    return tokens[-1].end if tokens else 0


def _insert_semicolon(text: str, diag: Diagnostic) -> str | None:
    """The text with the missing ``;`` written into the blank after the statement."""
    if diag.code != codes.EXPECTED_SEMI or diag.span is None:
        return None
    at = diag.span.start
    if at >= len(text) or not text[at].isspace():
        return None
    return text[:at] + ";" + text[at + 1 :]


def _next_boundary(text: str, inserted: Span | None) -> int:
    """The offset of the first ``;``, ``{`` or ``}`` after the ``;`` inserted at
    ``inserted`` (the end of the statement that follows it), or the end of the text."""
    assert inserted is not None
    for token in tokenize(text[inserted.end :]):
        if token.text in (";", "{", "}"):
            return inserted.end + token.start
    return len(text)


def _blank_statement(text: str, offset: int) -> str | None:
    """The text with the statement holding ``offset`` blanked, or None when it has no end
    before the end of the file or its braces do not balance."""
    tokens = tokenize(text)
    error = next((i for i, t in enumerate(tokens) if t.end > offset), None)
    if error is None:
        return None
    first = _statement_start(tokens, error)
    last = _statement_end(tokens, first, error)
    if last is None:
        return None
    unit = tokens[first : last + 1]
    opens = sum(t.text == "{" for t in unit)
    if opens != sum(t.text == "}" for t in unit):
        return None
    start, end = unit[0].start, unit[-1].end
    blank = "".join(c if c == "\n" else " " for c in text[start:end])
    return text[:start] + blank + text[end:]


def _statement_start(tokens: list[Token], error: int) -> int:
    """The index of the first token of the statement (or declaration) holding ``error``:
    just after the ``;``, ``{`` or ``}`` that ends what comes before it. Brackets between
    are skipped (``push(f(a), <error>``: the statement starts at ``push``)."""
    depth = 0
    index = error - 1
    while index >= 0:
        text = tokens[index].text
        if text in (")", "]", "}"):
            if text == "}" and depth == 0:
                break
            depth += 1
        elif text in ("(", "[", "{"):
            if depth == 0 and text == "{":
                break
            depth = max(depth - 1, 0)
        elif text == ";" and depth == 0:
            break
        index -= 1
    return index + 1


def _statement_end(tokens: list[Token], first: int, error: int) -> int | None:
    """The index of the last token of the statement that starts at ``first``: its ``;``,
    or the ``}`` closing a block it opened; None when the file ends first."""
    braces = 0
    for index in range(first, len(tokens)):
        text = tokens[index].text
        if text == "{":
            braces += 1
        elif text == "}":
            if braces == 0:
                # The enclosing block's `}`: the statement ends before it (an unmatched
                # `}` that is the error itself goes with the statement).
                return index if index == error else index - 1 if index > first else None
            braces -= 1
            if braces == 0 and index >= error:
                return index
        elif text == ";" and braces == 0 and index >= error:
            return index
    return None


def _rebase(diag: Diagnostic, source: SourceFile) -> Diagnostic:
    """The diagnostic with its spans in ``source`` (same offsets, the original text)."""

    def move(span: Span | None) -> Span | None:
        return None if span is None else Span(source, span.start, span.end)

    notes = tuple(Note(n.message, move(n.span)) for n in diag.notes)
    return replace(diag, span=move(diag.span), notes=notes)


def _with_note(diag: Diagnostic, message: str) -> Diagnostic:
    return replace(diag, notes=(*diag.notes, Note(message)))
