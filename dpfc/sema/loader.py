"""Loading a program: a ``.dpf`` file and, transitively, the modules it imports.

Contract: ``load_program(path, search_path)`` parses the file and every module it imports
and returns a :class:`Program` (modules by key; ``main`` is the key of the file itself), or
raises :class:`~dpfc.diagnostics.DiagnosticError` with every loading error: syntax errors
of any file (DPF50xx), imports that name no file (DPF5103), import cycles (DPF5104) and two
files claiming one module name (DPF5123).

An import ``a.b.c`` is looked up as ``a/b/c.dpf`` relative to the importing file's
directory, then in each directory of the search path (by default the project's
``stdlib/``): ``DIR/a/b/c.dpf``, or ``DIR/b/c.dpf`` when ``a`` is the directory's own name
(so ``import stdlib.hash`` finds ``stdlib/hash.dpf``). A module's key is its ``module``
declaration, else the dotted path it was first imported by, else its file stem.

:func:`import_for` finds the ``import`` line that would provide a module a file names
without importing it (the hint of DPF5105 and DPF5205).

A cycle is reported once, at the import in the file being loaded (the outermost file on the
import chain), with a note on every import that forms the cycle: the user sees the error
in the file they asked to check even when the cycle lies between library modules.
"""

from __future__ import annotations

import contextlib
import importlib.resources
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from dpfc.catalog import codes
from dpfc.diagnostics import (
    Diagnostic,
    DiagnosticError,
    Note,
    SourceFile,
    decode_source,
    did_you_mean,
)
from dpfc.sema.report import Reporter
from dpfc.syntax import ast, parse_module

# The standard library's folder: stdlib/ of the repository, shipped as the package data of
# dpfc.stdlib (setup.py maps the one to the other).
STDLIB_DIR = Path(str(importlib.resources.files("dpfc.stdlib")))


@dataclass
class LoadedModule:
    """One parsed file: its key, where it came from, and what its imports resolved to."""

    key: str
    path: Path
    source: SourceFile
    tree: ast.Module
    imports: dict[str, str] = field(default_factory=dict)  # local name -> module key

    @property
    def name(self) -> str:
        return self.key


@dataclass
class Program:
    """The loaded modules by key; ``main`` names the file that was asked for."""

    modules: dict[str, LoadedModule]
    main: str
    search_path: tuple[Path, ...] = ()  # the library directories imports were looked up in

    @property
    def main_module(self) -> LoadedModule:
        return self.modules[self.main]


def _display_name(path: Path) -> str:
    # Paths under the working directory print relative to it, like the file names users type.
    try:
        relative = os.path.relpath(path)
    except ValueError:  # pragma: no cover - another drive on Windows
        return str(path)
    return str(path) if relative.startswith("..") else relative


