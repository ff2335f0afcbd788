"""Schedule -> machine code: the bundles of one DPF, placed in the packet or the switch.

Contract: the input is a schedule the checker accepts; the output (:class:`CompiledDPF`) is
an :class:`~dpfc.asm.program.AssembledProgram` — the same object the assembler produces, so
the encoders, the simulator and the disassembler take compiled and hand-written DPFs alike
— plus, for every placed bundle, the source spans of each instruction in it, and the
relocations (chain targets) the linker must resolve.

* One bundle per :class:`~dpfc.schedule.schedule.Step`, one prolog, one epilog per leaf.
  A branch step's PCs name the children's first bundles (their epilogs if the branch is in
  the last EU); a leaf's last step HALTs to its epilog (JMP in the last EU); other steps
  JMP to the node's next step.
* Bundles are built from the epilog backwards, so identical bundles of a stage (with
  identical successors) are shared: in-packet code carries each once.
* In-packet DPFs get ``@packet:i`` addresses in order of first use; in-switch DPFs slots
  from 0 per stage (the installer and the linker relocate them).
* A chain (``NEXT_PC``) names the target's prolog from ``chain_targets``; without it the
  epilog holds the placeholder ``@switch:0`` and a :class:`Relocation` records the name.

The result is checked with :mod:`dpfc.isa.check` (a failure is a compiler bug); in-packet
code must also encode within the Geneve option limits (DPF6201, a user error).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from dpfc.asm.printer import _bundle_lines, _Labels  # the assembler's canonical printer
from dpfc.asm.program import AssembledProgram, PlacedBundle, Placement
from dpfc.diagnostics import Diagnostic, DiagnosticError, Span
from dpfc.encoding.errors import EncodingError
from dpfc.encoding.header import encode_options
from dpfc.isa.bundle import (
    EPILOG_STAGE,
    PC,
    PROLOG_STAGE,
    Bundle,
    Control,
    EpilogBundle,
    Imm,
    Operand,
    Register,
    Selector,
    StageBundle,
    Steering,
    stage_name,
)
from dpfc.isa.check import check_bundle, check_epilog, check_image
from dpfc.isa.opcodes import AluOp, CtrlOp, MemOp, SelectorKind
from dpfc.schedule.problem import Branch, Exit, Kind, Problem
from dpfc.schedule.schedule import Schedule, Source

PLACEHOLDER = PC(False, 0)  # NEXT_PC of an unresolved chain


@dataclass(frozen=True)
class Relocation:
    """The epilog ``label`` chains to DPF ``target``: its NEXT_PC awaits the target's PC."""

    label: str
    target: str


@dataclass(frozen=True)
class CompiledDPF:
    program: AssembledProgram
    schedule: Schedule
    # label -> (assembly line, source span or None) for every instruction of the bundle
    source_map: dict[str, tuple[tuple[str, Span | None], ...]]
    relocations: tuple[Relocation, ...]

    @property
    def problem(self) -> Problem:
        return self.schedule.problem


