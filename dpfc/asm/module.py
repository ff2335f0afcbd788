"""Assembly files with several DPFs: what ``dpfc compile M.dpf --emit asm`` writes for a
module, read back by ``dpfc asm`` and by scenarios (docs/assembly.md, "Several DPFs").

Contract:

* A file is a list of *sections*, one DPF each. A ``.dpf`` directive after the first
  section's bundles (or after another ``.dpf``) opens the next section; each section is
  assembled on its own by :class:`~dpfc.asm.assembler.Assembler` (its own directives,
  labels and addresses), so the text of a one-DPF file means what it always meant.
* ``.module NAME``, before the first section's other directives, names the module: the
  DPFs' symbols are then ``last.dpf`` (``kvs.cache_get``; the last component of ``NAME``,
  as the compiler names them), which is how chains (``NEXT_PC kvs.empty``) and the linker
  name them. Without it the symbols are the DPFs' names.
* Every problem of every section is reported at once; two DPFs of one name or of two
  targets are DPF0132; asking for one DPF of a file that holds several, or for a name it
  does not hold, is DPF0131.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, replace

from dpfc.asm.assembler import Assembler
from dpfc.asm.syntax import AsmLine, Directive, Head, parse_lines
from dpfc.catalog import codes
from dpfc.diagnostics import Diagnostic, DiagnosticError, Note, SourceFile, Span
from dpfc.machine import MachineProgram, encode_program, format_program
from dpfc.objfile import ObjectFile
from dpfc.target import TargetProfile


@dataclass(frozen=True)
class AssembledModule:
    """The DPFs of one assembly file, in file order, with the module that names them."""

    source: SourceFile
    module: str | None  # the `.module` directive's name
    programs: tuple[MachineProgram, ...]

    def symbol(self, program: MachineProgram) -> str:
        """How the linker and chains name ``program``: ``last.dpf`` or the DPF's name."""
        if self.module is None:
            return program.name
        return f"{self.module.rpartition('.')[2]}.{program.name}"

    def names(self) -> list[str]:
        return [p.name for p in self.programs]

    def select(self, name: str | None) -> MachineProgram:
        """The DPF ``name`` (None: the file's only DPF); DPF0131 otherwise."""
        if name is None and len(self.programs) == 1:
            return self.programs[0]
        listed = ", ".join(f"`{n}`" for n in self.names())
        if name is None:
            raise DiagnosticError(
                Diagnostic(
                    codes.ASM_DPF_AMBIGUOUS_OR_MISSING,
                    f"{self.source.name} holds {len(self.programs)} DPFs ({listed}); "
                    "this needs one of them",
                    None,
                    hint="choose it with --dpf NAME (an object, --emit obj, takes them all)",
                )
            )
        for program in self.programs:
            if name in (program.name, self.symbol(program)):
                return program
        close = difflib.get_close_matches(name, self.names(), n=1)
        suggestion = f"; did you mean `{close[0]}`?" if close else ""
        raise DiagnosticError(
            Diagnostic(
                codes.ASM_DPF_AMBIGUOUS_OR_MISSING,
                f"{self.source.name} holds no DPF named `{name}` (it holds {listed}){suggestion}",
                None,
            )
        )

    def chosen(self, name: str | None) -> AssembledModule:
        """Only the DPF ``name`` (None: every DPF); DPF0131 if the file has none of that name."""
        if name is None:
            return self
        return replace(self, programs=(self.select(name),))

    def text(self) -> str:
        """The canonical text: ``.module`` (if named), then each DPF, one blank line apart."""
        head = f".module {self.module}\n\n" if self.module is not None else ""
        return head + "\n".join(format_program(p) for p in self.programs)

    def object(self, producer: str = "dpfc asm") -> ObjectFile:
        """The object of every DPF (``dpfc asm --emit obj``): bytes encoded once, symbols as
        :meth:`symbol` gives them, the module's name (else the only DPF's)."""
        dpfs = []
        for program in self.programs:
            single = ObjectFile.of_program(encode_program(program), producer)
            dpfs.append(replace(single.dpfs[0], symbol=self.symbol(program)))
        first = self.programs[0]
        module = self.module if self.module is not None else first.name
        return ObjectFile(module, first.profile, tuple(dpfs), producer, self.source.name)


