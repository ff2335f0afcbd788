"""The Machine's execution of one DPF's stages: prolog, EUs and epilog (docs/isa.md §3).

:class:`Stages` is a mixin of :class:`~.machine.Machine` (its methods stay methods of the
machine: no call is added on the per-packet path). ``fetch`` takes a bundle from the
packet's code or the pipe's code memory (a :class:`~.outcome.Fault` when it is missing or
foreign); ``run_prolog``, ``run_eu`` and ``run_epilog`` update the registers, the stack,
lane memory words and the tenant's counters and reports, with the two-stage timing of an
EU; ``run_epilog`` returns what the epilog decided (an :class:`~.outcome.EpilogDecision`) and
changes nothing outside the machine. The steering of that decision is :mod:`.steering`.
What a bundle asks of the units (register indices, working lanes) is worked out once per
bundle (:func:`bundle_plan`), not once per packet.
"""

from __future__ import annotations

from typing import NamedTuple

from dpfc.encoding import SwitchVMHeader, decode_pc
from dpfc.isa import (
    EPILOG_STAGE,
    PC,
    PROLOG_STAGE,
    AluOp,
    Bundle,
    CodeImage,
    CtrlOp,
    EpilogBundle,
    Imm,
    MemOp,
    Operand,
    Register,
    Selector,
    SelectorKind,
    StageBundle,
    alu,
    branch_taken,
    hash_word,
    memory,
    stage_name,
)
from dpfc.packet import ParsedPacket, header_fields
from dpfc.switch import RandomSource, TenantStats
from dpfc.target import HEADER_FIELD_NAMES, BranchOperands, MemoryAddress, TargetProfile

from .memory import LaneMemory
from .outcome import Context, EpilogDecision, Fault
from .state import PipeState
from .trace.events import (
    alu_event,
    branch_event,
    epilog_events,
    memory_event,
    prolog_event,
    selector_event,
)
from .trace.record import PacketTrace, StageTrace


