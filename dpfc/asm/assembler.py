"""Assemble ``.dpfasm`` text into an :class:`MachineProgram`, checking every ISA rule.

Two passes: the first reads directives and bundle heads (stages, labels, addresses); the
second builds each bundle from its instructions and resolves labels. Machine-code rules are
checked by :mod:`dpfc.isa.check` (the same checker the decoder uses); rules about the
*text* (two ALU ops in one lane, two branches in one EU, unknown labels, operand forms) are
checked here. All problems are collected and reported together, each with its span.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field

from dpfc.asm.syntax import AsmLine, Directive, Head, Instruction, Operand
from dpfc.diagnostics import Diagnostic, Note, SourceFile, Span
from dpfc.encoding.code import encode_stage_bundle
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
    RegClass,
    Register,
    Selector,
    StageBundle,
    Steering,
    stage_name,
)
from dpfc.isa.check import Violation, check_bundle, check_epilog, check_image, check_register
from dpfc.isa.opcodes import (
    BY_MNEMONIC,
    UNARY_ALU_OPS,
    AluOp,
    CtrlOp,
    InstructionSpec,
    MemOp,
    SelectorKind,
    Unit,
)
from dpfc.machine.program import (
    PLACEHOLDER,
    ArrayBinding,
    MachineProgram,
    Pipeline,
    PlacedBundle,
    Placement,
    Relocation,
)
from dpfc.target.profile import BUILTIN_PROFILES, TargetProfile

_REGISTER = re.compile(r"^([ABab])(\d+)$")
WORD_MIN = -(1 << 31)
WORD_MAX = (1 << 32) - 1
DIRECTIVES = ("module", "dpf", "target", "placement", "pipeline", "app", "entry", "array")
MAPPINGS = ("direct", "segment")


@dataclass
class _Group:
    head: Head
    stage: int
    label: str
    pc: PC | None = None
    instructions: list[Instruction] = field(default_factory=list)
    # A line of this bundle failed to parse (already reported): don't report what is missing.
    has_syntax_error: bool = False


@dataclass
class _Builder:
    """Mutable state while one bundle's instructions are read."""

    lanes: int
    selectors: dict[Register, tuple[Selector, Span]] = field(default_factory=dict)
    alu: dict[int, tuple[AluOp, Span]] = field(default_factory=dict)
    mem: dict[int, tuple[MemOp, Span]] = field(default_factory=dict)
    control: tuple[Control, Span] | None = None
    control_operands: dict[str, Span] = field(default_factory=dict)  # x, y, taken, not_taken
    push: list[tuple[Register, Span]] = field(default_factory=list)
    push_spans: list[Span] = field(default_factory=list)
    steering: tuple[Steering, Span] | None = None
    next_pc: tuple[PC | Register, Span] | None = None
    hdr_mod: Span | None = None
    immediate_spans: dict[int, Span] = field(default_factory=dict)


