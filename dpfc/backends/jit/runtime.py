"""Native code of one pipe's pass over a batch of packets: parse, permissions, the DPF,
steering and deparse (docs/simulator.md §1.1), in one function of the pipe module.

Contract: :func:`emit_batch` writes ``i32 P_batch(i8* in, i32* desc, i32 start, i32 n,
i8* out, i32* res, i32* st, i64* undo, i64* stats, i64* ctab, i32* dirty)``. For packets
``start..n-1`` (packet i is ``desc[2i]`` bytes at ``in + desc[2i+1]``... see
:mod:`.switch`) it does what :func:`dpfc.backends.sim.execute.run_pass` does and writes
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

from dpfc.isa.bundle import EPILOG_STAGE, PROLOG_STAGE
from dpfc.target.profile import TargetProfile

from .emit import I8, I32, I64, Emit, c32, c64, declare
from .layout import (
    ACTION_CODE,
    C_BYTES,
    C_DIGEST,
    C_FUNCTION,
    C_LENGTH,
    C_PROLOGS,
    CODE_SLOTS,
    CODE_WORDS,
    DEOPT,
    DROP_DPF,
    F_PRIVILEGED,
    F_RECIRCULATE,
    FNV_OFFSET,
    FNV_PRIME,
    FORWARD,
    FORWARD_NO_ROUTE,
    NEED_CODE,
    PASS,
    PASS_NO_ROUTE,
    PTR_NONE,
    R_EGRESS,
    R_EXEC,
    R_EXEC_COUNT,
    R_GAS,
    R_OUT_LEN,
    R_OUT_OFF,
    R_PORT,
    R_TENANT,
    R_VALUE,
    RECIRCULATE,
    RESULT_WORDS,
    RETURN,
    SET_PORT,
    SET_PORT_NO_SUCH,
    STAGE_DEOPT,
    STAGE_HALT,
    STAT_DIRTY,
    STAT_INDEX,
    STAT_SLOTS,
    StateLayout,
)
from .llvm import ir
from .lookup import emit_lookups
from .tables import DEST_ETH_HI, DEST_ETH_LO, DEST_HAS_ETH, DEST_HAS_IP, DEST_IP, DEST_PORT

PERM_APP_ID, PERM_DEFAULT, PERM_FLAGS = range(3)  # the words of a permission row

P8 = ir.PointerType(I8) if ir is not None else None
P32 = ir.PointerType(I32) if ir is not None else None
P64 = ir.PointerType(I64) if ir is not None else None
CODE_FN = ir.FunctionType(I32, [P32, P64, I32, I32]) if ir is not None else None


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
    offset = b.load(b.gep(desc, [b.mul(i, c32(2))]))
    length = b.load(b.gep(desc, [b.add(b.mul(i, c32(2)), c32(1))]))
    record = b.gep(res, [b.mul(i, c32(RESULT_WORDS))])
    status = b.call(one, [b.gep(inp, [offset]), length, out, record, st, undo, stats, ctab, dirty])
    b.store(status, record)
    stop = b.or_(
        b.icmp_unsigned("==", status, c32(DEOPT)), b.icmp_unsigned("==", status, c32(NEED_CODE))
    )
    advance = fn.append_basic_block("advance")
    b.cbranch(stop, done, advance)
    b.position_at_end(advance)
    b.store(b.add(i, c32(1)), index)
    b.branch(head)
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


class _OneGen:
    """The generator of ``P_one``: one packet, straight-line IR with a shared DEOPT exit."""

    def __init__(self, fn: Any, module: Any, prefix: str, profile: TargetProfile) -> None:
        self.fn = fn
        self.module = module
        self.prefix = prefix
        self.profile = profile
        self.lay = StateLayout(profile)
        p, length, out, record, st, undo, stats, ctab, dirty = fn.args
        self.p, self.length, self.out, self.record = p, length, out, record
        self.stats, self.ctab, self.dirty = stats, ctab, dirty
        self.e = Emit(fn, st, undo)
        self.b = self.e.b
        self.deopt_block = fn.append_basic_block("deopt")
        self.need_code_block = fn.append_basic_block("need_code")

    # -- helpers ----------------------------------------------------------------------------
    def var(self, initial: Any) -> Any:
        """A mutable local (an alloca in the entry block, promoted to SSA by mem2reg)."""
        b = self.b
        with b.goto_entry_block():
            slot = b.alloca(I32 if initial.type == I32 else initial.type)
        b.store(initial, slot)
        return slot

    def fail_if(self, condition: Any) -> None:
        ok = self.fn.append_basic_block()
        self.b.cbranch(condition, self.deopt_block, ok)
        self.b.position_at_end(ok)

    def table(self, name: str, ret: Any, args: list[Any], values: list[Any]) -> Any:
        return self.b.call(declare(self.module, f"{self.prefix}_{name}", ret, args), values)

    def info(self, name: str, row: Any, field: int) -> Any:
        return self.table(name, I32, [I32, I32], [row, c32(field)])

    def put(self, field: int, value: Any) -> None:
        self.b.store(value, self.b.gep(self.record, [c32(field)]))

    def eq(self, a: Any, value: int) -> Any:
        return self.b.icmp_unsigned("==", a, c32(value))

    def ne(self, a: Any, value: int) -> Any:
        return self.b.icmp_unsigned("!=", a, c32(value))

    def lt(self, a: Any, c: Any) -> Any:
        return self.b.icmp_unsigned("<", a, c)

    def loop(self, count: Any, body: Any) -> None:
        """``body(k)`` for k in 0..count-1 (count an i32)."""
        b = self.b
        k = self.var(c32(0))
        head, inside, after = (self.fn.append_basic_block() for _ in range(3))
        b.branch(head)
        b.position_at_end(head)
        kv = b.load(k)
        b.cbranch(self.lt(kv, count), inside, after)
        b.position_at_end(inside)
        body(kv)
        b.store(b.add(kv, c32(1)), k)
        b.branch(head)
        b.position_at_end(after)

    # -- the packet ---------------------------------------------------------------------------
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

    def parse(self) -> None:
        """dpfc.packet.wire.parse_packet and decode_options, for the frames they accept
        whose Geneve options are SwitchVM's alone; anything else is DEOPT."""
        e, b, p, length = self.e, self.b, self.p, self.length
        self.fail_if(self.lt(length, c32(14)))
        ethertype = e.be(p, c32(12), 2)
        vlan = self.eq(ethertype, 0x8100)
        self.fail_if(b.and_(vlan, self.lt(length, c32(18))))
        l3 = b.select(vlan, c32(18), c32(14))
        ethertype = b.select(vlan, e.be(p, c32(16), 2), ethertype)
        self.fail_if(self.ne(ethertype, 0x0800))
        self.fail_if(self.lt(length, b.add(l3, c32(20))))
        vihl = e.byte(p, l3)
        self.fail_if(self.ne(b.lshr(vihl, c32(4)), 4))
        ihl = b.mul(b.and_(vihl, c32(15)), c32(4))
        self.fail_if(self.lt(ihl, c32(20)))
        self.fail_if(self.lt(length, b.add(l3, ihl)))
        total = e.be(p, b.add(l3, c32(2)), 2)
        self.fail_if(self.lt(total, b.add(ihl, c32(8))))
        self.fail_if(b.icmp_unsigned(">", b.add(l3, total), length))
        self.fail_if(self.ne(e.byte(p, b.add(l3, c32(9))), 17))
        udp = b.add(l3, ihl)
        self.fail_if(self.ne(e.be(p, b.add(udp, c32(2)), 2), 6081))
        ulen = e.be(p, b.add(udp, c32(4)), 2)
        self.fail_if(self.lt(ulen, c32(16)))
        self.fail_if(b.icmp_unsigned(">", b.add(udp, ulen), b.add(l3, total)))
        end = b.add(udp, ulen)
        geneve = b.add(udp, c32(8))
        first = e.byte(p, geneve)
        self.fail_if(self.ne(b.lshr(first, c32(6)), 0))
        opt_words = b.and_(first, c32(63))
        vni = e.be(p, b.add(geneve, c32(4)), 3)
        opts = b.add(geneve, c32(8))
        opt_end = b.add(opts, b.mul(opt_words, c32(4)))
        self.fail_if(b.icmp_unsigned(">", opt_end, end))
        # the header option: class 0xFFF0, type 1, 12 data bytes
        self.fail_if(self.lt(opt_end, b.add(opts, c32(16))))
        self.fail_if(self.ne(e.be(p, opts, 4), 0xFFF0_0103))
        h = b.add(opts, c32(4))
        head = e.byte(p, h)
        self.fail_if(self.ne(b.lshr(head, c32(4)), 1))
        gas = e.byte(p, b.add(h, c32(1)))
        depth = e.byte(p, b.add(h, c32(2)))
        counts = e.byte(p, b.add(h, c32(3)))
        self.fail_if(b.icmp_unsigned(">", depth, c32(self.profile.stack_max_depth)))
        self.fail_if(b.icmp_unsigned(">", gas, c32(self.profile.max_gas)))
        n_code, n_stack = b.lshr(counts, c32(4)), b.and_(counts, c32(15))
        position = self.var(b.add(opts, c32(16)))

        def option(expected_type: int) -> Any:
            """Check the option header at ``position``; its data length."""
            at = b.load(position)
            self.fail_if(b.icmp_unsigned(">", b.add(at, c32(4)), opt_end))
            self.fail_if(self.ne(e.be(p, at, 3), 0xFFF000 | expected_type))
            length_byte = e.byte(p, b.add(at, c32(3)))
            self.fail_if(self.ne(b.and_(length_byte, c32(0xE0)), 0))
            size = b.mul(length_byte, c32(4))
            after = b.add(b.add(at, c32(4)), size)
            self.fail_if(b.icmp_unsigned(">", after, opt_end))
            b.store(after, position)
            return size

        code_start = b.load(position)
        self.loop(n_code, lambda _: option(0x02))
        code_end = b.load(position)
        lay = self.lay
        copied = self.var(c32(0))

        def stack_option(_: Any) -> None:
            data_at = b.add(b.load(position), c32(4))
            size = option(0x03)
            entries = b.udiv(size, c32(4))
            remaining = b.sub(depth, b.load(copied))
            want = b.select(self.lt(remaining, c32(31)), remaining, c32(31))
            self.fail_if(
                b.or_(
                    self.ne(entries, 0) if False else self.eq(entries, 0),
                    b.icmp_unsigned("!=", entries, want),
                )
            )

            def entry(k: Any) -> None:
                word = e.be(p, b.add(data_at, b.mul(k, c32(4))), 4)
                slot = b.add(b.load(copied), k)
                e.set(b.add(slot, c32(lay.stack + lay.STACK_START)), word)

            self.loop(entries, entry)
            b.store(b.add(b.load(copied), entries), copied)

        self.loop(n_stack, stack_option)
        self.fail_if(
            self.ne(b.load(copied), 0) if False else b.icmp_unsigned("!=", b.load(copied), depth)
        )
        self.fail_if(b.icmp_unsigned("!=", b.load(position), opt_end))
        e.set(lay.top, c32(lay.STACK_START))
        e.set(lay.depth, depth)
        self.code_function, self.prologs = self.find_code(n_code, code_start, code_end)
        dptr = e.be(p, b.add(h, c32(8)), 2)
        eptr = e.be(p, b.add(h, c32(10)), 2)
        for pointer in (dptr, eptr):
            self.fail_if(self.bad_pointer(pointer, self.prologs))
        app_id = e.be(p, b.add(h, c32(4)), 4)
        self.l3, self.ihl, self.udp, self.end = l3, ihl, udp, end
        self.opt_end, self.code_start, self.code_end = opt_end, code_start, code_end
        self.n_code, self.flags_nibble, self.gas = n_code, b.and_(head, c32(15)), gas
        self.vni, self.app_id, self.dptr, self.eptr = vni, app_id, dptr, eptr
        e.set(lay.packet_length, end)

    def bad_pointer(self, pointer: Any, prologs: Any) -> Any:
        """encoding.header.pointer_problem: an in-packet prolog the packet lacks, or a slot
        beyond the code memory (never for 0xFFFF, "none")."""
        b = self.b
        index = b.and_(pointer, c32(0x7FFF))
        in_packet = self.ne(b.and_(pointer, c32(0x8000)), 0)
        limit = b.select(in_packet, prologs, c32(self.profile.code_slots_per_stage))
        return b.and_(self.ne(pointer, 0xFFFF), b.icmp_unsigned(">=", index, limit))

    def find_code(self, n_code: Any, start: Any, end: Any) -> tuple[Any, Any]:
        """The compiled function of the packet's code options (their FNV-1a digest, then the
        bytes compared), its prolog count; NEED_CODE when the engine has not seen them."""
        b, p = self.b, self.p
        function = self.var(c64(0))
        prologs = self.var(c32(0))
        has_code = self.ne(n_code, 0)
        with b.if_then(has_code):
            digest = self.var(c64(FNV_OFFSET))
            size = b.sub(end, start)

            def mix(k: Any) -> None:
                byte = b.zext(b.load(b.gep(p, [b.add(start, k)])), I64)
                b.store(b.mul(b.xor(b.load(digest), byte), c64(FNV_PRIME)), digest)

            self.loop(size, mix)
            value = b.load(digest)
            value = b.select(b.icmp_unsigned("==", value, c64(0)), c64(1), value)
            slot = self.var(b.trunc(b.and_(value, c64(CODE_SLOTS - 1)), I32))
            head, probe, hit, nxt, found = (self.fn.append_basic_block() for _ in range(5))
            b.branch(head)
            b.position_at_end(head)
            base = b.mul(b.load(slot), c32(CODE_WORDS))

            def word(k: int) -> Any:
                return b.load(b.gep(self.ctab, [b.add(base, c32(k))]))

            stored = word(C_DIGEST)
            b.cbranch(b.icmp_unsigned("==", stored, c64(0)), self.need_code_block, probe)
            b.position_at_end(probe)
            same = b.and_(
                b.icmp_unsigned("==", stored, value),
                b.icmp_unsigned("==", word(C_LENGTH), b.zext(size, I64)),
            )
            b.cbranch(same, hit, nxt)
            b.position_at_end(hit)
            memcmp = declare(self.module, "memcmp", I32, [P8, P8, I64])
            bytes_at = b.inttoptr(word(C_BYTES), P8)
            differ = b.call(memcmp, [bytes_at, b.gep(p, [start]), b.zext(size, I64)])
            b.cbranch(self.eq(differ, 0), found, nxt)
            b.position_at_end(nxt)
            b.store(b.and_(b.add(b.load(slot), c32(1)), c32(CODE_SLOTS - 1)), slot)
            b.branch(head)
            b.position_at_end(found)
            native = word(C_FUNCTION)
            self.fail_if(b.icmp_unsigned("==", native, c64(0)))  # code the interpreter runs
            b.store(native, function)
            b.store(b.trunc(word(C_PROLOGS), I32), prologs)
        return b.load(function), b.load(prologs)

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

    def steer(self) -> None:
        """Steering.steer and deliver, and the deparse (deparse.rebuild_frame)."""
        e, b, lay = self.e, self.b, self.lay
        action = e.get(lay.action)
        value = e.get(lay.value)
        hdr_mod = self.ne(e.get(lay.hdr_mod), 0)
        flags = self.flags
        self.fail_if(
            b.and_(
                self.eq(action, ACTION_CODE["set_port"]),
                self.eq(b.and_(flags, c32(F_PRIVILEGED)), 0),
            )
        )
        recirculate = self.eq(action, ACTION_CODE["recirculate"])
        self.fail_if(b.and_(recirculate, self.eq(b.and_(flags, c32(F_RECIRCULATE)), 0)))
        self.fail_if(b.and_(recirculate, self.eq(self.gas, 0)))  # gas exhausted: reported
        gas = b.select(recirculate, b.sub(self.gas, c32(1)), self.gas)
        self.fail_if(self.eq(action, ACTION_CODE["multicast"]))
        prologs = b.select(hdr_mod, c32(0), self.prologs)
        eptr = self.eptr
        eptr_gone = b.and_(
            b.and_(self.ne(eptr, PTR_NONE), self.ne(b.and_(eptr, c32(0x8000)), 0)),
            b.icmp_unsigned(">=", b.and_(eptr, c32(0x7FFF)), prologs),
        )
        egress = b.select(eptr_gone, c32(PTR_NONE), eptr)
        new_ptr = e.get(lay.new_ptr)
        self.fail_if(self.bad_pointer(new_ptr, prologs))  # cannot be encoded: a fault
        leaves = b.and_(self.ne(action, ACTION_CODE["drop"]), b.not_(recirculate))
        self.fail_if(b.and_(leaves, self.ne(egress, PTR_NONE)))  # an egress DPF to run
        code_bytes = b.select(hdr_mod, c32(0), b.sub(self.code_end, self.code_start))
        n_code = b.select(hdr_mod, c32(0), self.n_code)
        depth = e.get(lay.depth)
        n_stack = b.udiv(b.add(depth, c32(30)), c32(31))
        options = b.add(b.add(c32(16), code_bytes), b.mul(b.add(n_stack, depth), c32(4)))
        self.fail_if(b.icmp_unsigned(">", options, c32(252)))
        out_off = e.get(lay.out_off)
        o = b.gep(self.out, [out_off])
        length = self.deparse(o, options, code_bytes, n_code, n_stack, depth, gas, new_ptr, egress)
        self.put(R_OUT_OFF, out_off)
        self.put(R_GAS, gas)
        self.put(R_EGRESS, egress)
        self.put(R_VALUE, value)
        self.put(R_TENANT, self.vni)
        self.deliver(action, value, o, length)

    def deparse(
        self,
        o: Any,
        options: Any,
        code_bytes: Any,
        n_code: Any,
        n_stack: Any,
        depth: Any,
        gas: Any,
        new_ptr: Any,
        egress: Any,
    ) -> Any:
        e, b, p, lay = self.e, self.b, self.p, self.lay
        l3, ihl, udp = self.l3, self.ihl, self.udp
        inner = b.sub(self.end, self.opt_end)
        payload = b.add(b.add(c32(8), options), inner)  # Geneve, options, inner frame
        e.copy(o, c32(0), p, c32(0), b.add(l3, ihl))
        e.put_be(o, b.add(l3, c32(2)), b.add(b.add(ihl, c32(8)), payload), 2)
        self.checksum(o)
        e.copy(o, udp, p, udp, c32(4))
        e.put_be(o, b.add(udp, c32(4)), b.add(c32(8), payload), 2)
        e.put_be(o, b.add(udp, c32(6)), c32(0), 2)
        geneve = b.add(udp, c32(8))
        e.copy(o, geneve, p, geneve, c32(8))
        first = b.or_(b.and_(e.byte(p, geneve), c32(0xC0)), b.udiv(options, c32(4)))
        e.put_byte(o, geneve, first)
        at = b.add(geneve, c32(8))
        e.put_be(o, at, c32(0xFFF0_0103), 4)
        e.put_byte(o, b.add(at, c32(4)), b.or_(c32(0x10), self.flags_nibble))
        e.put_byte(o, b.add(at, c32(5)), gas)
        e.put_byte(o, b.add(at, c32(6)), depth)
        e.put_byte(o, b.add(at, c32(7)), b.or_(b.shl(n_code, c32(4)), n_stack))
        e.put_be(o, b.add(at, c32(8)), self.app_id, 4)
        e.put_be(o, b.add(at, c32(12)), new_ptr, 2)
        e.put_be(o, b.add(at, c32(14)), egress, 2)
        at = b.add(at, c32(16))
        e.copy(o, at, p, self.code_start, code_bytes)
        at = b.add(at, code_bytes)
        position = self.var(at)
        top = e.get(lay.top)

        def chunk(k: Any) -> None:
            here = b.load(position)
            done = b.mul(k, c32(31))
            left = b.sub(depth, done)
            entries = b.select(self.lt(left, c32(31)), left, c32(31))
            e.put_be(o, here, b.or_(c32(0xFFF0_0300), entries), 4)

            def entry(j: Any) -> None:
                word = e.get(b.add(b.add(top, b.add(done, j)), c32(lay.stack)))
                e.put_be(o, b.add(b.add(here, c32(4)), b.mul(j, c32(4))), word, 4)

            self.loop(entries, entry)
            b.store(b.add(here, b.add(c32(4), b.mul(entries, c32(4)))), position)

        self.loop(n_stack, chunk)
        at = b.load(position)
        e.copy(o, at, p, self.opt_end, inner)
        return b.add(at, inner)

    def checksum(self, o: Any) -> None:
        """The IPv4 header checksum of the output's header (deparse.ipv4_checksum)."""
        e, b = self.e, self.b
        l3 = self.l3
        e.put_be(o, b.add(l3, c32(10)), c32(0), 2)
        total = self.var(c32(0))

        def add(k: Any) -> None:
            word = e.be(o, b.add(l3, b.mul(k, c32(2))), 2)
            b.store(b.add(b.load(total), word), total)

        self.loop(b.udiv(self.ihl, c32(2)), add)
        s = b.load(total)
        s = b.add(b.and_(s, c32(0xFFFF)), b.lshr(s, c32(16)))
        s = b.add(b.and_(s, c32(0xFFFF)), b.lshr(s, c32(16)))
        e.put_be(o, b.add(l3, c32(10)), b.and_(b.not_(s), c32(0xFFFF)), 2)

    def deliver(self, action: Any, value: Any, o: Any, length: Any) -> None:
        e, b, lay = self.e, self.b, self.lay
        status = self.var(c32(DROP_DPF))
        port = self.var(c32(-1))
        kept = self.var(c32(0))  # the output frame's length (0: no frame)
        verdict_counter = self.var(c32(STAT_INDEX["dropped"]))
        finish = self.fn.append_basic_block("finish")
        cases = {
            name: self.fn.append_basic_block(name)
            for name in ("pass", "return_to_sender", "forward", "set_port", "recirculate")
        }
        switch = b.switch(action, finish)  # drop (multicast left above)
        for name, block in cases.items():
            switch.add_case(c32(ACTION_CODE[name]), block)

        def outcome(code: int, counter: str, to: Any, frame: bool) -> None:
            b.store(c32(code), status)
            b.store(c32(STAT_INDEX[counter]), verdict_counter)
            b.store(to, port)
            b.store(length if frame else c32(0), kept)
            b.branch(finish)

        b.position_at_end(cases["recirculate"])
        outcome(RECIRCULATE, "recirculated", c32(-1), True)
        b.position_at_end(cases["return_to_sender"])
        self.swap_addresses(o)
        outcome(RETURN, "returned", e.get(lay.ingress_port), True)
        b.position_at_end(cases["set_port"])
        no_port = b.icmp_unsigned(">=", value, e.get(lay.ports))
        with b.if_then(no_port):
            outcome(SET_PORT_NO_SUCH, "dropped", c32(-1), False)
        outcome(SET_PORT, "forwarded", value, True)
        b.position_at_end(cases["forward"])
        dest = self.table("fwd", I32, [I32, I32], [self.vni, value])
        self.fail_if(self.eq(dest, 0xFFFF_FFFF))  # no such entry: refused, reported
        to = self.rewrite(o, dest)
        with b.if_then(self.eq(to, 0xFFFF_FFFF)):
            outcome(FORWARD_NO_ROUTE, "dropped", c32(-1), False)
        outcome(FORWARD, "forwarded", to, True)
        b.position_at_end(cases["pass"])
        routed = self.table("route", I32, [I32], [e.be(o, b.add(self.l3, c32(16)), 4)])
        with b.if_then(self.eq(routed, 0xFFFF_FFFF)):
            outcome(PASS_NO_ROUTE, "dropped", c32(-1), False)
        outcome(PASS, "passed", routed, True)
        b.position_at_end(finish)
        # commit: the counters, the output, the packet count
        base = b.mul(self.entry, c32(STAT_SLOTS))
        for counter in (
            c32(STAT_INDEX["packets"]),
            c32(STAT_INDEX["executed"]),
            b.load(verdict_counter),
        ):
            at = b.gep(self.stats, [b.add(base, counter)])
            b.store(b.add(b.load(at), c64(1)), at)
        dirty_at = b.gep(self.stats, [b.add(base, c32(STAT_DIRTY))])
        with b.if_then(b.icmp_unsigned("==", b.load(dirty_at), c64(0))):
            b.store(c64(1), dirty_at)
            count = b.load(self.dirty)
            b.store(self.entry, b.gep(self.dirty, [b.add(count, c32(1))]))
            b.store(b.add(count, c32(1)), self.dirty)
        frame_length = b.load(kept)
        self.put(R_PORT, b.load(port))
        self.put(R_OUT_LEN, frame_length)
        e.set(lay.out_off, b.add(e.get(lay.out_off), frame_length))
        e.set(lay.packets_seen, b.add(e.get(lay.packets_seen), c32(1)))
        b.ret(b.load(status))

    def swap_addresses(self, o: Any) -> None:
        """deparse.swap_addresses: outer MACs and IPv4 addresses exchanged."""
        e, b = self.e, self.b
        for first, second, size in (
            (c32(0), c32(6), 6),
            (b.add(self.l3, c32(12)), b.add(self.l3, c32(16)), 4),
        ):
            for k in range(size):
                x = b.gep(o, [b.add(first, c32(k))])
                y = b.gep(o, [b.add(second, c32(k))])
                xv, yv = b.load(x), b.load(y)
                b.store(yv, x)
                b.store(xv, y)
        del e

    def rewrite(self, o: Any, dest: Any) -> Any:
        """Steering.send: the entry's addresses written, then its port or the route of its
        address (-1: none)."""
        e, b = self.e, self.b
        l3 = self.l3
        with b.if_then(self.ne(self.info("dest", dest, DEST_HAS_ETH), 0)):
            e.put_be(o, c32(0), self.info("dest", dest, DEST_ETH_HI), 4)
            e.put_be(o, c32(4), self.info("dest", dest, DEST_ETH_LO), 2)
        has_ip = self.ne(self.info("dest", dest, DEST_HAS_IP), 0)
        with b.if_then(has_ip):
            e.put_be(o, b.add(l3, c32(16)), self.info("dest", dest, DEST_IP), 4)
            self.checksum(o)
        port = self.info("dest", dest, DEST_PORT)
        routed = self.eq(port, 0xFFFF_FFFF)
        self.fail_if(b.and_(routed, b.not_(has_ip)))
        via_route = self.table("route", I32, [I32], [e.be(o, b.add(l3, c32(16)), 4)])
        return b.select(routed, via_route, port)

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
