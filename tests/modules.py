"""The product's Python modules as the rule tests see them: each file with the module name it
has once installed (``backends/sim/state.py`` is ``dpfc.backends.sim.state``: setup.py
maps the folder) and the modules it imports, relative imports resolved."""

from __future__ import annotations

import ast
import functools
from dataclasses import dataclass
from pathlib import Path

from tests.conftest import ROOT

# folder of the repository -> the package it holds
FOLDERS = {"dpfc": "dpfc", "backends": "dpfc.backends", "stdlib": "dpfc.stdlib"}


@dataclass(frozen=True)
class Module:
    path: Path
    name: str  # dotted, as installed: dpfc.backends.sim.state
    is_package: bool  # an __init__.py

    @property
    def shown(self) -> str:
        """The path relative to the repository, for messages."""
        return self.path.relative_to(ROOT).as_posix()

    @property
    def package(self) -> str:
        """The package the module belongs to (itself for an ``__init__``)."""
        return self.name if self.is_package else self.name.rpartition(".")[0]


def _name(path: Path) -> tuple[str, bool]:
    relative = path.relative_to(ROOT)
    parts = [FOLDERS[relative.parts[0]], *relative.parts[1:]]
    is_package = parts[-1] == "__init__.py"
    parts = parts[:-1] if is_package else [*parts[:-1], parts[-1].removesuffix(".py")]
    return ".".join(parts), is_package


@functools.cache
def modules() -> tuple[Module, ...]:
    found = []
    for folder in FOLDERS:
        for path in sorted((ROOT / folder).rglob("*.py")):
            if "__pycache__" not in path.parts:
                name, is_package = _name(path)
                found.append(Module(path, name, is_package))
    return tuple(found)


def module_named(name: str) -> Module | None:
    return next((m for m in modules() if m.name == name), None)


@functools.cache
def syntax_tree(module: Module) -> ast.Module:
    return ast.parse(module.path.read_text(encoding="utf-8"))


def _base(module: Module, level: int) -> str:
    parts = module.package.split(".")
    return ".".join(parts[: len(parts) - (level - 1)])


@functools.cache
def imports(module: Module) -> frozenset[str]:
    """Every absolute module name ``module`` imports (relative imports resolved; ``from P
    import x`` counts as an import of ``P``)."""
    found: set[str] = set()
    for node in ast.walk(syntax_tree(module)):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = _base(module, node.level)
                found.add(f"{base}.{node.module}" if node.module else base)
            else:
                found.add(node.module or "")
    return frozenset(found)
