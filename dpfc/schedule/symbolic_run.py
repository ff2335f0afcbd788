"""The schedule checker's symbolic run: the machine rules on symbolic registers, path by path.

Contract: :class:`SymbolicRun` executes a schedule with registers that hold operation ids
(register -> the operation whose value it holds, None for nothing the DPF needs), following
the rules of docs/isa.md §3 under the profile's timing options: the prolog in register order
with a stack cursor (:meth:`SymbolicRun.prolog`), then along the path to each leaf every
EU's step (selectors read entry values and write at once; ALU and memory read the selected
values; stage-2 writes win; the branch reads the view ``branch_operands`` names), and at the
end the epilog's registers (:meth:`SymbolicRun.path`). At every use it checks that the
register holds the operation the problem says it should, and that every memory operation of
the path runs exactly once; each failure is recorded in the
:class:`~dpfc.schedule.violations.ViolationLog` it is given. The shape rules it relies on
are :mod:`.structure_rules`'.

Codes: DPF6100 a missing step; DPF6101 prolog; DPF6102 selector; DPF6103 ALU (also a
shift by an amount the profile's ALU lacks, docs/isa.md §6 item 4); DPF6104
memory; DPF6106 branch; DPF6107 exit; DPF6109 a memory operation not run exactly once on a
path through its owner.
"""

from __future__ import annotations

from collections import Counter

from dpfc.catalog import codes
from dpfc.isa import AluOp, MemOp, Register, SelectorKind
from dpfc.schedule.problem.tree import Branch, Exit, Kind
from dpfc.schedule.schedule import Source, Step
from dpfc.schedule.violations import ViolationLog
from dpfc.target import BranchOperands, MemoryAddress

Registers = dict[Register, int | None]


