"""Native searches of a pipe's :class:`~.tables.TableImage`, part of the pass's module.

Contract: :func:`emit_lookups` writes into the runtime module the global ``P_tables`` (the
address of the pipe's table image, set by :mod:`.compiled` after each table change) and
the functions the pass and the bundles call: ``P_perm(tenant) -> row`` (-1: none),
``P_perm_info(row, field)``, ``P_fwd(tenant, value) -> row`` (-1), ``P_dest(row, field)``,
``P_route(ip) -> port`` (the default port or -1), ``P_const(tenant, index)`` (0 without
a table) and ``P_translate_E_L(tenant, vaddr) -> address`` of the word (0: unmapped) for
every EU and lane of the profile: direct mappings first, then segments smallest first,
then the null segment, as :meth:`dpfc.switch.LaneMap.translate`.
"""

from __future__ import annotations

from typing import Any

from dpfc.target import TargetProfile

from .emit import I32, I64, c32, c64
from .llvm import ir
from .tables import (
    CONST,
    DEST_ROWS,
    DEST_WORDS,
    FWD,
    GLOBAL_MAPS,
    GLOBAL_ROWS,
    GROUP_ROWS,
    LANE_DIRECT,
    LANE_MAPS,
    LANE_NULL,
    LANE_NULL_ROWS,
    LANE_ROWS,
    LANE_SEGMENT,
    LANE_SIZES,
    LANE_WORDS,
    MCAST,
    NULL_WORDS,
    PERM,
    PERM_ROWS,
    PERM_WORDS,
    ROUTE,
    ROUTE_DEFAULT,
    row_slot,
)

P64 = ir.PointerType(I64) if ir is not None else None


def emit_lookups(module: Any, prefix: str, profile: TargetProfile) -> None:
    tables = ir.GlobalVariable(module, P64, f"{prefix}_tables")
    tables.initializer = ir.Constant(P64, None)
    gen = _Lookups(module, prefix, profile, tables)
    gen.emit()


