"""Compiled DPFs as an object (:class:`~dpfc.objfile.model.ObjectFile`, written by
:mod:`dpfc.objfile.write`): the machine code and its bytes as code generation encoded
them, each instruction's source location, the variables each bundle's registers hold, the
schedule summary and the resource report."""

from __future__ import annotations

from collections.abc import Sequence

from dpfc.codegen.emit import CompiledDPF, qualified
from dpfc.codegen.report import report_json
from dpfc.objfile import ObjectDPF, ObjectFile, SourceLocation
from dpfc.target import TargetProfile


def object_dpf(compiled: CompiledDPF) -> ObjectDPF:
    problem = compiled.problem
    source: dict[str, tuple[SourceLocation | None, ...]] = {
        label: tuple(
            None if span is None else (span.source.name, span.line, span.column)
            for _, span in lines
        )
        for label, lines in compiled.source_map.items()
    }
    return ObjectDPF(
        symbol=qualified(problem.module, problem.name),
        encoded=compiled.encoded,
        params=problem.params,
        location=None
        if problem.span is None
        else (problem.span.source.name, problem.span.line, problem.span.column),
        source=source,
        variables=compiled.variables,
        schedule={
            "eus_used": compiled.schedule.eus_used,
            "scheduler": compiled.schedule.scheduler,
        },
        report=report_json(compiled),
    )


def module_object(module: str, profile: TargetProfile, units: Sequence[CompiledDPF]) -> ObjectFile:
    """The object of a module's compiled DPFs (in the given order)."""
    return ObjectFile(module, profile, tuple(object_dpf(u) for u in units))


__all__ = ["module_object", "object_dpf"]
