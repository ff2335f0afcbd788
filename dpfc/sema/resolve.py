"""Module-level names: the item tables of every loaded module, and qualified lookup.

Contract: :func:`build_tables` turns a loaded :class:`~dpfc.sema.loader.Program` into one
:class:`ModuleInfo` per module (constants, memories, DPFs, imports by local name), reporting
duplicate definitions (DPF5102, with a note on the first), a second ``module`` declaration
(DPF5123) and a second ``app`` (DPF5124). :class:`Resolver` looks a (possibly qualified)
name up as seen from one module: ``x`` is an item of that module, ``m.x`` an item of the
module imported as ``m``; unknown qualifiers (DPF5105, with the closest import or the
``import`` line that would provide the module: :meth:`Resolver.module_hint`) and items
(DPF5106, DPF5101) are reported there. Locals are not here: they belong to the body checker (:mod:`.check`).

Items get the name they carry in the IR: their own name in the main module, ``m.name`` in an
imported module whose key ends in ``m`` (``stdlib.countmin`` -> ``countmin.row0``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from dpfc.catalog import codes
from dpfc.diagnostics import Note, Span, did_you_mean
from dpfc.sema.loader import LoadedModule, Program, import_for
from dpfc.sema.report import Reporter
from dpfc.sema.types import SemType
from dpfc.syntax import ast
from dpfc.target import TargetProfile


@dataclass
class ConstInfo:
    decl: ast.ConstDecl
    module: str
    type: SemType | None = None  # known once evaluated
    value: int | None = None  # None until evaluated, or if evaluation failed
    failed: bool = False

    @property
    def name(self) -> str:
        return self.decl.name


@dataclass
class MemoryInfo:
    decl: ast.MemoryDecl
    module: str
    ir_name: str
    size: int | None = None
    pin: tuple[int, int] | None = None

    @property
    def name(self) -> str:
        return self.decl.name

    @property
    def elem(self) -> SemType:
        return SemType.I32 if self.decl.elem_type.name is ast.TypeName.I32 else SemType.U32

    @property
    def key_type(self) -> SemType:
        key = self.decl.key_type
        return SemType.I32 if key is not None and key.name is ast.TypeName.I32 else SemType.U32


@dataclass
class DpfInfo:
    decl: ast.DpfDecl
    module: str
    ir_name: str
    profile: TargetProfile  # the one profile the driver resolved for the program
    placement: str = "packet"
    pipeline: str = "ingress"

    @property
    def name(self) -> str:
        return self.decl.name


@dataclass
class ModuleRef:
    """A module's local name (``import stdlib.hash as h``: ``h``)."""

    decl: ast.Import
    key: str


Item = ConstInfo | MemoryInfo | DpfInfo | ModuleRef


@dataclass
class ModuleInfo:
    key: str
    loaded: LoadedModule
    is_main: bool
    consts: dict[str, ConstInfo] = field(default_factory=dict)
    memories: dict[str, MemoryInfo] = field(default_factory=dict)
    dpfs: dict[str, DpfInfo] = field(default_factory=dict)
    imports: dict[str, ModuleRef] = field(default_factory=dict)
    app: ast.AppDecl | None = None
    app_id: int | None = None

    @property
    def tree(self) -> ast.Module:
        return self.loaded.tree

    def item(self, name: str) -> Item | None:
        return (
            self.consts.get(name)
            or self.memories.get(name)
            or self.dpfs.get(name)
            or self.imports.get(name)
        )

    def value_names(self) -> list[str]:
        """The names a value or an array reference may mean: for "did you mean"."""
        return [*self.consts, *self.memories]


def ir_name(module: str, name: str, is_main: bool) -> str:
    return name if is_main else f"{module.split('.')[-1]}.{name}"


def describe(item: Item) -> str:
    """What an item is, with its article: ``an array``, ``a constant``."""
    if isinstance(item, ConstInfo):
        return "a constant"
    if isinstance(item, MemoryInfo):
        return "a map" if item.decl.kind is ast.MemoryKind.MAP else "an array"
    if isinstance(item, DpfInfo):
        return "a DPF"
    return "a module"


def _item_span(item: ast.Item) -> Span:
    return item.span


