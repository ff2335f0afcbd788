"""The abstract syntax tree of the DPF language (``.dpf``).

Every node is a frozen dataclass whose first field is its :class:`~dpfc.diagnostics.Span`
(the source text it came from), so every later phase can point at the exact source of what
it reports. Nodes hold only what the source says: names are strings (resolved by
:mod:`dpfc.sema`), constants are unevaluated expressions, and the canonical printer
(:mod:`dpfc.syntax.printer`) can write any tree back as source. Spans are excluded from
equality, so two trees parsed from differently formatted texts compare equal when they mean
the same program (``parse(print(t)) == t``).

Every field is keyword-only: ``Binary(span=s, op=BinaryOp.ADD, left=l, right=r)``.
The language itself is documented in ``docs/language.md``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

from dpfc.diagnostics import Span


class TypeName(Enum):
    U32 = "u32"
    I32 = "i32"
    BOOL = "bool"


@dataclass(frozen=True, kw_only=True)
class TypeRef:
    span: Span = field(compare=False, repr=False)
    name: TypeName


# -- expressions ---------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class IntLit:
    span: Span = field(compare=False, repr=False)
    value: int
    text: str = field(default="", compare=False)  # as written, e.g. 0x8000_0000


@dataclass(frozen=True, kw_only=True)
class BoolLit:
    span: Span = field(compare=False, repr=False)
    value: bool


@dataclass(frozen=True, kw_only=True)
class Name:
    """A (possibly qualified) name: ``x``, ``K``, ``countmin.sketch0``."""

    span: Span = field(compare=False, repr=False)
    parts: tuple[str, ...]

    @property
    def text(self) -> str:
        return ".".join(self.parts)


@dataclass(frozen=True, kw_only=True)
class Meta:
    """``meta.field``: a switch-metadata value (LOAD_MD)."""

    span: Span = field(compare=False, repr=False)
    field: str


@dataclass(frozen=True, kw_only=True)
class Index:
    """``array[index]``: a LOAD, or the target of a store / RMW / fetch_op."""

    span: Span = field(compare=False, repr=False)
    array: Name
    index: Expr


class UnaryOp(Enum):
    NEG = "-"
    NOT = "~"
    LNOT = "!"


@dataclass(frozen=True, kw_only=True)
class Unary:
    span: Span = field(compare=False, repr=False)
    op: UnaryOp
    operand: Expr


class BinaryOp(Enum):
    OR = "||"
    AND = "&&"
    EQ = "=="
    NE = "!="
    LT = "<"
    LE = "<="
    GT = ">"
    GE = ">="
    BIT_OR = "|"
    BIT_XOR = "^"
    BIT_AND = "&"
    SHL = "<<"
    SHR = ">>"
    ADD = "+"
    SUB = "-"
    MUL = "*"


@dataclass(frozen=True, kw_only=True)
class Binary:
    span: Span = field(compare=False, repr=False)
    op: BinaryOp
    left: Expr
    right: Expr


@dataclass(frozen=True, kw_only=True)
class Call:
    """A builtin call: ``min(a, b)``, ``hash<2>(x)`` (``type_args`` = (2,)), ``rand()``,
    ``fetch_add(arr[i], v)``, ``select(c, a, b)``, ``peek()``."""

    span: Span = field(compare=False, repr=False)
    func: str
    args: tuple[Expr, ...]
    type_args: tuple[Expr, ...] = ()


@dataclass(frozen=True, kw_only=True)
class Cast:
    span: Span = field(compare=False, repr=False)
    expr: Expr
    type: TypeRef


Expr = IntLit | BoolLit | Name | Meta | Index | Unary | Binary | Call | Cast


# -- statements ----------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class Block:
    span: Span = field(compare=False, repr=False)
    stmts: tuple[Stmt, ...]


@dataclass(frozen=True, kw_only=True)
class Let:
    span: Span = field(compare=False, repr=False)
    name: str
    type: TypeRef | None = None
    value: Expr


@dataclass(frozen=True, kw_only=True)
class Assign:
    """``x = e;`` — reassign a local."""

    span: Span = field(compare=False, repr=False)
    name: str
    value: Expr


class StoreOp(Enum):
    SET = "="
    ADD = "+="
    AND = "&="
    OR = "|="


@dataclass(frozen=True, kw_only=True)
class Store:
    """``arr[i] = v;`` (STORE) or ``arr[i] += v;`` / ``&=`` / ``|=`` (atomic, result unused)."""

    span: Span = field(compare=False, repr=False)
    target: Index
    op: StoreOp
    value: Expr


@dataclass(frozen=True, kw_only=True)
class ExprStmt:
    span: Span = field(compare=False, repr=False)
    expr: Expr


@dataclass(frozen=True, kw_only=True)
class If:
    span: Span = field(compare=False, repr=False)
    cond: Expr
    then: Block
    orelse: Block | If | None = None


@dataclass(frozen=True, kw_only=True)
class For:
    """``for i in start..end { body }``: ``end`` exclusive, both constant; unrolled."""

    span: Span = field(compare=False, repr=False)
    var: str
    start: Expr
    end: Expr
    body: Block


@dataclass(frozen=True, kw_only=True)
class Push:
    span: Span = field(compare=False, repr=False)
    values: tuple[Expr, ...]


@dataclass(frozen=True, kw_only=True)
class Action:
    """An epilog action written as a call statement: ``forward(d)``, ``multicast(g)``,
    ``set_port(p)``, ``return_to_sender()``, ``drop()``, ``pass()``, ``recirculate()``,
    ``drop_code()``. (The parser produces it for these names in statement position.)"""

    span: Span = field(compare=False, repr=False)
    name: str
    args: tuple[Expr, ...]


@dataclass(frozen=True, kw_only=True)
class Chain:
    span: Span = field(compare=False, repr=False)
    target: Name


@dataclass(frozen=True, kw_only=True)
class Return:
    span: Span = field(compare=False, repr=False)


Stmt = Let | Assign | Store | ExprStmt | If | For | Push | Action | Chain | Return


# -- module items --------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class Attribute:
    """``@name`` or ``@name(args)``; an argument is an expression or ``key = expression``."""

    span: Span = field(compare=False, repr=False)
    name: str
    args: tuple[Expr, ...] = ()
    kwargs: tuple[tuple[str, Expr], ...] = ()


@dataclass(frozen=True, kw_only=True)
class ModuleDecl:
    span: Span = field(compare=False, repr=False)
    path: tuple[str, ...]


@dataclass(frozen=True, kw_only=True)
class Import:
    span: Span = field(compare=False, repr=False)
    path: tuple[str, ...]
    alias: str | None = None

    @property
    def local_name(self) -> str:
        return self.alias if self.alias is not None else self.path[-1]


@dataclass(frozen=True, kw_only=True)
class AppDecl:
    span: Span = field(compare=False, repr=False)
    name: str
    value: Expr | None = None


@dataclass(frozen=True, kw_only=True)
class ConstDecl:
    span: Span = field(compare=False, repr=False)
    name: str
    type: TypeRef | None = None
    value: Expr


class Mapping(Enum):
    DIRECT = "direct"
    SEGMENT = "segment"


class MemoryKind(Enum):
    ARRAY = "array"  # segment array v: u32[N];
    MAP = "map"  # direct map m: u32 -> u32 [N];


@dataclass(frozen=True, kw_only=True)
class MemoryDecl:
    span: Span = field(compare=False, repr=False)
    attrs: tuple[Attribute, ...] = ()
    mapping: Mapping
    kind: MemoryKind
    name: str
    key_type: TypeRef | None = None  # maps only
    elem_type: TypeRef
    size: Expr


@dataclass(frozen=True, kw_only=True)
class Param:
    span: Span = field(compare=False, repr=False)
    name: str
    type: TypeRef


@dataclass(frozen=True, kw_only=True)
class DpfDecl:
    span: Span = field(compare=False, repr=False)
    attrs: tuple[Attribute, ...] = ()
    name: str
    params: tuple[Param, ...]
    body: Block


Item = ModuleDecl | Import | AppDecl | ConstDecl | MemoryDecl | DpfDecl


@dataclass(frozen=True, kw_only=True)
class Module:
    span: Span = field(compare=False, repr=False)
    items: tuple[Item, ...]

    @property
    def name(self) -> tuple[str, ...] | None:
        for item in self.items:
            if isinstance(item, ModuleDecl):
                return item.path
        return None
