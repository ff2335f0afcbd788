"""The DPF language front end: AST (:mod:`.ast`), parser and canonical printer.

The parser (:mod:`.parser`) runs ``grammar.lark`` with error recovery (:mod:`.recovery`,
the messages of :mod:`.syntax_errors`) and builds the AST (:mod:`.declarations` for a
module's items, :mod:`.bodies` for statements and expressions); :mod:`.printer` writes it
back in canonical form.

``parse_module(SourceFile) -> ast.Module`` (raises DiagnosticError with DPF50xx codes) and
``format_module(ast.Module) -> str``; ``parse_module(format_module(t)) == t``.
"""

import dpfc.syntax.ast as ast
from dpfc.syntax.bodies import ACTION_NAMES
from dpfc.syntax.parser import parse_module
from dpfc.syntax.printer import format_expr, format_module, format_stmt
from dpfc.syntax.syntax_errors import KEYWORDS

__all__ = [
    "ACTION_NAMES",
    "KEYWORDS",
    "ast",
    "format_expr",
    "format_module",
    "format_stmt",
    "parse_module",
]
