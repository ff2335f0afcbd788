"""Native code of one pipe's pass over a batch of packets: parse, permissions, the DPF,
steering and deparse (docs/simulator.md §1.1), in one function of the pipe module.

Contract: :func:`emit_batch` writes ``i32 P_batch(i8* in, i32* desc, i32 start, i32 n,
i8* out, i32* res, i32* st, i64* undo, i64* stats, i64* ctab, i32* dirty)``. For packets
``start..n-1`` (packet i: the descriptor ``desc[4i..4i+3]`` of :mod:`.layout`: its
offset in ``in``, its length, its timestamp and queue depth) it does what :func:`dpfc.backends.sim.execute.run_pass` does and writes
one result record (:mod:`.layout`) and the output frame; it returns the index of the first
packet it did not finish, whose record says why: :data:`~.layout.NEED_CODE` (in-packet code
not compiled yet) or :data:`~.layout.DEOPT`. A packet ends in DEOPT whenever the
interpreter would do more than the native path models — a malformed or non-SwitchVM frame,
options of other classes, a tenant without an entry or a wrong app id, a report (empty
stack, unmapped address, refusal), a fault, multicast, an egress DPF to run — and then
everything it changed (memory words, the RAND state) is undone first, so the interpreter
runs it from the same state. The native path changes lane memory words, the RAND state,
the counters in ``stats`` (``dirty`` lists the entries touched) and ``packets_seen``.
"""

from __future__ import annotations

from typing import Any

from dpfc.isa import EPILOG_STAGE, PROLOG_STAGE
from dpfc.target import TargetProfile

from .emit import I32, I64, c32, c64, declare
from .layout import (
    D_LENGTH,
    D_OFFSET,
    D_QUEUE_DEPTH,
    D_TIMESTAMP,
    DEOPT,
    DESC_WORDS,
    MAX_COPIES,
    MULTICAST,
    NEED_CODE,
    PTR_NONE,
    R_COPIES,
    R_COPY,
    R_EXEC,
    R_EXEC_COUNT,
    R_PORT,
    RECIRCULATE,
    RESULT_WORDS,
    STAGE_DEOPT,
    STAGE_HALT,
    StateLayout,
)
from .llvm import ir
from .lookup import emit_lookups
from .packetgen import CODE_FN, P8, P32, P64, PERM_APP_ID, PERM_DEFAULT, PERM_FLAGS
from .parse import ParseGen
from .steer import SteerGen


def emit_batch(module: Any, prefix: str, profile: TargetProfile) -> None:
    emit_lookups(module, prefix, profile)
    one = _emit_one(module, prefix, profile)
    fn = ir.Function(
        module,
        ir.FunctionType(I32, [P8, P32, I32, I32, P8, P32, P32, P64, P64, P64, P32]),
        f"{prefix}_batch",
    )
    inp, desc, start, count, out, res, st, undo, stats, ctab, dirty = fn.args
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    index = b.alloca(I32)
    b.store(start, index)
    head, body, done = (fn.append_basic_block(n) for n in ("head", "body", "done"))
    b.branch(head)
    b.position_at_end(head)
    i = b.load(index)
    b.cbranch(b.icmp_unsigned("<", i, count), body, done)
    b.position_at_end(body)
    lay = StateLayout(profile)

    def field(k: int) -> Any:
        return b.load(b.gep(desc, [b.add(b.mul(i, c32(DESC_WORDS)), c32(k))]))

    def state(at: int) -> Any:
        return b.gep(st, [c32(at)])

    b.store(field(D_TIMESTAMP), state(lay.timestamp))
    b.store(field(D_QUEUE_DEPTH), state(lay.queue_depth))
    record = b.gep(res, [b.mul(i, c32(RESULT_WORDS))])
    frame = b.gep(inp, [field(D_OFFSET)])
    status = b.call(one, [frame, field(D_LENGTH), out, record, st, undo, stats, ctab, dirty])
    b.store(status, record)
    stop = b.or_(
        b.icmp_unsigned("==", status, c32(DEOPT)), b.icmp_unsigned("==", status, c32(NEED_CODE))
    )
    advance, after = fn.append_basic_block("advance"), fn.append_basic_block("after")
    b.cbranch(stop, done, advance)
    b.position_at_end(advance)
    b.store(b.add(i, c32(1)), index)
    # A frame that comes back to this pipe (recirculated, or wired back) changes the queue
    # depth of the packets after it: the batch stops after it (the caller goes on).
    recirculated = b.icmp_unsigned("==", status, c32(RECIRCULATE))
    comes_back = b.and_(
        recirculated, b.icmp_unsigned("!=", b.load(state(lay.loop_recirculate)), c32(0))
    )

    def loops(port: Any) -> Any:
        low = b.zext(b.load(state(lay.loop_ports_low)), I64)
        high = b.zext(b.load(state(lay.loop_ports_high)), I64)
        mask = b.or_(low, b.shl(high, c64(32)))
        in_mask = b.and_(b.lshr(mask, b.zext(b.and_(port, c32(63)), I64)), c64(1))
        beyond = b.icmp_unsigned("!=", b.load(state(lay.loop_ports_beyond)), c32(0))
        small = b.icmp_unsigned("<", port, c32(64))
        hit = b.select(small, b.icmp_unsigned("!=", in_mask, c64(0)), beyond)
        return b.and_(b.icmp_signed(">=", port, c32(0)), hit)

    comes_back = b.or_(comes_back, loops(b.load(b.gep(record, [c32(R_PORT)]))))
    copies = b.load(b.gep(record, [c32(R_COPIES)]))
    is_multicast = b.icmp_unsigned("==", status, c32(MULTICAST))
    for k in range(MAX_COPIES):
        port = b.load(b.gep(record, [c32(R_COPY + 2 * k)]))
        counted = b.and_(is_multicast, b.icmp_unsigned("<", c32(k), copies))
        comes_back = b.or_(comes_back, b.and_(counted, loops(port)))
    b.cbranch(comes_back, after, head)
    b.position_at_end(after)
    b.store(c32(1), state(lay.stopped))
    b.branch(done)
    b.position_at_end(done)
    b.ret(b.load(index))


