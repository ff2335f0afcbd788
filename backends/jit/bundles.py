"""Native code of SwitchVM bundles: one function per code source runs any of its bundles.

Contract: :func:`emit_code_function` writes ``i32 NAME(i32* st, i64* undo, i32 stage,
i32 index)`` into a module: it runs the bundle at (``stage``, ``index``) of a code source
— the pipe's code memory (with each slot's owners) or one packet's code image — on the
state words of :mod:`.layout`, exactly as :mod:`dpfc.backends.sim.stages` does, and
returns :data:`~.layout.STAGE_OK`, :data:`~.layout.STAGE_HALT` or, for anything the
interpreter would report or fault on (a missing or foreign bundle, an empty stack, an
unmapped address, LOAD_MD without the metadata bit, a stack too deep, a shift by an
amount the profile's ALU lacks),
:data:`~.layout.STAGE_DEOPT`. Memory words it changes are logged in ``undo`` (address,
old word) so that the caller can undo a packet that ends in DEOPT. Lane memory and
constants are reached through the pipe module's ``PREFIX_translate_E_L`` (the word's
address, 0 when unmapped) and ``PREFIX_const`` functions. The values of ALU, branch and
HASH operations are :mod:`.operations`'s; this module reads their operands and stores
their results.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from dpfc.encoding import encode_pc
from dpfc.isa import (
    EPILOG_STAGE,
    PC,
    PROLOG_STAGE,
    AluOp,
    Bundle,
    CtrlOp,
    EpilogBundle,
    Imm,
    MemOp,
    Register,
    SelectorKind,
)
from dpfc.switch import XORSHIFT32_SHIFTS
from dpfc.target import HEADER_FIELD_NAMES, BranchOperands, MemoryAddress, TargetProfile

from .emit import I32, I64, Emit, c32, c64, declare
from .layout import (
    ACTION_CODE,
    F_METADATA,
    PTR_NONE,
    STAGE_DEOPT,
    STAGE_HALT,
    STAGE_OK,
    StateLayout,
)
from .llvm import ir
from .operations import emit_alu, emit_branch, emit_crc

# (stage, index) -> (bundle, the tenants allowed to run it or None for all)
CodeSource = Mapping[tuple[int, int], tuple[Bundle | EpilogBundle, frozenset[int] | None]]


def emit_code_function(
    module: Any, name: str, prefix: str, profile: TargetProfile, source: CodeSource
) -> Any:
    st_t, undo_t = ir.PointerType(I32), ir.PointerType(I64)
    fn = ir.Function(module, ir.FunctionType(I32, [st_t, undo_t, I32, I32]), name)
    fn.linkage = "external"
    st, undo, stage, index = fn.args
    e = Emit(fn, st, undo)
    gen = _BundleGen(e, module, prefix, profile)
    default = e.block("missing")
    key = e.b.or_(e.b.shl(stage, c32(16)), index)
    switch = e.b.switch(key, default)
    with e.b.goto_block(default):
        e.b.ret(c32(STAGE_DEOPT))
    for (stage_no, slot), (bundle, owners) in sorted(source.items(), key=lambda kv: kv[0]):
        block = e.block(f"s{stage_no}_{slot}")
        switch.add_case(c32(stage_no << 16 | slot), block)
        e.b.position_at_end(block)
        _emit_bundle(gen, stage_no, bundle, owners)
    return fn


def emit_code_memory(
    module: Any, name: str, prefix: str, profile: TargetProfile, source: CodeSource
) -> Any:
    """The same function for a pipe's code memory, which may hold thousands of bundles:
    one function per bundle and, per stage, a constant table of their addresses indexed
    by slot (LLVM compiles many small functions in linear time; one switch over thousands
    of blocks takes it quadratic time)."""
    st_t, undo_t = ir.PointerType(I32), ir.PointerType(I64)
    bundle_ty = ir.FunctionType(I32, [st_t, undo_t])
    tables: dict[int, Any] = {}
    by_stage: dict[int, dict[int, Any]] = {}
    for (stage_no, slot), (bundle, owners) in sorted(source.items(), key=lambda kv: kv[0]):
        one = ir.Function(module, bundle_ty, f"{name}_{stage_no}_{slot}")
        one.linkage = "internal"
        e = Emit(one, one.args[0], one.args[1])
        _emit_bundle(_BundleGen(e, module, prefix, profile), stage_no, bundle, owners)
        by_stage.setdefault(stage_no, {})[slot] = one
    null = ir.Constant(ir.PointerType(bundle_ty), None)
    sizes: dict[int, int] = {}
    for stage_no, functions in by_stage.items():
        sizes[stage_no] = size = max(functions) + 1  # slots beyond the last used are empty
        ty = ir.ArrayType(ir.PointerType(bundle_ty), size)
        table = ir.GlobalVariable(module, ty, f"{name}_stage{stage_no}")
        table.initializer = ir.Constant(ty, [functions.get(k, null) for k in range(size)])
        table.global_constant = True
        table.linkage = "internal"
        tables[stage_no] = table
    fn = ir.Function(module, ir.FunctionType(I32, [st_t, undo_t, I32, I32]), name)
    st, undo, stage, index = fn.args
    e = Emit(fn, st, undo)
    b = e.b
    missing = e.block("missing")
    switch = b.switch(stage, missing)
    with b.goto_block(missing):
        b.ret(c32(STAGE_DEOPT))
    for stage_no, table in tables.items():
        block = e.block(f"stage{stage_no}")
        switch.add_case(c32(stage_no), block)
        b.position_at_end(block)
        e.leave_if(b.icmp_unsigned(">=", index, c32(sizes[stage_no])), STAGE_DEOPT)
        target = b.load(b.gep(table, [c32(0), index]))
        e.leave_if(b.icmp_unsigned("==", target, null), STAGE_DEOPT)  # an empty slot: a fault
        b.ret(b.call(target, [st, undo]))
    return fn


def _emit_bundle(
    gen: _BundleGen, stage_no: int, bundle: Bundle | EpilogBundle, owners: frozenset[int] | None
) -> None:
    if owners is not None:
        gen.owners_only(owners)
    if stage_no == PROLOG_STAGE:
        assert isinstance(bundle, Bundle)
        gen.prolog(bundle)
    elif stage_no == EPILOG_STAGE:
        assert isinstance(bundle, EpilogBundle)
        gen.epilog(bundle)
    else:
        assert isinstance(bundle, Bundle)
        gen.eu(stage_no - 1, bundle)


class _BundleGen:
    def __init__(self, e: Emit, module: Any, prefix: str, profile: TargetProfile) -> None:
        self.e, self.b = e, e.b
        self.module = module
        self.prefix = prefix
        self.profile = profile
        self.lay = StateLayout(profile)
        self.lanes = profile.lanes

    def reg_index(self, reg: Register) -> int:
        return reg.cls.value * self.lanes + reg.lane

    def owners_only(self, owners: Iterable[int]) -> None:
        """A slot of some tenants only: anyone else's fetch is a fault (DEOPT)."""
        e, b = self.e, self.b
        tenant = e.get(self.lay.tenant)
        allowed = None
        for owner in sorted(owners):
            same = b.icmp_unsigned("==", tenant, c32(owner))
            allowed = same if allowed is None else b.or_(allowed, same)
        if allowed is None:  # no tenant at all
            allowed = ir.Constant(ir.IntType(1), 0)
        e.leave_if(b.not_(allowed), STAGE_DEOPT)

    # -- prolog (docs/isa.md §3: sequential selectors, in initialisation order) ---------------
    def prolog(self, bundle: Bundle) -> None:
        e, b, lay = self.e, self.b, self.lay
        if any(s.kind is SelectorKind.LOAD_MD for s in bundle.selectors):
            may = b.and_(e.get(lay.flags), c32(F_METADATA))
            e.leave_if(b.icmp_unsigned("==", may, c32(0)), STAGE_DEOPT)
        for sel in bundle.selectors:
            kind = sel.kind
            if kind is SelectorKind.POP or kind is SelectorKind.PEEK:
                depth = e.get(lay.depth)
                e.leave_if(b.icmp_unsigned("==", depth, c32(0)), STAGE_DEOPT)  # underflow report
                top = e.get(lay.top)
                value = e.get(b.add(top, c32(lay.stack)))
                if kind is SelectorKind.POP:
                    e.set(lay.top, b.add(top, c32(1)))
                    e.set(lay.depth, b.sub(depth, c32(1)))
            elif kind is SelectorKind.RAND:
                native = e.get(lay.rng_native)
                e.leave_if(b.icmp_unsigned("==", native, c32(0)), STAGE_DEOPT)
                s = e.get(lay.rng)
                for direction, amount in XORSHIFT32_SHIFTS:
                    shifted = b.shl(s, c32(amount)) if direction == "<<" else b.lshr(s, c32(amount))
                    s = b.xor(s, shifted)
                e.set(lay.rng, s)
                value = s
            else:
                value = self.metadata(sel.value)
            e.set(self.reg_index(sel.dest), value)
        e.set(lay.pc, c32(encode_pc(bundle.control.taken)))
        b.ret(c32(STAGE_OK))

    def metadata(self, index: int) -> Any:
        field_ = self.profile.metadata_by_index(index)
        name = field_.name if field_ is not None else ""
        lay = self.lay
        words = {
            "ingress_port": lay.ingress_port,
            "timestamp": lay.timestamp,
            "switch_id": lay.switch_id,
            "queue_depth": lay.queue_depth,
            "packet_length": lay.packet_length,
            "pipe_id": lay.pipe_id,
        }
        if name == "egress_port":
            return c32(0xFFFF)  # no port is chosen while the ingress runs
        if name in HEADER_FIELD_NAMES:  # the inner frame's, set by the parse
            return self.e.get(getattr(lay, name))
        if name in words:
            return self.e.get(words[name])
        return c32(0)

    # -- an EU (docs/isa.md §3: selectors in parallel, then ALU and memory, then the branch) --
    def eu(self, eu: int, bundle: Bundle) -> None:
        e, b, lanes = self.e, self.b, self.lanes
        entry = [e.get(i) for i in range(2 * lanes)]
        selected = list(entry)
        for sel in bundle.selectors:
            dest = self.reg_index(sel.dest)
            kind = sel.kind
            if kind is SelectorKind.MOV:
                assert sel.source is not None
                selected[dest] = entry[self.reg_index(sel.source)]
            elif kind is SelectorKind.LOAD_IMM:
                selected[dest] = c32(sel.value)
            elif kind is SelectorKind.LOAD_CONST:
                const = declare(self.module, f"{self.prefix}_const", I32, [I32, I32])
                selected[dest] = b.call(const, [e.get(self.lay.tenant), c32(sel.value)])
            else:  # HASH
                selected[dest] = emit_crc(
                    b, self.module, self.profile.hash_for_lane(sel.dest.lane), entry[dest]
                )
        address = entry if self.profile.memory_address is MemoryAddress.ENTRY else selected
        if self.profile.shifts_restricted:  # an amount the ALU lacks: a fault, reported
            mask = c32(self.profile.shift_mask)
            for lane in range(lanes):
                if bundle.alu[lane] in (AluOp.LSH, AluOp.RSH):
                    amount = b.and_(selected[lanes + lane], c32(31))
                    bit = b.and_(b.lshr(mask, amount), c32(1))
                    e.leave_if(b.icmp_unsigned("==", bit, c32(0)), STAGE_DEOPT)
        result = list(selected)
        for lane in range(lanes):
            op = bundle.alu[lane]
            if op is not AluOp.NOP:
                result[lane] = emit_alu(b, op, selected[lane], selected[lanes + lane])
            mop = bundle.mem[lane]
            if mop is not MemOp.NOP:
                loaded = self.memory(eu, lane, mop, address[lane], selected[lanes + lane])
                if loaded is not None:
                    result[lanes + lane] = loaded
        control = bundle.control
        halted = control.op is CtrlOp.HALT
        if control.op is CtrlOp.JMP or halted:
            next_pc = c32(encode_pc(control.taken))
        else:
            mode = self.profile.branch_operands
            if mode is BranchOperands.ENTRY:
                seen = entry
            elif mode is BranchOperands.SELECTED:
                seen = selected
            else:
                seen = selected[:lanes] + result[lanes:]
            x = self.operand(control.x, seen)
            y = self.operand(control.y, seen)
            assert control.not_taken is not None
            taken = emit_branch(b, control.op, x, y)
            next_pc = b.select(
                taken, c32(encode_pc(control.taken)), c32(encode_pc(control.not_taken))
            )
        for i in range(2 * lanes):
            if result[i] is not entry[i]:
                e.set(i, result[i])
        e.set(self.lay.pc, next_pc)
        b.ret(c32(STAGE_HALT if halted else STAGE_OK))

    def operand(self, operand: Any, regs: list[Any]) -> Any:
        if isinstance(operand, Imm):
            return c32(operand.value)
        assert operand is not None
        return regs[self.reg_index(operand)]

    def memory(self, eu: int, lane: int, mop: MemOp, vaddr: Any, data: Any) -> Any | None:
        e, b = self.e, self.b
        translate = declare(self.module, f"{self.prefix}_translate_{eu}_{lane}", I64, [I32, I32])
        address = b.call(translate, [e.get(self.lay.tenant), vaddr])
        e.leave_if(b.icmp_unsigned("==", address, c64(0)), STAGE_DEOPT)  # unmapped: reported
        pointer = b.inttoptr(address, ir.PointerType(I32))
        old = b.load(pointer)
        if mop is MemOp.LOAD:
            return old
        match mop:
            case MemOp.STORE:
                new = data
            case MemOp.FAADD:
                new = b.add(old, data)
            case MemOp.FAAND:
                new = b.and_(old, data)
            case MemOp.FAOR:
                new = b.or_(old, data)
            case MemOp.FAMAX:
                new = b.select(b.icmp_unsigned(">", old, data), old, data)
            case _:  # FAMIN
                new = b.select(b.icmp_unsigned("<", old, data), old, data)
        # the undo log: undo[0] entries of (address, old word) after it
        count = b.load(e.undo)
        slot = b.add(b.mul(count, c64(2)), c64(1))
        b.store(address, b.gep(e.undo, [slot]))
        b.store(b.zext(old, I64), b.gep(e.undo, [b.add(slot, c64(1))]))
        b.store(b.add(count, c64(1)), e.undo)
        b.store(new, pointer)
        return None if mop is MemOp.STORE else old

    # -- the epilog (what it decides; the runtime steers) --------------------------------------
    def epilog(self, bundle: EpilogBundle) -> None:
        e, b, lay = self.e, self.b, self.lay
        pushed = [e.get(self.reg_index(r)) for r in bundle.push]
        if pushed:
            depth = b.add(e.get(lay.depth), c32(len(pushed)))
            limit = c32(self.profile.stack_max_depth)
            e.leave_if(b.icmp_unsigned(">", depth, limit), STAGE_DEOPT)  # a fault: reported
            top = b.sub(e.get(lay.top), c32(len(pushed)))
            for k, value in enumerate(pushed):  # the first listed ends on top
                e.set(b.add(top, c32(lay.stack + k)), value)
            e.set(lay.top, top)
            e.set(lay.depth, depth)
        steering = bundle.steering
        value = steering.value
        if value is None:
            steer = c32(0)
        elif isinstance(value, Imm):
            steer = c32(value.value)
        else:
            steer = b.and_(e.get(self.reg_index(value)), c32(0xFFFF))
        next_pc = bundle.next_pc
        if isinstance(next_pc, PC):
            new_ptr = c32(encode_pc(next_pc))
        elif isinstance(next_pc, Register):
            new_ptr = b.and_(e.get(self.reg_index(next_pc)), c32(0xFFFF))
        else:
            new_ptr = e.get(lay.hdr_dptr)
            if bundle.hdr_mod:  # the in-packet code it named is gone
                in_packet = b.icmp_unsigned("!=", b.and_(new_ptr, c32(0x8000)), c32(0))
                is_none = b.icmp_unsigned("==", new_ptr, c32(PTR_NONE))
                gone = b.and_(in_packet, b.not_(is_none))
                new_ptr = b.select(gone, c32(PTR_NONE), new_ptr)
        e.set(lay.action, c32(ACTION_CODE[steering.action]))
        e.set(lay.value, steer)
        e.set(lay.new_ptr, new_ptr)
        e.set(lay.hdr_mod, c32(int(bundle.hdr_mod)))
        b.ret(c32(STAGE_OK))
