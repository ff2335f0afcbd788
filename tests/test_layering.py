"""The architecture's rules, checked on the imports of every module (docs/architecture.md).

* Phase order: a package imports only its own modules and packages of earlier layers.
* The core never imports a back end; only the entry points (``dpfc.cli``, ``dpfc.bench``)
  and other back ends do.
* The simulator imports only ``dpfc.encoding``, ``dpfc.isa``, ``dpfc.packet``,
  ``dpfc.switch`` and ``dpfc.target`` of dpfc: it runs bytes, knowing nothing of how they
  were made.
* No back end imports another, except through the one interface declared for it here: the
  JIT runs the simulator's switches through the simulator package's public names, the
  scenario front end (``dpfc run``) uses the simulator and the JIT through theirs, and the
  test runner (``dpfc test``) those of the scenario front end, the simulator, the JIT and
  the P4 back end (its bmv2 control).
* Each loosely typed third-party library is imported by its one adapter module.
"""

from __future__ import annotations

from tests.modules import Module, imports, modules

# Earlier layers first; a package may import the packages of any earlier layer.
LAYERS: list[set[str]] = [
    {"catalog"},  # the diagnostic codes (dpfc.catalog.codes), which every package names
    {"diagnostics", "parsing"},
    {"target"},
    {"isa"},
    {"encoding"},
    {"switch"},
    {"machine"},
    {"packet", "objfile"},
    {"asm", "syntax"},
    {"sema", "ir"},
    {"lower", "passes", "oracle"},
    {"schedule"},
    {"codegen"},
    {"link"},
    {"deploy", "driver", "verify"},
    {"backends", "stdlib"},
    {"cli", "bench"},
]
ENTRY_POINTS = {"cli", "bench", "__main__"}
SIMULATOR_MAY_USE = {"catalog", "encoding", "isa", "packet", "switch", "target"}
# back end -> the other back ends it may import, each only as its package (public names)
BACK_END_INTERFACES = {
    "jit": {"dpfc.backends.sim"},  # the simulator's runtime: Switch, PipeState, LaneMemory, ...
    "scenario": {"dpfc.backends.sim", "dpfc.backends.jit"},  # dpfc run's network and engine
    # dpfc test: cases built as scenarios, run on the simulator, the JIT or bmv2
    "testing": {
        "dpfc.backends.scenario",
        "dpfc.backends.sim",
        "dpfc.backends.jit",
        "dpfc.backends.p4",
    },
}
ADAPTERS = {
    "lark": {"dpfc/parsing.py"},
    # the scheduler's (Boolean: SAT) and the verifier's (bit-vectors and arrays)
    "z3": {"dpfc/schedule/z3/adapter.py", "dpfc/verify/bitvec.py"},
    "scapy": {"dpfc/packet/layers.py"},
    "networkx": {"dpfc/ir/cfg.py"},
    "llvmlite": {"backends/jit/llvm.py"},  # the JIT's adapter
    "matplotlib": {"dpfc/bench/plot.py"},  # the bench extra: only the scaling plot
}


def _layer_of(package: str) -> int:
    for index, layer in enumerate(LAYERS):
        if package in layer:
            return index
    raise AssertionError(f"package dpfc.{package} is in no layer of tests/test_layering.py")


def _package(module: Module) -> str:
    """The top-level package of dpfc the module is in ("" for dpfc/__init__.py)."""
    parts = module.name.split(".")
    return parts[1] if len(parts) > 1 else ""


def test_every_package_has_a_layer() -> None:
    packages = {_package(m) for m in modules()} - {"", "__main__"}
    for package in packages:
        _layer_of(package)


def test_no_package_imports_a_later_layer() -> None:
    problems = []
    for module in modules():
        package = _package(module)
        if package in ("", "__main__"):
            continue
        layer = _layer_of(package)
        for name in imports(module):
            parts = name.split(".")
            if parts[0] != "dpfc" or len(parts) < 2 or parts[1] == package:
                continue
            if _layer_of(parts[1]) >= layer:
                problems.append(f"{module.shown} imports {name}")
    assert problems == []


def test_only_entry_points_and_back_ends_import_back_ends() -> None:
    users = {
        module.shown
        for module in modules()
        if any(name.startswith("dpfc.backends") for name in imports(module))
        and _package(module) not in ENTRY_POINTS | {"backends"}
    }
    assert users == set()


def test_the_simulator_runs_bytes_and_knows_nothing_of_how_they_were_made() -> None:
    problems = []
    for module in modules():
        if not module.name.startswith("dpfc.backends.sim"):
            continue
        for name in imports(module):
            parts = name.split(".")
            if parts[0] != "dpfc" or parts[:3] == ["dpfc", "backends", "sim"]:
                continue
            if parts[1] not in SIMULATOR_MAY_USE:
                problems.append(f"{module.shown} imports {name}")
    assert problems == []


def _back_end(name: str) -> str | None:
    """The back end (``sim``, ``jit``, ``p4``, ``scenario``, ``testing``) a module name is
    in, if any."""
    parts = name.split(".")
    return parts[2] if parts[:2] == ["dpfc", "backends"] and len(parts) > 2 else None


def test_no_back_end_imports_another_but_through_its_declared_interface() -> None:
    problems = []
    for module in modules():
        own = _back_end(module.name)
        if own is None:
            continue
        allowed = BACK_END_INTERFACES.get(own, set())
        for name in imports(module):
            other = _back_end(name)
            if other is not None and other != own and name not in allowed:
                problems.append(f"{module.shown} imports {name}")
    assert problems == []


def test_each_third_party_library_has_one_adapter() -> None:
    for library, allowed in ADAPTERS.items():
        users = {
            module.shown
            for module in modules()
            if any(name == library or name.startswith(library + ".") for name in imports(module))
        }
        assert users <= allowed, f"{library} imported outside its adapter: {users - allowed}"


def test_click_is_imported_by_the_cli_only() -> None:
    users = {
        module.shown
        for module in modules()
        if "click" in {n.split(".")[0] for n in imports(module)}
    }
    assert all(user.startswith("dpfc/cli/") for user in users), users
