"""The one decision of which target profile a program is compiled for.

Rule (docs/language.md, "Targets"): an explicit profile (``--target``) wins; otherwise the
profile every ``@target`` of the program names (the main module and its imports: their
DPFs share arrays and chain into each other, so they run on one kind of switch); otherwise
:data:`~dpfc.target.DEFAULT_PROFILE` (tofino1). Two ``@target``\\ s that name different
profiles are an error (DPF5220) even with ``--target``: the program states two intentions
and one of them is wrong. The profile object returned is the one every phase gets.

``@target`` attributes that are malformed or name no built-in profile are ignored here;
sema reports them (DPF5213, DPF5212).
"""

from __future__ import annotations

from dpfc.catalog import codes
from dpfc.diagnostics import Diagnostic, DiagnosticError, Note, Span
from dpfc.sema import Program
from dpfc.syntax import ast
from dpfc.target import BUILTIN_PROFILES, DEFAULT_PROFILE, TargetProfile


def declared_targets(program: Program) -> list[tuple[str, Span]]:
    """Every well-formed ``@target(NAME)`` of a built-in profile, in module then source
    order (main module first)."""
    keys = [program.main, *(k for k in program.modules if k != program.main)]
    found: list[tuple[str, Span]] = []
    for key in keys:
        for item in program.modules[key].tree.items:
            if not isinstance(item, ast.DpfDecl):
                continue
            for attr in item.attrs:
                if attr.name != "target" or attr.kwargs or len(attr.args) != 1:
                    continue
                arg = attr.args[0]
                if (
                    isinstance(arg, ast.Name)
                    and len(arg.parts) == 1
                    and arg.parts[0] in BUILTIN_PROFILES
                ):
                    found.append((arg.parts[0], arg.span))
    return found


def resolve_profile(program: Program, explicit: TargetProfile | None = None) -> TargetProfile:
    """The profile ``program`` is compiled for (see the module docstring)."""
    declared = declared_targets(program)
    if declared:
        first_name, first_span = declared[0]
        other = next(((n, s) for n, s in declared if n != first_name), None)
        if other is not None:
            name, span = other
            raise DiagnosticError(
                Diagnostic(
                    codes.TARGETS_DISAGREE,
                    f"the DPFs of this program are written for different targets: "
                    f"`{name}` here, `{first_name}` before",
                    span,
                    notes=(Note(f"`@target({first_name})` is given here", first_span),),
                    hint="a program's DPFs share arrays and chains, so they run on one kind "
                    "of switch: give every DPF the same @target (or none, and choose with "
                    "--target)",
                )
            )
    if explicit is not None:
        return explicit
    if declared:
        return BUILTIN_PROFILES[declared[0][0]]
    return DEFAULT_PROFILE


__all__ = ["declared_targets", "resolve_profile"]