class _Emitter:
    def __init__(self, schedule: Schedule, chain_targets: Mapping[str, PC]) -> None:
        self.schedule = schedule
        self.problem = schedule.problem
        self.profile = self.problem.profile
        self.chain_targets = chain_targets
        self.in_packet = self.problem.placement == "packet"
        # stage -> bundle -> (PC, label); first-use order
        self.placed: dict[int, dict[StageBundle, tuple[PC, str, Span | None]]] = {}
        self.annotations: dict[str, tuple[tuple[str, Span | None], ...]] = {}
        self.relocations: list[Relocation] = []
        self.lines: dict[str, list[Span | None]] = {}

    def place(
        self,
        stage: int,
        bundle: StageBundle,
        label: str,
        spans: list[Span | None],
        span: Span | None,
    ) -> PC:
        table = self.placed.setdefault(stage, {})
        if bundle not in table:
            pc = PC(self.in_packet, len(table))
            table[bundle] = (pc, label, span)
            self.lines[label] = spans
        return table[bundle][0]

    def source(self, source: Source) -> Operand:
        if isinstance(source, Register):
            return source
        return Imm(self.problem.ops[source].value)

    # -- epilogs ---------------------------------------------------------------------------
    def epilog(self, leaf: int) -> PC:
        end = self.problem.nodes[leaf].end
        assert isinstance(end, Exit)
        use = self.schedule.exit(leaf)
        spans: list[Span | None] = []
        steering = Steering("pass")
        if end.push:
            spans.append(end.span)
        if end.steer != "pass" or end.steer_value is not None:
            value = self.source(use.steer_value) if use.steer_value is not None else None
            steering = Steering(end.steer, value)
            spans.append(end.span)
        next_pc: PC | None = None
        label = f"exit_n{leaf}"
        if end.chain is not None:
            next_pc = self.chain_targets.get(end.chain, PLACEHOLDER)
            spans.append(end.span)
        if end.drop_code:
            spans.append(end.span)
        bundle = EpilogBundle(tuple(use.push), steering, next_pc, end.drop_code)
        pc = self.place(EPILOG_STAGE, bundle, label, spans, end.span)
        placed_label = self.placed[EPILOG_STAGE][bundle][1]
        if end.chain is not None and end.chain not in self.chain_targets:
            relocation = Relocation(placed_label, end.chain)
            if relocation not in self.relocations:
                self.relocations.append(relocation)
        return pc

    # -- EU bundles ------------------------------------------------------------------------
    def first_pc(self, node: int) -> tuple[int, PC]:
        """(stage, PC) of the first bundle a path entering ``node`` runs."""
        span = self.schedule.spans[node]
        if span.first_eu > span.last_eu:
            return EPILOG_STAGE, self.epilog(node)
        return span.first_eu + 1, self.step_pc(node, span.first_eu)

    def step_pc(self, node: int, eu: int) -> PC:
        step = self.schedule.step(node, eu)
        tree_node = self.problem.nodes[node]
        span = self.schedule.spans[node]
        last_eu = self.profile.num_eus - 1
        spans: list[Span | None] = []
        ops = self.problem.ops
        selectors = []
        for sel in step.selectors:
            if sel.kind is SelectorKind.MOV:
                selectors.append(Selector(sel.dest, SelectorKind.MOV, source=sel.source))
                spans.append(None)
            elif sel.kind is SelectorKind.LOAD_IMM:
                assert sel.op is not None
                selectors.append(Selector(sel.dest, SelectorKind.LOAD_IMM, value=ops[sel.op].value))
                spans.append(None)
            else:
                assert sel.op is not None
                selectors.append(Selector(sel.dest, SelectorKind.HASH))
                spans.append(ops[sel.op].span)
        lanes = self.profile.lanes
        alu = [AluOp.NOP] * lanes
        mem = [MemOp.NOP] * lanes
        for lane_op in step.alu:
            op = ops[lane_op.op]
            assert op.alu is not None
            alu[lane_op.lane] = op.alu
        for lane_op in step.mem:
            op = ops[lane_op.op]
            assert op.mem is not None
            mem[lane_op.lane] = op.mem
        spans += [ops[lo.op].span for lo in sorted(step.alu, key=lambda lo: lo.lane)]
        spans += [ops[lo.op].span for lo in sorted(step.mem, key=lambda lo: lo.lane)]
        if step.branch is not None:
            end = tree_node.end
            assert isinstance(end, Branch)
            _, taken = self.first_pc(end.taken)
            _, not_taken = self.first_pc(end.not_taken)
            control = Control(
                end.op, taken, self.source(step.branch.x), self.source(step.branch.y), not_taken
            )
            spans.append(end.span)
        elif tree_node.is_leaf and eu == span.last_eu:
            halt = CtrlOp.JMP if eu == last_eu else CtrlOp.HALT
            control = Control(halt, self.epilog(node))
            spans.append(None)
        else:
            control = Control(CtrlOp.JMP, self.step_pc(node, eu + 1))
            spans.append(None)
        bundle = Bundle(tuple(selectors), tuple(alu), tuple(mem), control)
        return self.place(eu + 1, bundle, f"eu{eu}_n{node}", spans, _first(spans))

    def prolog(self) -> PC:
        selectors = []
        spans: list[Span | None] = []
        ops = self.problem.ops
        for load in self.schedule.prolog:
            value = (
                ops[load.op].index
                if load.kind is SelectorKind.LOAD_MD and load.op is not None
                else 0
            )
            selectors.append(Selector(load.dest, load.kind, value=value))
            spans.append(ops[load.op].span if load.op is not None else None)
        _, first = self.first_pc(0)
        spans.append(None)
        lanes = self.profile.lanes
        bundle = Bundle(
            tuple(selectors), (AluOp.NOP,) * lanes, (MemOp.NOP,) * lanes, Control(CtrlOp.JMP, first)
        )
        return self.place(PROLOG_STAGE, bundle, "entry", spans, self.problem.span)

    def program(self) -> AssembledProgram:
        entry = self.prolog()
        placed = []
        for stage, table in self.placed.items():
            for bundle, (pc, label, span) in table.items():
                placed.append(PlacedBundle(stage, pc, bundle, label, span))
        placed.sort(key=lambda b: (b.stage, b.pc.index))
        labels = _Labels(placed, self.profile.num_eus)
        for bundle_placed in placed:
            lines = _bundle_lines(bundle_placed, labels, self.profile)
            spans = self.lines.get(bundle_placed.label, [])
            spans = spans + [None] * (len(lines) - len(spans))
            self.annotations[bundle_placed.label] = tuple(zip(lines, spans, strict=False))
        p = self.problem
        return AssembledProgram(
            name=p.name,
            profile=self.profile,
            placement=Placement(p.placement),
            app_id=p.app_id or 0,
            entry=entry,
            bundles=tuple(placed),
        )


