"""The DPF parser: source text -> :class:`~dpfc.syntax.ast.Module`.

Contract: ``parse_module(source)`` returns the module's AST, every node carrying the exact
:class:`~dpfc.diagnostics.Span` of its text, or raises
:class:`~dpfc.diagnostics.DiagnosticError` with named DPF50xx diagnostics. The grammar is
``grammar.lark`` next to this module, run by :mod:`dpfc.parsing` (LALR); a lark failure is
turned into words by :mod:`dpfc.syntax.syntax_errors`, and parsing goes on after it
(:mod:`dpfc.syntax.recovery`: up to ten syntax errors per file, no cascades). The tree is
turned into AST nodes by :mod:`dpfc.syntax.declarations` and :mod:`dpfc.syntax.bodies`,
whose checks (literal ranges, reserved words, assignment targets, map key types, nesting
depth) are reported together with the parser's, in source order.
"""

from __future__ import annotations

from functools import cache
from importlib import resources

import dpfc.syntax.ast as ast
from dpfc.diagnostics import Diagnostic, DiagnosticError, SourceFile
from dpfc.syntax.bodies import NestingTooDeep, nesting_too_deep
from dpfc.syntax.declarations import ModuleBuilder
from dpfc.syntax.recovery import parse_recovering
from dpfc.syntax.syntax_errors import deepest_bracket


@cache
def grammar() -> str:
    """The text of ``grammar.lark`` (package data)."""
    return resources.files("dpfc.syntax").joinpath("grammar.lark").read_text(encoding="utf-8")


def parse_module(source: SourceFile) -> ast.Module:
    """Parse a whole ``.dpf`` file; raises :class:`DiagnosticError` on a syntax error."""
    try:
        tree, errors = parse_recovering(grammar(), source)
    except RecursionError:
        raise DiagnosticError(nesting_too_deep(source, deepest_bracket(source.text))) from None
    if tree is None:
        raise DiagnosticError(errors)
    builder = ModuleBuilder(source)
    try:
        module = builder.module(tree)
    except NestingTooDeep as exc:
        raise DiagnosticError(nesting_too_deep(source, exc.offset)) from None
    errors.extend(builder.errors)
    if errors:
        # The builder's errors (literals, reserved names) lie between the parser's.
        raise DiagnosticError(sorted(errors, key=_position))
    return module


def _position(diag: Diagnostic) -> int:
    return diag.span.start if diag.span is not None else -1