class _Lookups:
    def __init__(self, module: Any, prefix: str, profile: TargetProfile, tables: Any) -> None:
        self.module, self.prefix, self.profile, self.tables = module, prefix, profile, tables

    def function(
        self, name: str, ret: Any, args: list[Any], internal: bool = False
    ) -> tuple[Any, Any]:
        fn = ir.Function(self.module, ir.FunctionType(ret, args), f"{self.prefix}_{name}")
        if internal:
            fn.linkage = "internal"
        return fn, ir.IRBuilder(fn.append_basic_block("entry"))

    @staticmethod
    def word(b: Any, base: Any, index: Any) -> Any:
        return b.load(b.gep(base, [index]))

    def emit(self) -> None:
        self.search = self.emit_search()
        self.emit_rows()
        self.emit_translate()

    def emit_search(self) -> Any:
        """``search(slot, key, missing) -> i64``: binary search of a sorted map (unsigned keys)."""
        fn, b = self.function("search", I64, [I32, I64, I64], internal=True)
        slot, key, missing = fn.args
        tab = b.load(self.tables)
        start = self.word(b, tab, b.mul(slot, c32(2)))
        count = self.word(b, tab, b.add(b.mul(slot, c32(2)), c32(1)))
        low, high = b.alloca(I64), b.alloca(I64)
        b.store(c64(0), low)
        b.store(count, high)
        head, body, less, more, miss = (fn.append_basic_block() for _ in range(5))
        b.branch(head)
        b.position_at_end(head)
        lo, hi = b.load(low), b.load(high)
        b.cbranch(b.icmp_unsigned("<", lo, hi), body, miss)
        b.position_at_end(body)
        mid = b.lshr(b.add(lo, hi), c64(1))
        probe = self.word(b, tab, b.add(start, mid))
        with b.if_then(b.icmp_unsigned("==", probe, key)):
            b.ret(self.word(b, tab, b.add(b.add(start, count), mid)))
        b.cbranch(b.icmp_unsigned("<", probe, key), less, more)
        b.position_at_end(less)
        b.store(b.add(mid, c64(1)), low)
        b.branch(head)
        b.position_at_end(more)
        b.store(mid, high)
        b.branch(head)
        b.position_at_end(miss)
        b.ret(missing)
        return fn

    def find(self, b: Any, slot: int | Any, key: Any, missing: int) -> Any:
        at = c32(slot) if isinstance(slot, int) else slot
        return b.call(self.search, [at, key, c64(missing)])

    def row_word(self, b: Any, rows_slot: int, row: Any, width: int, field: Any) -> Any:
        tab = b.load(self.tables)
        start = self.word(b, tab, c32(rows_slot))
        at = b.add(start, b.zext(b.add(b.mul(row, c32(width)), field), I64))
        return b.trunc(self.word(b, tab, at), I32)

    def emit_rows(self) -> None:
        profile = self.profile
        fn, b = self.function("perm", I32, [I32])
        b.ret(b.trunc(self.find(b, PERM, b.zext(fn.args[0], I64), -1), I32))
        fn, b = self.function("perm_info", I32, [I32, I32])
        b.ret(self.row_word(b, row_slot(profile, PERM_ROWS), fn.args[0], PERM_WORDS, fn.args[1]))
        fn, b = self.function("fwd", I32, [I32, I32])
        key = b.or_(b.shl(b.zext(fn.args[0], I64), c64(32)), b.zext(fn.args[1], I64))
        b.ret(b.trunc(self.find(b, FWD, key, -1), I32))
        fn, b = self.function("mcast", I32, [I32, I32])
        key = b.or_(b.shl(b.zext(fn.args[0], I64), c64(32)), b.zext(fn.args[1], I64))
        b.ret(b.trunc(self.find(b, MCAST, key, -1), I32))
        fn, b = self.function("group", I32, [I32, I32])
        b.ret(self.row_word(b, row_slot(profile, GROUP_ROWS), fn.args[0], 2, fn.args[1]))
        fn, b = self.function("dest", I32, [I32, I32])
        b.ret(self.row_word(b, row_slot(profile, DEST_ROWS), fn.args[0], DEST_WORDS, fn.args[1]))
        fn, b = self.function("route", I32, [I32])
        default = self.word(b, b.load(self.tables), c32(row_slot(profile, ROUTE_DEFAULT)))
        b.ret(b.trunc(b.call(self.search, [c32(ROUTE), b.zext(fn.args[0], I64), default]), I32))
        fn, b = self.function("const", I32, [I32, I32])
        key = b.or_(b.shl(b.zext(fn.args[0], I64), c64(32)), b.zext(fn.args[1], I64))
        b.ret(b.trunc(self.find(b, CONST, key, 0), I32))

    def emit_translate(self) -> None:
        profile = self.profile
        fn, b = self.function("translate", I64, [I32, I32, I32], internal=True)
        lane, tenant, vaddr = fn.args
        tab = b.load(self.tables)
        maps = GLOBAL_MAPS + profile.num_eus * profile.lanes * LANE_MAPS
        rows_at = b.add(c32(2 * maps + GLOBAL_ROWS), b.mul(lane, c32(LANE_ROWS)))
        base = self.word(b, tab, b.add(rows_at, c32(LANE_WORDS)))
        with b.if_then(b.icmp_unsigned("==", base, c64(0))):
            b.ret(c64(0))  # a lane without mappings

        def address(physical: Any) -> Any:
            return b.add(base, b.mul(physical, c64(4)))

        map_at = b.add(c32(GLOBAL_MAPS), b.mul(lane, c32(LANE_MAPS)))
        t64, v64 = b.zext(tenant, I64), b.zext(vaddr, I64)
        direct = self.find(b, b.add(map_at, c32(LANE_DIRECT)), b.or_(b.shl(t64, c64(32)), v64), -1)
        with b.if_then(b.icmp_signed(">=", direct, c64(0))):
            b.ret(address(direct))
        # segments: every size the lane has, smallest first (one tenant's never overlap)
        sizes = self.word(b, tab, b.add(rows_at, c32(LANE_SIZES)))
        left = b.alloca(I64)
        b.store(sizes, left)
        head, probe, nulls = (fn.append_basic_block() for _ in range(3))
        b.branch(head)
        b.position_at_end(head)
        remaining = b.load(left)
        b.cbranch(b.icmp_unsigned("!=", remaining, c64(0)), probe, nulls)
        b.position_at_end(probe)
        # the next size, ascending: the index of the lowest set bit (a popcount below it)
        below = b.sub(b.and_(remaining, b.neg(remaining)), c64(1))
        k = c64(0)
        for shift in (32, 16, 8, 4, 2, 1):
            has = b.icmp_unsigned(">=", below, b.shl(c64(1), b.add(k, c64(shift))))
            k = b.select(has, b.add(k, c64(shift)), k)
        k = b.select(b.icmp_unsigned("==", below, c64(0)), c64(0), b.add(k, c64(1)))
        b.store(b.and_(remaining, b.sub(remaining, c64(1))), left)
        masked = b.and_(v64, b.xor(b.sub(b.shl(c64(1), k), c64(1)), c64(0xFFFF_FFFF)))
        key = b.or_(b.or_(b.shl(t64, c64(40)), b.shl(k, c64(32))), masked)
        hit = self.find(b, b.add(map_at, c32(LANE_SEGMENT)), key, -1)
        with b.if_then(b.icmp_signed(">=", hit, c64(0))):
            b.ret(address(b.add(b.sub(v64, masked), hit)))
        b.branch(head)
        b.position_at_end(nulls)
        row = self.find(b, b.add(map_at, c32(LANE_NULL)), t64, -1)
        with b.if_then(b.icmp_signed(">=", row, c64(0))):
            start = self.word(b, tab, b.add(rows_at, c32(LANE_NULL_ROWS)))
            at = b.add(start, b.mul(row, c64(NULL_WORDS)))
            mask = self.word(b, tab, at)
            vbase = self.word(b, tab, b.add(at, c64(1)))
            with b.if_then(b.icmp_unsigned("==", b.and_(v64, mask), vbase)):
                b.ret(address(self.word(b, tab, b.add(at, c64(2)))))
        b.ret(c64(0))
        for eu in range(profile.num_eus):
            for one in range(profile.lanes):
                lane_fn, lb = self.function(f"translate_{eu}_{one}", I64, [I32, I32])
                index = c32(eu * profile.lanes + one)
                lb.ret(lb.call(fn, [index, *lane_fn.args]))
