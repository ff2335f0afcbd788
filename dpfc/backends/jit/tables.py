"""Native code of one pipe's tables: permissions, lane-memory translation, constants,
forwarding entries and routes, each a function of the pipe module.

Contract: :func:`emit_tables` writes into a module, for the ingress pipeline of ``pipe``
as it is now (a new module is made after any control-plane change):

* ``P_perm(tenant) -> i32``: the tenant's permission entry index, -1 when it has none;
  the entries' app id, default DPF (raw PC, 0xFFFF none) and flag bits are in
  :class:`PipeTables` and in ``P_perm_info(entry, field) -> i32``;
* ``P_translate_E_L(tenant, vaddr) -> i64``: the address of the word ``vaddr`` maps to
  (direct mappings first, then the segments smallest first, then the null segment, as
  :meth:`dpfc.backends.sim.memory.LaneMemory.translate`), 0 when it is unmapped;
* ``P_const(tenant, index) -> i32``: LOAD_CONST's word (0 without a table);
* ``P_fwd(tenant, value) -> i32``: a forwarding destination index, -1 without an entry,
  and ``P_dest(index, field) -> i32`` its port (-1: routed), address flags and words;
* ``P_route(ip) -> i32``: the port of an outer IPv4 destination (the default port, or -1).

Table contents become constant sorted arrays searched by binary search (not switch
instructions: LLVM's time on a switch grows with the square of its cases), and a table
change makes a new module (docs/simulator.md, the JIT section).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dpfc.encoding.code import encode_pc
from dpfc.target.driver import Destination

from ..sim.memory import LaneMemory
from ..sim.state import PipeState, UnauthorizedAction
from .emit import I32, I64, c32, c64
from .layout import F_METADATA, F_PRIVILEGED, F_RECIRCULATE, PTR_NONE
from .llvm import ir

# P_perm_info fields
PERM_APP_ID = 0
PERM_DEFAULT = 1
PERM_FLAGS = 2
PERM_EXTRA = 3  # 1 when the entry accepts further app ids or passes unauthorized packets
# P_dest fields
DEST_PORT = 0
DEST_HAS_IP = 1
DEST_IP = 2
DEST_HAS_ETH = 3
DEST_ETH_HI = 4  # bytes 0..3
DEST_ETH_LO = 5  # bytes 4..5


@dataclass
class PipeTables:
    """What Python needs to read the native statistics back: entry index -> tenant."""

    tenants: list[int]


def emit_tables(module: Any, prefix: str, pipe: PipeState) -> PipeTables:
    tenants = sorted(pipe.permissions)
    _perm(module, prefix, pipe, tenants)
    for eu, lanes in enumerate(pipe.lanes):
        for lane, memory in enumerate(lanes):
            _translate(module, f"{prefix}_translate_{eu}_{lane}", memory)
    _constants(module, prefix, pipe)
    _forwarding(module, prefix, pipe)
    _routes(module, prefix, pipe)
    return PipeTables(tenants)


def _sorted_lookup(module: Any, name: str, pairs: dict[int, int], default: int) -> Any:
    """``name(i64 key) -> i64``: a binary search of a constant sorted key array. Tables
    are data, not switch instructions: LLVM's time on a switch grows with the square of
    its cases (30,000 tenants took minutes), a search of N keys takes log2 N probes."""
    keys = sorted(pairs)
    size = max(1, len(keys))
    key_ty, value_ty = ir.ArrayType(I64, size), ir.ArrayType(I64, size)
    key_table = ir.GlobalVariable(module, key_ty, f"{name}_keys")
    key_table.initializer = ir.Constant(key_ty, [c64(k) for k in keys] or [c64(0)])
    value_table = ir.GlobalVariable(module, value_ty, f"{name}_values")
    value_table.initializer = ir.Constant(value_ty, [c64(pairs[k]) for k in keys] or [c64(0)])
    for table in (key_table, value_table):
        table.global_constant = True
        table.linkage = "internal"
    fn, b = _function(module, name, I64, [I64])
    fn.linkage = "internal"
    (key,) = fn.args
    low, high = b.alloca(I64), b.alloca(I64)
    b.store(c64(0), low)
    b.store(c64(len(keys)), high)
    head, body, less, more, miss = (fn.append_basic_block() for _ in range(5))
    b.branch(head)
    b.position_at_end(head)
    lo, hi = b.load(low), b.load(high)
    b.cbranch(b.icmp_unsigned("<", lo, hi), body, miss)
    b.position_at_end(body)
    mid = b.lshr(b.add(lo, hi), c64(1))
    probe = b.load(b.gep(key_table, [c32(0), mid]))
    with b.if_then(b.icmp_unsigned("==", probe, key)):
        b.ret(b.load(b.gep(value_table, [c32(0), mid])))
    b.cbranch(b.icmp_unsigned("<", probe, key), less, more)
    b.position_at_end(less)
    b.store(b.add(mid, c64(1)), low)
    b.branch(head)
    b.position_at_end(more)
    b.store(mid, high)
    b.branch(head)
    b.position_at_end(miss)
    b.ret(c64(default))
    return fn


def _function(module: Any, name: str, ret: Any, args: list[Any]) -> tuple[Any, Any]:
    fn = ir.Function(module, ir.FunctionType(ret, args), name)
    return fn, ir.IRBuilder(fn.append_basic_block("entry"))


def _info_function(module: Any, name: str, rows: list[list[int]], fields: int) -> None:
    """``name(row, field) -> i32``: a constant table (0 beyond it)."""
    ty = ir.ArrayType(I32, max(1, len(rows) * fields))
    flat = [value for row in rows for value in row] or [0]
    table = ir.GlobalVariable(module, ty, f"{name}_data")
    table.initializer = ir.Constant(ty, [c32(v) for v in flat])
    table.global_constant = True
    table.linkage = "internal"
    fn, b = _function(module, name, I32, [I32, I32])
    row, field = fn.args
    at = b.add(b.mul(row, c32(fields)), field)
    b.ret(b.load(b.gep(table, [c32(0), at])))


def _perm(module: Any, prefix: str, pipe: PipeState, tenants: list[int]) -> None:
    search = _sorted_lookup(
        module, f"{prefix}_perm_search", {t: i for i, t in enumerate(tenants)}, -1
    )
    fn, b = _function(module, f"{prefix}_perm", I32, [I32])
    b.ret(b.trunc(b.call(search, [b.zext(fn.args[0], I64)]), I32))
    rows: list[list[int]] = []
    for tenant in tenants:
        entry = pipe.permissions[tenant]
        flags = (
            (F_METADATA if entry.metadata else 0)
            | (F_PRIVILEGED if entry.privileged else 0)
            | (F_RECIRCULATE if entry.recirculate else 0)
        )
        default = PTR_NONE if entry.default_dpf is None else encode_pc(entry.default_dpf)
        extra = int(bool(entry.app_ids) or entry.unauthorized is UnauthorizedAction.PASS)
        rows.append([entry.app_id, default, flags, extra])
    _info_function(module, f"{prefix}_perm_info", rows, 4)


def _translate(module: Any, name: str, memory: LaneMemory) -> None:
    fn, b = _function(module, name, I64, [I32, I32])
    tenant, vaddr = fn.args
    if not memory.direct and not memory.segments:
        b.ret(c64(0))
        return
    base = memory.word_address()
    v64, t64 = b.zext(vaddr, I64), b.zext(tenant, I64)
    direct = _sorted_lookup(
        module,
        f"{name}_direct",
        {
            owner << 32 | virtual: base + 4 * physical
            for (owner, virtual), physical in memory.direct.items()
        },
        0,
    )
    found = b.call(direct, [b.or_(b.shl(t64, c64(32)), v64)])
    with b.if_then(b.icmp_unsigned("!=", found, c64(0))):
        b.ret(found)
    # Segments: (tenant, log2 size, base) -> physical base, probed for every size the lane
    # has, smallest first; one tenant's segments never overlap, so the first hit is the one
    # TenantSegments.lookup finds.
    segments: dict[int, int] = {}
    nulls: dict[int, int] = {}
    null_rows: list[list[int]] = []
    for owner, table in memory.segments.items():
        for size, by_base in table.by_size.items():
            for vbase, segment in by_base.items():
                segments[owner << 40 | (size.bit_length() - 1) << 32 | vbase] = segment.pbase
        if table.null is not None:
            nulls[owner] = len(null_rows)
            null_rows.append([table.null.mask, table.null.vbase, table.null.pbase])
    sizes = sorted({(k >> 32) & 0xFF for k in segments})
    search = _sorted_lookup(module, f"{name}_segments", {k: v + 1 for k, v in segments.items()}, 0)
    for log2 in sizes:
        masked = b.zext(b.and_(vaddr, c32(~((1 << log2) - 1))), I64)
        key = b.or_(b.or_(b.shl(t64, c64(40)), c64(log2 << 32)), masked)
        hit = b.call(search, [key])
        with b.if_then(b.icmp_unsigned("!=", hit, c64(0))):
            physical = b.add(b.sub(v64, masked), b.sub(hit, c64(1)))
            b.ret(b.add(c64(base), b.mul(physical, c64(4))))
    if null_rows:
        row = b.trunc(b.call(_sorted_lookup(module, f"{name}_nulls", nulls, -1), [t64]), I32)
        _info_function(module, f"{name}_null_info", null_rows, 3)
        info = module.globals[f"{name}_null_info"]
        with b.if_then(b.icmp_signed(">=", row, c32(0))):
            mask = b.call(info, [row, c32(0)])
            vbase = b.call(info, [row, c32(1)])
            with b.if_then(b.icmp_unsigned("==", b.and_(vaddr, mask), vbase)):
                pbase = b.zext(b.call(info, [row, c32(2)]), I64)
                b.ret(b.add(c64(base), b.mul(pbase, c64(4))))
    b.ret(c64(0))


def _constants(module: Any, prefix: str, pipe: PipeState) -> None:
    pairs = {
        owner << 32 | index: value
        for owner, table in pipe.constants.items()
        for index, value in enumerate(table)
    }
    search = _sorted_lookup(module, f"{prefix}_const_search", pairs, 0)
    fn, b = _function(module, f"{prefix}_const", I32, [I32, I32])
    tenant, index = fn.args
    key = b.or_(b.shl(b.zext(tenant, I64), c64(32)), b.zext(index, I64))
    b.ret(b.trunc(b.call(search, [key]), I32))


def _destination_row(destination: Destination) -> list[int]:
    ip = destination.ip_dst
    eth = destination.eth_dst
    return [
        -1 if destination.port is None else destination.port,
        int(ip is not None),
        int.from_bytes(ip, "big") if ip is not None else 0,
        int(eth is not None),
        int.from_bytes(eth[:4], "big") if eth is not None else 0,
        int.from_bytes(eth[4:6], "big") if eth is not None else 0,
    ]


def _forwarding(module: Any, prefix: str, pipe: PipeState) -> None:
    pairs: dict[int, int] = {}
    rows: list[list[int]] = []
    for owner, entries in pipe.forwarding.items():
        for virtual, destination in entries.items():
            pairs[owner << 32 | virtual] = len(rows)
            rows.append(_destination_row(destination))
    search = _sorted_lookup(module, f"{prefix}_fwd_search", pairs, -1)
    fn, b = _function(module, f"{prefix}_fwd", I32, [I32, I32])
    tenant, value = fn.args
    key = b.or_(b.shl(b.zext(tenant, I64), c64(32)), b.zext(value, I64))
    b.ret(b.trunc(b.call(search, [key]), I32))
    _info_function(module, f"{prefix}_dest", rows, 6)


def _routes(module: Any, prefix: str, pipe: PipeState) -> None:
    default = -1 if pipe.default_port is None else pipe.default_port
    pairs = {int.from_bytes(address, "big"): port for address, port in pipe.routes.items()}
    search = _sorted_lookup(module, f"{prefix}_route_search", pairs, default)
    fn, b = _function(module, f"{prefix}_route", I32, [I32])
    b.ret(b.trunc(b.call(search, [b.zext(fn.args[0], I64)]), I32))
