"""The JIT's adapter to llvmlite: the only module that imports it (tests/test_layering.py).

Contract: :data:`ir` is llvmlite's IR builder module (``None`` when llvmlite cannot be
imported); :func:`missing` says why native code cannot be made here (None: it can);
:class:`NativeEngine` owns one MCJIT execution engine for the host CPU, adds IR modules to
it (optimised at ``-O2``) and gives the addresses of their functions. Modules added to one
engine may call each other's functions by name: the pipe's module (its tables and code
memory) and the modules of in-packet code share one engine, and the pass itself, compiled
once per profile to object code (:meth:`NativeEngine.object_code`), is added to each.
"""

from __future__ import annotations

import contextlib
from typing import Any

ir: Any
_binding: Any
try:
    import llvmlite.binding as _llvm_binding
    import llvmlite.ir as _llvm_ir
except ImportError as exc:  # pragma: no cover - llvmlite is a declared dependency
    ir = None
    _binding = None
    _IMPORT_ERROR: str | None = f"llvmlite cannot be imported ({exc})"
else:
    ir = _llvm_ir
    _binding = _llvm_binding
    _IMPORT_ERROR = None

_initialised = False
OPT_LEVEL = 2


def missing() -> str | None:
    """Why the JIT cannot run here, or None when it can."""
    if _IMPORT_ERROR is not None:
        return _IMPORT_ERROR
    try:
        _initialise()
    except Exception as exc:
        return f"LLVM cannot generate native code on this machine ({exc})"
    return None


def _initialise() -> None:
    global _initialised
    if _initialised:
        return
    # llvmlite >= 0.44 initialises the core itself and refuses the old call
    with contextlib.suppress(RuntimeError):
        _binding.initialize()
    _binding.initialize_native_target()
    _binding.initialize_native_asmprinter()
    _initialised = True


class NativeEngine:
    """One MCJIT engine for the host: IR modules in, function addresses out."""

    def __init__(self) -> None:
        _initialise()
        target = _binding.Target.from_default_triple()
        self._machine = target.create_target_machine(opt=OPT_LEVEL, codemodel="jitdefault")
        self.triple = _binding.get_process_triple()
        self.data_layout = str(self._machine.target_data)
        backing = _binding.parse_assembly("")
        self._engine = _binding.create_mcjit_compiler(backing, self._machine)
        self.modules_added = 0

    def new_module(self, name: str) -> Any:
        module = ir.Module(name=name)
        module.triple = self.triple
        module.data_layout = self.data_layout
        return module

    def add(self, module: Any) -> None:
        """Verify, optimise and compile ``module`` into the engine."""
        parsed = _binding.parse_assembly(str(module))
        parsed.verify()
        _optimise(parsed, self._machine)
        self._engine.add_module(parsed)
        self._engine.finalize_object()
        self.modules_added += 1

    def object_code(self, module: Any) -> bytes:
        """``module`` verified, optimised and compiled to an object file (not added): code
        made once and added to many engines (:meth:`add_object`)."""
        parsed = _binding.parse_assembly(str(module))
        parsed.verify()
        _optimise(parsed, self._machine)
        return bytes(self._machine.emit_object(parsed))

    def add_object(self, data: bytes) -> None:
        """Add compiled object code; its undefined symbols resolve against the modules
        added to this engine."""
        self._engine.add_object_file(_binding.ObjectFileRef.from_data(data))

    def global_address(self, name: str) -> int:
        address = int(self._engine.get_global_value_address(name))
        if not address:
            raise KeyError(f"no native global {name}")
        return address

    def address(self, name: str) -> int:
        address = int(self._engine.get_function_address(name))
        if not address:
            raise KeyError(f"no native function {name}")
        return address


def _optimise(module: Any, machine: Any) -> None:
    if hasattr(_binding, "create_pipeline_tuning_options"):  # the new pass manager
        options = _binding.create_pipeline_tuning_options(speed_level=OPT_LEVEL)
        builder = _binding.create_pass_builder(machine, options)
        manager = builder.getModulePassManager()
        manager.run(module, builder)
        return
    manager = _binding.create_module_pass_manager()  # pragma: no cover - older llvmlite
    pmb = _binding.create_pass_manager_builder()
    pmb.opt_level = OPT_LEVEL
    pmb.populate(manager)
    manager.run(module)


__all__ = ["NativeEngine", "ir", "missing"]
