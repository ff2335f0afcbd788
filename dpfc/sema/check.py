"""The checker's entry point: every module of a program, then the program-level rules.

Contract: :func:`check_program` takes a loaded :class:`~dpfc.sema.loader.Program` and
returns a :class:`CheckedProgram` (item tables, constant values, the type of every
expression) or raises :class:`~dpfc.diagnostics.DiagnosticError` with *all* the errors it
found, sorted by file and position. :func:`check_file` loads and checks a file.

The phases, each reporting into one :class:`~dpfc.sema.report.Reporter` (main module
first, so that its mistakes are found in its own terms):

1. the module tables and names (:mod:`.resolve`) and the constants (:mod:`.consteval`);
2. the declarations: app id, array sizes and pins, each DPF's profile, placement and
   pipeline (:mod:`.items`);
3. every DPF body (:mod:`.statements`, over :mod:`.calls`, :mod:`.expressions` and
   :mod:`.scopes`, with the per-path rules of :mod:`.paths`);
4. the rules over all bodies, here: no cycle of chains (DPF5206: a DPF may not chain back
   to itself, directly or through others), and an array is accessed by DPFs of one
   pipeline only (DPF5224: each pipeline has its own lane memories; docs/isa.md §6
   item 20);
5. on a program without errors, the lints that need every body (:mod:`.lints`: unused
   arrays, shifts in declarations). :attr:`CheckedProgram.warnings` holds the warnings of
   the main module, sorted by position; a program with errors reports only its errors.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from dpfc.catalog import codes
from dpfc.diagnostics import Diagnostic, DiagnosticError, Note, SourceFile
from dpfc.sema.consteval import ConstEvaluator
from dpfc.sema.items import ItemChecker
from dpfc.sema.lints import Lints
from dpfc.sema.loader import Program, load_program
from dpfc.sema.report import Reporter, sort_key
from dpfc.sema.resolve import DpfInfo, ModuleInfo, ModuleRef, Resolver, build_tables
from dpfc.sema.scopes import BodyContext, Edge, Local
from dpfc.sema.statements import BodyChecker
from dpfc.sema.types import SemType
from dpfc.target import TargetProfile


@dataclass
class CheckedProgram:
    """A program that passed every check: what the lowering and the oracle need."""

    program: Program
    tables: dict[str, ModuleInfo]
    types: dict[int, SemType]
    consts: ConstEvaluator
    resolver: Resolver
    profile: TargetProfile  # the one profile every phase gets
    chains: list[Edge] = field(default_factory=list)
    warnings: list[Diagnostic] = field(default_factory=list)

    @property
    def main(self) -> str:
        return self.program.main

    @property
    def modules(self) -> dict[str, ModuleInfo]:
        return self.tables

    @property
    def main_module(self) -> ModuleInfo:
        return self.tables[self.program.main]

    @property
    def dpfs(self) -> list[DpfInfo]:
        """The DPFs of the main module, in source order."""
        return list(self.main_module.dpfs.values())


def _check_array_pipelines(ctx: BodyContext) -> None:
    """An array is memory of one pipeline: the egress pipeline's lane memories are other
    registers than the ingress's (P4 registers belong to one control), so an array used by
    an ingress DPF and by an egress DPF would silently be two arrays (DPF5224)."""
    for users in ctx.array_users.values():
        first = users[0]
        other = next((u for u in users if u.dpf.pipeline != first.dpf.pipeline), None)
        if other is None:
            continue
        ctx.report.error(
            codes.ARRAY_PIPELINES,
            f"`{other.name}` is used by {other.dpf.pipeline} DPF `{other.dpf.name}` and by "
            f"{first.dpf.pipeline} DPF `{first.dpf.name}`: each pipeline has its own memory, "
            "so an array belongs to one of them",
            other.span,
            notes=(Note(f"`{first.dpf.name}` uses it here", first.span),),
            hint="declare one array per pipeline, or move the accesses into DPFs of one pipeline",
        )


def _check_chain_cycles(ctx: BodyContext) -> None:
    edges: dict[int, list[Edge]] = {}
    for edge in ctx.chains:
        edges.setdefault(id(edge.source), []).append(edge)
    done: set[int] = set()
    reported: set[frozenset[int]] = set()

    def visit(dpf: DpfInfo, stack: list[Edge], on_stack: list[DpfInfo]) -> None:
        on_stack.append(dpf)
        for edge in edges.get(id(dpf), []):
            target = edge.target
            if any(target is d for d in on_stack):
                start = next(i for i, d in enumerate(on_stack) if d is target)
                cycle = [*stack[start:], edge]
                key = frozenset(id(e.source) for e in cycle)
                if key not in reported:
                    reported.add(key)
                    names = [e.source.ir_name for e in cycle] + [target.ir_name]
                    ctx.report.error(
                        codes.CHAIN_CYCLE,
                        "chain cycle: " + " -> ".join(f"`{n}`" for n in names)
                        if len(cycle) > 1
                        else f"`{target.name}` chains to itself",
                        edge.span,
                        notes=tuple(
                            Note(
                                f"`{e.source.ir_name}` chains to `{e.target.ir_name}` here", e.span
                            )
                            for e in cycle[:-1]
                        ),
                        hint="a DPF may not run again through its own chain; recursion is "
                        "not allowed",
                    )
            elif id(target) not in done:
                stack.append(edge)
                visit(target, stack, on_stack)
                stack.pop()
        on_stack.pop()
        done.add(id(dpf))

    for info in ctx.tables.values():
        for dpf in info.dpfs.values():
            if id(dpf) not in done:
                visit(dpf, [], [])


def check_program(program: Program, profile: TargetProfile) -> CheckedProgram:
    """Check every module of ``program`` for ``profile`` (resolved by :mod:`dpfc.driver`
    from ``--target`` and ``@target``); raise DiagnosticError with all errors found."""
    report = Reporter()
    tables = build_tables(program, report, profile)
    resolver = Resolver(tables, report, program.search_path)
    consts = ConstEvaluator(resolver, report)
    # Main module first, so that its mistakes are found (and reported) in its own terms.
    order = [program.main, *(k for k in tables if k != program.main)]
    for key in order:
        for info in tables[key].consts.values():
            consts.const(info)
    ItemChecker(tables, consts, report, profile).check()
    lints = Lints(report, consts)
    ctx = BodyContext(tables, report, resolver, consts, lints)
    for key in order:
        for dpf in tables[key].dpfs.values():
            BodyChecker(ctx, dpf).run()
    _check_chain_cycles(ctx)
    _check_array_pipelines(ctx)
    report.raise_if_any()
    lints.unused_arrays(tables[program.main], ctx.array_users)
    lints.declarations(tables[program.main])
    # The warnings of the file being checked: an imported module is linted on its own.
    main_source = program.main_module.source
    warnings = [w for w in report.warnings if w.span is None or w.span.source is main_source]
    return CheckedProgram(
        program,
        tables,
        ctx.types,
        consts,
        resolver,
        profile,
        ctx.chains,
        sorted(warnings, key=sort_key),
    )


def check_file(
    path: str | Path | SourceFile,
    profile: TargetProfile,
    search_path: list[str | Path] | None = None,
) -> CheckedProgram:
    """Load ``path`` and its imports and check them for ``profile`` (``dpfc check`` goes
    through :func:`dpfc.driver.check_source`, which also resolves the profile).

    Raises :class:`DiagnosticError` with every error found, sorted by position.
    """
    program = load_program(path, search_path)
    return check_program(program, profile)


__all__ = [
    "CheckedProgram",
    "DiagnosticError",
    "Edge",
    "Local",
    "ModuleRef",
    "check_file",
    "check_program",
]
