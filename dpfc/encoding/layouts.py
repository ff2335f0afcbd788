"""The byte layouts of the SwitchVM options and the in-packet code, as tables (data).

Contract: every fixed-size part of the formats of docs/encoding.md §2 is one
:class:`~dpfc.encoding.bitfields.ByteLayout` here, its fields most significant first with their
widths; the Python encoders and decoders (:mod:`dpfc.encoding.code`,
:mod:`dpfc.encoding.header`) and the P4 back end's generated decoder take every position
and width from these tables, and so do the limits derived below (:data:`OPTION_DATA_MAX`).
A row is ``(name, width)`` or ``(name, width, what)``; ``what`` is what a decoder names when
the row's bytes are missing (the layout's name by default); a field named ``reserved`` must
be 0.

The variable-length parts are repetitions of these layouts: a bundle holds ``n_sel``
:data:`SELECTOR` s, an :func:`op_group` per present op group, :func:`imm_group`; an epilog
``n_push`` :data:`REGISTER_BYTE` s, then its steering value and NEXT_PC.

Not responsible for what the values mean (the codecs) nor for the in-switch words, whose
layout depends on the profile (:func:`dpfc.encoding.words.slot_layout`).
"""

from __future__ import annotations

from functools import lru_cache

from dpfc.encoding.bitfields import ByteLayout

# -- the SwitchVM Geneve options (docs/encoding.md §2) -------------------------------------------

OPTION_HEAD = ByteLayout.of(
    "Geneve option header",
    ("option_class", 16, "option class"),
    ("option_type", 8, "option type"),
    ("reserved", 3, "option length"),
    ("length", 5, "option length"),  # data bytes / OPTION_WORD_BYTES
)
OPTION_WORD_BYTES = 4  # the unit of a Geneve length: 4-byte words (RFC 8926)
OPTION_DATA_WORDS = OPTION_HEAD.field("length").mask  # 31: the most words one option holds
OPTION_DATA_MAX = OPTION_DATA_WORDS * OPTION_WORD_BYTES  # 124 data bytes
OPTIONS_MAX = 252  # all options of a Geneve header: its Opt Len is 6 bits of 4-byte words

HEADER_OPTION = ByteLayout.of(
    "SwitchVM header option",
    ("version", 4),
    ("flags", 4),
    ("gas", 8),
    ("stack_depth", 8),
    ("n_code_opts", 4),
    ("n_stack_opts", 4),
    ("app_id", 32),
    ("dpf_ptr", 16),  # a PC_FORMAT, or PTR_NONE
    ("egress_ptr", 16),
)

STACK_ENTRY = ByteLayout.of("stack entry", ("value", 32))
STACK_ENTRIES_PER_OPTION = OPTION_DATA_MAX // STACK_ENTRY.size

# -- PCs and operand bytes (docs/encoding.md §2.2, §2.4) -----------------------------------------

PC_FORMAT = ByteLayout.of("PC", ("in_packet", 1), ("index", 15))

# A branch operand: a register code (immediate 0), or immediate slot ``index`` (immediate 1).
OPERAND = ByteLayout.of("operand", ("immediate", 1), ("index", 7))
# A register operand byte: a 5-bit register code (class bit 4, lane in bits 3..0).
REGISTER_BYTE = ByteLayout.of("register", ("reserved", 3), ("register", 5))

# -- the code options: blocks of bundles (docs/encoding.md §2.2) ----------------------------------

CODE_OPTION_HEAD = ByteLayout.of("code option", ("n_blocks", 8, "block count"))
BLOCK_HEAD = ByteLayout.of("block header", ("stage", 5), ("count_minus_one", 3))

# -- prolog and EU bundles --------------------------------------------------------------------------

BUNDLE_HEAD = ByteLayout.of(
    "bundle header",
    ("ctrl_op", 4),
    ("n_imm", 2),
    ("has_alu", 1),
    ("has_mem", 1),
    ("n_sel", 5),
    ("reserved", 3),
    ("pc_taken", 16, "pc_taken"),
)
# follows the header of a bundle whose ctrl_op is conditional
BRANCH = ByteLayout.of(
    "branch",
    ("x", 8, "branch operand x"),  # an OPERAND
    ("y", 8, "branch operand y"),
    ("pc_not_taken", 16, "pc_not_taken"),
)
SELECTOR = ByteLayout.of(
    "selector",
    ("dest", 5),  # a register code
    ("kind", 3),
    ("operand", 8, "selector operand"),
)
OPCODE_BITS = 4  # an ALU or memory opcode in an op group
IMMEDIATE = ByteLayout.of("immediate", ("value", 32))