class Stages:
    """The stage-execution methods of :class:`~.machine.Machine` (the attributes below are
    the machine's, set by its ``__init__``)."""

    pipe: PipeState
    pipeline: str
    memories: list[list[LaneMemory]]
    profile: TargetProfile
    parsed: ParsedPacket
    header: SwitchVMHeader | None
    tenant: int
    stats: TenantStats
    ctx: Context
    rng: RandomSource
    tracer: PacketTrace | None
    lanes: int
    regs: list[int]
    stack: list[int]
    code: CodeImage
    executed: list[tuple[int, PC]]

    # -- helpers -------------------------------------------------------------------------------
    def index(self, reg: Register) -> int:
        return reg.cls.value * self.lanes + reg.lane

    def fetch(self, stage: int, pc: PC) -> StageBundle:
        self.executed.append((stage, pc))
        if pc.in_packet:
            if stage == PROLOG_STAGE:
                bundles: tuple[StageBundle, ...] = self.code.prologs
            elif stage == EPILOG_STAGE:
                bundles = self.code.epilogs
            else:
                bundles = self.code.eus[stage - 1] if stage - 1 < len(self.code.eus) else ()
            if pc.index >= len(bundles):
                name = stage_name(stage)
                raise Fault(f"{name} {pc}: the packet carries {len(bundles)} {name} bundle(s)")
            return bundles[pc.index]
        slot = self.pipe.code.get(stage, {}).get(pc.index)
        if slot is None:
            raise Fault(f"{stage_name(stage)} {pc}: code-memory slot is empty")
        if slot.owners is not None and self.tenant not in slot.owners:
            raise Fault(f"{stage_name(stage)} {pc}: code-memory slot belongs to other tenants")
        return slot.bundle

    def stage_trace(self, stage: int, pc: PC) -> StageTrace | None:
        if self.tracer is None:
            return None
        record = StageTrace(stage, pc)
        self.tracer.stages.append(record)
        return record

    def run_prolog(self, bundle: Bundle, pc: PC) -> PC:
        record = None if self.tracer is None else self.stage_trace(PROLOG_STAGE, pc)
        regs = self.regs
        # Selectors are stored in initialisation order, A0.. then B0.. (§5): check_bundle
        # (DPF1006) admits no other order, for decoded and installed code alike.
        for sel, kind, dest, _, index in bundle_plan(bundle, self.lanes).selectors:
            if kind is SelectorKind.POP or kind is SelectorKind.PEEK:
                if self.stack:
                    value = self.stack.pop(0) if kind is SelectorKind.POP else self.stack[0]
                else:
                    value = 0
                    self.stats.stack_underflow += 1
                    self.pipe.report(
                        self.tenant, "stack", f"{kind.name} {sel.dest} on an empty stack"
                    )
            elif kind is SelectorKind.RAND:
                value = self.rng.getrandbits(32)
            else:  # LOAD_MD (the checker admits only prolog kinds here)
                value = self.metadata(sel.value)
            regs[dest] = value
            if record is not None:
                record.events.append(prolog_event(index, sel, value, self.profile))
        if record is not None:
            record.registers = tuple(regs)
            record.next_pc = str(bundle.control.taken)
        return bundle.control.taken

    def metadata(self, index: int) -> int:
        field_ = self.profile.metadata_by_index(index)
        name = field_.name if field_ is not None else ""
        ctx = self.ctx
        if name in HEADER_FIELD_NAMES:  # the tenant's packet: the inner frame (isa.md §4)
            return header_fields(self.parsed.inner)[name]
        values = {
            "ingress_port": ctx.ingress_port,
            "timestamp": ctx.timestamp_ns,
            "switch_id": ctx.switch_id,
            "queue_depth": ctx.queue_depth,
            "packet_length": len(self.parsed.inner) + self.parsed.inner_offset,
            "pipe_id": ctx.pipe_id,
            # no port is chosen while the ingress runs: the "none" of 16-bit pointers
            "egress_port": 0xFFFF if ctx.egress_port is None else ctx.egress_port,
        }
        return values.get(name, 0) & 0xFFFF_FFFF

    def run_eu(self, eu: int, bundle: Bundle, pc: PC) -> tuple[PC, bool]:
        record = None if self.tracer is None else self.stage_trace(eu + 1, pc)
        lanes = self.lanes
        entry = self.regs
        selectors, active, _, operands = bundle_plan(bundle, lanes)
        # `entry` is never written (the EU's results go to a new list): without selectors,
        # the selected values are the entry values themselves
        selected = list(entry) if selectors else entry
        for sel, kind, dest, source, index in selectors:  # a parallel copy: all read `entry`
            if kind is SelectorKind.MOV:
                assert sel.source is not None
                value = entry[source]
            elif kind is SelectorKind.LOAD_IMM:
                value = sel.value
            elif kind is SelectorKind.LOAD_CONST:
                table = self.pipe.constants.get(self.tenant)
                value = table[sel.value] if table is not None else 0
            else:  # HASH (A registers only): CRC of the lane's EU-entry value
                value = hash_word(self.profile.hash_for_lane(sel.dest.lane), entry[dest])
            selected[dest] = value
            if record is not None:
                record.events.append(selector_event(index, sel, value, entry, self.profile))
        address_regs = entry if self.profile.memory_address is MemoryAddress.ENTRY else selected
        if self.profile.shifts_restricted:
            self.check_shifts(eu, active, selected)
        result = list(selected)
        lane_memories = self.memories[eu]
        tenant = self.tenant
        for lane, b_at, op, mop in active:
            if op is not None:
                a, b = selected[lane], selected[b_at]
                result[lane] = alu(op, a, b)
                if record is not None:
                    record.events.append(alu_event(lane, op, a, b, result[lane]))
            if mop is not None:
                vaddr = address_regs[lane]
                data = selected[b_at]
                lane_memory = lane_memories[lane]
                physical = lane_memory.translate(tenant, vaddr)
                if physical is None:
                    self.stats.unmapped += 1
                    self.pipe.report(
                        self.tenant,
                        "unmapped",
                        f"EU{eu} lane {lane}: {mop.name} [{vaddr:#x}] is not mapped",
                    )
                    cleared = None if mop is MemOp.STORE else 0
                    if cleared is not None:
                        result[b_at] = cleared
                    if record is not None:
                        record.events.append(
                            memory_event(lane, mop, vaddr, data, None, 0, 0, cleared)
                        )
                    continue
                words = lane_memory.words
                old = words[physical]
                new, b_value = memory(mop, old, data)
                words[physical] = new
                if b_value is not None:
                    result[b_at] = b_value
                if record is not None:
                    record.events.append(
                        memory_event(lane, mop, vaddr, data, physical, old, new, b_value)
                    )
        control = bundle.control
        halted = control.op is CtrlOp.HALT
        if control.op is CtrlOp.JMP or halted:
            next_pc = control.taken
        else:
            mode = self.profile.branch_operands
            if mode is BranchOperands.ENTRY:
                seen = entry
            elif mode is BranchOperands.SELECTED:
                seen = selected
            else:  # LOADED: after selection plus this EU's memory results, never ALU results
                seen = selected[:lanes] + result[lanes:]
            x_at, x_imm, y_at, y_imm = operands
            x = seen[x_at] if x_at >= 0 else x_imm if x_at == -1 else self.operand(control.x, seen)
            y = seen[y_at] if y_at >= 0 else y_imm if y_at == -1 else self.operand(control.y, seen)
            taken = branch_taken(control.op, x, y)
            assert control.not_taken is not None
            next_pc = control.taken if taken else control.not_taken
            if record is not None:
                record.events.append(branch_event(control, x, y, taken))
        self.regs = result
        if record is not None:
            record.registers = tuple(result)
            record.next_pc = ("HALT -> " if halted else "") + str(next_pc)
        return next_pc, halted

    def check_shifts(
        self,
        eu: int,
        active: tuple[tuple[int, int, AluOp | None, MemOp | None], ...],
        selected: list[int],
    ) -> None:
        """A shift by an amount the profile's ALU lacks faults the packet before this EU's
        ALUs and memory units run (docs/isa.md §6 item 4; simulator R14)."""
        profile = self.profile
        for lane, b_at, op, _ in active:
            if (op is AluOp.LSH or op is AluOp.RSH) and not profile.shifts_by(selected[b_at]):
                raise Fault(
                    f"EU{eu} lane {lane}: {op.name} by {selected[b_at] & 31} "
                    f"(B{lane} = {selected[b_at]:#x}): the ALU shifts only by "
                    f"{profile.shift_text()}"
                )

    def operand(self, operand: Operand | None, regs: list[int]) -> int:
        if isinstance(operand, Imm):
            return operand.value
        assert operand is not None
        return regs[self.index(operand)]

    def run_epilog(self, bundle: EpilogBundle, pc: PC) -> EpilogDecision:
        record = None if self.tracer is None else self.stage_trace(EPILOG_STAGE, pc)
        regs = self.regs
        pushed = [regs[i] for i in _push_plan(bundle, self.lanes)]
        stack = pushed + self.stack  # the first listed ends on top
        if len(stack) > self.profile.stack_max_depth:
            raise Fault(
                f"PUSH of {len(pushed)} makes the stack {len(stack)} deep "
                f"(limit {self.profile.stack_max_depth})"
            )
        steering = bundle.steering
        value = steering.value
        steer_value = (
            0
            if value is None
            else value.value
            if isinstance(value, Imm)
            else regs[self.index(value)] & 0xFFFF
        )
        # NEXT_PC sets the pointer of the pipeline this DPF runs in: an ingress DPF chains
        # through dpf_ptr, an egress DPF through egress_ptr (docs/isa.md §6 item 20).
        old_ptr = self.pointer_of(self.header, self.pipeline)
        new_ptr: PC | None = old_ptr
        next_pc = bundle.next_pc
        if isinstance(next_pc, PC):
            new_ptr = next_pc
        elif isinstance(next_pc, Register):
            raw = regs[self.index(next_pc)] & 0xFFFF
            new_ptr = None if raw == 0xFFFF else decode_pc(raw)
        code = CodeImage() if bundle.hdr_mod else self.code
        if bundle.hdr_mod and next_pc is None and new_ptr is not None and new_ptr.in_packet:
            new_ptr = None  # the code it named is gone
        if record is not None:
            record.registers = tuple(regs)
            record.events += epilog_events(bundle, pushed, regs, steer_value, new_ptr, self.lanes)
        return EpilogDecision(stack, steering.action, steer_value, new_ptr, code)

    @staticmethod
    def pointer_of(header: SwitchVMHeader | None, pipeline: str) -> PC | None:
        if header is None:
            return None
        return header.egress_ptr if pipeline == "egress" else header.dpf_ptr


