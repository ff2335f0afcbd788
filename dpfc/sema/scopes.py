"""The state the layers of the body checker share: the program-wide context and the scopes.

Contract: :class:`BodyContext` holds what the check of one program collects over all its
DPF bodies (the type of every expression, the ``chain`` edges, the DPFs that use each
array); :class:`BodyState` is the state of the check of one DPF body, held by each of the
checkers that walk it (:mod:`.statements`, :mod:`.expressions`, :mod:`.calls`):

* locals are block-scoped: a name resolves to the innermost declaration, an inner block may
  shadow an outer name, and a second declaration of one name in one block is DPF5102;
* a ``for`` variable is a :class:`Local` of kind ``"loop"`` holding the value of the
  current iteration (the loops are unrolled), so constant expressions may use it;
* every array access goes to the per-path rules (:mod:`.paths`) and records the DPF's first
  access of that array, for the one-pipeline-per-array rule (DPF5224, in :mod:`.check`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from dpfc.catalog import codes
from dpfc.diagnostics import Note, Span
from dpfc.sema.consteval import ConstEvaluator
from dpfc.sema.lints import Lints, Usage
from dpfc.sema.paths import PathState
from dpfc.sema.report import Reporter
from dpfc.sema.resolve import DpfInfo, MemoryInfo, ModuleInfo, Resolver
from dpfc.sema.types import SemType


@dataclass
class Edge:
    """A ``chain`` statement of ``source`` naming ``target``."""

    source: DpfInfo
    target: DpfInfo
    span: Span


@dataclass(frozen=True)
class ArrayUse:
    """The first access of an array by one DPF."""

    dpf: DpfInfo
    name: str  # as the DPF writes it (`countmin.row0`)
    span: Span


@dataclass
class BodyContext:
    """The tables of a program and what checking its DPF bodies collects."""

    tables: dict[str, ModuleInfo]
    report: Reporter
    resolver: Resolver
    consts: ConstEvaluator
    lints: Lints
    types: dict[int, SemType] = field(default_factory=dict)
    chains: list[Edge] = field(default_factory=list)
    array_users: dict[str, list[ArrayUse]] = field(default_factory=dict)  # by IR name


@dataclass
class Local:
    name: str
    type: SemType
    kind: str  # "let" | "param" | "loop"
    span: Span
    value: int = 0  # a loop variable's value in the current iteration


class BodyState:
    """The state of the check of one DPF body: its scopes and its paths."""

    def __init__(self, ctx: BodyContext, dpf: DpfInfo) -> None:
        self.ctx = ctx
        self.report = ctx.report
        self.dpf = dpf
        self.module = dpf.module
        self.profile = dpf.profile
        self.scopes: list[dict[str, Local]] = [{}]
        self.path = PathState(self.report, self.profile.max_push)
        self.peek: Span | None = None  # the first `peek()`, for the stack depth (DPF5209)
        self.unrolled = 0  # copies of loop bodies so far, against MAX_UNROLLED
        self.usage = Usage()  # which locals and parameters are read (the unused lints)

    def local(self, name: str) -> Local | None:
        for scope in reversed(self.scopes):
            if name in scope:
                return scope[name]
        return None

    def visible(self, *kinds: str) -> list[str]:
        """The names of the locals in scope (of ``kinds``, all when none): "did you mean"."""
        return [
            name
            for scope in self.scopes
            for name, local in scope.items()
            if not kinds or local.kind in kinds
        ]

    def is_local(self, name: str) -> bool:
        found = self.local(name)
        return found is not None and found.kind != "loop"

    def is_variable(self, name: str) -> bool:
        """A local, a parameter or a loop variable: not constant for the lints that must
        hold in every unrolled copy (:mod:`.lints`)."""
        return self.local(name) is not None

    def loop_values(self) -> dict[str, int]:
        values: dict[str, int] = {}
        for scope in self.scopes:
            for name, local in scope.items():
                if local.kind == "loop":
                    values[name] = local.value
                else:
                    values.pop(name, None)
        return values

    def declare(self, local: Local) -> None:
        scope = self.scopes[-1]
        first = scope.get(local.name)
        if first is not None:
            what = "parameter" if first.kind == "param" else "local"
            self.report.error(
                codes.DUPLICATE_DEFINITION,
                f"`{local.name}` is already a {what} of this block",
                local.span,
                notes=(Note(f"`{local.name}` is first declared here", first.span),),
                hint="reassign it (`x = e;`) or use another name",
            )
        scope[local.name] = local
        self.usage.declare(local.name, local.kind, local.span)

    def access(self, memory: MemoryInfo, name: str, span: Span) -> None:
        """One access of ``memory`` on the current path (the RMT rule), and the first access
        of this DPF, for the one-pipeline-per-array check (DPF5224)."""
        self.path.access(memory.ir_name, name, span)
        users = self.ctx.array_users.setdefault(memory.ir_name, [])
        if not any(user.dpf is self.dpf for user in users):
            users.append(ArrayUse(self.dpf, name, span))
