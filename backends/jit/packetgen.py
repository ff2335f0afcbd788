"""The generator of one packet's native pass: its state and the IR helpers its parts share.

Contract: :class:`PacketGen` holds the function being written (``P_one``: one packet,
straight-line IR with a shared DEOPT exit), its arguments and the IR helpers (locals,
leaving for DEOPT, calls of the table functions, result-record fields, loops). The parts
are mixins: :mod:`.parse` (parse, the code lookup), :mod:`.steer` (steering, deparse) and
:mod:`.runtime` (permissions, the DPF, the exits), which also says what the pass does.
"""

from __future__ import annotations

from typing import Any

from dpfc.target import TargetProfile

from .emit import I8, I32, I64, Emit, c32, declare
from .layout import (
    StateLayout,
)
from .llvm import ir

PERM_APP_ID, PERM_DEFAULT, PERM_FLAGS = range(3)  # the words of a permission row

P8 = ir.PointerType(I8) if ir is not None else None
P32 = ir.PointerType(I32) if ir is not None else None
P64 = ir.PointerType(I64) if ir is not None else None
CODE_FN = ir.FunctionType(I32, [P32, P64, I32, I32]) if ir is not None else None


class PacketGen:
    """What every part of ``P_one``'s generator shares."""

    # set by ParseGen.parse and permissions(), read by the later parts
    l3: Any
    ihl: Any
    udp: Any
    end: Any
    opt_end: Any
    code_start: Any
    code_end: Any
    n_code: Any
    flags_nibble: Any
    gas: Any
    vni: Any
    app_id: Any
    dptr: Any
    eptr: Any
    code_function: Any
    prologs: Any
    entry: Any
    pointer: Any
    flags: Any

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

    def bad_pointer(self, pointer: Any, prologs: Any) -> Any:
        """encoding.header.pointer_problem: an in-packet prolog the packet lacks, or a slot
        beyond the code memory (never for 0xFFFF, "none")."""
        b = self.b
        index = b.and_(pointer, c32(0x7FFF))
        in_packet = self.ne(b.and_(pointer, c32(0x8000)), 0)
        limit = b.select(in_packet, prologs, c32(self.profile.code_slots_per_stage))
        return b.and_(self.ne(pointer, 0xFFFF), b.icmp_unsigned(">=", index, limit))