# -- per-bundle plans ------------------------------------------------------------------------
# What a bundle asks of the units, worked out once per bundle instead of once per packet:
# register indices (an enum lookup each), and the lanes whose ALU or memory unit works (a
# bundle leaves most lanes idle). A bundle is a frozen value; it is known here by identity,
# and each entry holds its bundle, so that the id cannot name another object meanwhile.
class Plan(NamedTuple):
    """What one bundle asks of the units on a target of some number of lanes."""

    # sel, kind, dest, source, its index in the bundle's selectors (for the trace)
    selectors: tuple[tuple[Selector, SelectorKind, int, int, int], ...]
    # the lanes whose ALU or memory unit works: (lane, index of B[lane], ALU op, memory op),
    # None for a unit that does nothing (NOP)
    active: tuple[tuple[int, int, AluOp | None, MemOp | None], ...]
    reads_metadata: bool  # a LOAD_MD selector (a prolog the metadata permission guards)
    # the branch's x and y: (register index, 0), or (-1, immediate), or (-2, 0) when
    # absent (``operand`` then fails as it always did)
    operands: tuple[int, int, int, int]


_PLAN_CACHE = 4096  # entries; a full table is emptied
_plans: dict[int, tuple[Bundle, int, Plan]] = {}  # id(bundle) -> (bundle, lanes, plan)
_push_plans: dict[tuple[int, int], tuple[EpilogBundle, tuple[int, ...]]] = {}