@lru_cache(maxsize=64)
def op_group(lanes: int) -> ByteLayout:
    """An ALU or memory op group of ``lanes`` lanes: one opcode per lane (``lane_0`` first, in
    the high nibble), padded with a reserved field to whole bytes."""
    rows: list[tuple[str, int]] = [(f"lane_{lane}", OPCODE_BITS) for lane in range(lanes)]
    padding = -lanes * OPCODE_BITS % 8
    if padding:
        rows.append(("reserved", padding))
    return ByteLayout.of("op group", *rows)


@lru_cache(maxsize=64)
def imm_group(count: int) -> ByteLayout:
    """The immediates of a bundle: ``imm_0`` .. ``imm_{count-1}``, IMMEDIATE each."""
    width = 8 * IMMEDIATE.size
    return ByteLayout.of("immediates", *((f"imm_{k}", width, "immediate") for k in range(count)))


# -- epilog bundles ---------------------------------------------------------------------------------

EPILOG_HEAD = ByteLayout.of(
    "epilog header",
    ("n_push", 5),
    ("steer_action", 3),
    ("hdr_mod", 1),
    ("steer_src", 1),  # 0: an immediate STEER_IMMEDIATE follows, 1: a REGISTER_BYTE
    ("next_pc_src", 2),  # NEXT_PC_NONE, NEXT_PC_IMM (a PC_FORMAT follows), NEXT_PC_REG
    ("reserved", 4),
)
STEER_IMMEDIATE = ByteLayout.of("steering value", ("value", 16))
NEXT_PC_NONE, NEXT_PC_IMM, NEXT_PC_REG = 0, 1, 2  # the values of next_pc_src

# -- format version 2: the same parts, each announced by a tag (docs/encoding.md §9) -----------
# A code option's data is a sequence of bundles, each opened by a BUNDLE_START, then 0..3
# padding bytes TAG_PADDING; the last code option of a packet ends with 1..4 bytes instead,
# the first its TAG_END (the code's end byte, where a parser stops), the rest padding. Inside a bundle every optional part after the selectors (or,
# in an epilog, after the pushes) starts with a PART_TAG. The tags that may follow a
# selector are 0xF8..0xFF (top five bits 0x1F), which no selector's first byte has (dest:5
# is at most 0x1E, profile.TAGGED_MAX_LANES); the epilog's 0xF4..0xF7 follow register
# bytes (< 0x20).
BUNDLE_START = ByteLayout.of("bundle start", ("tag", 8), ("stage", 5), ("reserved", 3))
PART_TAG = ByteLayout.of("part tag", ("tag", 8))
TAG_BUNDLE = 0xFB
TAG_ALU = 0xF8
TAG_MEM = 0xF9
TAG_IMMEDIATES = (0xFA, 0xFC, 0xFD)  # immediate slot j's tag
TAG_STEER_IMM, TAG_STEER_REG = 0xF6, 0xF7  # steer_src 0, 1
TAG_NEXT_PC_IMM, TAG_NEXT_PC_REG = 0xF4, 0xF5  # next_pc_src NEXT_PC_IMM, NEXT_PC_REG
TAG_PADDING = 0xFF
TAG_END = 0xFF  # the code's end byte: the first byte after the last bundle

# Every fixed layout, for tests and documentation (the functions above make the others).
TABLES: tuple[ByteLayout, ...] = (
    OPTION_HEAD,
    HEADER_OPTION,
    STACK_ENTRY,
    PC_FORMAT,
    OPERAND,
    REGISTER_BYTE,
    CODE_OPTION_HEAD,
    BLOCK_HEAD,
    BUNDLE_HEAD,
    BRANCH,
    SELECTOR,
    IMMEDIATE,
    EPILOG_HEAD,
    STEER_IMMEDIATE,
)
# The fixed layouts format version 2 adds.
TAGGED_TABLES: tuple[ByteLayout, ...] = (BUNDLE_START, PART_TAG)
