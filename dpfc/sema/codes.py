"""The diagnostic codes of the checker: DPF51xx (names and types), DPF52xx (rules).

One row each in docs/language.md, section "Diagnostics"; one must-fail program each in
tests/errors/1NN_*.dpf.
"""

from __future__ import annotations


class Code:
    # -- names, modules, types (DPF51xx) -------------------------------------------------
    UNKNOWN_NAME = "DPF5101"
    DUPLICATE = "DPF5102"
    MODULE_NOT_FOUND = "DPF5103"
    IMPORT_CYCLE = "DPF5104"
    UNKNOWN_MODULE = "DPF5105"
    NO_SUCH_ITEM = "DPF5106"
    WRONG_KIND = "DPF5107"
    TYPE_MISMATCH = "DPF5108"
    OPERAND_TYPE = "DPF5109"
    ARITH_SHIFT = "DPF5110"
    NOT_CONSTANT = "DPF5111"
    CONST_OVERFLOW = "DPF5112"
    MUL_NEEDS_CONSTANT = "DPF5113"
    UNKNOWN_FUNCTION = "DPF5114"
    ARITY = "DPF5115"
    FETCH_TARGET = "DPF5116"
    HASH_LANE = "DPF5117"
    UNKNOWN_META = "DPF5118"
    ASSIGN_NOT_LOCAL = "DPF5119"
    ASSIGN_UNDECLARED = "DPF5120"
    CONST_CYCLE = "DPF5121"
    NOT_CALLABLE = "DPF5122"
    DUPLICATE_MODULE = "DPF5123"
    DUPLICATE_APP = "DPF5124"
    MEMORY_TYPE = "DPF5125"
    # -- rules (DPF52xx) -------------------------------------------------------------------
    RMT = "DPF5201"
    STEER_TWICE = "DPF5202"
    DROP_CODE_TWICE = "DPF5203"
    CHAIN_TWICE = "DPF5204"
    CHAIN_UNKNOWN = "DPF5205"
    CHAIN_CYCLE = "DPF5206"
    LOOP_NOT_CONSTANT = "DPF5207"
    LOOP_TOO_LONG = "DPF5208"
    STACK_DEPTH = "DPF5209"
    TOO_MANY_PUSHES = "DPF5210"
    UNKNOWN_ATTRIBUTE = "DPF5211"
    UNKNOWN_TARGET = "DPF5212"
    ATTRIBUTE_ARGS = "DPF5213"
    PLACEMENT = "DPF5214"
    CONFLICTING_ATTRIBUTES = "DPF5215"
    PIN_RANGE = "DPF5216"
    MEMORY_SIZE = "DPF5217"
    UNREACHABLE = "DPF5218"
    UNROLL_BUDGET = "DPF5219"
    TARGETS_DISAGREE = "DPF5220"
    BINDING_CONFLICT = "DPF5221"
    EGRESS_STEERING = "DPF5222"
    CHAIN_PIPELINE = "DPF5223"
    ARRAY_PIPELINES = "DPF5224"
    PROLOG_REGISTERS = "DPF5225"


ALL_CODES: frozenset[str] = frozenset(
    value for key, value in vars(Code).items() if not key.startswith("_") and isinstance(value, str)
)
