"""The pass registry, the default pipeline and the runner that runs passes over a module.

``DEFAULT_PIPELINE`` is the ordered list ``dpfc compile`` and ``dpfc opt`` (without ``-p``)
run; ``dpfc opt --list-passes`` prints :func:`describe_passes`. With ``verify=True`` the IR
verifier (:mod:`dpfc.ir.verify`) checks the input and the IR after every pass: invalid
input is the user's error (:class:`~dpfc.diagnostics.DiagnosticError`), IR broken by a pass
is a compiler bug (:class:`PassVerificationError`).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import dpfc.passes.cleanup as cleanup
import dpfc.passes.combine as combine
import dpfc.passes.constfold as constfold
import dpfc.passes.copyprop as copyprop
import dpfc.passes.cse as cse
import dpfc.passes.dce as dce
import dpfc.passes.ifconvert as ifconvert
import dpfc.passes.reassociate as reassociate
import dpfc.passes.simplifycfg as simplifycfg
import dpfc.passes.sink as sink
import dpfc.passes.strength as strength
import dpfc.passes.unroll as unroll
from dpfc.diagnostics import Diagnostic, DiagnosticError, Severity
from dpfc.ir import Module, format_module, verify_module
from dpfc.passes.base import FunctionPass

PASSES: dict[str, FunctionPass] = {
    p.name: p
    for p in (
        unroll.PASS,
        strength.PASS,
        constfold.PASS,
        combine.PASS,
        reassociate.PASS,
        copyprop.PASS,
        cse.PASS,
        sink.PASS,
        simplifycfg.PASS,
        ifconvert.PASS,
        dce.PASS,
        cleanup.PASS,
    )
}

# Strength reduction first (no MUL reaches the later passes), mask tests combined into TEST
# once constants are folded, pure values sunk into the arms that use them (so that what
# follows does not depend on where the source wrote a `let`: re-association sees a chain
# whole only within one block), chains re-associated into trees of least height (before
# CSE, which then finds the pairs they share), one round of cleanups that exposes constant
# branches, sinking again (CSE merged values into dominating blocks), the CFG cleanup that
# makes diamonds visible, if-conversion,
# and then the cleanup group to a fixpoint for whatever if-conversion and merging exposed;
# the cleanup can expose one more diamond (an arm emptied), hence a second round.
DEFAULT_PIPELINE: tuple[str, ...] = (
    "unroll",
    "strength",
    "constfold",
    "combine",
    "sink",
    "reassociate",
    "copyprop",
    "cse",
    "sink",
    "simplifycfg",
    "ifconvert",
    "cleanup",
    "ifconvert",
    "cleanup",
)


class TextSink(Protocol):
    def write(self, text: str, /) -> object: ...


class UnknownPassError(ValueError):
    """A pipeline names a pass that is not registered."""


class PassVerificationError(Exception):
    """A pass produced IR the verifier rejects: a compiler bug, not a user error."""


@dataclass(frozen=True)
class PassRun:
    name: str
    seconds: float
    changed: bool


def describe_passes() -> str:
    """One line per registered pass: its name and what it does; then the default pipeline."""
    width = max(len(name) for name in PASSES)
    lines = [f"{name:<{width}}  {p.summary}" for name, p in PASSES.items()]
    lines.append("")
    lines.append("default pipeline: " + ",".join(DEFAULT_PIPELINE))
    return "\n".join(lines) + "\n"


def parse_pipeline(text: str) -> list[str]:
    """``"constfold,dce"`` -> the pass names, checked against the registry."""
    names = [part.strip() for part in text.split(",") if part.strip()]
    if not names:
        raise UnknownPassError("the pass list is empty")
    for name in names:
        if name not in PASSES:
            known = ", ".join(PASSES)
            raise UnknownPassError(f"unknown pass `{name}` (passes: {known})")
    return names


def _errors(diagnostics: list[Diagnostic]) -> list[Diagnostic]:
    return [d for d in diagnostics if d.severity is Severity.ERROR]


def verify_input(module: Module) -> list[Diagnostic]:
    """Reject IR the verifier finds invalid (a user error: DiagnosticError); return its
    warnings (an unreachable block, DPF5323) for the caller to report."""
    found = verify_module(module)
    errors = _errors(found)
    if errors:
        raise DiagnosticError(errors)
    return [d for d in found if d.severity is not Severity.ERROR]


def run_pipeline(
    module: Module,
    passes: Sequence[str] | None = None,
    *,
    verify: bool = False,
    print_after_all: TextSink | None = None,
    time_passes: TextSink | None = None,
) -> list[PassRun]:
    """Run ``passes`` (default: :data:`DEFAULT_PIPELINE`) in order over every function.

    With ``verify`` the input is checked first (:func:`verify_input`) and the IR after every
    pass (:class:`PassVerificationError` if a pass broke it).

    ``print_after_all`` receives the module's text after each pass; ``time_passes`` a table
    of the time each pass took. Returns one :class:`PassRun` per pass run.
    """
    names = list(DEFAULT_PIPELINE if passes is None else passes)
    for name in names:
        if name not in PASSES:
            raise UnknownPassError(f"unknown pass `{name}`")
    if verify:
        verify_input(module)
    runs: list[PassRun] = []
    for name in names:
        start = time.perf_counter()
        changed = PASSES[name].run(module)
        runs.append(PassRun(name, time.perf_counter() - start, changed))
        if verify:
            errors = _errors(verify_module(module))
            if errors:
                rendered = "\n".join(d.render() for d in errors)
                raise PassVerificationError(f"the IR is invalid after pass `{name}`:\n{rendered}")
        if print_after_all is not None:
            print_after_all.write(f"; *** IR after {name} ***\n{format_module(module)}")
    if time_passes is not None:
        time_passes.write(format_timings(runs))
    return runs


def format_timings(runs: list[PassRun]) -> str:
    total = sum(r.seconds for r in runs) or 1e-12
    lines = ["; pass timings", f";   {'ms':>9}  {'%':>6}  pass"]
    for run in runs:
        mark = "" if run.changed else "  (no change)"
        lines.append(
            f";   {run.seconds * 1000:9.3f}  {100 * run.seconds / total:6.1f}  {run.name}{mark}"
        )
    lines.append(f";   {sum(r.seconds for r in runs) * 1000:9.3f}  {100.0:6.1f}  total")
    return "\n".join(lines) + "\n"
