"""Small helpers over llvmlite's IR builder that every JIT code generator shares.

Contract: :class:`Emit` wraps one ``IRBuilder`` positioned in one function whose first
two arguments are the state words (``i32*``) and the memory undo log (``i64*``); it reads
and writes state words by :class:`~.layout.StateLayout` index, loads and stores
big-endian fields of byte buffers, and leaves the function early with a status. Nothing
here knows SwitchVM; it only keeps the generators short.
"""

from __future__ import annotations

from typing import Any

from .llvm import ir

I1 = ir.IntType(1) if ir is not None else None
I8 = ir.IntType(8) if ir is not None else None
I16 = ir.IntType(16) if ir is not None else None
I32 = ir.IntType(32) if ir is not None else None
I64 = ir.IntType(64) if ir is not None else None

Value = Any


def c32(value: int) -> Value:
    return ir.Constant(I32, value & 0xFFFF_FFFF)


def c64(value: int) -> Value:
    return ir.Constant(I64, value & 0xFFFF_FFFF_FFFF_FFFF)


def c8(value: int) -> Value:
    return ir.Constant(I8, value & 0xFF)


class Emit:
    """An IR builder with the state array ``st`` and the undo log ``undo`` at hand."""

    def __init__(self, function: Any, st: Value, undo: Value) -> None:
        self.function = function
        self.b = ir.IRBuilder(function.append_basic_block("entry"))
        self.st = st
        self.undo = undo

    # -- state words ------------------------------------------------------------------------
    def get(self, index: int | Value) -> Value:
        at = c32(index) if isinstance(index, int) else index
        return self.b.load(self.b.gep(self.st, [at]))

    def set(self, index: int | Value, value: Value) -> None:
        at = c32(index) if isinstance(index, int) else index
        self.b.store(value, self.b.gep(self.st, [at]))

    # -- control --------------------------------------------------------------------------------
    def leave_if(self, condition: Value, status: int, likely: bool = False) -> None:
        """Return ``status`` from the function when ``condition`` holds."""
        with self.b.if_then(condition, likely=likely):
            self.b.ret(c32(status))

    def block(self, name: str) -> Any:
        return self.function.append_basic_block(name)

    # -- bytes --------------------------------------------------------------------------------
    def byte(self, base: Value, offset: Value) -> Value:
        """The byte at ``base + offset`` as an i32."""
        return self.b.zext(self.b.load(self.b.gep(base, [offset])), I32)

    def be(self, base: Value, offset: Value, size: int) -> Value:
        """The big-endian unsigned field of ``size`` bytes at ``base + offset``, as an i32."""
        value = self.byte(base, offset)
        for k in range(1, size):
            value = self.b.or_(
                self.b.shl(value, c32(8)), self.byte(base, self.b.add(offset, c32(k)))
            )
        return value

    def put_byte(self, base: Value, offset: Value, value: Value) -> None:
        self.b.store(self.b.trunc(value, I8), self.b.gep(base, [offset]))

    def put_be(self, base: Value, offset: Value, value: Value, size: int) -> None:
        for k in range(size):
            shifted = self.b.lshr(value, c32(8 * (size - 1 - k)))
            self.put_byte(base, self.b.add(offset, c32(k)), shifted)

    def copy(self, dst: Value, dst_off: Value, src: Value, src_off: Value, length: Value) -> None:
        """memcpy of ``length`` bytes (an i32)."""
        module = self.function.module
        name = "llvm.memcpy.p0i8.p0i8.i32"
        fn = module.globals.get(name)
        if fn is None:
            ptr = ir.PointerType(I8)
            fn = ir.Function(module, ir.FunctionType(ir.VoidType(), [ptr, ptr, I32, I1]), name)
        self.b.call(
            fn, [self.b.gep(dst, [dst_off]), self.b.gep(src, [src_off]), length, ir.Constant(I1, 0)]
        )


def declare(module: Any, name: str, ret: Any, args: list[Any]) -> Any:
    """The function ``name`` of ``module`` (declared here when another module defines it)."""
    existing = module.globals.get(name)
    if existing is not None:
        return existing
    return ir.Function(module, ir.FunctionType(ret, args), name)


def intrinsic(module: Any, name: str, ty: Any) -> Any:
    return declare(module, name, ty, [ty])


__all__ = ["I1", "I8", "I16", "I32", "I64", "Emit", "c8", "c32", "c64", "declare", "intrinsic"]