class SymbolicRun:
    """The symbolic execution of one schedule, reporting into ``log``."""

    def __init__(self, log: ViolationLog) -> None:
        self.fail = log.fail
        self.operation_name = log.operation_name
        self.schedule = log.schedule
        self.problem = log.problem
        self.profile = log.profile
        self.regs = [Register.a(i) for i in range(self.profile.lanes)]
        self.regs += [Register.b(i) for i in range(self.profile.lanes)]
        self.zero = next(
            (o.id for o in self.problem.ops if o.kind is Kind.CONST and o.value == 0), None
        )

    def prolog(self) -> Registers:
        p = self.problem
        regs: Registers = {r: self.zero for r in self.regs}
        cursor = 0
        order = [load.dest for load in self.schedule.prolog]
        if order != sorted(order) or len(set(order)) != len(order):
            self.fail(
                codes.SCHEDULE_CHECK_PROLOG,
                "prolog loads must be in register order, one per register",
            )
        for load in self.schedule.prolog:
            value: int | None = None
            if load.kind in (SelectorKind.POP, SelectorKind.PEEK):
                if cursor < p.params:
                    value = next(
                        (o.id for o in p.ops if o.kind is Kind.PARAM and o.index == cursor), None
                    )
                else:
                    value = next((o.id for o in p.ops if o.kind is Kind.PEEK), None)
                if load.kind is SelectorKind.POP:
                    cursor += 1
            elif load.kind in (SelectorKind.LOAD_MD, SelectorKind.RAND):
                op = p.ops[load.op] if load.op is not None else None
                wanted = Kind.META if load.kind is SelectorKind.LOAD_MD else Kind.RAND
                if op is None or op.kind is not wanted:
                    self.fail(
                        codes.SCHEDULE_CHECK_PROLOG,
                        f"{load.kind.name} {load.dest} of {self.operation_name(load.op)}",
                    )
                value = load.op
            else:
                self.fail(codes.SCHEDULE_CHECK_PROLOG, f"{load.kind.name} in the prolog")
            if load.op is not None and value != load.op:
                self.fail(
                    codes.SCHEDULE_CHECK_PROLOG,
                    f"{load.kind.name} {load.dest} reads {self.operation_name(value)}, "
                    f"not {self.operation_name(load.op)}",
                )
            regs[load.dest] = value
        if cursor != p.params:
            self.fail(
                codes.SCHEDULE_CHECK_PROLOG,
                f"the prolog pops {cursor} words, the DPF takes {p.params}",
            )
        rands = [load.op for load in self.schedule.prolog if load.kind is SelectorKind.RAND]
        if len(set(rands)) != len(rands):
            self.fail(
                codes.SCHEDULE_CHECK_PROLOG, "one random word loaded twice (each RAND draws anew)"
            )
        return regs

    def expect(self, regs: Registers, reg: Register, op: int, what: str, step: Step) -> None:
        if regs.get(reg) != op:
            self.fail(
                codes.SCHEDULE_CHECK_ALU
                if "ALU" in what
                else codes.SCHEDULE_CHECK_MEMORY
                if "memory" in what
                else codes.SCHEDULE_CHECK_SELECTOR,
                f"{what}: {reg} holds {self.operation_name(regs.get(reg))}, "
                f"needs {self.operation_name(op)}",
                step.node,
                step.eu,
            )

    def run_step(self, step: Step, entry: Registers) -> tuple[Registers, Registers, Registers]:
        """(selected, after stage 2, the branch's view)."""
        p = self.problem
        selected = dict(entry)
        for sel in step.selectors:
            if sel.kind is SelectorKind.MOV and sel.source is not None:
                selected[sel.dest] = entry.get(sel.source)
            elif sel.kind is SelectorKind.LOAD_IMM:
                selected[sel.dest] = sel.op
            elif sel.kind is SelectorKind.HASH and sel.op is not None:
                self.expect(entry, sel.dest, p.ops[sel.op].operands[0], "HASH input", step)
                # A HASH computing a constant's word selects that constant (.materialise).
                selected[sel.dest] = p.same_word.get(sel.op, sel.op)
        after = dict(selected)
        loaded = dict(selected)
        for lo in step.alu:
            op = p.ops[lo.op]
            a, b = Register.a(lo.lane), Register.b(lo.lane)
            if op.alu is AluOp.NEG:
                self.expect(selected, a, op.operands[0], f"ALU {op.name}", step)
            else:
                x, y = op.operands[::-1] if lo.swapped else op.operands
                self.expect(selected, a, x, f"ALU {op.name} (A)", step)
                self.expect(selected, b, y, f"ALU {op.name} (B)", step)
                if op.alu in (AluOp.LSH, AluOp.RSH) and self.profile.shifts_restricted:
                    amount = p.ops[y]
                    if amount.kind is not Kind.CONST or not self.profile.shifts_by(amount.value):
                        self.fail(
                            codes.SCHEDULE_CHECK_ALU,
                            f"ALU {op.name} shifts by {self.operation_name(y)}, not an amount "
                            f"the ALU of {self.profile.name} has (isa.md §6 item 4)",
                            step.node,
                            step.eu,
                        )
            # An operation that computes a constant's word leaves that constant (.materialise).
            after[a] = p.same_word.get(lo.op, lo.op)
        for lo in step.mem:
            op = p.ops[lo.op]
            a, b = Register.a(lo.lane), Register.b(lo.lane)
            view = selected if self.profile.memory_address is MemoryAddress.SELECTED else entry
            self.expect(view, a, op.operands[0], f"memory {op.name} address", step)
            if op.mem is not MemOp.LOAD:
                self.expect(selected, b, op.operands[1], f"memory {op.name} data", step)
            if op.has_result:
                after[b] = lo.op
                loaded[b] = lo.op
        mode = self.profile.branch_operands
        branch_view = (
            entry
            if mode is BranchOperands.ENTRY
            else selected
            if mode is BranchOperands.SELECTED
            else loaded
        )
        return selected, after, branch_view

    def operand(
        self, regs: Registers, source: Source, op: int, what: str, node: int, eu: int | None
    ) -> None:
        if isinstance(source, Register):
            if regs.get(source) != op:
                self.fail(
                    codes.SCHEDULE_CHECK_BRANCH if what == "branch" else codes.SCHEDULE_CHECK_EXIT,
                    f"{what}: {source} holds {self.operation_name(regs.get(source))}, "
                    f"needs {self.operation_name(op)}",
                    node,
                    eu,
                )
        elif source != op or self.problem.ops[op].kind is not Kind.CONST:
            self.fail(
                codes.SCHEDULE_CHECK_BRANCH if what == "branch" else codes.SCHEDULE_CHECK_EXIT,
                f"{what}: bad immediate",
                node,
                eu,
            )

    def path(self, leaf: int, prolog: Registers) -> list[Registers]:
        p, s = self.problem, self.schedule
        states = [dict(prolog)]
        regs = dict(prolog)
        path = p.path(leaf)
        ran: Counter[int] = Counter()
        last = s.spans[leaf].last_eu
        for k in range(last + 1):
            step = s.step_on_path(leaf, k)
            if step is None:
                self.fail(
                    codes.SCHEDULE_CHECK_SPANS,
                    f"no step in EU{k} on the path to leaf {leaf}",
                    leaf,
                    k,
                )
                return states
            _, after, view = self.run_step(step, regs)
            node = p.nodes[step.node]
            if step.branch is not None and isinstance(node.end, Branch):
                self.operand(view, step.branch.x, node.end.x, "branch", step.node, k)
                self.operand(view, step.branch.y, node.end.y, "branch", step.node, k)
            ran.update(lo.op for lo in step.mem)
            regs = after
            states.append(dict(regs))
        for node_id in path:
            for op_id in p.nodes[node_id].ops:
                if p.ops[op_id].kind is Kind.MEM and ran[op_id] != 1:
                    self.fail(
                        codes.SCHEDULE_CHECK_MEMORY_ONCE,
                        f"{self.operation_name(op_id)} runs {ran[op_id]} times "
                        f"on the path to leaf {leaf}",
                        node_id,
                    )
        end = p.nodes[leaf].end
        assert isinstance(end, Exit)
        try:
            use = s.exit(leaf)
        except KeyError:
            self.fail(codes.SCHEDULE_CHECK_EXIT, f"leaf {leaf} has no exit", leaf)
            return states
        if len(use.push) != len(end.push) or len(use.push) > self.profile.max_push:
            self.fail(codes.SCHEDULE_CHECK_EXIT, "push list length", leaf)
        for reg, op in zip(use.push, end.push, strict=False):
            self.operand(regs, reg, op, "push", leaf, None)
        if end.steer_value is not None:
            if use.steer_value is None:
                self.fail(codes.SCHEDULE_CHECK_EXIT, "the steering value has no source", leaf)
            elif isinstance(use.steer_value, int) and p.ops[use.steer_value].value > 0xFFFF:
                self.fail(codes.SCHEDULE_CHECK_EXIT, "steering immediate above 16 bits", leaf)
            else:
                self.operand(regs, use.steer_value, end.steer_value, "steering value", leaf, None)
        return states
