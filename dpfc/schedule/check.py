"""The independent schedule checker: re-verifies a Schedule without Z3.

It trusts nothing the scheduler computed beyond the :class:`Schedule` itself. For every
root-to-leaf path it runs the machine rules of docs/isa.md §3 on *symbolic* registers
(register -> operation id): the prolog in register order with a stack cursor, then each EU's
step (selectors read entry values and write at once; ALU and memory read the selected
values; stage-2 writes win), checking at every use that the register holds the operation
the problem says it should, and at the end the epilog's registers. Structural rules (spans,
one step per own EU, unit and immediate limits, register classes, array bindings and pins,
in-packet limits) are checked once per step. The search (:mod:`.search`) runs it on every
schedule; a violation is a compiler bug.

Codes: DPF6100 spans and steps; DPF6101 prolog; DPF6102 selector; DPF6103 ALU;
DPF6104 memory; DPF6105 array binding; DPF6106 branch; DPF6107 exit; DPF6108 limits
(immediates, EUs, in-packet bundles); DPF6109 a memory operation not run exactly once on a
path through its owner (or run on another path).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from dpfc.catalog import codes
from dpfc.isa import AluOp, MemOp, RegClass, Register, SelectorKind
from dpfc.schedule.problem.tree import Branch, Exit, Kind, Problem
from dpfc.schedule.schedule import Schedule, Source, Step
from dpfc.target import BranchOperands, MemoryAddress

Registers = dict[Register, int | None]


@dataclass(frozen=True)
class ScheduleViolation:
    code: str
    message: str
    node: int | None = None
    eu: int | None = None


class _Checker:
    def __init__(self, schedule: Schedule) -> None:
        self.schedule = schedule
        self.problem: Problem = schedule.problem
        self.profile = self.problem.profile
        self.out: list[ScheduleViolation] = []
        self.regs = [Register.a(i) for i in range(self.profile.lanes)]
        self.regs += [Register.b(i) for i in range(self.profile.lanes)]
        self.zero = next(
            (o.id for o in self.problem.ops if o.kind is Kind.CONST and o.value == 0), None
        )

    def fail(self, code: str, message: str, node: int | None = None, eu: int | None = None) -> None:
        self.out.append(ScheduleViolation(code, message, node, eu))

    def name(self, op: int | None) -> str:
        return "nothing" if op is None else f"`{self.problem.ops[op].name}` (#{op})"

    # -- structure -------------------------------------------------------------------------
    def structure(self) -> None:
        p, s = self.problem, self.schedule
        num_eus = self.profile.num_eus
        if len(s.spans) != len(p.nodes):
            self.fail(
                codes.SCHEDULE_CHECK_SPANS, f"{len(s.spans)} spans for {len(p.nodes)} tree nodes"
            )
            return
        seen: Counter[tuple[int, int]] = Counter((st.node, st.eu) for st in s.steps)
        for node in p.nodes:
            span = s.spans[node.id]
            first = 0 if node.parent is None else s.spans[node.parent].last_eu + 1
            if span.node != node.id or span.first_eu != first:
                self.fail(
                    codes.SCHEDULE_CHECK_SPANS, f"node {node.id} must start in EU{first}", node.id
                )
            if span.last_eu >= num_eus:
                self.fail(
                    codes.SCHEDULE_CHECK_LIMITS, f"node {node.id} ends in EU{span.last_eu}", node.id
                )
            if isinstance(node.end, Branch):
                if span.last_eu < span.first_eu:
                    self.fail(
                        codes.SCHEDULE_CHECK_SPANS,
                        f"node {node.id} has no EU for its branch",
                        node.id,
                    )
            elif span.last_eu < span.first_eu and not (
                span.first_eu == num_eus and span.last_eu == num_eus - 1
            ):
                self.fail(codes.SCHEDULE_CHECK_SPANS, f"leaf {node.id} owns no EU", node.id)
            for k in span.eus():
                if seen[node.id, k] != 1:
                    self.fail(
                        codes.SCHEDULE_CHECK_SPANS,
                        f"node {node.id} needs one step in EU{k}",
                        node.id,
                        k,
                    )
        for node_id, k in seen:
            if not 0 <= node_id < len(p.nodes) or k not in s.spans[node_id].eus():
                self.fail(
                    codes.SCHEDULE_CHECK_SPANS,
                    f"step of node {node_id} in EU{k} outside its span",
                    node_id,
                    k,
                )
        if p.placement == "packet":
            per_eu = Counter(st.eu for st in s.steps)
            limit = self.profile.packet_bundles_per_stage
            for k, count in per_eu.items():
                if count > limit:
                    self.fail(
                        codes.SCHEDULE_CHECK_LIMITS,
                        f"{count} in-packet bundles in EU{k} (limit {limit})",
                    )
            if len(p.leaves()) > limit:
                self.fail(codes.SCHEDULE_CHECK_LIMITS, f"{len(p.leaves())} epilogs (limit {limit})")
        # Array bindings: one per array, honouring pins; every accessed array bound.
        for name, info in p.arrays.items():
            bound = s.bindings.get(name)
            if info.pin is not None and bound is not None and bound != info.pin:
                self.fail(
                    codes.SCHEDULE_CHECK_BINDING,
                    f"array `{name}` is pinned to {info.pin} but bound to {bound}",
                )
        for op in p.ops:
            if op.kind is Kind.MEM and op.array not in s.bindings:
                self.fail(
                    codes.SCHEDULE_CHECK_BINDING, f"array `{op.array}` is accessed but not bound"
                )

    def step_rules(self, step: Step) -> None:
        p = self.problem
        lanes = self.profile.lanes
        dests = [sel.dest for sel in step.selectors]
        if len(set(dests)) != len(dests):
            self.fail(
                codes.SCHEDULE_CHECK_SELECTOR,
                "two selectors write one register",
                step.node,
                step.eu,
            )
        immediates: set[int] = set()
        for sel in step.selectors:
            if sel.dest.lane >= lanes or (sel.source is not None and sel.source.lane >= lanes):
                self.fail(
                    codes.SCHEDULE_CHECK_SELECTOR,
                    f"register {sel.dest} does not exist",
                    step.node,
                    step.eu,
                )
            if sel.kind is SelectorKind.LOAD_IMM:
                if sel.dest.cls is not RegClass.B or sel.op is None:
                    self.fail(
                        codes.SCHEDULE_CHECK_SELECTOR,
                        f"LOAD_IMM into {sel.dest}",
                        step.node,
                        step.eu,
                    )
                elif p.ops[sel.op].kind is not Kind.CONST:
                    self.fail(
                        codes.SCHEDULE_CHECK_SELECTOR,
                        "LOAD_IMM of a non-constant",
                        step.node,
                        step.eu,
                    )
                else:
                    immediates.add(p.ops[sel.op].value)
            elif sel.kind is SelectorKind.HASH:
                op = p.ops[sel.op] if sel.op is not None else None
                if sel.dest.cls is not RegClass.A or op is None or op.kind is not Kind.HASH:
                    self.fail(
                        codes.SCHEDULE_CHECK_SELECTOR, f"HASH into {sel.dest}", step.node, step.eu
                    )
                elif op.lane != sel.dest.lane:
                    self.fail(
                        codes.SCHEDULE_CHECK_SELECTOR,
                        f"hash<{op.lane}> in lane {sel.dest.lane}",
                        step.node,
                        step.eu,
                    )
                elif not p.is_ancestor(step.node, op.owner):
                    self.fail(
                        codes.SCHEDULE_CHECK_SELECTOR,
                        f"{self.name(op.id)} runs on a foreign path",
                        step.node,
                        step.eu,
                    )
            elif sel.kind is SelectorKind.MOV:
                if sel.source is None:
                    self.fail(
                        codes.SCHEDULE_CHECK_SELECTOR, "MOV without a source", step.node, step.eu
                    )
            else:
                self.fail(
                    codes.SCHEDULE_CHECK_SELECTOR, f"{sel.kind.name} in an EU", step.node, step.eu
                )
        for unit, ops in (("ALU", step.alu), ("memory", step.mem)):
            used = [lo.lane for lo in ops]
            if len(set(used)) != len(used) or any(not 0 <= lane < lanes for lane in used):
                self.fail(codes.SCHEDULE_CHECK_ALU, f"{unit} lanes {used}", step.node, step.eu)
        for lo in step.alu:
            op = p.ops[lo.op]
            if op.kind is not Kind.ALU or not p.is_ancestor(step.node, op.owner):
                self.fail(
                    codes.SCHEDULE_CHECK_ALU,
                    f"{self.name(lo.op)} on the ALU here",
                    step.node,
                    step.eu,
                )
            elif lo.swapped and not op.commutative:
                self.fail(
                    codes.SCHEDULE_CHECK_ALU,
                    f"{self.name(lo.op)} is not commutative",
                    step.node,
                    step.eu,
                )
        for lo in step.mem:
            op = p.ops[lo.op]
            if op.kind is not Kind.MEM or op.owner != step.node:
                self.fail(
                    codes.SCHEDULE_CHECK_MEMORY,
                    f"{self.name(lo.op)} in node {step.node}",
                    step.node,
                    step.eu,
                )
            elif self.schedule.bindings.get(op.array or "") != (step.eu, lo.lane):
                self.fail(
                    codes.SCHEDULE_CHECK_BINDING,
                    f"{self.name(lo.op)} on EU{step.eu} lane {lo.lane} but `{op.array}` is bound "
                    f"to {self.schedule.bindings.get(op.array or '')}",
                    step.node,
                    step.eu,
                )
        node = p.nodes[step.node]
        is_branch_eu = (
            isinstance(node.end, Branch) and step.eu == self.schedule.spans[node.id].last_eu
        )
        if is_branch_eu != (step.branch is not None):
            self.fail(
                codes.SCHEDULE_CHECK_BRANCH,
                "the branch must be in the node's last EU",
                step.node,
                step.eu,
            )
        if step.branch is not None and isinstance(node.end, Branch):
            for source, operand in ((step.branch.x, node.end.x), (step.branch.y, node.end.y)):
                if isinstance(source, int):
                    if source != operand or p.ops[source].kind is not Kind.CONST:
                        self.fail(
                            codes.SCHEDULE_CHECK_BRANCH,
                            "a branch immediate must be its constant",
                            step.node,
                            step.eu,
                        )
                    else:
                        immediates.add(p.ops[source].value)
        if len(immediates) > self.profile.immediates_per_bundle:
            self.fail(
                codes.SCHEDULE_CHECK_LIMITS,
                f"{len(immediates)} immediates in one bundle",
                step.node,
                step.eu,
            )

    # -- symbolic execution ----------------------------------------------------------------
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
                        f"{load.kind.name} {load.dest} of {self.name(load.op)}",
                    )
                value = load.op
            else:
                self.fail(codes.SCHEDULE_CHECK_PROLOG, f"{load.kind.name} in the prolog")
            if load.op is not None and value != load.op:
                self.fail(
                    codes.SCHEDULE_CHECK_PROLOG,
                    f"{load.kind.name} {load.dest} reads {self.name(value)}, not {self.name(load.op)}",
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
                f"{what}: {reg} holds {self.name(regs.get(reg))}, needs {self.name(op)}",
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
                    f"{what}: {source} holds {self.name(regs.get(source))}, needs {self.name(op)}",
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
                        f"{self.name(op_id)} runs {ran[op_id]} times on the path to leaf {leaf}",
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

    def run(self) -> list[ScheduleViolation]:
        self.structure()
        if self.out:
            return self.out
        if self.schedule.eus_used > self.profile.num_eus:
            self.fail(
                codes.SCHEDULE_CHECK_LIMITS, f"{self.schedule.eus_used} EUs on {self.profile.name}"
            )
        for step in self.schedule.steps:
            self.step_rules(step)
        prolog = self.prolog()
        for leaf in self.problem.leaves():
            self.path(leaf, prolog)
        return self.out


def check_schedule(schedule: Schedule) -> list[ScheduleViolation]:
    """Every violation of the machine rules in ``schedule`` (empty: the schedule is valid)."""
    return _Checker(schedule).run()


def registers_on_path(schedule: Schedule, leaf: int) -> list[dict[Register, int | None]]:
    """Symbolic registers at the entry of EU0, EU1, ... on the path to ``leaf``, and last the
    registers the epilog reads (operation ids; None = nothing the DPF needs)."""
    checker = _Checker(schedule)
    return checker.path(leaf, checker.prolog())
