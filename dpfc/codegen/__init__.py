"""Code generation: schedules -> bundles (:mod:`.emit`), object files (:mod:`.objfile`) and
the resource report (:mod:`.report`)."""

from dpfc.codegen.emit import (
    CompiledDPF,
    format_module,
    format_with_source,
    generate,
    qualified,
)
from dpfc.codegen.objfile import (
    module_object,
    object_dpf,
)
from dpfc.codegen.report import (
    format_report,
    report_json,
)

__all__ = [
    "CompiledDPF",
    "format_module",
    "format_report",
    "format_with_source",
    "generate",
    "module_object",
    "object_dpf",
    "qualified",
    "report_json",
]
