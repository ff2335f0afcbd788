"""A small structured P4-16 emitter: expressions, statements and declarations as objects.

Contract: the P4 generators build programs from these nodes only; :func:`render` prints a
:class:`Program` deterministically (the same nodes give the same text, byte for byte).
Nothing here knows SwitchVM: it is the P4 surface the generators need, no more. Generators
import it from here (``dpfc.backends.p4.lang``).

Modules:

* :mod:`.expressions`: expressions, one frozen node per form, rendered inline (``Expr`` and
  its nodes, ``lit``, ``n``, ``mux``);
* :mod:`.statements`: the line-based nodes: statements, declarations, :class:`Program` and
  :func:`render`.
"""

from dpfc.backends.p4.lang.expressions import (
    Bin,
    Bool,
    Call,
    Cast,
    DefaultInit,
    Expr,
    Lit,
    Mux,
    Name,
    Slice,
    Tuple,
    Un,
    lit,
    mux,
    n,
)
from dpfc.backends.p4.lang.statements import (
    Assign,
    Block,
    Comment,
    Const,
    Decl,
    Do,
    Function,
    Header,
    If,
    Implementation,
    Instance,
    Program,
    Raw,
    Return,
    Select,
    State,
    Stmt,
    Table,
    Var,
    action,
    chain,
    render,
    struct,
)

__all__ = [
    "Assign",
    "Bin",
    "Block",
    "Bool",
    "Call",
    "Cast",
    "Comment",
    "Const",
    "Decl",
    "DefaultInit",
    "Do",
    "Expr",
    "Function",
    "Header",
    "If",
    "Implementation",
    "Instance",
    "Lit",
    "Mux",
    "Name",
    "Program",
    "Raw",
    "Return",
    "Select",
    "Slice",
    "State",
    "Stmt",
    "Table",
    "Tuple",
    "Un",
    "Var",
    "action",
    "chain",
    "lit",
    "mux",
    "n",
    "render",
    "struct",
]
