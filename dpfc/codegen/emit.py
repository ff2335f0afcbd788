"""Schedule -> machine code: the bundles of one DPF, placed in the packet or the switch.

Contract: the input is a schedule the checker accepts; the output (:class:`CompiledDPF`) is
a :class:`~dpfc.machine.program.MachineProgram` — the same type the assembler produces, so
the encoders, the linker and the printer take compiled and hand-written DPFs alike — with
its array bindings and the relocations (chain targets) the linker must resolve; its
encoding (:class:`~dpfc.machine.encoded.EncodedProgram`, checked once); and, for every
placed bundle, the source span of each instruction in it.

* One bundle per :class:`~dpfc.schedule.Step`, one prolog, one epilog per leaf.
  A branch step's PCs name the children's first bundles (their epilogs if the branch is in
  the last EU); a leaf's last step HALTs to its epilog (JMP in the last EU); other steps
  JMP to the node's next step.
* Bundles are built from the epilog backwards, so identical bundles of a stage (with
  identical successors) are shared: in-packet code carries each once.
* In-packet DPFs get ``@packet:i`` addresses in order of first use; in-switch DPFs slots
  from 0 per stage (the installer and the linker relocate them).
* A chain (``NEXT_PC``) names the target's prolog from ``chain_targets``; without it the
  epilog holds the placeholder ``@switch:0`` and a :class:`Relocation` records the target's
  symbol (``module.dpf``).
* Array bindings carry module-qualified names (``kvs.index``): the linker matches arrays
  shared by several modules by name.

The result is checked with :mod:`dpfc.isa.check` once, while it is encoded (a failure is a
compiler bug); in-packet code must also encode within the Geneve option limits (DPF6201, a
user error).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from dpfc.catalog import codes
from dpfc.codegen.variables import Names, agreed, register_variables
from dpfc.diagnostics import Diagnostic, DiagnosticError, Span
from dpfc.encoding import EncodingError
from dpfc.isa import (
    EPILOG_STAGE,
    PC,
    PROLOG_STAGE,
    AluOp,
    Bundle,
    Control,
    CtrlOp,
    EpilogBundle,
    Imm,
    MemOp,
    Operand,
    Register,
    Selector,
    SelectorKind,
    StageBundle,
    Steering,
)
from dpfc.machine import (
    PLACEHOLDER,
    ArrayBinding,
    EncodedProgram,
    MachineProgram,
    Pipeline,
    PlacedBundle,
    Placement,
    Relocation,
    encode_program,
    format_program,
    program_lines,
)
from dpfc.schedule import Branch, Exit, Kind, Problem, Schedule, Source


@dataclass(frozen=True)
class CompiledDPF:
    program: MachineProgram
    encoded: EncodedProgram
    schedule: Schedule
    # label -> (assembly line, source span or None) for every instruction of the bundle
    source_map: dict[str, tuple[tuple[str, Span | None], ...]]
    # label -> the source variable each register holds after the bundle (an epilog: when
    # it runs); registers holding none are absent (:mod:`.variables`)
    variables: dict[str, Names]

    @property
    def problem(self) -> Problem:
        return self.schedule.problem

    @property
    def relocations(self) -> tuple[Relocation, ...]:
        return self.program.relocations


def qualified(module: str, ir_name: str) -> str:
    """The symbol of a DPF or array: ``<module>.<name>`` with the last component of the
    module's name, as sema names items of imported modules in the IR (``countmin.row0``
    for ``stdlib.countmin``); IR names of the main module are bare (``index``)."""
    return ir_name if "." in ir_name else f"{module.split('.')[-1]}.{ir_name}"


class _Emitter:
    def __init__(self, schedule: Schedule, chain_targets: Mapping[str, PC]) -> None:
        self.schedule = schedule
        self.problem = schedule.problem
        self.profile = self.problem.profile
        self.chain_targets = chain_targets
        self.in_packet = self.problem.placement == "packet"
        # stage -> bundle -> (PC, label); first-use order
        self.placed: dict[int, dict[StageBundle, tuple[PC, str, Span | None]]] = {}
        self.relocations: list[Relocation] = []
        self.lines: dict[str, list[Span | None]] = {}
        self.names = register_variables(schedule)
        self.variables: dict[str, Names] = {}

    def place(
        self,
        stage: int,
        bundle: StageBundle,
        label: str,
        spans: list[Span | None],
        span: Span | None,
        names: Names,
    ) -> PC:
        table = self.placed.setdefault(stage, {})
        if bundle not in table:
            pc = PC(self.in_packet, len(table))
            table[bundle] = (pc, label, span)
            self.lines[label] = spans
            self.variables[label] = names
        else:  # shared with another path: the names both agree on
            placed_label = table[bundle][1]
            self.variables[placed_label] = agreed(self.variables[placed_label], names)
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
        # Each instruction's debug line is the statement that asked for it; the end of the
        # path (the DPF's `}` or a `return`) only where there is none.
        actions = end.actions
        if end.push:
            spans.append(actions.push or end.span)
        if end.steer != "pass" or end.steer_value is not None:
            value = self.source(use.steer_value) if use.steer_value is not None else None
            steering = Steering(end.steer, value)
            spans.append(actions.steer or end.span)
        next_pc: PC | None = None
        label = f"exit_n{leaf}"
        if end.chain is not None:
            next_pc = self.chain_targets.get(end.chain, PLACEHOLDER)
            spans.append(actions.chain or end.span)
        if end.drop_code:
            spans.append(actions.drop_code or end.span)
        bundle = EpilogBundle(tuple(use.push), steering, next_pc, end.drop_code)
        pc = self.place(EPILOG_STAGE, bundle, label, spans, end.span, self.names.exits[leaf])
        placed_label = self.placed[EPILOG_STAGE][bundle][1]
        if end.chain is not None and end.chain not in self.chain_targets:
            relocation = Relocation(placed_label, qualified(self.problem.module, end.chain))
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
        names = self.names.steps.get((node, eu), {})
        return self.place(eu + 1, bundle, f"eu{eu}_n{node}", spans, _first(spans), names)

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
        return self.place(
            PROLOG_STAGE, bundle, "entry", spans, self.problem.span, self.names.prolog
        )

    def program(self) -> MachineProgram:
        entry = self.prolog()
        placed = []
        for stage, table in self.placed.items():
            for bundle, (pc, label, span) in table.items():
                placed.append(PlacedBundle(stage, pc, bundle, label, span))
        placed.sort(key=lambda b: (b.stage, b.pc.index))
        p = self.problem
        arrays = tuple(
            ArrayBinding(
                qualified(p.module, name), p.arrays[name].mapping, p.arrays[name].size, eu, lane
            )
            for name, (eu, lane) in sorted(self.schedule.bindings.items())
        )
        return MachineProgram(
            name=p.name,
            profile=self.profile,
            placement=Placement(p.placement),
            app_id=p.app_id or 0,
            entry=entry,
            bundles=tuple(placed),
            arrays=arrays,
            relocations=tuple(self.relocations),
            pipeline=Pipeline(p.pipeline),
        )

    def source_map(self, program: MachineProgram) -> dict[str, tuple[tuple[str, Span | None], ...]]:
        """label -> (assembly line, source span) of each instruction of the bundle."""
        out = {}
        for label, lines in program_lines(program).items():
            spans = self.lines.get(label, [])
            spans = spans + [None] * (len(lines) - len(spans))
            out[label] = tuple(zip(lines, spans, strict=False))
        return out


def _first(spans: list[Span | None]) -> Span | None:
    return next((s for s in spans if s is not None), None)


def generate(schedule: Schedule, *, chain_targets: Mapping[str, PC] | None = None) -> CompiledDPF:
    """Machine code for ``schedule`` (see the module docstring)."""
    emitter = _Emitter(schedule, chain_targets or {})
    program = emitter.program()
    return CompiledDPF(
        program,
        _encoded(program),
        schedule,
        emitter.source_map(program),
        {b.label: emitter.variables.get(b.label, {}) for b in program.bundles},
    )


def _encoded(program: MachineProgram) -> EncodedProgram:
    try:
        return encode_program(program)
    except EncodingError as exc:
        # A broken ISA rule (DPF1xxx) is the compiler's fault; an encoding limit (the
        # Geneve option size, DPF20xx) is the program's: it needs in-switch placement.
        if program.placement is Placement.SWITCH or exc.code.startswith("DPF1"):
            raise AssertionError(
                f"generated code of `{program.name}` is invalid: [{exc.code}] {exc.message}"
            ) from None
        raise DiagnosticError(
            Diagnostic(
                codes.IN_PACKET_CODE_TOO_LARGE,
                f"the in-packet code of DPF `{program.name}` does not fit in a packet: {exc.message}",
                None,
                hint="place it in the switch with @placement(switch)",
            )
        ) from None


def format_with_source(compiled: CompiledDPF) -> str:
    """Canonical assembly with every instruction's source line: ``; file:line: text``."""
    notes = {
        label: [_source_note(span) for _, span in lines]
        for label, lines in compiled.source_map.items()
    }
    return format_program(compiled.program, notes=notes)


def format_module(module: str, units: Sequence[CompiledDPF]) -> str:
    """The assembly of a module's compiled DPFs (``dpfc compile --emit asm``): ``.module``,
    then each DPF's text with its source notes, one blank line apart. ``dpfc asm`` reads it
    back as the same DPFs under the same symbols (chains print as ``NEXT_PC kvs.empty``)."""
    return f".module {module}\n\n" + "\n".join(format_with_source(u) for u in units)


def _source_note(span: Span | None) -> str | None:
    if span is None:
        return None
    return f"{span.source.name}:{span.line}: {span.source.line_text(span.line).strip()}"


__all__ = [
    "CompiledDPF",
    "Kind",
    "Relocation",
    "format_module",
    "format_with_source",
    "generate",
    "qualified",
]
