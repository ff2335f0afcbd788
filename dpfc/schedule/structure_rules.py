"""The schedule checker's structural rules: what a schedule must be before it is run.

Contract: :func:`check_structure` checks the schedule's shape against the problem's tree
(spans, one step per node and owned EU, spans within the profile's EUs, in-packet limits,
array bindings and pins, no unpinned array where another array of the module is) and :func:`check_steps` the EUs used, then every step's own rules
(selector kinds and register classes, hash lanes, one operation per unit and lane,
operations on their owner's path, memory where its array is bound, the branch in the
node's last EU, immediates per bundle). Both
only record :class:`~dpfc.schedule.violations.ScheduleViolation` records in the
:class:`~dpfc.schedule.violations.ViolationLog` they are given; what the registers hold is
:mod:`.symbolic_run`'s.

Codes: DPF6100 spans and steps; DPF6102 selector; DPF6103 ALU; DPF6104 memory; DPF6105
array binding; DPF6106 branch; DPF6108 limits (immediates, EUs, in-packet bundles).
"""

from __future__ import annotations

from collections import Counter

from dpfc.catalog import codes
from dpfc.isa import RegClass, SelectorKind
from dpfc.schedule.problem.tree import Branch, Kind
from dpfc.schedule.schedule import Step
from dpfc.schedule.violations import ViolationLog


def check_structure(log: ViolationLog) -> None:
    """Spans (one per tree node, each starting after its parent's), one step per node and
    owned EU, the EU and in-packet limits, and array bindings (one per array, pins kept)."""
    p, s = log.problem, log.schedule
    num_eus = log.profile.num_eus
    if len(s.spans) != len(p.nodes):
        log.fail(codes.SCHEDULE_CHECK_SPANS, f"{len(s.spans)} spans for {len(p.nodes)} tree nodes")
        return
    seen: Counter[tuple[int, int]] = Counter((st.node, st.eu) for st in s.steps)
    for node in p.nodes:
        span = s.spans[node.id]
        first = 0 if node.parent is None else s.spans[node.parent].last_eu + 1
        if span.node != node.id or span.first_eu != first:
            log.fail(codes.SCHEDULE_CHECK_SPANS, f"node {node.id} must start in EU{first}", node.id)
        if span.last_eu >= num_eus:
            log.fail(
                codes.SCHEDULE_CHECK_LIMITS, f"node {node.id} ends in EU{span.last_eu}", node.id
            )
        if isinstance(node.end, Branch):
            if span.last_eu < span.first_eu:
                log.fail(
                    codes.SCHEDULE_CHECK_SPANS,
                    f"node {node.id} has no EU for its branch",
                    node.id,
                )
        elif span.last_eu < span.first_eu and not (
            span.first_eu == num_eus and span.last_eu == num_eus - 1
        ):
            log.fail(codes.SCHEDULE_CHECK_SPANS, f"leaf {node.id} owns no EU", node.id)
        for k in span.eus():
            if seen[node.id, k] != 1:
                log.fail(
                    codes.SCHEDULE_CHECK_SPANS,
                    f"node {node.id} needs one step in EU{k}",
                    node.id,
                    k,
                )
    for node_id, k in seen:
        if not 0 <= node_id < len(p.nodes) or k not in s.spans[node_id].eus():
            log.fail(
                codes.SCHEDULE_CHECK_SPANS,
                f"step of node {node_id} in EU{k} outside its span",
                node_id,
                k,
            )
    if p.placement == "packet":
        per_eu = Counter(st.eu for st in s.steps)
        limit = log.profile.packet_bundles_per_stage
        for k, count in per_eu.items():
            if count > limit:
                log.fail(
                    codes.SCHEDULE_CHECK_LIMITS,
                    f"{count} in-packet bundles in EU{k} (limit {limit})",
                )
        if len(p.leaves()) > limit:
            log.fail(codes.SCHEDULE_CHECK_LIMITS, f"{len(p.leaves())} epilogs (limit {limit})")
    # Array bindings: one per array, honouring pins; every accessed array bound.
    for name, info in p.arrays.items():
        bound = s.bindings.get(name)
        if info.pin is not None and bound is not None and bound != info.pin:
            log.fail(
                codes.SCHEDULE_CHECK_BINDING,
                f"array `{name}` is pinned to {info.pin} but bound to {bound}",
            )
    for op in p.ops:
        if op.kind is Kind.MEM and op.array not in s.bindings:
            log.fail(codes.SCHEDULE_CHECK_BINDING, f"array `{op.array}` is accessed but not bound")
    for name, where in s.bindings.items():
        other = p.reserved.get(where)
        bound_pin = p.arrays[name].pin if name in p.arrays else None
        if other is not None and other != name and bound_pin is None:
            log.fail(
                codes.SCHEDULE_CHECK_BINDING,
                f"array `{name}` is bound to {where}, where the module's array `{other}` is",
            )


def check_steps(log: ViolationLog) -> None:
    """The schedule's EU count against the profile, then :func:`check_step` on every step."""
    if log.schedule.eus_used > log.profile.num_eus:
        log.fail(codes.SCHEDULE_CHECK_LIMITS, f"{log.schedule.eus_used} EUs on {log.profile.name}")
    for step in log.schedule.steps:
        check_step(log, step)


