"""The house rules of the code that a machine can check (CONTRIBUTING.md lists them all).

* No import cycle, not even through a package's ``__init__``: every import statement counts,
  wherever it stands (under ``TYPE_CHECKING`` or in a function too).
* No module reads another module's ``_private`` name: neither by ``from M import _x`` nor
  by ``M._x``, nor ``obj._x`` for a private name the reading module does not define.
* Imports across packages go through the package's public names: outside package ``P``
  (a top-level package of dpfc, or one back end), ``from dpfc.P import Name`` with
  ``Name`` in ``P``'s ``__all__``; never ``dpfc.P.module``.
* No module is over 400 lines.

Diagnostic codes are the catalogue's constants, never a ``"DPFxxxx"`` literal:
tests/test_codes.py checks that rule.
"""

from __future__ import annotations

import ast
import functools

import networkx as nx

from tests.modules import Module, module_named, modules, syntax_tree

MAX_LINES = 400


def _is_module(name: str) -> bool:
    return module_named(name) is not None


def _ancestors(name: str) -> list[str]:
    parts = name.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts))]


def _targets(module: Module) -> set[str]:
    """The product modules whose code runs because ``module`` imports something: the
    imported module, each package ``__init__`` above it that is not above ``module``
    itself (those are already running), and for ``from P import n`` the package ``P``
    unless ``n`` is a submodule and ``P`` is above ``module`` (a name ``P``'s ``__init__``
    defines needs it to have run, even when ``module`` is inside ``P``)."""
    own = set(_ancestors(module.name)) | ({module.name} if module.is_package else set())
    found: set[str] = set()

    def add(name: str) -> None:
        for candidate in [*_ancestors(name), name]:
            if candidate not in own and _is_module(candidate):
                found.add(candidate)

    for node in ast.walk(syntax_tree(module)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                add(alias.name)
        elif isinstance(node, ast.ImportFrom):
            base = _resolve_from(module, node)
            for alias in node.names:
                submodule = f"{base}.{alias.name}"
                if _is_module(submodule):
                    add(submodule)
                    if base not in own:
                        add(base)
                elif _is_module(base):
                    found.add(base)  # a name of P's __init__: it must have run, even above us
    found.discard(module.name)
    return found


def _resolve_from(module: Module, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    parts = module.package.split(".")
    base = ".".join(parts[: len(parts) - (node.level - 1)])
    return f"{base}.{node.module}" if node.module else base


def test_no_import_cycle() -> None:
    graph: nx.DiGraph[str] = nx.DiGraph()
    for module in modules():
        graph.add_node(module.name)
        for target in _targets(module):
            graph.add_edge(module.name, target)
    cycles = [sorted(c) for c in nx.strongly_connected_components(graph) if len(c) > 1]
    assert cycles == [], "import cycles:\n" + "\n".join(" <-> ".join(c) for c in cycles)


# Private-looking names of the standard library's public API (namedtuple, enum).
NOT_PRIVATE = {"_replace", "_asdict", "_fields", "_make", "_value_", "_name_", "_missing_"}


@functools.cache
def _defined_here(module: Module) -> frozenset[str]:
    """Every private name ``module`` defines: module-level names, functions, classes,
    class attributes, and ``x._name = ...`` assignments."""
    names: set[str] = set()
    for node in ast.walk(syntax_tree(module)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            names.add(node.attr)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
    return frozenset(n for n in names if n.startswith("_"))


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__") and name not in NOT_PRIVATE


# Private names of third-party objects read on purpose, each with its reason.
THIRD_PARTY_PRIVATE = {
    # Thrift's generated clients keep their protocol only as _iprot: closing the socket the
    # clients of simple_switch_CLI share needs it.
    ("backends/p4/simple_switch_cli.py", "_iprot"),
}


def private_reads(module: Module) -> list[str]:
    problems = []
    defined = _defined_here(module)
    for node in ast.walk(syntax_tree(module)):
        if isinstance(node, ast.ImportFrom):
            base = _resolve_from(module, node)
            for alias in node.names:
                if _private(alias.name) and base.startswith("dpfc"):
                    problems.append(f"{module.shown}:{node.lineno} imports {base}.{alias.name}")
        elif isinstance(node, ast.Attribute) and _private(node.attr):
            owner = node.value
            if isinstance(owner, ast.Name) and owner.id in ("self", "cls"):
                continue
            if node.attr not in defined and (module.shown, node.attr) not in THIRD_PARTY_PRIVATE:
                problems.append(f"{module.shown}:{node.lineno} reads .{node.attr}")
    return problems


def test_no_module_reads_another_modules_private_names() -> None:
    problems = [p for module in modules() for p in private_reads(module)]
    assert problems == [], f"{len(problems)} private reads:\n" + "\n".join(problems)


def _unit(name: str) -> str | None:
    """The package an import of ``name`` must go through: ``dpfc.P`` for a top-level
    package ``P`` of dpfc, ``dpfc.backends.B`` for a back end; None for ``dpfc``'s own
    top-level modules and the ``dpfc.backends`` registry."""
    parts = name.split(".")
    if parts[0] != "dpfc" or len(parts) < 2:
        return None
    if parts[1] == "backends":
        return ".".join(parts[:3]) if len(parts) >= 3 else None
    unit = ".".join(parts[:2])
    found = module_named(unit)
    return unit if found is not None and found.is_package else None


@functools.cache
def _public_names(package: str) -> frozenset[str]:
    found = module_named(package)
    assert found is not None
    for node in syntax_tree(found).body:
        if isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
                assert node.value is not None
                return frozenset(ast.literal_eval(node.value))
    return frozenset()


def cross_package_imports(module: Module) -> list[str]:
    problems = []
    here = _unit(module.name)
    for node in ast.walk(syntax_tree(module)):
        names: list[tuple[str, str | None]]
        if isinstance(node, ast.Import):
            names = [(alias.name, None) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = _resolve_from(module, node)
            names = [(base, alias.name) for alias in node.names]
        else:
            continue
        for imported, name in names:
            unit = _unit(imported)
            if unit is None or unit == here:
                continue
            if imported != unit:
                problems.append(f"{module.shown}:{node.lineno} imports {imported}, not {unit}")
            elif name is not None and name not in _public_names(unit):
                problems.append(f"{module.shown}:{node.lineno}: {name} is not in {unit}.__all__")
    return problems


def test_imports_across_packages_use_public_names() -> None:
    problems = [p for module in modules() for p in cross_package_imports(module)]
    assert problems == [], f"{len(problems)} imports:\n" + "\n".join(problems)


def test_no_module_is_over_400_lines() -> None:
    long = {
        m.shown: n
        for m in modules()
        if (n := len(m.path.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    assert long == {}
