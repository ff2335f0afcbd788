"""``dpfc compile --validate``: every compiled DPF proved equal to its unoptimised IR.

Contract: :func:`validate_units` runs :func:`dpfc.verify.validate` on each DPF of a
compilation, against the IR lowered from source before any pass, and says per DPF
``proved`` (with the path pairs decided) or ``unknown`` (with Z3's reason). A refutation is
a compiler bug: it is reported (DPF8003) with the input that shows the difference, and the
command fails.
"""

from __future__ import annotations

from collections.abc import Callable

from dpfc.catalog import codes
from dpfc.diagnostics import Diagnostic, DiagnosticError, Note
from dpfc.driver import CompiledModule, lower
from dpfc.verify import validate_unlinked


def validate_units(compiled: CompiledModule, say: Callable[[str], None]) -> None:
    plain = lower(compiled.checked)
    problems = []
    for unit in compiled.units:
        program, module = unit.compiled.program, unit.problem.module
        result = validate_unlinked(plain, unit.name, module, program, unit.result.schedule)
        name = f"{unit.problem.module}.{unit.name}"
        if result.verdict == "proved":
            say(
                f"{name}: translation validation: proved equal to its IR ({result.pairs} path pair(s))\n"
            )
        elif result.verdict == "unknown":
            say(f"{name}: translation validation: unknown ({result.reason})\n")
        else:
            inputs = ", ".join(f"{k} = {v:#x}" for k, v in sorted(result.counterexample.items()))
            problems.append(
                Diagnostic(
                    codes.VALIDATION_REFUTED,
                    f"{name}: the machine code differs from the DPF's IR (a compiler bug)",
                    notes=(Note(f"an input that shows it: {inputs or 'any'}"),),
                )
            )
    if problems:
        raise DiagnosticError(problems)