class _Loader:
    def __init__(self, search_path: Sequence[Path]) -> None:
        self.search_path = [Path(p) for p in search_path]
        self.report = Reporter()
        self.by_file: dict[Path, LoadedModule] = {}
        self.by_key: dict[str, LoadedModule] = {}
        self.failed: set[Path] = set()
        # The import chain being loaded: (module, the import in it that is being followed).
        self.stack: list[tuple[LoadedModule, ast.Import | None]] = []
        self.cycles: set[frozenset[Path]] = set()

    def _places(self, importer: LoadedModule, path: tuple[str, ...]) -> list[Path]:
        """The files ``import a.b.c`` may name, in the order they are tried."""
        relative = Path(*path[:-1], path[-1] + ".dpf")
        candidates = [importer.path.parent / relative]
        for directory in self.search_path:
            candidates.append(directory / relative)
            if len(path) > 1 and path[0] == directory.name:
                candidates.append(directory / Path(*path[1:-1], path[-1] + ".dpf"))
        return candidates

    def find(self, importer: LoadedModule, path: tuple[str, ...]) -> Path | None:
        for candidate in self._places(importer, path):
            if candidate.is_file():
                return candidate.resolve()
        return None

    def near(self, importer: LoadedModule, path: tuple[str, ...]) -> list[str]:
        """The modules next to the places ``path`` was looked for, by their last name (the
        shared ``stdlib.`` would make every library module look alike to "did you mean")."""
        names: list[str] = []
        for place in self._places(importer, path):
            with contextlib.suppress(OSError):
                names.extend(
                    sibling.stem for sibling in place.parent.glob("*.dpf") if sibling.is_file()
                )
        return names

    def parse(self, source: SourceFile, file: Path, key: str) -> LoadedModule | None:
        try:
            tree = parse_module(source)
        except DiagnosticError as exc:
            self.report.extend(exc.diagnostics)
            self.failed.add(file)
            return None
        if tree.name is not None:
            key = ".".join(tree.name)
        loaded = LoadedModule(key, file, source, tree)
        other = self.by_key.get(key)
        if other is not None:
            decl = next((i for i in tree.items if isinstance(i, ast.ModuleDecl)), None)
            self.report.error(
                codes.DUPLICATE_MODULE,
                f"two files define module `{key}`",
                decl.span if decl is not None else None,
                notes=(Note(f"`{key}` is also {_display_name(other.path)}", None),),
            )
        else:
            self.by_key[key] = loaded
        self.by_file[file] = loaded
        return loaded

    def load_file(self, file: Path, key: str) -> LoadedModule | None:
        try:
            source = decode_source(_display_name(file), file.read_bytes())
        except OSError as exc:
            self.report.error(
                codes.MODULE_NOT_FOUND, f"cannot read {_display_name(file)}: {exc}", None
            )
            self.failed.add(file)
            return None
        except DiagnosticError as exc:  # not UTF-8: located at the bad byte
            self.report.extend(exc.diagnostics)
            self.failed.add(file)
            return None
        return self.parse(source, file, key)

    def visit(self, module: LoadedModule) -> None:
        self.stack.append((module, None))
        for item in module.tree.items:
            if not isinstance(item, ast.Import):
                continue
            self.stack[-1] = (module, item)
            self.follow(module, item)
        self.stack.pop()

    def follow(self, module: LoadedModule, item: ast.Import) -> None:
        dotted = ".".join(item.path)
        file = self.find(module, item.path)
        if file is None:
            self.report.error(
                codes.MODULE_NOT_FOUND,
                f"cannot find module `{dotted}`",
                item.span,
                hint=did_you_mean(
                    item.path[-1],
                    self.near(module, item.path),
                    prefix="".join(f"{part}." for part in item.path[:-1]),
                )
                or f"looked for {'/'.join(item.path)}.dpf next to this file and in "
                + (", ".join(_display_name(p) + "/" for p in self.search_path) or "no library"),
            )
            return
        on_stack = [m.path for m, _ in self.stack]
        if file in on_stack:
            self.cycle(on_stack.index(file))
            return
        if file in self.failed:
            return
        loaded = self.by_file.get(file)
        if loaded is None:
            loaded = self.load_file(file, dotted)
            if loaded is None:
                return
            module.imports[item.local_name] = loaded.key
            self.visit(loaded)
        else:
            module.imports[item.local_name] = loaded.key

    def cycle(self, start: int) -> None:
        members = self.stack[start:]
        files = frozenset(m.path for m, _ in members)
        if files in self.cycles:
            return
        self.cycles.add(files)
        names = [m.key for m, _ in members] + [members[0][0].key]
        root_import = self.stack[0][1]
        assert root_import is not None
        notes = tuple(
            Note(f"`{m.key}` imports `{'.'.join(i.path)}` here", i.span)
            for m, i in members
            if i is not None and i is not root_import
        )
        self.report.error(
            codes.IMPORT_CYCLE,
            "import cycle: " + " -> ".join(f"`{n}`" for n in names),
            root_import.span,
            notes=notes,
            hint="move what the modules share into a module that imports neither",
        )


def load_program(
    path: str | Path | SourceFile, search_path: Sequence[str | Path] | None = None
) -> Program:
    """Parse ``path`` (a file name, or a :class:`SourceFile` named by its path) and its imports."""
    directories = [STDLIB_DIR] if search_path is None else [Path(p) for p in search_path]
    loader = _Loader([d.resolve() for d in directories])
    if isinstance(path, SourceFile):
        file = Path(path.name).resolve()
        main = loader.parse(path, file, Path(path.name).stem)
    else:
        file = Path(path).resolve()
        try:
            data = Path(path).read_bytes()
        except OSError as exc:
            raise DiagnosticError(_unreadable(str(path), exc)) from None
        main = loader.parse(decode_source(str(path), data), file, file.stem)
    if main is None:
        loader.report.raise_if_any()
        raise AssertionError("a failed parse reports its errors")  # pragma: no cover
    loader.visit(main)
    loader.report.raise_if_any()
    return Program(dict(loader.by_key), main.key, tuple(loader.search_path))


def import_for(importer: Path, name: str, search_path: Sequence[Path]) -> str | None:
    """The ``import`` that would make ``name`` a module of the file ``importer``: a file
    ``name.dpf`` next to it (``import name;``), in a folder beside it (``import folder.name;``)
    or in a library directory (``import stdlib.name;``); None if there is none."""
    directory = importer.parent
    if (directory / f"{name}.dpf").is_file():
        return f"import {name};"
    with contextlib.suppress(OSError):
        for folder in sorted(p for p in directory.iterdir() if p.is_dir()):
            if (folder / f"{name}.dpf").is_file():
                return f"import {folder.name}.{name};"
    for library in search_path:
        if (library / f"{name}.dpf").is_file():
            return f"import {library.name}.{name};"
    return None


def _unreadable(name: str, exc: Exception) -> Diagnostic:
    reason = getattr(exc, "strerror", None) or str(exc)
    return Diagnostic(codes.USER_ERROR, f"cannot read {name}: {reason}")