def _first(spans: list[Span | None]) -> Span | None:
    return next((s for s in spans if s is not None), None)


def generate(schedule: Schedule, *, chain_targets: Mapping[str, PC] | None = None) -> CompiledDPF:
    """Machine code for ``schedule`` (see the module docstring)."""
    emitter = _Emitter(schedule, chain_targets or {})
    program = emitter.program()
    _validate(program)
    return CompiledDPF(program, schedule, emitter.annotations, tuple(emitter.relocations))


def _validate(program: AssembledProgram) -> None:
    profile = program.profile
    if program.placement is Placement.PACKET:
        problems = check_image(program.image(), profile)
        if problems:
            listing = "; ".join(
                f"{stage_name(s)}[{i}] {v.code} {v.message}" for s, i, v in problems
            )
            raise AssertionError(
                f"generated in-packet code of `{program.name}` is invalid: {listing}"
            )
        try:
            encode_options(program.header(), profile)
        except EncodingError as exc:
            raise DiagnosticError(
                Diagnostic(
                    "DPF6201",
                    f"the in-packet code of DPF `{program.name}` does not fit in a packet: {exc.message}",
                    None,
                    hint="place it in the switch with @placement(switch)",
                )
            ) from None
        return
    for placed in program.bundles:
        bundle = placed.bundle
        if isinstance(bundle, EpilogBundle):
            violations = check_epilog(bundle, profile)
        else:
            next_stage = (
                "epilog" if placed.stage == profile.num_eus else stage_name(placed.stage + 1)
            )
            violations = check_bundle(
                bundle, profile, prolog=placed.stage == PROLOG_STAGE, next_stage=next_stage
            )
        if violations:
            raise AssertionError(
                f"generated bundle {placed.label} of `{program.name}` is invalid: "
                + "; ".join(f"{v.code} {v.message}" for v in violations)
            )


def format_with_source(compiled: CompiledDPF) -> str:
    """Canonical assembly with every instruction's source line: ``; file:line: text``."""
    program = compiled.program
    profile = program.profile
    out = [
        f".dpf {program.name}",
        f".target {profile.name}",
        f".placement {program.placement.value}",
    ]
    if program.app_id:
        out.append(f".app {program.app_id:#x}")
    ordered = sorted(program.bundles, key=lambda b: (b.stage, b.pc.index))
    entry = next(b.label for b in ordered if b.stage == PROLOG_STAGE and b.pc == program.entry)
    out.append(f".entry {entry}")
    width = max(
        (len(line) for lines in compiled.source_map.values() for line, _ in lines), default=20
    )
    for placed in ordered:
        out.append("")
        slot = f" @{placed.pc.index}" if program.placement is Placement.SWITCH else ""
        out.append(f"{stage_name(placed.stage)} {placed.label}{slot}:")
        for line, span in compiled.source_map.get(placed.label, ()):
            note = ""
            if span is not None:
                text = span.source.line_text(span.line).strip()
                note = f"  ; {span.source.name}:{span.line}: {text}"
            out.append(("    " + line.ljust(width) + note).rstrip())
    for relocation in compiled.relocations:
        out.append(f"; relocation: {relocation.label} NEXT_PC -> {relocation.target}")
    return "\n".join(out) + "\n"


__all__ = ["CompiledDPF", "Kind", "Relocation", "format_with_source", "generate"]