def _register_index(reg: Register, lanes: int) -> int:
    return reg.cls.value * lanes + reg.lane


def bundle_plan(bundle: Bundle, lanes: int) -> Plan:
    """The selectors with their register indices (source -1 but for MOV) and positions,
    and the working lanes, in lane order, of ``bundle`` on a target of ``lanes`` lanes."""
    hit = _plans.get(id(bundle))
    if hit is not None and hit[0] is bundle and hit[1] == lanes:
        return hit[2]
    selectors = tuple(
        (
            sel,
            sel.kind,
            _register_index(sel.dest, lanes),
            -1 if sel.source is None else _register_index(sel.source, lanes),
            index,
        )
        for index, sel in enumerate(bundle.selectors)
    )
    active = tuple(
        (
            lane,
            lanes + lane,
            None if bundle.alu[lane] is AluOp.NOP else bundle.alu[lane],
            None if bundle.mem[lane] is MemOp.NOP else bundle.mem[lane],
        )
        for lane in range(lanes)
        if bundle.alu[lane] is not AluOp.NOP or bundle.mem[lane] is not MemOp.NOP
    )
    control = bundle.control
    plan = Plan(
        selectors,
        active,
        any(s.kind is SelectorKind.LOAD_MD for s in bundle.selectors),
        _operand_plan(control.x, lanes) + _operand_plan(control.y, lanes),
    )
    if len(_plans) >= _PLAN_CACHE:
        _plans.clear()
    _plans[id(bundle)] = (bundle, lanes, plan)
    return plan


def _operand_plan(operand: Operand | None, lanes: int) -> tuple[int, int]:
    if isinstance(operand, Imm):
        return -1, operand.value
    if operand is None:
        return -2, 0
    return _register_index(operand, lanes), 0


def _push_plan(bundle: EpilogBundle, lanes: int) -> tuple[int, ...]:
    """The register indices of an epilog's PUSH list, in its order."""
    key = (id(bundle), lanes)
    hit = _push_plans.get(key)
    if hit is not None and hit[0] is bundle:
        return hit[1]
    indices = tuple(_register_index(reg, lanes) for reg in bundle.push)
    if len(_push_plans) >= _PLAN_CACHE:
        _push_plans.clear()
    _push_plans[key] = (bundle, indices)
    return indices
