"""The textual form of the IR (printer); :mod:`dpfc.ir.reader` reads the same text back.

Example::

    module kvs app 0x4b5601
    array @index direct 45000
    array @values0 segment 65536 pin(2, 0)

    dpf @cache_get(1) placement=packet {
    entry:
      %0 = param 0                ; key
      %1 = load @index, %0
      %2 = const 0x80000000
      %3 = test %1, %2
      br %3, hit, miss
    hit:
      %4 = phi w32 [%0, entry]
      exit push(%0, %4) steer return_to_sender drop_code
    miss:
      exit push(%0) chain @count_min
    }

Values are numbered ``%0, %1, ...`` in block order at print time; a ``; name`` comment
gives the source name when the instruction has one. Constants print in decimal below 256
and in hex from 256 on. Types are implied by the op except for PHI and SELECT, whose
result type is written, and bool constants (``const i1 1``). Blocks print in the
function's order.
"""

from __future__ import annotations

from collections.abc import Callable

from dpfc.ir.core import Br, Exit, Function, Instr, Jump, Module, Op, Terminator, Ty


def format_imm(value: int) -> str:
    return str(value) if value < 256 else f"{value:#x}"


def format_module(module: Module) -> str:
    head = f"module {module.name}"
    if module.app_id is not None:
        head += f" app {format_imm(module.app_id)}"
    lines = [head]
    for array in module.arrays.values():
        line = f"array @{array.name} {array.mapping} {array.size}"
        if array.signed:
            line += " signed"
        if array.pin is not None:
            line += f" pin({array.pin[0]}, {array.pin[1]})"
        lines.append(line)
    text = "\n".join(lines) + "\n"
    for function in module.functions:
        text += "\n" + format_function(function)
    return text


def format_function(function: Function) -> str:
    names: dict[int, str] = {}
    for instr in function.instrs():
        names[id(instr)] = f"%{len(names)}"

    def ref(value: Instr) -> str:
        return names.get(id(value), "%?")

    attrs = "".join(f" {k}={v}" for k, v in sorted(function.attrs.items()))
    lines = [f"dpf @{function.name}({function.params}){attrs} {{"]
    for block in function.blocks:
        lines.append(f"{block.label}:")
        for instr in block.instrs:
            lines.append("  " + _instr(instr, ref))
        lines.append("  " + _term(block.term, ref))
    lines.append("}")
    return "\n".join(lines) + "\n"


def _instr(instr: Instr, ref: Callable[[Instr], str]) -> str:
    op = instr.op
    args = ", ".join(ref(a) for a in instr.args)
    if op is Op.CONST:
        # A bool constant says so: its type is not implied by the op.
        prefix = "const i1 " if instr.ty is Ty.BOOL else "const "
        body = prefix + format_imm(instr.imm or 0)
    elif op in (Op.PARAM, Op.HASH):
        body = f"{op.value} {instr.imm}" + (f", {args}" if args else "")
    elif op is Op.META:
        body = f"meta {instr.symbol}"
    elif op is Op.PHI:
        assert instr.ty is not None
        pairs = ", ".join(
            f"[{ref(a)}, {label}]" for a, label in zip(instr.args, instr.incoming, strict=True)
        )
        body = f"phi {instr.ty.value} {pairs}"
    elif op is Op.SELECT:
        assert instr.ty is not None
        body = f"select {instr.ty.value} {args}"
    elif instr.symbol is not None:  # memory ops
        body = f"{op.value} @{instr.symbol}" + (f", {args}" if args else "")
    else:
        body = op.value + (f" {args}" if args else "")
    text = body if instr.ty is None else f"{ref(instr)} = {body}"
    if instr.hint:
        text = f"{text:<30} ; {instr.hint}"
    return text


def _term(term: Terminator, ref: Callable[[Instr], str]) -> str:
    if isinstance(term, Br):
        return f"br {ref(term.cond)}, {term.then}, {term.orelse}"
    if isinstance(term, Jump):
        return f"jmp {term.target}"
    assert isinstance(term, Exit)
    parts = ["exit"]
    if term.push:
        parts.append("push(" + ", ".join(ref(v) for v in term.push) + ")")
    if term.steer != "pass" or term.steer_value is not None:
        parts.append(f"steer {term.steer}")
        if term.steer_value is not None:
            parts[-1] += f" {ref(term.steer_value)}"
    if term.chain is not None:
        parts.append(f"chain @{term.chain}")
    if term.drop_code:
        parts.append("drop_code")
    return " ".join(parts)