def assemble_module(source: SourceFile, profile: TargetProfile | None = None) -> AssembledModule:
    """Assemble every DPF of ``source``; raises :class:`DiagnosticError` listing every problem
    of every section."""
    lines, syntax_errors = parse_lines(source)
    diagnostics: list[Diagnostic] = list(syntax_errors)
    module, lines = _module_name(lines, diagnostics)
    programs: list[MachineProgram] = []
    first_of: dict[str, Span | None] = {}
    sections = _sections(lines)
    # a section owns the syntax errors from its first line to the next section's
    starts = [0] + [s[0].span.start for s in sections[1:]] + [len(source.text) + 1]
    for index, section in enumerate(sections):
        errors = [
            d
            for d in syntax_errors
            if d.span is not None and starts[index] <= d.span.start < starts[index + 1]
        ]
        assembler = Assembler(source, profile)
        program = assembler.run_lines(section, errors)
        diagnostics.extend(assembler.diagnostics)
        if program is None:
            continue
        span = _dpf_span(section)
        if program.name in first_of:
            diagnostics.append(
                Diagnostic(
                    codes.ASM_CONFLICTING_DPFS,
                    f"DPF `{program.name}` is defined twice in one file",
                    span,
                    notes=(Note("first defined here", first_of[program.name]),),
                    hint="give each `.dpf` its own name",
                )
            )
            continue
        if programs and program.profile.name != programs[0].profile.name:
            diagnostics.append(
                Diagnostic(
                    codes.ASM_CONFLICTING_DPFS,
                    f"DPF `{program.name}` is for {program.profile.name} but "
                    f"`{programs[0].name}` is for {programs[0].profile.name}; "
                    "the DPFs of one file share a target",
                    span,
                )
            )
            continue
        first_of[program.name] = span
        programs.append(program)
    if diagnostics:
        diagnostics.sort(key=lambda d: d.span.start if d.span else -1)
        raise DiagnosticError(diagnostics)
    return AssembledModule(source, module, tuple(programs))


def _module_name(
    lines: list[AsmLine], diagnostics: list[Diagnostic]
) -> tuple[str | None, list[AsmLine]]:
    """The `.module` name and the other lines; `.module` is allowed only first."""
    module: str | None = None
    rest: list[AsmLine] = []
    for index, line in enumerate(lines):
        if not (isinstance(line, Directive) and line.name == "module"):
            rest.append(line)
            continue
        if any(not isinstance(other, Directive) or other.name == "dpf" for other in lines[:index]):
            diagnostics.append(
                Diagnostic(
                    codes.ASM_DIRECTIVE_TOO_LATE,
                    "`.module` comes first: it names the module of every DPF of the file",
                    line.span,
                )
            )
        elif module is not None:
            diagnostics.append(
                Diagnostic(codes.ASM_BAD_DIRECTIVE, "`.module` given twice", line.span)
            )
        elif len(line.args) != 1 or line.args[0].kind not in ("name", "symbol"):
            diagnostics.append(
                Diagnostic(
                    codes.ASM_BAD_DIRECTIVE,
                    "`.module` takes one name (`kvs`, `stdlib.countmin`)",
                    line.span,
                )
            )
        else:
            module = line.args[0].text
    return module, rest


def _sections(lines: list[AsmLine]) -> list[list[AsmLine]]:
    """Split at each `.dpf` that follows a bundle head or another `.dpf`."""
    sections: list[list[AsmLine]] = [[]]
    seen_dpf = seen_head = False
    for line in lines:
        if isinstance(line, Directive) and line.name == "dpf":
            if seen_dpf or seen_head:
                sections.append([])
                seen_head = False
            seen_dpf = True
        seen_head |= isinstance(line, Head)
        sections[-1].append(line)
    return sections


def _dpf_span(section: list[AsmLine]) -> Span | None:
    for line in section:
        if isinstance(line, Directive) and line.name == "dpf":
            return line.span
    return section[0].span if section else None


def assemble(
    source: SourceFile, profile: TargetProfile | None = None, dpf: str | None = None
) -> MachineProgram:
    """Assemble ``source`` and return its DPF ``dpf`` (None: its only DPF)."""
    return assemble_module(source, profile).select(dpf)


def assemble_text(
    text: str, name: str = "<input>", profile: TargetProfile | None = None
) -> MachineProgram:
    return assemble(SourceFile(name, text), profile)


__all__ = ["AssembledModule", "assemble", "assemble_module", "assemble_text"]
