"""The instructions of each functional unit, read into the bundle being built.

One method per unit of the ISA table (:class:`~dpfc.isa.opcodes.Unit`): selectors (and the
prolog's register loads), ALU, memory, control (branches) and the epilog's actions. Each
checks the rules of the *text* that the machine-code checker cannot see once the bundle is
built, because the bundle has a single slot for what the text wrote twice: two selectors for
one register (DPF1005), two ALU or memory ops in one lane (DPF0113, DPF0115), two branches
(DPF0117), an epilog action given twice (DPF0118); and the operand forms of each unit (an
ALU op writes A[i] from B[i], DPF0112; memory takes ``[A<i>]`` and B<i>, DPF0114; HASH
writes A, immediates and constants load B, DPF1014/DPF1015). The rest is checked on the
whole bundle by :mod:`dpfc.isa.check` (:mod:`.bundles`).
"""

from __future__ import annotations

from dpfc.asm.operands import OperandReader
from dpfc.asm.state import REGISTER, AssemblerState, BundleDraft, Group, suggest
from dpfc.asm.syntax import Instruction
from dpfc.catalog import codes
from dpfc.diagnostics import Note
from dpfc.isa import (
    PC,
    UNARY_ALU_OPS,
    AluOp,
    Control,
    CtrlOp,
    Imm,
    InstructionSpec,
    MemOp,
    RegClass,
    Register,
    Selector,
    SelectorKind,
    Steering,
    stage_name,
)
from dpfc.machine import PLACEHOLDER, Relocation


