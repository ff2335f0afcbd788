"""The architecture's rules, checked on the imports of every module (docs/architecture.md).

* Phase order: a package imports only its own modules and packages of earlier layers.
* The core never imports a back end; only the entry points (``dpfc.cli``, ``dpfc.bench``)
  and other back ends do.
* The simulator imports only ``dpfc.encoding``, ``dpfc.isa``, ``dpfc.packet`` and
  ``dpfc.target`` of dpfc: it runs bytes, knowing nothing of how they were made.
* Each loosely typed third-party library is imported by its one adapter module.
"""

from __future__ import annotations

import ast
from pathlib import Path

from tests.conftest import ROOT

PACKAGE = ROOT / "dpfc"

# Earlier layers first; a package may import the packages of any earlier layer.
LAYERS: list[set[str]] = [
    {"diagnostics", "parsing", "catalog"},
    {"target"},
    {"isa"},
    {"encoding"},
    {"machine"},
    {"packet", "objfile"},
    {"asm", "syntax"},
    {"sema", "ir"},
    {"lower", "passes", "oracle"},
    {"schedule"},
    {"codegen"},
    {"link"},
    {"deploy", "driver"},
    {"backends"},
    {"cli", "bench"},
]
ENTRY_POINTS = {"cli", "bench", "__main__"}
SIMULATOR_MAY_USE = {"encoding", "isa", "packet", "target"}
ADAPTERS = {
    "lark": {"dpfc/parsing.py"},
    "z3": {"dpfc/schedule/z3model.py"},
    "scapy": {"dpfc/packet/layers.py"},
    "networkx": {"dpfc/ir/cfg.py"},
    "llvmlite": {"dpfc/backends/jit/llvm.py"},  # the JIT's adapter
    "matplotlib": {"dpfc/bench/plot.py"},  # the bench extra: only the scaling plot
}


def _layer_of(package: str) -> int:
    for index, layer in enumerate(LAYERS):
        if package in layer:
            return index
    raise AssertionError(f"package dpfc.{package} is in no layer of tests/test_layering.py")


def _modules() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts)


def _package(path: Path) -> str:
    parts = path.relative_to(PACKAGE).parts
    return parts[0].removesuffix(".py") if parts[0] != "__init__.py" else ""


def _imports(path: Path) -> set[str]:
    """Every absolute module name ``path`` imports (relative imports resolved)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    here = path.relative_to(ROOT).with_suffix("").parts
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = here[: len(here) - node.level]
                module = ".".join(base + ((node.module,) if node.module else ()))
            else:
                module = node.module or ""
            found.add(module)
    return found


def test_every_package_has_a_layer() -> None:
    packages = {_package(p) for p in _modules()} - {"", "__init__", "__main__"}
    for package in packages:
        _layer_of(package)


def test_no_package_imports_a_later_layer() -> None:
    problems = []
    for path in _modules():
        package = _package(path)
        if package in ("", "__main__"):
            continue
        layer = _layer_of(package)
        for name in _imports(path):
            parts = name.split(".")
            if parts[0] != "dpfc" or len(parts) < 2 or parts[1] == package:
                continue
            if _layer_of(parts[1]) >= layer:
                problems.append(f"{path.relative_to(ROOT)} imports {name}")
    assert problems == []


def test_only_entry_points_and_back_ends_import_back_ends() -> None:
    users = {
        str(path.relative_to(ROOT))
        for path in _modules()
        if any(name.startswith("dpfc.backends") for name in _imports(path))
        and _package(path) not in ENTRY_POINTS | {"backends"}
    }
    assert users == set()


def test_the_simulator_runs_bytes_and_knows_nothing_of_how_they_were_made() -> None:
    problems = []
    for path in sorted((PACKAGE / "backends" / "sim").glob("*.py")):
        for name in _imports(path):
            parts = name.split(".")
            if parts[0] != "dpfc" or parts[:3] == ["dpfc", "backends", "sim"]:
                continue
            if parts[1] not in SIMULATOR_MAY_USE:
                problems.append(f"{path.relative_to(ROOT)} imports {name}")
    assert problems == []


def test_each_third_party_library_has_one_adapter() -> None:
    for library, allowed in ADAPTERS.items():
        users = {
            str(path.relative_to(ROOT))
            for path in _modules()
            if any(name == library or name.startswith(library + ".") for name in _imports(path))
        }
        assert users <= allowed, f"{library} imported outside its adapter: {users - allowed}"


def test_click_is_imported_by_the_cli_only() -> None:
    users = {
        str(path.relative_to(ROOT))
        for path in _modules()
        if "click" in {n.split(".")[0] for n in _imports(path)}
    }
    assert all(user.startswith("dpfc/cli/") for user in users), users
