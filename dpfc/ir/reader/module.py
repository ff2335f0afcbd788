"""The IR text reader's entry point: the lines outside instructions, and the whole module.

Contract: :func:`parse_ir` reads a whole text (the package's contract, in
:mod:`dpfc.ir.reader`). This module reads the ``module``, ``array`` and ``dpf`` lines, block
labels and closing braces (block structure, DPF5311; unique labels and names,
DPF5306/5307), hands instruction and terminator lines to :mod:`.instructions` and resolves
phi arguments when a function closes (DPF5303 for an argument never defined). It turns the
:class:`~dpfc.ir.reader.tokens.ParseFailure` of any line into the one
:class:`~dpfc.diagnostics.DiagnosticError` the caller sees.

Not responsible for: tokens, integers and types (:mod:`.tokens`), what an instruction or
terminator line says (:mod:`.instructions`).
"""

from __future__ import annotations

from collections.abc import Iterator

from dpfc.catalog import codes
from dpfc.diagnostics import DiagnosticError, Note, SourceFile
from dpfc.ir.core import ArrayDecl, Block, Exit, Function, Module
from dpfc.ir.reader.instructions import (
    TERMINATORS,
    FunctionState,
    read_instr,
    read_terminator,
)
from dpfc.ir.reader.tokens import (
    Line,
    ParseFailure,
    error,
    read_integer,
)

__all__ = ["parse_ir"]


def parse_ir(source: SourceFile) -> Module:
    """Read a module in the printer's text format; raises DiagnosticError (DPF53xx)."""
    try:
        return _Reader(source).module()
    except ParseFailure as failure:
        raise DiagnosticError([failure.diagnostic]) from None


class _Reader:
    def __init__(self, source: SourceFile) -> None:
        self.source = source
        self.text = source.text

    def lines(self) -> Iterator[Line]:
        start = 0
        for raw in self.text.split("\n"):
            cut = raw.find(";")
            code, comment = (raw, None) if cut < 0 else (raw[:cut], raw[cut + 1 :].strip())
            yield Line(self.source, start, code, comment)
            start += len(raw) + 1

    # -- top level ------------------------------------------------------------------------

    def module(self) -> Module:
        module: Module | None = None
        state: FunctionState | None = None
        for line in self.lines():
            if line.empty:
                continue
            if state is not None:
                if line.at("}"):
                    self.close_function(state, line)
                    line.next()
                    line.done()
                    state = None
                else:
                    self.function_line(state, line)
                continue
            if module is None:
                module = self.module_line(line)
            elif line.at("array"):
                self.array_line(module, line)
            elif line.at("dpf"):
                state = self.dpf_line(module, line)
            else:
                line.fail("`array`, `dpf` or a comment")
        if module is None:
            end = self.source.span(len(self.text))
            raise error(codes.IR_SYNTAX, "expected `module NAME` (the IR text is empty)", end)
        if state is not None:
            end = self.source.span(len(self.text.rstrip()))
            raise error(
                codes.IR_BLOCK_STRUCTURE,
                f"expected `}}` to close `@{state.function.name}` before the end of the text",
                end,
                note=Note("the function starts here", state.header),
            )
        return module

    def module_line(self, line: Line) -> Module:
        line.expect("module", " (the IR text starts with `module NAME`)")
        name = line.expect_kind("name", "a module name").text
        app_id = None
        if line.accept("app"):
            app_id = read_integer(line, "the app id")
        line.done()
        return Module(name, app_id)

    def array_line(self, module: Module, line: Line) -> None:
        first = line.next()
        token = line.expect_kind("global", "an array name `@NAME`")
        name = token.text[1:]
        if name in module.arrays:
            raise error(
                codes.IR_DUPLICATE_NAME, f"array `@{name}` is declared twice", line.span(token)
            )
        mapping = line.peek()
        if not (line.accept("direct") or line.accept("segment")):
            line.fail("`direct` or `segment`")
        size = read_integer(line, "the array size")
        signed = line.accept("signed")
        pin = None
        if line.accept("pin"):
            line.expect("(")
            eu = read_integer(line, "an EU number")
            line.expect(",")
            lane = read_integer(line, "a lane number")
            line.expect(")")
            pin = (eu, lane)
        line.done()
        module.arrays[name] = ArrayDecl(
            name, mapping.text, size, pin, signed, line.span_from(first)
        )

    def dpf_line(self, module: Module, line: Line) -> FunctionState:
        first = line.next()
        token = line.expect_kind("global", "a DPF name `@NAME`")
        name = token.text[1:]
        if any(f.name == name for f in module.functions):
            raise error(
                codes.IR_DUPLICATE_NAME, f"DPF `@{name}` is defined twice", line.span(token)
            )
        line.expect("(")
        params = read_integer(line, "the parameter count")
        line.expect(")")
        attrs: dict[str, str] = {}
        while line.peek().kind == "name":
            key = line.next()
            if key.text in attrs:
                raise error(
                    codes.IR_DUPLICATE_NAME,
                    f"attribute `{key.text}` is given twice",
                    line.span(key),
                )
            line.expect("=")
            value = line.peek()
            if value.kind not in ("name", "int"):
                line.fail("an attribute value (a name or an integer)")
            attrs[key.text] = line.next().text
        line.expect("{", " to open the DPF body")
        line.done()
        span = line.span_from(first)
        function = Function(name, params, [], attrs, span)
        module.functions.append(function)
        return FunctionState(function, span)

    def close_function(self, state: FunctionState, line: Line) -> None:
        self.finish_block(state, line)
        for phi, refs in state.phi_args:
            for number, span in refs:
                if number not in state.values:
                    raise error(
                        codes.IR_UNDEFINED_VALUE, f"value `%{number}` is never defined", span
                    )
            phi.args = [state.values[number] for number, _ in refs]

    # -- inside a function ----------------------------------------------------------------

    def function_line(self, state: FunctionState, line: Line) -> None:
        head = line.peek()
        if head.kind == "name" and line.peek(1).text == ":" and line.peek(1).kind == "punct":
            self.label_line(state, line)
            return
        if state.block is None or state.terminated:
            where = (
                "before the first block label"
                if state.block is None
                else f"after the terminator of block `{state.block.label}`"
            )
            raise error(
                codes.IR_BLOCK_STRUCTURE,
                f"{head.describe()} {where} (expected a label `NAME:` or `}}`)",
                line.span(head),
            )
        if head.kind == "name" and head.text in TERMINATORS:
            state.block.term = read_terminator(state, line)
            state.terminated = True
            return
        state.block.instrs.append(read_instr(state, line))

    def label_line(self, state: FunctionState, line: Line) -> None:
        self.finish_block(state, line)
        label = line.next()
        line.next()
        line.done()
        previous = state.labels.get(label.text)
        if previous is not None:
            raise error(
                codes.IR_DUPLICATE_LABEL,
                f"block label `{label.text}` is used twice in `@{state.function.name}`",
                line.span(label),
                note=Note("first used here", previous),
            )
        state.labels[label.text] = line.span(label)
        state.block = Block(label.text, [], Exit())
        state.function.blocks.append(state.block)
        state.terminated = False

    def finish_block(self, state: FunctionState, line: Line) -> None:
        if state.block is not None and not state.terminated:
            raise error(
                codes.IR_BLOCK_STRUCTURE,
                f"block `{state.block.label}` has no terminator (`br`, `jmp` or `exit`)",
                line.span(line.peek()),
                note=Note("the block starts here", state.labels[state.block.label]),
            )