class Assembler:
    def __init__(self, source: SourceFile, profile: TargetProfile | None) -> None:
        self.source = source
        self.cli_profile = profile
        self.profile: TargetProfile = profile or BUILTIN_PROFILES["tofino1"]
        self.diagnostics: list[Diagnostic] = []
        self.name = "dpf"
        self.placement = Placement.PACKET
        self.pipeline = Pipeline.INGRESS
        self.app_id = 0
        self.entry_name: tuple[str, Span] | None = None
        self.arrays: list[ArrayBinding] = []
        self.relocations: list[Relocation] = []
        self.groups: list[_Group] = []
        self.labels: dict[str, _Group] = {}
        # (stage, in-packet index) -> where-key -> span of the PC operands of that bundle,
        # so that whole-image violations can point at the operand they are about.
        self.operand_spans: dict[tuple[int, int], dict[str, Span]] = {}

    # -- reporting ---------------------------------------------------------------------
    def error(
        self, code: str, message: str, span: Span | None, *notes: Note, hint: str | None = None
    ) -> None:
        self.diagnostics.append(Diagnostic(code, message, span, notes=tuple(notes), hint=hint))

    # -- pass 1 -------------------------------------------------------------------------
    def run_lines(
        self, lines: list[AsmLine], syntax_errors: list[Diagnostic]
    ) -> MachineProgram | None:
        """Assemble parsed ``lines`` (one DPF; ``syntax_errors``: those of its lines, already
        reported); the problems found are added to :attr:`diagnostics`, unsorted."""
        error_offsets = sorted(d.span.start for d in syntax_errors if d.span is not None)
        current: _Group | None = None
        directives: list[Directive] = []
        for line in lines:
            if isinstance(line, Instruction) and _parse_stage(line.mnemonic) is not None:
                line = self._head_without_colon(line)
            if current is not None and error_offsets:
                current.has_syntax_error |= any(
                    current.head.span.start < o < line.span.start for o in error_offsets
                )
            if isinstance(line, Directive):
                if self.groups:
                    self.error(
                        "DPF0106",
                        f"directive `.{line.name}` after the first bundle; directives come first",
                        line.span,
                    )
                    continue
                directives.append(line)
            elif isinstance(line, Head):
                current = self._head(line)
            elif current is None:
                self.error(
                    "DPF0107",
                    "instruction outside a bundle: start one with `prolog NAME:`, `eu0 NAME:` or `epilog NAME:`",
                    line.span,
                )
            else:
                current.instructions.append(line)
        if current is not None:
            current.has_syntax_error |= any(o > current.head.span.start for o in error_offsets)
        for directive in directives:
            self._directive(directive)
        self._name_unlabeled()
        self._assign_addresses()
        placed = [self._build(group) for group in self.groups if group.pc is not None]
        return self._finish([p for p in placed if p is not None])

    def _directive(self, d: Directive) -> None:
        if d.name not in DIRECTIVES:
            self.error(
                "DPF0105",
                f"unknown directive `.{d.name}`" + _suggest(d.name, DIRECTIVES, "."),
                d.span,
            )
            return
        if d.name == "array":
            self._array(d)
            return
        if len(d.args) != 1:
            self.error("DPF0105", f"`.{d.name}` takes exactly one argument", d.span)
            return
        arg = d.args[0]
        if d.name == "app":
            if arg.number is None or not 0 <= arg.number <= WORD_MAX:
                self.error(
                    "DPF0105", "`.app` takes a 32-bit unsigned number (the app-id token)", arg.span
                )
            else:
                self.app_id = arg.number
            return
        if arg.kind != "name":
            self.error("DPF0105", f"`.{d.name}` takes a name", arg.span)
            return
        if d.name == "dpf":
            self.name = arg.text
        elif d.name == "entry":
            self.entry_name = (arg.text, arg.span)
        elif d.name == "placement":
            try:
                self.placement = Placement(arg.text)
            except ValueError:
                self.error("DPF0105", "`.placement` is `packet` or `switch`", arg.span)
        elif d.name == "pipeline":
            try:
                self.pipeline = Pipeline(arg.text)
            except ValueError:
                self.error("DPF0105", "`.pipeline` is `ingress` or `egress`", arg.span)
        elif d.name == "target" and self.cli_profile is None:
            if arg.text not in BUILTIN_PROFILES:
                self.error(
                    "DPF0108",
                    f"unknown target `{arg.text}` in `.target`"
                    + _suggest(arg.text, list(BUILTIN_PROFILES))
                    + f" (built-in: {', '.join(BUILTIN_PROFILES)})",
                    arg.span,
                    hint="a TOML profile file is given on the command line: --target FILE.toml",
                )
                return
            self.profile = BUILTIN_PROFILES[arg.text]

    def _array(self, d: Directive) -> None:
        """``.array NAME direct|segment SIZE eu<k> lane<i>``: an array the DPF uses and
        where it lives (an object's array binding, docs/objects.md)."""
        form = "`.array NAME direct|segment SIZE eu<k> lane<i>`"
        if len(d.args) != 5:
            self.error("DPF0105", f"{form} takes five arguments, got {len(d.args)}", d.span)
            return
        name, mapping, size, eu, lane = d.args
        lane_match = re.fullmatch(r"lane(\d+)", lane.text) if lane.kind == "name" else None
        stage = _parse_stage(eu.text) if eu.kind == "name" else None
        problems = [
            (name.kind not in ("name", "symbol"), name, "the array's name"),
            (mapping.text not in MAPPINGS, mapping, "`direct` or `segment`"),
            (size.number is None or size.number < 1, size, "a size in words (1 or more)"),
            (stage is None or stage in (PROLOG_STAGE, EPILOG_STAGE), eu, "an EU (`eu0` ..)"),
            (lane_match is None, lane, "a lane (`lane0` ..)"),
        ]
        for bad, operand, wanted in problems:
            if bad:
                self.error(
                    "DPF0105", f"{form}: expected {wanted}, got `{operand.text}`", operand.span
                )
                return
        assert stage is not None and lane_match is not None and size.number is not None
        eu_index, lane_index = stage - 1, int(lane_match.group(1))
        if eu_index >= self.profile.num_eus or lane_index >= self.profile.lanes:
            self.error(
                "DPF0105",
                f"{self.profile.name} has no EU {eu_index} lane {lane_index} "
                f"({self.profile.num_eus} EUs of {self.profile.lanes} lanes)",
                d.span,
            )
            return
        if any(a.name == name.text for a in self.arrays):
            self.error("DPF0105", f"array `{name.text}` is declared twice", name.span)
            return
        self.arrays.append(ArrayBinding(name.text, mapping.text, size.number, eu_index, lane_index))

    def _head_without_colon(self, instr: Instruction) -> Instruction | Head:
        """``eu0 count`` (no colon) is a bundle head with a typo, not an unknown instruction."""
        ops = instr.operands
        if len(ops) > 1 or (ops and ops[0].kind != "name"):
            return instr
        label = ops[0] if ops else None
        self.error(
            "DPF0001",
            f"bundle head `{instr.span.text()}` needs a `:` at its end",
            instr.span,
            hint=f"write `{instr.span.text()}:`",
        )
        return Head(
            instr.mnemonic,
            instr.mnemonic_span,
            label.text if label else None,
            label.span if label else None,
            None,
            None,
            instr.span,
        )

    def _head(self, head: Head) -> _Group:
        """Open the bundle a head starts; a bad head's bundle is read but never built."""
        stage = _parse_stage(head.stage)
        if stage is None:
            self.error(
                "DPF0109",
                f"`{head.stage}` is not a stage; a bundle head is `prolog`, `eu<k>` or `epilog`, then a label and `:`",
                head.stage_span,
            )
            # Keep the label (without an address) so that branches to it are not reported too.
            group = _Group(head, EPILOG_STAGE, head.label or "")
            if head.label is not None:
                self.labels.setdefault(head.label, group)
            return group
        # An unlabeled bundle gets a generated name once every user label is known
        # (_name_unlabeled), so that a generated name never collides with a written one.
        group = _Group(head, stage, head.label or "")
        if head.label is not None and head.label in self.labels:
            first = self.labels[head.label].head
            self.error(
                "DPF0122",
                f"label `{head.label}` defined twice",
                head.label_span,
                Note("first defined here", first.label_span),
            )
            return group
        if head.label is not None:
            self.labels[head.label] = group
        self.groups.append(group)
        return group

    def _name_unlabeled(self) -> None:
        counts: dict[int, int] = {}
        for group in self.groups:
            if group.label:
                continue
            while True:
                index = counts.get(group.stage, 0)
                counts[group.stage] = index + 1
                name = f"{stage_name(group.stage)}_{index}"
                if name not in self.labels:
                    break
            group.label = name
            self.labels[name] = group

    def _assign_addresses(self) -> None:
        used: dict[int, dict[int, Span]] = {}
        for group in self.groups:
            if (
                group.stage not in (PROLOG_STAGE, EPILOG_STAGE)
                and group.stage > self.profile.num_eus
            ):
                self.error(
                    "DPF0109",
                    f"`{group.head.stage}` does not exist: {self.profile.name} has {self.profile.num_eus} EUs "
                    f"(eu0..eu{self.profile.num_eus - 1})",
                    group.head.stage_span,
                )
                continue
            if group.head.slot is None:
                continue
            slot = group.head.slot
            span = group.head.slot_span
            if not 0 <= slot < self.profile.code_slots_per_stage:
                self.error(
                    "DPF1002",
                    f"code-memory slot {slot} out of range: {self.profile.name} has "
                    f"{self.profile.code_slots_per_stage} slots per stage",
                    span,
                )
                continue
            stage_used = used.setdefault(group.stage, {})
            if slot in stage_used:
                self.error(
                    "DPF0123",
                    f"slot {slot} of {stage_name(group.stage)} used twice",
                    span,
                    Note("first used here", stage_used[slot]),
                )
                continue
            if span is not None:
                stage_used[slot] = span
            group.pc = PC(False, slot)
        packet_index: dict[int, int] = {}
        next_slot: dict[int, int] = {}
        for group in self.groups:
            if group.pc is not None or group.head.slot is not None:
                continue
            if (
                group.stage not in (PROLOG_STAGE, EPILOG_STAGE)
                and group.stage > self.profile.num_eus
            ):
                continue
            if self.placement is Placement.PACKET:
                index = packet_index.get(group.stage, 0)
                packet_index[group.stage] = index + 1
                group.pc = PC(True, index)
            else:
                slot = next_slot.get(group.stage, 0)
                while slot in used.get(group.stage, {}):
                    slot += 1
                next_slot[group.stage] = slot + 1
                group.pc = PC(False, slot)

    # -- pass 2 -------------------------------------------------------------------------
    def _build(self, group: _Group) -> PlacedBundle | None:
        assert group.pc is not None
        builder = _Builder(self.profile.lanes)
        before = len(self.diagnostics)
        for instr in group.instructions:
            self._instruction(group, builder, instr)
        if len(self.diagnostics) > before:
            return None
        bundle: StageBundle
        if group.stage == EPILOG_STAGE:
            bundle = EpilogBundle(
                tuple(r for r, _ in builder.push),
                builder.steering[0] if builder.steering else Steering("pass"),
                builder.next_pc[0] if builder.next_pc else None,
                builder.hdr_mod is not None,
            )
            violations = check_epilog(bundle, self.profile)
        else:
            if builder.control is None:
                if group.has_syntax_error:
                    return None
                self.error(
                    "DPF0116",
                    f"{stage_name(group.stage)} bundle `{group.label}` names no successor: end it with "
                    + ("JMP" if group.stage == PROLOG_STAGE else "JMP, HALT or a branch"),
                    group.head.span,
                )
                return None
            bundle = Bundle(
                tuple(sel for _, (sel, _) in sorted(builder.selectors.items())),
                tuple(
                    builder.alu.get(lane, (AluOp.NOP, None))[0]
                    for lane in range(self.profile.lanes)
                ),
                tuple(
                    builder.mem.get(lane, (MemOp.NOP, None))[0]
                    for lane in range(self.profile.lanes)
                ),
                builder.control[0],
            )
            violations = check_bundle(
                bundle,
                self.profile,
                prolog=group.stage == PROLOG_STAGE,
                next_stage=self._next_stage_name(group.stage),
            )
        for violation in violations:
            self.error(
                violation.code, violation.message, self._where_span(group, builder, violation)
            )
        if violations:
            return None
        if group.pc.in_packet:
            spans = dict(builder.control_operands)
            if builder.next_pc is not None:
                spans["next_pc"] = builder.next_pc[1]
            self.operand_spans[(group.stage, group.pc.index)] = spans
        return PlacedBundle(group.stage, group.pc, bundle, group.label, group.head.span)

    def _next_stage_name(self, stage: int) -> str:
        return "epilog" if stage == self.profile.num_eus else stage_name(stage + 1)

    def _where_span(self, group: _Group, b: _Builder, v: Violation) -> Span:
        key = v.where
        if key[:1] == ("selector",):
            for reg, (_, span) in b.selectors.items():
                if str(reg) == key[1]:
                    return span
        if key[:1] == ("alu",) and isinstance(key[1], int) and key[1] in b.alu:
            return b.alu[key[1]][1]
        if key[:1] == ("mem",) and isinstance(key[1], int) and key[1] in b.mem:
            return b.mem[key[1]][1]
        if key[:1] == ("control",) and len(key) > 1 and key[1] in b.control_operands:
            return b.control_operands[str(key[1])]
        if key[:1] == ("control",) and b.control is not None:
            return b.control[1]
        if key[:1] == ("immediates",) and b.immediate_spans:
            limit = self.profile.immediates_per_bundle
            spans = list(b.immediate_spans.values())
            return spans[min(limit, len(spans) - 1)]
        if key[:1] == ("push",):
            if len(key) > 1 and isinstance(key[1], int):
                return b.push[key[1]][1]
            if len(b.push) > self.profile.max_push:
                return b.push[self.profile.max_push][1]
            return b.push_spans[-1] if b.push_spans else group.head.span
        if key[:1] == ("steering",) and b.steering is not None:
            return b.steering[1]
        if key[:1] == ("next_pc",) and b.next_pc is not None:
            return b.next_pc[1]
        return group.head.span

    def _instruction(self, group: _Group, b: _Builder, instr: Instruction) -> None:
        mnemonic = instr.mnemonic.upper()
        spec = BY_MNEMONIC.get(mnemonic)
        if spec is None:
            self.error(
                "DPF0101",
                f"unknown instruction `{instr.mnemonic}`" + _suggest(mnemonic, list(BY_MNEMONIC)),
                instr.mnemonic_span,
            )
            return
        section = (
            "prolog"
            if group.stage == PROLOG_STAGE
            else "epilog"
            if group.stage == EPILOG_STAGE
            else "eu"
        )
        prolog_jump = section == "prolog" and spec.mnemonic == "JMP"
        if spec.section.value != section and not prolog_jump:
            kind = {"prolog": "a prolog", "eu": "an EU", "epilog": "an epilog"}[spec.section.value]
            self.error(
                "DPF0102",
                f"`{mnemonic}` is {kind} instruction and cannot appear in {stage_name(group.stage)}",
                instr.mnemonic_span,
                hint=_section_hint(spec, section),
            )
            return
        handler = {
            Unit.PROLOG: self._selector,
            Unit.SELECTOR: self._selector,
            Unit.ALU: self._alu,
            Unit.MEMORY: self._memory,
            Unit.CONTROL: self._control,
            Unit.EPILOG: self._epilog,
        }[spec.unit]
        handler(group, b, spec, instr)

    # -- operand helpers ----------------------------------------------------------------
    def _arity(self, spec: InstructionSpec, instr: Instruction, *counts: int) -> bool:
        if len(instr.operands) in counts:
            return True
        forms = " or ".join(str(c) for c in counts)
        self.error(
            "DPF0103",
            f"`{spec.mnemonic}` takes {forms} operand{'s' if counts != (1,) else ''} "
            f"({', '.join(o.value for o in spec.operands) or 'none'}), got {len(instr.operands)}",
            instr.span,
        )
        return False

    def _register(self, op: Operand, what: str) -> Register | None:
        match = _REGISTER.match(op.text) if op.kind in ("name", "mem") else None
        if match is None:
            self.error(
                "DPF0110", f"{what} must be a register (A0, B1, ...), got `{op.text}`", op.span
            )
            return None
        reg = Register(RegClass[match.group(1).upper()], int(match.group(2)))
        for violation in check_register(reg, self.profile, ()):
            self.error(violation.code, violation.message, op.span)
            return None
        if reg.lane > 15:  # beyond the 4-bit lane field, whatever the profile says
            self.error("DPF1001", f"register {reg} does not exist", op.span)
            return None
        return reg

    def _immediate(
        self,
        op: Operand,
        what: str,
        lo: int = WORD_MIN,
        hi: int = WORD_MAX,
        *,
        code: str = "DPF1003",
        why: str = "",
    ) -> int | None:
        if op.kind != "number" or op.number is None:
            self.error("DPF0111", f"{what} must be a number, got `{op.text}`", op.span)
            return None
        if not lo <= op.number <= hi:
            if not why and (lo, hi) == (WORD_MIN, WORD_MAX):
                why = " (a 32-bit word, signed or unsigned)"
            self.error(
                code,
                f"{what} {op.text} out of range {_hex(lo)}..{_hex(hi)}{why}",
                op.span,
            )
            return None
        return op.number & 0xFFFF_FFFF

    def _reg_or_imm(self, b: _Builder, op: Operand, what: str) -> Register | Imm | None:
        if op.kind == "number":
            value = self._immediate(op, what)
            if value is None:
                return None
            b.immediate_spans.setdefault(value, op.span)
            return Imm(value)
        return self._register(op, what)

    def _target(
        self, group: _Group, op: Operand, *, halt: bool = False, prolog: bool = False
    ) -> PC | None:
        if op.kind == "pcref":
            if op.text not in ("switch", "packet") or op.number is None:
                self.error(
                    "DPF0111",
                    f"an address is `@switch:N` or `@packet:N`, got `@{op.text}`",
                    op.span,
                )
                return None
            return PC(op.text == "packet", op.number)
        if op.kind != "name" or _REGISTER.match(op.text):
            self.error(
                "DPF0111", f"expected a label or `@switch:N`/`@packet:N`, got `{op.text}`", op.span
            )
            return None
        target = self.labels.get(op.text)
        if target is None:
            self.error(
                "DPF0120",
                f"unknown label `{op.text}`" + _suggest(op.text, list(self.labels)),
                op.span,
            )
            return None
        if target.pc is None:
            # Its bundle head was rejected (bad stage, bad slot) and reported; a placeholder
            # keeps this reference from adding a second, derived error.
            return PC(False, 0)
        if prolog:
            wanted = PROLOG_STAGE
        elif halt or group.stage == self.profile.num_eus:
            wanted = EPILOG_STAGE
        else:
            wanted = group.stage + 1
        if target.stage != wanted:
            self.error(
                "DPF0121",
                f"label `{op.text}` is {_a(stage_name(target.stage))} bundle but this "
                f"{'NEXT_PC' if prolog else 'HALT' if halt else 'target'} must name "
                f"{_a(stage_name(wanted))} bundle",
                op.span,
                Note(f"`{op.text}` defined here", target.head.label_span or target.head.span),
                hint=None
                if halt or prolog
                else "a PC in stage k names code of stage k+1; use HALT to jump to the epilog",
            )
            return None
        return target.pc

    # -- units --------------------------------------------------------------------------
    def _selector(
        self, group: _Group, b: _Builder, spec: InstructionSpec, instr: Instruction
    ) -> None:
        kind = SelectorKind(spec.code)
        two = kind in (
            SelectorKind.MOV,
            SelectorKind.LOAD_IMM,
            SelectorKind.LOAD_CONST,
            SelectorKind.LOAD_MD,
        )
        if not self._arity(spec, instr, 2 if two else 1):
            return
        dest = self._register(instr.operands[0], f"destination of {spec.mnemonic}")
        if dest is None:
            return
        source: Register | None = None
        value = 0
        if kind is SelectorKind.MOV:
            source = self._register(instr.operands[1], "MOV source")
            if source is None:
                return
        elif kind is SelectorKind.LOAD_IMM:
            imm = self._immediate(instr.operands[1], "immediate")
            if imm is None:
                return
            value = imm
            b.immediate_spans.setdefault(value, instr.operands[1].span)
        elif kind is SelectorKind.LOAD_CONST:
            index = self._immediate(
                instr.operands[1],
                "constant index",
                0,
                self.profile.const_table_entries - 1,
                code="DPF1016",
                why=f": {self.profile.name} has {self.profile.const_table_entries} "
                "constant-table entries",
            )
            if index is None:
                return
            value = index
        elif kind is SelectorKind.LOAD_MD:
            md = instr.operands[1]
            if md.kind == "name":
                field_ = self.profile.metadata_by_name(md.text)
                if field_ is None:
                    names = [m.name for m in self.profile.metadata]
                    self.error(
                        "DPF1017",
                        f"unknown metadata field `{md.text}`" + _suggest(md.text, names),
                        md.span,
                        hint="known: " + ", ".join(names),
                    )
                    return
                value = field_.index
            else:
                index = self._immediate(md, "metadata index", 0, 255, code="DPF1017")
                if index is None:
                    return
                if self.profile.metadata_by_index(index) is None:
                    self.error(
                        "DPF1017",
                        f"unknown metadata index {index}",
                        md.span,
                        hint=f"{self.profile.name} defines "
                        + ", ".join(f"{m.index}={m.name}" for m in self.profile.metadata),
                    )
                    return
                value = index
        if kind is SelectorKind.HASH and dest.cls is not RegClass.A:
            self.error(
                "DPF1014",
                f"HASH writes only A registers (A = hash(A)), not {dest}",
                instr.operands[0].span,
            )
            return
        if kind in (SelectorKind.LOAD_IMM, SelectorKind.LOAD_CONST) and dest.cls is not RegClass.B:
            self.error(
                "DPF1015",
                f"{spec.mnemonic} writes only B registers, not {dest}",
                instr.operands[0].span,
                hint=f"load into B{dest.lane} and MOV it if an A register needs the value",
            )
            return
        if dest in b.selectors:
            self.error(
                "DPF1005",
                f"register {dest} is written by two selectors in one bundle",
                instr.span,
                Note("first written here", b.selectors[dest][1]),
                hint="each register has one selector per stage",
            )
            return
        b.selectors[dest] = (Selector(dest, kind, source, value), instr.span)

    def _alu(self, group: _Group, b: _Builder, spec: InstructionSpec, instr: Instruction) -> None:
        op = AluOp(spec.code)
        unary = op in UNARY_ALU_OPS
        if not self._arity(spec, instr, 1 if unary else 2):
            return
        a = self._register(instr.operands[0], f"first operand of {spec.mnemonic}")
        if a is None:
            return
        if a.cls is not RegClass.A:
            self.error(
                "DPF0112",
                f"ALU ops write A registers: {spec.mnemonic} {a} is illegal (ALU i computes A[i] op B[i])",
                instr.operands[0].span,
            )
            return
        if not unary:
            second = self._register(instr.operands[1], f"second operand of {spec.mnemonic}")
            if second is None:
                return
            if second.cls is not RegClass.B or second.lane != a.lane:
                self.error(
                    "DPF0112",
                    f"ALU lane {a.lane} reads A{a.lane} and B{a.lane}; `{spec.mnemonic} {a}, {second}` is illegal",
                    instr.operands[1].span,
                    hint=f"MOV the value into B{a.lane} in a selector first",
                )
                return
        if a.lane in b.alu:
            self.error(
                "DPF0113",
                f"two ALU ops in lane {a.lane} of {stage_name(group.stage)}",
                instr.span,
                Note("first ALU op of that lane", b.alu[a.lane][1]),
                hint="each lane has one ALU per EU; use another lane or the next EU",
            )
            return
        b.alu[a.lane] = (op, instr.span)

    def _memory(
        self, group: _Group, b: _Builder, spec: InstructionSpec, instr: Instruction
    ) -> None:
        op = MemOp(spec.code)
        if not self._arity(spec, instr, 2):
            return
        store = op is MemOp.STORE
        addr_op, data_op = (
            (instr.operands[0], instr.operands[1])
            if store
            else (instr.operands[1], instr.operands[0])
        )
        if addr_op.kind != "mem":
            form = f"{spec.mnemonic} [A<i>], B<i>" if store else f"{spec.mnemonic} B<i>, [A<i>]"
            self.error(
                "DPF0114", f"memory address must be written `[A<i>]`: `{form}`", addr_op.span
            )
            return
        addr = self._register(addr_op, "memory address")
        data = self._register(data_op, "memory data register")
        if addr is None or data is None:
            return
        if addr.cls is not RegClass.A:
            self.error(
                "DPF0114",
                f"memory address must be an A register, not {addr} "
                "(memory lane i takes its address in A[i] and data in B[i])",
                addr_op.span,
            )
            return
        if data.cls is not RegClass.B:
            self.error(
                "DPF0114",
                f"memory data must be a B register, not {data} "
                "(memory lane i takes its address in A[i] and data in B[i])",
                data_op.span,
            )
            return
        if addr.lane != data.lane:
            self.error(
                "DPF0114",
                f"memory lane {addr.lane} takes its address in A{addr.lane} and data in "
                f"B{addr.lane}; data {data} is in lane {data.lane}",
                data_op.span,
                hint=f"MOV the value into B{addr.lane} in a selector first",
            )
            return
        if addr.lane in b.mem:
            self.error(
                "DPF0115",
                f"two memory ops in lane {addr.lane} of {stage_name(group.stage)}",
                instr.span,
                Note("first memory op of that lane", b.mem[addr.lane][1]),
            )
            return
        b.mem[addr.lane] = (op, instr.span)

    def _control(
        self, group: _Group, b: _Builder, spec: InstructionSpec, instr: Instruction
    ) -> None:
        op = CtrlOp(spec.code)
        if b.control is not None:
            self.error(
                "DPF0117",
                f"more than one branch in {stage_name(group.stage)} bundle `{group.label}`",
                instr.span,
                Note("first branch here", b.control[1]),
                hint="an EU has a single branch unit",
            )
            return
        if not self._arity(spec, instr, 4 if op.conditional else 1):
            return
        names = ("taken",) if not op.conditional else ("x", "y", "taken", "not_taken")
        b.control_operands = {n: o.span for n, o in zip(names, instr.operands, strict=True)}
        if not op.conditional:
            taken = self._target(group, instr.operands[0], halt=op is CtrlOp.HALT)
            if taken is not None:
                b.control = (Control(op, taken), instr.span)
            return
        x = self._reg_or_imm(b, instr.operands[0], "branch operand")
        y = self._reg_or_imm(b, instr.operands[1], "branch operand")
        taken = self._target(group, instr.operands[2])
        not_taken = self._target(group, instr.operands[3])
        if x is None or y is None or taken is None or not_taken is None:
            return
        b.control = (Control(op, taken, x, y, not_taken), instr.span)

    def _epilog(
        self, group: _Group, b: _Builder, spec: InstructionSpec, instr: Instruction
    ) -> None:
        if spec.mnemonic == "PUSH":
            if not instr.operands:
                self.error("DPF0103", "`PUSH` takes one or more registers", instr.span)
                return
            b.push_spans.append(instr.span)
            for op in instr.operands:
                reg = self._register(op, "PUSH operand")
                if reg is not None:
                    b.push.append((reg, op.span))
            return
        if spec.mnemonic == "HDR_MOD":
            if self._arity(spec, instr, 0):
                if b.hdr_mod is not None:
                    self.error(
                        "DPF0118", "HDR_MOD given twice", instr.span, Note("first here", b.hdr_mod)
                    )
                b.hdr_mod = instr.span
            return
        if spec.mnemonic == "NEXT_PC":
            if not self._arity(spec, instr, 1):
                return
            if b.next_pc is not None:
                self.error(
                    "DPF0118", "NEXT_PC given twice", instr.span, Note("first here", b.next_pc[1])
                )
                return
            op = instr.operands[0]
            if op.kind == "symbol":
                # a chain to another DPF (``module.dpf``): the linker fills in its prolog
                self.relocations.append(Relocation(group.label, op.text))
                b.next_pc = (PLACEHOLDER, instr.span)
                return
            target: PC | Register | None
            target = (
                self._register(op, "NEXT_PC")
                if _REGISTER.match(op.text)
                else self._target(group, op, prolog=True)
            )
            if target is not None:
                b.next_pc = (target, instr.span)
            return
        # FWD action [, value]
        if not self._arity(spec, instr, 1, 2):
            return
        if b.steering is not None:
            self.error("DPF0118", "FWD given twice", instr.span, Note("first here", b.steering[1]))
            return
        action_op = instr.operands[0]
        action = self.profile.steering_by_name(action_op.text) if action_op.kind == "name" else None
        if action is None:
            names = [s.name for s in self.profile.steering]
            self.error(
                "DPF1021",
                f"unknown steering action `{action_op.text}`" + _suggest(action_op.text, names),
                action_op.span,
                hint="known: " + ", ".join(names),
            )
            return
        value: Register | Imm | None = None
        if len(instr.operands) == 2:
            value_op = instr.operands[1]
            if value_op.kind == "number":
                number = self._immediate(
                    value_op, "steering value", 0, 0xFFFF, code="DPF1023", why=" (16 bits)"
                )
                if number is None:
                    return
                value = Imm(number)
            else:
                value = self._register(value_op, "steering value")
                if value is None:
                    return
        b.steering = (Steering(action.name, value), instr.span)

    # -- whole program ------------------------------------------------------------------
    def _finish(self, placed: list[PlacedBundle]) -> MachineProgram | None:
        prologs = [g for g in self.groups if g.stage == PROLOG_STAGE]
        if self.entry_name is not None:
            name, span = self.entry_name
            group = self.labels.get(name)
            if group is None:
                prolog_names = [g.label for g in prologs]
                self.error(
                    "DPF0130",
                    f"`.entry {name}` names no bundle; it must name a prolog bundle"
                    + _suggest(name, prolog_names),
                    span,
                )
                return None
            if group.stage != PROLOG_STAGE:
                self.error(
                    "DPF0130",
                    f"`.entry {name}` names {_a(stage_name(group.stage))} bundle; "
                    "it must name a prolog bundle",
                    span,
                    Note(f"`{name}` defined here", group.head.label_span or group.head.span),
                )
                return None
            entry_group = group
        elif prologs:
            entry_group = prologs[0]
        else:
            self.error(
                "DPF0130",
                "no prolog: a DPF starts at a prolog bundle (`prolog NAME:`)",
                self.groups[0].head.span if self.groups else self.source.span(0, 0),
            )
            return None
        if self.diagnostics or entry_group.pc is None:
            return None
        program = MachineProgram(
            self.name,
            self.profile,
            self.placement,
            self.app_id,
            entry_group.pc,
            tuple(placed),
            arrays=tuple(self.arrays),
            relocations=tuple(self.relocations),
            pipeline=self.pipeline,
        )
        by_key = {(p.stage, p.pc.index): p for p in placed if p.pc.in_packet}
        for stage, index, violation in check_image(program.image(), self.profile):
            hint = None
            if violation.code == "DPF1031":
                index = self.profile.packet_bundles_per_stage
                hint = (
                    "place bundles of that stage in switch code memory "
                    f"(`{stage_name(stage)} NAME @slot:`)"
                )
            found = by_key.get((stage, index))
            where = found.span if found else None
            if violation.where[:1] in (("control",), ("next_pc",)):
                operands = self.operand_spans.get((stage, index), {})
                where = operands.get(str(violation.where[-1]), where)
            self.error(violation.code, violation.message, where, hint=hint)
        if self.diagnostics:
            return None
        image = program.image()
        if not image.is_empty():
            try:
                encode_options(program.header(), self.profile)
            except EncodingError as exc:
                in_packet = [p for p in placed if p.pc.in_packet]
                sizes = [
                    len(encode_stage_bundle(p.stage, p.bundle, self.profile)) for p in in_packet
                ]
                largest = in_packet[sizes.index(max(sizes))]
                self.error(
                    exc.code,
                    f"in-packet code does not fit: {exc.message}",
                    entry_group.head.span,
                    Note(
                        f"the {len(in_packet)} in-packet bundles take {sum(sizes)} bytes; the largest, "
                        f"`{largest.label}` ({stage_name(largest.stage)}), takes {max(sizes)}",
                        largest.span,
                    ),
                    hint="move bundles in-switch (`.placement switch` or `@slot` on a head), or shorten the code",
                )
                return None
        return program