def build_tables(
    program: Program, report: Reporter, profile: TargetProfile
) -> dict[str, ModuleInfo]:
    tables: dict[str, ModuleInfo] = {}
    for key, loaded in program.modules.items():
        info = ModuleInfo(key, loaded, key == program.main)
        first: dict[str, ast.Item] = {}
        module_decl: ast.ModuleDecl | None = None
        for item in loaded.tree.items:
            if isinstance(item, ast.ModuleDecl):
                if module_decl is not None:
                    report.error(
                        codes.DUPLICATE_MODULE,
                        "a file holds one module: second `module` declaration",
                        item.span,
                        notes=(Note("the module is declared here", module_decl.span),),
                    )
                else:
                    module_decl = item
                continue
            if isinstance(item, ast.AppDecl):
                if info.app is not None:
                    report.error(
                        codes.DUPLICATE_APP,
                        "at most one `app` per module",
                        item.span,
                        notes=(Note("the module's app id is declared here", info.app.span),),
                        hint="DPFs with another app id go in a module of their own",
                    )
                else:
                    info.app = item
                continue
            name = item.local_name if isinstance(item, ast.Import) else item.name
            previous = first.get(name)
            if previous is not None:
                report.error(
                    codes.DUPLICATE_DEFINITION,
                    f"`{name}` is defined twice in module `{key}`",
                    item.span,
                    notes=(Note(f"`{name}` is first defined here", _item_span(previous)),),
                )
                continue
            first[name] = item
            if isinstance(item, ast.ConstDecl):
                info.consts[name] = ConstInfo(item, key)
            elif isinstance(item, ast.MemoryDecl):
                info.memories[name] = MemoryInfo(item, key, ir_name(key, name, info.is_main))
            elif isinstance(item, ast.DpfDecl):
                info.dpfs[name] = DpfInfo(item, key, ir_name(key, name, info.is_main), profile)
            elif isinstance(item, ast.Import):
                target = loaded.imports.get(name)
                if target is not None:
                    info.imports[name] = ModuleRef(item, target)
        tables[key] = info
    return tables


class Resolver:
    """Looks names up in the item tables, reporting what it cannot find; ``search_path``
    (the program's library directories) is where a missing import is looked for."""

    def __init__(
        self,
        tables: dict[str, ModuleInfo],
        report: Reporter,
        search_path: Sequence[Path] = (),
    ) -> None:
        self.tables = tables
        self.report = report
        self.search_path = search_path

    def module_hint(self, module: str, head: str, also: Iterable[str] = ()) -> str | None:
        """The hint for a qualifier ``head`` that names no imported module: the closest
        imported name (or of ``also``), else the ``import`` line that would provide it."""
        info = self.tables[module]
        close = did_you_mean(head, [*info.imports, *also])
        if close is not None or "." in head:
            return close
        line = import_for(info.loaded.path, head, self.search_path)
        return None if line is None else f"import it first: `{line}`"

    def lookup(self, module: str, name: ast.Name, near: Iterable[str] | None = None) -> Item | None:
        """The item ``name`` denotes in ``module`` (locals are the caller's business).

        ``near`` are the names a misspelt single name is compared with for the "did you
        mean" hint (the caller's locals and the module's constants and memories when None).
        """
        info = self.tables[module]
        if len(name.parts) == 1:
            item = info.item(name.parts[0])
            if item is None:
                choices = info.value_names() if near is None else near
                self.report.error(
                    codes.UNKNOWN_NAME,
                    f"unknown name `{name.text}`",
                    name.span,
                    hint=did_you_mean(name.parts[0], choices),
                )
            return item
        head = ".".join(name.parts[:-1])
        ref = info.imports.get(head)
        if ref is None:
            other = info.item(head)
            if other is not None:
                self.report.error(
                    codes.WRONG_KIND,
                    f"`{head}` is {describe(other)}, not an imported module",
                    name.span,
                )
            else:
                self.report.error(
                    codes.UNKNOWN_MODULE,
                    f"unknown module `{head}` in `{name.text}`",
                    name.span,
                    # `mata.ingress_port`: the qualifier may be a misspelt `meta` too.
                    hint=self.module_hint(module, head, ("meta",))
                    or f"import it first: `import {head};`",
                )
            return None
        target = self.tables.get(ref.key)
        if target is None:  # pragma: no cover - the loader resolved every import
            return None
        item = target.item(name.parts[-1])
        if item is None or isinstance(item, ModuleRef):
            self.report.error(
                codes.NO_SUCH_ITEM,
                f"module `{ref.key}` has no item `{name.parts[-1]}`",
                name.span,
                hint=did_you_mean(
                    name.parts[-1],
                    [*target.consts, *target.memories, *target.dpfs],
                    prefix=f"{head}.",
                ),
            )
            return None
        return item