def check_step(log: ViolationLog, step: Step) -> None:
    """One step's own rules: selectors (kinds, register classes, hash lanes), each lane's
    unit used once, operations on their owner's path, memory where its array is bound, the
    branch in the node's last EU, and the immediates a bundle can hold."""
    p = log.problem
    lanes = log.profile.lanes
    dests = [sel.dest for sel in step.selectors]
    if len(set(dests)) != len(dests):
        log.fail(
            codes.SCHEDULE_CHECK_SELECTOR,
            "two selectors write one register",
            step.node,
            step.eu,
        )
    immediates: set[int] = set()
    for sel in step.selectors:
        if sel.dest.lane >= lanes or (sel.source is not None and sel.source.lane >= lanes):
            log.fail(
                codes.SCHEDULE_CHECK_SELECTOR,
                f"register {sel.dest} does not exist",
                step.node,
                step.eu,
            )
        if sel.kind is SelectorKind.LOAD_IMM:
            if sel.dest.cls is not RegClass.B or sel.op is None:
                log.fail(
                    codes.SCHEDULE_CHECK_SELECTOR,
                    f"LOAD_IMM into {sel.dest}",
                    step.node,
                    step.eu,
                )
            elif p.ops[sel.op].kind is not Kind.CONST:
                log.fail(
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
                log.fail(codes.SCHEDULE_CHECK_SELECTOR, f"HASH into {sel.dest}", step.node, step.eu)
            elif op.lane != sel.dest.lane:
                log.fail(
                    codes.SCHEDULE_CHECK_SELECTOR,
                    f"hash<{op.lane}> in lane {sel.dest.lane}",
                    step.node,
                    step.eu,
                )
            elif not p.is_ancestor(step.node, op.owner):
                log.fail(
                    codes.SCHEDULE_CHECK_SELECTOR,
                    f"{log.operation_name(op.id)} runs on a foreign path",
                    step.node,
                    step.eu,
                )
        elif sel.kind is SelectorKind.MOV:
            if sel.source is None:
                log.fail(codes.SCHEDULE_CHECK_SELECTOR, "MOV without a source", step.node, step.eu)
        else:
            log.fail(codes.SCHEDULE_CHECK_SELECTOR, f"{sel.kind.name} in an EU", step.node, step.eu)
    for unit, ops in (("ALU", step.alu), ("memory", step.mem)):
        used = [lo.lane for lo in ops]
        if len(set(used)) != len(used) or any(not 0 <= lane < lanes for lane in used):
            log.fail(codes.SCHEDULE_CHECK_ALU, f"{unit} lanes {used}", step.node, step.eu)
    for lo in step.alu:
        op = p.ops[lo.op]
        if op.kind is not Kind.ALU or not p.is_ancestor(step.node, op.owner):
            log.fail(
                codes.SCHEDULE_CHECK_ALU,
                f"{log.operation_name(lo.op)} on the ALU here",
                step.node,
                step.eu,
            )
        elif lo.swapped and not op.commutative:
            log.fail(
                codes.SCHEDULE_CHECK_ALU,
                f"{log.operation_name(lo.op)} is not commutative",
                step.node,
                step.eu,
            )
    for lo in step.mem:
        op = p.ops[lo.op]
        if op.kind is not Kind.MEM or op.owner != step.node:
            log.fail(
                codes.SCHEDULE_CHECK_MEMORY,
                f"{log.operation_name(lo.op)} in node {step.node}",
                step.node,
                step.eu,
            )
        elif log.schedule.bindings.get(op.array or "") != (step.eu, lo.lane):
            log.fail(
                codes.SCHEDULE_CHECK_BINDING,
                f"{log.operation_name(lo.op)} on EU{step.eu} lane {lo.lane} "
                f"but `{op.array}` is bound to {log.schedule.bindings.get(op.array or '')}",
                step.node,
                step.eu,
            )
    node = p.nodes[step.node]
    is_branch_eu = isinstance(node.end, Branch) and step.eu == log.schedule.spans[node.id].last_eu
    if is_branch_eu != (step.branch is not None):
        log.fail(
            codes.SCHEDULE_CHECK_BRANCH,
            "the branch must be in the node's last EU",
            step.node,
            step.eu,
        )
    if step.branch is not None and isinstance(node.end, Branch):
        for source, operand in ((step.branch.x, node.end.x), (step.branch.y, node.end.y)):
            if isinstance(source, int):
                if source != operand or p.ops[source].kind is not Kind.CONST:
                    log.fail(
                        codes.SCHEDULE_CHECK_BRANCH,
                        "a branch immediate must be its constant",
                        step.node,
                        step.eu,
                    )
                else:
                    immediates.add(p.ops[source].value)
    if len(immediates) > log.profile.immediates_per_bundle:
        log.fail(
            codes.SCHEDULE_CHECK_LIMITS,
            f"{len(immediates)} immediates in one bundle",
            step.node,
            step.eu,
        )
