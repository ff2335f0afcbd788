"""The program the AST evaluator (:mod:`.run`) runs: its modules and cross-module names.

Contract: :class:`Program` holds the syntax trees of a program by module key, indexes each
module's constants, arrays and DPFs, resolves each import to a module key, and names arrays
and DPFs the way the IR names them (:meth:`Program.ir_name`), so that the evaluator's
memory and chain targets use the IR interpreter's keys. :func:`program_from` builds one from
whatever a caller holds (the checker's result, its loaded program, a mapping or one tree).
An unresolvable module raises :class:`~.values.EvalError`.

Not responsible for evaluating constants or array sizes (:mod:`.frame`), or for
checking the program: it assumes the checker accepted it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from dpfc.oracle.ast_eval.values import EvalError
from dpfc.syntax import ast


@dataclass
class ModuleView:
    key: str
    tree: ast.Module
    imports: dict[str, str] = field(default_factory=dict)  # local name -> module key
    consts: dict[str, ast.ConstDecl] = field(default_factory=dict)
    memories: dict[str, ast.MemoryDecl] = field(default_factory=dict)
    dpfs: dict[str, ast.DpfDecl] = field(default_factory=dict)


def _module_key(tree: ast.Module, fallback: str) -> str:
    return ".".join(tree.name) if tree.name is not None else fallback


class Program:
    """The modules of a program, by module key, with their imports resolved.

    ``imports`` maps each module key to {local name: module key}; without it an import is
    matched against the module keys by its dotted path, then by its last component. Arrays
    and DPFs are named as the IR names them: their own name in ``main``, ``m.name`` in a
    module whose key ends in ``m`` (``stdlib.countmin`` -> ``countmin.row0``).
    """

    def __init__(
        self,
        modules: Mapping[str, ast.Module],
        main: str,
        imports: Mapping[str, Mapping[str, str]] | None = None,
    ) -> None:
        self.main = main
        self.modules: dict[str, ModuleView] = {}
        for key, tree in modules.items():
            view = ModuleView(key, tree)
            for item in tree.items:
                if isinstance(item, ast.ConstDecl):
                    view.consts[item.name] = item
                elif isinstance(item, ast.MemoryDecl):
                    view.memories[item.name] = item
                elif isinstance(item, ast.DpfDecl):
                    view.dpfs[item.name] = item
            self.modules[key] = view
        for view in self.modules.values():
            if imports is not None and view.key in imports:
                view.imports = dict(imports[view.key])
                continue
            for item in view.tree.items:
                if isinstance(item, ast.Import):
                    view.imports[item.local_name] = self._find_module(item.path)

    def _find_module(self, path: tuple[str, ...]) -> str:
        dotted = ".".join(path)
        if dotted in self.modules:
            return dotted
        matches = [k for k in self.modules if k.split(".")[-1] == path[-1]]
        if len(matches) == 1:
            return matches[0]
        raise EvalError(f"module `{dotted}` is not loaded")

    def module(self, key: str) -> ModuleView:
        return self.modules[key]

    def ir_name(self, module: str, name: str) -> str:
        return name if module == self.main else f"{module.split('.')[-1]}.{name}"

    def lookup(self, module: str, parts: tuple[str, ...]) -> tuple[str, str]:
        """(module key, item name) of a possibly qualified name seen in ``module``."""
        if len(parts) == 1:
            return module, parts[0]
        head = ".".join(parts[:-1])
        imported = self.modules[module].imports.get(head)
        if imported is None:
            raise EvalError(f"unknown module `{head}`")
        return imported, parts[-1]


def program_from(program: Any) -> Program:
    """A :class:`Program` from the checker's result (``dpfc.sema.CheckedProgram``), its
    loaded program (``dpfc.sema.Program``), a {key: tree} mapping or a single tree.

    Only the trees and what each import names are taken from the checker.
    """
    if isinstance(program, Program):
        return program
    if isinstance(program, ast.Module):
        key = _module_key(program, "main")
        return Program({key: program}, key)
    loaded = getattr(program, "program", program)  # CheckedProgram -> its loaded Program
    modules = getattr(loaded, "modules", None)
    if isinstance(modules, Mapping) and isinstance(getattr(loaded, "main", None), str):
        trees = {str(k): m.tree for k, m in modules.items()}
        imports = {str(k): dict(m.imports) for k, m in modules.items()}
        return Program(trees, loaded.main, imports)
    if isinstance(program, Mapping):
        trees = {str(k): v for k, v in program.items()}
        return Program(trees, next(iter(trees)))
    raise EvalError(f"not a program: {program!r}")
