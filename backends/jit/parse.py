"""Parsing in the native pass: the frame and its SwitchVM options, the in-packet code.

Contract: :class:`ParseGen` writes the IR of :func:`dpfc.packet.wire.parse_packet` and
:func:`dpfc.encoding.decode_options` for the frames they accept whose Geneve options
are SwitchVM's alone (anything else leaves for DEOPT), in the profile's format version (the
order of the options), loads the stack into the state,
checks the pointers (``pointer_problem``) and finds the packet's compiled code by its
digest (NEED_CODE when the engine has not seen it). It sets the header fields the later
parts read (:class:`~.packetgen.PacketGen`'s attributes).
"""

from __future__ import annotations

from typing import Any

from dpfc.target import HEADER_FIELD_NAMES, TAGGED_FORMAT

from .emit import I32, I64, c32, c64, declare
from .layout import (
    C_BYTES,
    C_DIGEST,
    C_FUNCTION,
    C_LENGTH,
    C_PROLOGS,
    CODE_SLOTS,
    CODE_WORDS,
    FNV_OFFSET,
    FNV_PRIME,
)
from .packetgen import P8, PacketGen


class ParseGen(PacketGen):
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
        self.fail_if(self.ne(b.lshr(head, c32(4)), self.profile.code_format))
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

        def code_options() -> tuple[Any, Any]:
            start = b.load(position)
            self.loop(n_code, lambda _: option(0x02))
            return start, b.load(position)

        # format version 1: header, code, stack; version 2: header, stack, code
        code_first = self.profile.code_format != TAGGED_FORMAT
        if code_first:
            code_start, code_end = code_options()
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
        if not code_first:
            code_start, code_end = code_options()
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
        self.header_fields(opt_end, end)

    def header_fields(self, start: Any, end: Any) -> None:
        """dpfc.packet.header_fields of the inner frame [start, end) into the state words
        (0 where a header is missing); every read is behind the check of its bounds."""
        e, b, p, lay = self.e, self.b, self.p, self.lay
        for name in HEADER_FIELD_NAMES:
            e.set(getattr(lay, name), c32(0))
        done = self.fn.append_basic_block("inner_done")

        def skip_if(condition: Any) -> None:
            ok = self.fn.append_basic_block()
            b.cbranch(condition, done, ok)
            b.position_at_end(ok)

        def short(at: Any, size: int) -> Any:  # fewer than ``size`` bytes from ``at`` on
            return b.icmp_unsigned("<", end, b.add(at, c32(size)))

        skip_if(short(start, 14))
        ethertype = self.var(e.be(p, b.add(start, c32(12)), 2))
        l3_at = self.var(b.add(start, c32(14)))
        with b.if_then(self.eq(b.load(ethertype), 0x8100)):
            skip_if(short(start, 18))
            b.store(e.be(p, b.add(start, c32(16)), 2), ethertype)
            b.store(b.add(start, c32(18)), l3_at)
        l3 = b.load(l3_at)
        skip_if(self.ne(b.load(ethertype), 0x0800))
        skip_if(short(l3, 20))
        vihl = e.byte(p, l3)
        ihl = b.mul(b.and_(vihl, c32(15)), c32(4))
        skip_if(b.or_(self.ne(b.lshr(vihl, c32(4)), 4), self.lt(ihl, c32(20))))
        skip_if(b.icmp_unsigned("<", end, b.add(l3, ihl)))
        protocol = e.byte(p, b.add(l3, c32(9)))
        e.set(lay.ipv4_src, e.be(p, b.add(l3, c32(12)), 4))
        e.set(lay.ipv4_dst, e.be(p, b.add(l3, c32(16)), 4))
        e.set(lay.ip_proto, protocol)
        e.set(lay.dscp, b.lshr(e.byte(p, b.add(l3, c32(1))), c32(2)))
        e.set(lay.ttl, e.byte(p, b.add(l3, c32(8))))
        fragment = b.and_(e.be(p, b.add(l3, c32(6)), 2), c32(0x1FFF))
        ports = b.or_(self.eq(protocol, 6), self.eq(protocol, 17))
        skip_if(b.or_(b.not_(ports), self.ne(fragment, 0)))
        l4 = b.add(l3, ihl)
        skip_if(short(l4, 4))
        e.set(lay.l4_src, e.be(p, l4, 2))
        e.set(lay.l4_dst, e.be(p, b.add(l4, c32(2)), 2))
        b.branch(done)
        b.position_at_end(done)

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
