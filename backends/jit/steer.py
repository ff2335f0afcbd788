"""Steering and deparse in the native pass (Steering.steer and deliver, deparse.py).

Contract: :class:`SteerGen` writes the IR that checks the epilog's action against the
tenant's permission bits and the gas, forms the outgoing SwitchVM options (header, the
code kept or removed, the stack in options of 31 entries), rebuilds the frame (lengths,
the IPv4 checksum, UDP checksum 0, Geneve option length), delivers it (drop, recirculate,
return to sender, set_port, forward with the entry's rewrite and route, pass by the
route, multicast with a rewritten and routed copy per member) and commits the packet's
counters; an egress DPF to run and anything the interpreter would report leave for DEOPT.
"""

from __future__ import annotations

from typing import Any

from dpfc.target import TAGGED_FORMAT

from .emit import I32, c32, c64
from .layout import (
    ACTION_CODE,
    DROP_DPF,
    F_PRIVILEGED,
    F_RECIRCULATE,
    FORWARD,
    FORWARD_NO_ROUTE,
    MAX_COPIES,
    MULTICAST,
    PASS,
    PASS_NO_ROUTE,
    PTR_NONE,
    R_COPIES,
    R_COPY,
    R_EGRESS,
    R_GAS,
    R_OUT_LEN,
    R_OUT_OFF,
    R_PORT,
    R_TENANT,
    R_VALUE,
    RECIRCULATE,
    RETURN,
    SET_PORT,
    SET_PORT_NO_SUCH,
    STAT_DIRTY,
    STAT_INDEX,
    STAT_SLOTS,
)
from .packetgen import PacketGen
from .tables import DEST_ETH_HI, DEST_ETH_LO, DEST_HAS_ETH, DEST_HAS_IP, DEST_IP, DEST_PORT


class SteerGen(PacketGen):
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
        version = c32(self.profile.code_format << 4)
        e.put_byte(o, b.add(at, c32(4)), b.or_(version, self.flags_nibble))
        e.put_byte(o, b.add(at, c32(5)), gas)
        e.put_byte(o, b.add(at, c32(6)), depth)
        e.put_byte(o, b.add(at, c32(7)), b.or_(b.shl(n_code, c32(4)), n_stack))
        e.put_be(o, b.add(at, c32(8)), self.app_id, 4)
        e.put_be(o, b.add(at, c32(12)), new_ptr, 2)
        e.put_be(o, b.add(at, c32(14)), egress, 2)
        at = b.add(at, c32(16))
        code_first = self.profile.code_format != TAGGED_FORMAT  # version 2: stack, then code
        if code_first:
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
        if not code_first:
            e.copy(o, at, p, self.code_start, code_bytes)
            at = b.add(at, code_bytes)
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
            for name in (
                "pass",
                "return_to_sender",
                "forward",
                "set_port",
                "recirculate",
                "multicast",
            )
        }
        switch = b.switch(action, finish)  # drop
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
        b.position_at_end(cases["multicast"])
        copies = self.multicast(value, o, length)
        b.store(c32(MULTICAST), status)
        b.store(c32(STAT_INDEX["multicast"]), verdict_counter)
        b.store(b.mul(b.add(copies, c32(1)), length), kept)  # the deparsed frame and the copies
        b.branch(finish)
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

    def multicast(self, value: Any, o: Any, length: Any) -> Any:
        """Steering.deliver's multicast: a copy of the deparsed frame per member, each
        rewritten and routed as Steering.send does; members without a route send nothing.
        Writes the copies after ``o``; the number that left."""
        e, b, lay = self.e, self.b, self.lay
        group = self.table("mcast", I32, [I32, I32], [self.vni, value])
        self.fail_if(self.eq(group, 0xFFFF_FFFF))  # no such group: refused, reported
        first = self.info("group", group, 0)
        members = self.info("group", group, 1)
        self.fail_if(b.icmp_unsigned(">", members, c32(MAX_COPIES)))
        needed = b.add(e.get(lay.out_off), b.mul(b.add(members, c32(1)), length))
        self.fail_if(b.icmp_unsigned(">", needed, e.get(lay.out_cap)))  # no room: handed over
        copies = self.var(c32(0))

        def member(k: Any) -> None:
            sent = b.load(copies)
            at = b.mul(b.add(sent, c32(1)), length)
            copy = b.gep(o, [at])
            e.copy(copy, c32(0), o, c32(0), length)
            to = self.rewrite(copy, b.add(first, k))
            with b.if_then(self.ne(to, 0xFFFF_FFFF)):
                slot = b.add(c32(R_COPY), b.mul(sent, c32(2)))
                b.store(to, b.gep(self.record, [slot]))
                offset = b.add(e.get(lay.out_off), at)
                b.store(offset, b.gep(self.record, [b.add(slot, c32(1))]))
                b.store(b.add(sent, c32(1)), copies)

        self.loop(members, member)
        count = b.load(copies)
        self.put(R_COPIES, count)
        return count

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