def _emit_one(module: Any, prefix: str, profile: TargetProfile) -> Any:
    fn = ir.Function(
        module,
        ir.FunctionType(I32, [P8, I32, P8, P32, P32, P64, P64, P64, P32]),
        f"{prefix}_one",
    )
    fn.linkage = "internal"
    gen = _OneGen(fn, module, prefix, profile)
    gen.emit()
    return fn


class _OneGen(ParseGen, SteerGen):
    """The generator of ``P_one``: the parts in order, the permission table, the DPF's
    stages and the exits."""

    def emit(self) -> None:
        e, b, lay = self.e, self.b, self.lay
        for i in range(2 * lay.lanes):
            e.set(i, c32(0))
        b.store(c64(0), e.undo)
        e.set(lay.rng_saved, e.get(lay.rng))
        self.parse()
        self.permissions()
        self.run_dpf()
        self.steer()
        self.emit_exits()

    def permissions(self) -> None:
        e, b, lay = self.e, self.b, self.lay
        entry = self.table("perm", I32, [I32], [self.vni])
        self.fail_if(self.eq(entry, 0xFFFF_FFFF))  # unauthorized: reported
        self.fail_if(b.icmp_unsigned("!=", self.info("perm_info", entry, PERM_APP_ID), self.app_id))
        pointer = self.dptr
        default = self.info("perm_info", entry, PERM_DEFAULT)
        pointer = b.select(self.eq(pointer, PTR_NONE), default, pointer)
        self.fail_if(self.eq(pointer, PTR_NONE))  # no DPF: routed by the interpreter
        self.entry, self.pointer = entry, pointer
        self.flags = self.info("perm_info", entry, PERM_FLAGS)
        e.set(lay.tenant, self.vni)
        e.set(lay.flags, self.flags)
        e.set(lay.hdr_dptr, self.dptr)
        e.set(lay.hdr_eptr, self.eptr)

    def run_dpf(self) -> None:
        """Prolog, EUs (until one halts) and epilog, each bundle from the packet's code or
        the code memory as its PC says (Machine.execute)."""
        e, b, lay = self.e, self.b, self.lay
        executed = self.var(c32(0))
        pipe_code = declare(self.module, f"{self.prefix}_code", I32, [P32, P64, I32, I32])
        packet_code = b.inttoptr(self.code_function, ir.PointerType(CODE_FN))

        def stage(number: int, pc: Any) -> Any:
            count = b.load(executed)
            self.fail_if(b.icmp_unsigned(">=", count, c32(2 + 16)))
            b.store(b.or_(c32(number << 16), pc), b.gep(self.record, [b.add(count, c32(R_EXEC))]))
            b.store(b.add(count, c32(1)), executed)
            index = b.and_(pc, c32(0x7FFF))
            in_packet = self.ne(b.and_(pc, c32(0x8000)), 0)
            result = self.var(c32(0))
            with b.if_else(in_packet) as (packet, switch):
                with packet:
                    no_code = b.icmp_unsigned("==", self.code_function, c64(0))
                    self.fail_if(no_code)  # "the packet carries 0 bundles": a fault
                    args = [e.st, e.undo, c32(number), index]
                    b.store(b.call(packet_code, args), result)
                with switch:
                    b.store(b.call(pipe_code, [e.st, e.undo, c32(number), index]), result)
            status = b.load(result)
            self.fail_if(self.eq(status, STAGE_DEOPT))
            return status

        stage(PROLOG_STAGE, self.pointer)
        epilog = self.fn.append_basic_block("epilog")
        for eu in range(self.profile.num_eus):
            status = stage(eu + 1, e.get(lay.pc))
            go_on = self.fn.append_basic_block()
            b.cbranch(self.eq(status, STAGE_HALT), epilog, go_on)
            b.position_at_end(go_on)
        b.branch(epilog)
        b.position_at_end(epilog)
        stage(EPILOG_STAGE, e.get(lay.pc))
        self.put(R_EXEC_COUNT, b.load(executed))

    def emit_exits(self) -> None:
        e, b, lay = self.e, self.b, self.lay
        b.position_at_end(self.need_code_block)
        self.rollback()
        b.ret(c32(NEED_CODE))
        b.position_at_end(self.deopt_block)
        self.rollback()
        b.ret(c32(DEOPT))
        del e, lay

    def rollback(self) -> None:
        """Undo the packet's memory writes (newest first) and its RAND draws."""
        e, b, lay = self.e, self.b, self.lay
        count = b.trunc(b.load(e.undo), I32)

        def undo(k: Any) -> None:
            entry = b.sub(b.sub(count, k), c32(1))
            slot = b.add(b.mul(entry, c32(2)), c32(1))
            address = b.load(b.gep(e.undo, [slot]))
            old = b.load(b.gep(e.undo, [b.add(slot, c32(1))]))
            b.store(b.trunc(old, I32), b.inttoptr(address, P32))

        self.loop(count, undo)
        b.store(c64(0), e.undo)
        e.set(lay.rng, e.get(lay.rng_saved))