class UnitReader:
    """Reads one instruction of each unit into a :class:`~dpfc.asm.state.BundleDraft`, its
    operands read by an :class:`~dpfc.asm.operands.OperandReader`."""

    def __init__(self, state: AssemblerState, operands: OperandReader) -> None:
        self.state = state
        self.operands = operands

    def selector(
        self, group: Group, b: BundleDraft, spec: InstructionSpec, instr: Instruction
    ) -> None:
        kind = SelectorKind(spec.code)
        two = kind in (
            SelectorKind.MOV,
            SelectorKind.LOAD_IMM,
            SelectorKind.LOAD_CONST,
            SelectorKind.LOAD_MD,
        )
        if not self.operands.arity(spec, instr, 2 if two else 1):
            return
        dest = self.operands.register(instr.operands[0], f"destination of {spec.mnemonic}")
        if dest is None:
            return
        source: Register | None = None
        value = 0
        if kind is SelectorKind.MOV:
            source = self.operands.register(instr.operands[1], "MOV source")
            if source is None:
                return
        elif kind is SelectorKind.LOAD_IMM:
            imm = self.operands.immediate(instr.operands[1], "immediate")
            if imm is None:
                return
            value = imm
            b.immediate_spans.setdefault(value, instr.operands[1].span)
        elif kind is SelectorKind.LOAD_CONST:
            index = self.operands.immediate(
                instr.operands[1],
                "constant index",
                0,
                self.state.profile.const_table_entries - 1,
                code=codes.ISA_CONSTANT_INDEX_RANGE,
                why=f": {self.state.profile.name} has {self.state.profile.const_table_entries} "
                "constant-table entries",
            )
            if index is None:
                return
            value = index
        elif kind is SelectorKind.LOAD_MD:
            md = instr.operands[1]
            if md.kind == "name":
                field_ = self.state.profile.metadata_by_name(md.text)
                if field_ is None:
                    names = [m.name for m in self.state.profile.metadata]
                    self.state.error(
                        codes.ISA_UNKNOWN_METADATA,
                        f"unknown metadata field `{md.text}`" + suggest(md.text, names),
                        md.span,
                        hint="known: " + ", ".join(names),
                    )
                    return
                value = field_.index
            else:
                index = self.operands.immediate(
                    md, "metadata index", 0, 255, code=codes.ISA_UNKNOWN_METADATA
                )
                if index is None:
                    return
                if self.state.profile.metadata_by_index(index) is None:
                    self.state.error(
                        codes.ISA_UNKNOWN_METADATA,
                        f"unknown metadata index {index}",
                        md.span,
                        hint=f"{self.state.profile.name} defines "
                        + ", ".join(f"{m.index}={m.name}" for m in self.state.profile.metadata),
                    )
                    return
                value = index
        if kind is SelectorKind.HASH and dest.cls is not RegClass.A:
            self.state.error(
                codes.ISA_HASH_INTO_B,
                f"HASH writes only A registers (A = hash(A)), not {dest}",
                instr.operands[0].span,
            )
            return
        if kind in (SelectorKind.LOAD_IMM, SelectorKind.LOAD_CONST) and dest.cls is not RegClass.B:
            self.state.error(
                codes.ISA_LOAD_INTO_A,
                f"{spec.mnemonic} writes only B registers, not {dest}",
                instr.operands[0].span,
                hint=f"load into B{dest.lane} and MOV it if an A register needs the value",
            )
            return
        if dest in b.selectors:
            self.state.error(
                codes.ISA_REGISTER_WRITTEN_TWICE,
                f"register {dest} is written by two selectors in one bundle",
                instr.span,
                Note("first written here", b.selectors[dest][1]),
                hint="each register has one selector per stage",
            )
            return
        b.selectors[dest] = (Selector(dest, kind, source, value), instr.span)

    def alu(self, group: Group, b: BundleDraft, spec: InstructionSpec, instr: Instruction) -> None:
        op = AluOp(spec.code)
        unary = op in UNARY_ALU_OPS
        if not self.operands.arity(spec, instr, 1 if unary else 2):
            return
        a = self.operands.register(instr.operands[0], f"first operand of {spec.mnemonic}")
        if a is None:
            return
        if a.cls is not RegClass.A:
            self.state.error(
                codes.ASM_ALU_OPERANDS,
                f"ALU ops write A registers: {spec.mnemonic} {a} is illegal (ALU i computes A[i] op B[i])",
                instr.operands[0].span,
            )
            return
        if not unary:
            second = self.operands.register(instr.operands[1], f"second operand of {spec.mnemonic}")
            if second is None:
                return
            if second.cls is not RegClass.B or second.lane != a.lane:
                self.state.error(
                    codes.ASM_ALU_OPERANDS,
                    f"ALU lane {a.lane} reads A{a.lane} and B{a.lane}; `{spec.mnemonic} {a}, {second}` is illegal",
                    instr.operands[1].span,
                    hint=f"MOV the value into B{a.lane} in a selector first",
                )
                return
        if a.lane in b.alu:
            self.state.error(
                codes.ASM_ALU_LANE_TWICE,
                f"two ALU ops in lane {a.lane} of {stage_name(group.stage)}",
                instr.span,
                Note("first ALU op of that lane", b.alu[a.lane][1]),
                hint="each lane has one ALU per EU; use another lane or the next EU",
            )
            return
        b.alu[a.lane] = (op, instr.span)

    def memory(
        self, group: Group, b: BundleDraft, spec: InstructionSpec, instr: Instruction
    ) -> None:
        op = MemOp(spec.code)
        if not self.operands.arity(spec, instr, 2):
            return
        store = op is MemOp.STORE
        addr_op, data_op = (
            (instr.operands[0], instr.operands[1])
            if store
            else (instr.operands[1], instr.operands[0])
        )
        if addr_op.kind != "mem":
            form = f"{spec.mnemonic} [A<i>], B<i>" if store else f"{spec.mnemonic} B<i>, [A<i>]"
            self.state.error(
                codes.ASM_MEMORY_OPERANDS,
                f"memory address must be written `[A<i>]`: `{form}`",
                addr_op.span,
            )
            return
        addr = self.operands.register(addr_op, "memory address")
        data = self.operands.register(data_op, "memory data register")
        if addr is None or data is None:
            return
        if addr.cls is not RegClass.A:
            self.state.error(
                codes.ASM_MEMORY_OPERANDS,
                f"memory address must be an A register, not {addr} "
                "(memory lane i takes its address in A[i] and data in B[i])",
                addr_op.span,
            )
            return
        if data.cls is not RegClass.B:
            self.state.error(
                codes.ASM_MEMORY_OPERANDS,
                f"memory data must be a B register, not {data} "
                "(memory lane i takes its address in A[i] and data in B[i])",
                data_op.span,
            )
            return
        if addr.lane != data.lane:
            self.state.error(
                codes.ASM_MEMORY_OPERANDS,
                f"memory lane {addr.lane} takes its address in A{addr.lane} and data in "
                f"B{addr.lane}; data {data} is in lane {data.lane}",
                data_op.span,
                hint=f"MOV the value into B{addr.lane} in a selector first",
            )
            return
        if addr.lane in b.mem:
            self.state.error(
                codes.ASM_MEMORY_LANE_TWICE,
                f"two memory ops in lane {addr.lane} of {stage_name(group.stage)}",
                instr.span,
                Note("first memory op of that lane", b.mem[addr.lane][1]),
            )
            return
        b.mem[addr.lane] = (op, instr.span)

    def control(
        self, group: Group, b: BundleDraft, spec: InstructionSpec, instr: Instruction
    ) -> None:
        op = CtrlOp(spec.code)
        if b.control is not None:
            self.state.error(
                codes.ASM_CONTROL_TWICE,
                f"more than one branch in {stage_name(group.stage)} bundle `{group.label}`",
                instr.span,
                Note("first branch here", b.control[1]),
                hint="an EU has a single branch unit",
            )
            return
        if not self.operands.arity(spec, instr, 4 if op.conditional else 1):
            return
        names = ("taken",) if not op.conditional else ("x", "y", "taken", "not_taken")
        b.control_operands = {n: o.span for n, o in zip(names, instr.operands, strict=True)}
        if not op.conditional:
            taken = self.operands.target(group, instr.operands[0], halt=op is CtrlOp.HALT)
            if taken is not None:
                b.control = (Control(op, taken), instr.span)
            return
        x = self.operands.reg_or_imm(b, instr.operands[0], "branch operand")
        y = self.operands.reg_or_imm(b, instr.operands[1], "branch operand")
        taken = self.operands.target(group, instr.operands[2])
        not_taken = self.operands.target(group, instr.operands[3])
        if x is None or y is None or taken is None or not_taken is None:
            return
        b.control = (Control(op, taken, x, y, not_taken), instr.span)

    def epilog(
        self, group: Group, b: BundleDraft, spec: InstructionSpec, instr: Instruction
    ) -> None:
        if spec.mnemonic == "PUSH":
            if not instr.operands:
                self.state.error(
                    codes.ASM_OPERAND_COUNT, "`PUSH` takes one or more registers", instr.span
                )
                return
            b.push_spans.append(instr.span)
            for op in instr.operands:
                reg = self.operands.register(op, "PUSH operand")
                if reg is not None:
                    b.push.append((reg, op.span))
            return
        if spec.mnemonic == "HDR_MOD":
            if self.operands.arity(spec, instr, 0):
                if b.hdr_mod is not None:
                    self.state.error(
                        codes.ASM_EPILOG_ACTION_TWICE,
                        "HDR_MOD given twice",
                        instr.span,
                        Note("first here", b.hdr_mod),
                    )
                b.hdr_mod = instr.span
            return
        if spec.mnemonic == "NEXT_PC":
            if not self.operands.arity(spec, instr, 1):
                return
            if b.next_pc is not None:
                self.state.error(
                    codes.ASM_EPILOG_ACTION_TWICE,
                    "NEXT_PC given twice",
                    instr.span,
                    Note("first here", b.next_pc[1]),
                )
                return
            op = instr.operands[0]
            if op.kind == "symbol":
                # a chain to another DPF (``module.dpf``): the linker fills in its prolog
                self.state.relocations.append(Relocation(group.label, op.text))
                b.next_pc = (PLACEHOLDER, instr.span)
                return
            target: PC | Register | None
            target = (
                self.operands.register(op, "NEXT_PC")
                if REGISTER.match(op.text)
                else self.operands.target(group, op, prolog=True)
            )
            if target is not None:
                b.next_pc = (target, instr.span)
            return
        # FWD action [, value]
        if not self.operands.arity(spec, instr, 1, 2):
            return
        if b.steering is not None:
            self.state.error(
                codes.ASM_EPILOG_ACTION_TWICE,
                "FWD given twice",
                instr.span,
                Note("first here", b.steering[1]),
            )
            return
        action_op = instr.operands[0]
        action = (
            self.state.profile.steering_by_name(action_op.text)
            if action_op.kind == "name"
            else None
        )
        if action is None:
            names = [s.name for s in self.state.profile.steering]
            self.state.error(
                codes.ISA_UNKNOWN_STEERING,
                f"unknown steering action `{action_op.text}`" + suggest(action_op.text, names),
                action_op.span,
                hint="known: " + ", ".join(names),
            )
            return
        value: Register | Imm | None = None
        if len(instr.operands) == 2:
            value_op = instr.operands[1]
            if value_op.kind == "number":
                number = self.operands.immediate(
                    value_op,
                    "steering value",
                    0,
                    0xFFFF,
                    code=codes.ISA_STEERING_VALUE_RANGE,
                    why=" (16 bits)",
                )
                if number is None:
                    return
                value = Imm(number)
            else:
                value = self.operands.register(value_op, "steering value")
                if value is None:
                    return
        b.steering = (Steering(action.name, value), instr.span)