def _parse_stage(text: str) -> int | None:
    lowered = text.lower()
    if lowered == "prolog":
        return PROLOG_STAGE
    if lowered == "epilog":
        return EPILOG_STAGE
    match = re.fullmatch(r"eu(\d+)", lowered)
    if match and int(match.group(1)) < 30:
        return int(match.group(1)) + 1
    return None


def _hex(value: int) -> str:
    return f"{value:#x}" if abs(value) > 9 else str(value)


def _a(word: str) -> str:
    """``word`` with its indefinite article (an eu0, an epilog, a prolog)."""
    return f"{'an' if word[:1] in 'aeiou' else 'a'} {word}"


def _suggest(word: str, choices: list[str] | tuple[str, ...], prefix: str = "") -> str:
    close = difflib.get_close_matches(word, choices, n=1)
    return f"; did you mean `{prefix}{close[0]}`?" if close else ""


def _section_hint(spec: InstructionSpec, section: str) -> str:
    if section == "prolog" and spec.unit is Unit.CONTROL:
        return "a prolog ends with `JMP` to an eu0 bundle; it has no other branch"
    if spec.unit is Unit.PROLOG:
        return "registers are initialised (POP, PEEK, LOAD_MD, RAND) only in the prolog"
    if spec.unit is Unit.EPILOG:
        return "PUSH, FWD, NEXT_PC and HDR_MOD run only in the epilog"
    return "ALU, memory, selector and branch instructions run only in EU bundles"
