"""The IR text reader: the inverse of :mod:`dpfc.ir.printer` (``dpfc opt`` and the tests).

Contract: ``parse_ir(source)`` turns the text :func:`~dpfc.ir.printer.format_module` writes
into a :class:`~dpfc.ir.core.Module` whose printed form is that same text again
(``format_module(parse_ir(text)) == text`` for printer output). Malformed text raises
:class:`~dpfc.diagnostics.DiagnosticError` with one DPF53xx diagnostic at the offending
token; nothing else escapes. The reader checks what the text alone decides (syntax, op
names, operand counts, value numbering, labels unique); the invariants of the IR itself
(types, successors, dominance, the RMT rule) are :mod:`dpfc.ir.verify`'s.

The format is line-oriented, so the reader is a hand-written tokenizer plus one small
recursive-descent routine per line kind (docs/ir.md has the grammar)::

    module NAME [app INT]
    array @NAME (direct|segment) INT [signed] [pin(INT, INT)]
    dpf @NAME(INT) [KEY=VALUE ...] {
    LABEL:
      %N = OP OPERANDS              ; hint (the source name)
      store @ARRAY, %I, %V
      br %C, LABEL, LABEL  |  jmp LABEL  |  exit [push(...)] [steer NAME [%V]] [chain @NAME] [drop_code]
    }

Values are ``%N``; a value must be defined on an earlier line of the same function, except
the arguments of a ``phi`` (they may come from blocks printed later). ``; text`` is a
comment; on an instruction line it is the instruction's hint.

The modules follow the line kinds: :mod:`.tokens` (the tokenizer and cursor over one line,
the integer and type readers, the error value), :mod:`.instructions` (instruction and
terminator lines) and :mod:`.module` (the entry point: ``module``, ``array`` and ``dpf``
lines, labels, braces, phi resolution).
"""

from dpfc.ir.reader.module import parse_ir

__all__ = ["parse_ir"]
