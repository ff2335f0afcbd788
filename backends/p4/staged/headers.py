"""The headers and metadata of the stage-structured SwitchVM program (code format version 2).

Contract: :func:`header_types` declares every header the parser extracts and the deparser
emits, :func:`headers_struct` the program's header struct in deparse order and
:func:`metadata` its metadata fields. In-packet code sits in fixed fields, one set per
stage (``packet_bundles_per_stage`` is 1 on the profiles this program serves): the bundle
head (tag 0xFB, stage byte, the v1 bytes 0 and 1, pc_taken), the branch part, one selector
per register, the ALU and memory groups and the immediates, each part after its tag
(docs/encoding.md, format version 2); the code is one option, whose end byte and padding
after the last bundle stay payload (:mod:`.parser` says why), so the deparser re-emits it
byte for byte. The EUs' selected copies of the registers are the push headers: the
epilog writes the pushed words into them at the end of the pass, when no EU reads them.
"""

from __future__ import annotations

from dpfc.backends.p4.lang import Header, struct

from .inner import INNER_HEADERS, inner_meta, inner_types
from .plan import StagePlan

BIT = "bit<{}>"


def _h(name: str, fields: list[tuple[str, int]], comment: str = "") -> Header:
    return Header(name, [(f, BIT.format(w)) for f, w in fields], comment)


def slots(plan: StagePlan) -> list[str]:
    """The in-packet bundle slots that hold selectors: the prolog, then each EU."""
    return ["pro"] + [f"eu{k}" for k in range(plan.num_eus)]


def header_types(plan: StagePlan) -> list[Header]:
    half = (plan.lanes + 1) // 2
    nibbles = [(f"op{i}", 4) for i in range(2 * half)]
    return [
        _h("ethernet_t", [("dst", 48), ("src", 48), ("ether_type", 16)]),
        _h(
            "ipv4_t",
            [
                ("version_ihl", 8),
                ("tos", 8),
                ("total_len", 16),
                ("id", 16),
                ("frag", 16),
                ("ttl", 8),
                ("protocol", 8),
                ("checksum", 16),
                ("src", 32),
                ("dst", 32),
            ],
        ),
        _h("udp_t", [("src_port", 16), ("dst_port", 16), ("len", 16), ("checksum", 16)]),
        _h(
            "geneve_t",
            [
                # Ver (2 bits, 0) and Opt Len (6) as one byte: an action adds to whole bytes
                # only (a Tofino ALU writes a whole container), and Ver is 0
                ("ver_opt_len", 8),
                ("o", 1),
                ("c", 1),
                ("rsvd", 6),
                ("proto", 16),
                ("vni", 24),
                ("rsvd2", 8),
            ],
        ),
        _h(
            "sv_header_t",
            [
                ("cls", 16),
                ("type", 8),
                ("r", 3),
                ("len", 5),
                ("version", 4),
                ("flags", 4),
                ("gas", 8),
                ("depth", 8),
                ("n_code", 4),
                ("n_stack", 4),
                ("app_id", 32),
                ("dpf_ptr", 16),
                ("egress_ptr", 16),
            ],
            "The header option (docs/encoding.md §2.1) with its option header.",
        ),
        # R (3 bits, 0) and Length (5) as one byte, for the same reason as Geneve's Opt Len
        _h("option_t", [("cls", 16), ("type", 8), ("r_len", 8)]),
        _h("word_t", [("w", 32)], "A stack entry, or a register's selected copy or push."),
        *(_h(f"words{c}_t", [("w", 32 * c)]) for c in (1, 2, 4, 8, 16, 32)),
        _h(
            "head_t",
            [
                ("tag", 8),
                ("stage", 8),
                ("ctrl", 4),
                ("n_imm", 2),
                ("has_alu", 1),
                ("has_mem", 1),
                ("n_sel", 5),
                ("rsvd", 3),
                ("pct", 16),
            ],
            "A bundle's start: tag 0xFB, stage << 3, v1 bytes 0 and 1, pc_taken.",
        ),
        _h("branch_t", [("x", 8), ("y", 8), ("pcn", 16)]),
        _h("selector_t", [("dest", 5), ("kind", 3), ("operand", 8)]),
        _h("group_t", [("tag", 8), *nibbles], "An ALU or memory group: one opcode per lane."),
        _h("immediate_t", [("tag", 8), ("v", 32)]),
        _h(
            "epilog_t",
            [
                ("tag", 8),
                ("stage", 8),
                ("n_push", 5),
                ("steer", 3),
                ("hdr_mod", 1),
                ("steer_src", 1),
                ("next_src", 2),
                ("rsvd", 4),
            ],
        ),
        _h("reg_byte_t", [("r", 8)], "A register code byte (a push)."),
        _h("tag16_t", [("tag", 8), ("v", 16)]),
        _h("tag8_t", [("tag", 8), ("v", 8)]),
        *(inner_types() if plan.header_fields else []),
    ]


CODE_END = (
    ("code_end", "reg_byte_t"),
    ("code_pad1", "reg_byte_t"),
    ("code_pad2", "tag8_t"),
    ("code_pad3", "tag16_t"),
)


def header_bytes(plan: StagePlan) -> dict[str, int]:
    """The size of each fixed-size header type, in bytes."""
    out = {}
    for header in header_types(plan):
        if any(kind.startswith("varbit") for _, kind in header.fields):
            continue
        bits = sum(int(kind[4:-1]) for _, kind in header.fields)
        out[header.name] = bits // 8
    return out


def instances(plan: StagePlan, slot: str) -> list[str]:
    """The header instances the parser fills for a bundle slot (``pro``, ``eu<k>``, ``ep``):
    the slot's own with one in-packet bundle per stage, else ``<slot>_<i>`` per bundle."""
    if plan.packet_bundles == 1:
        return [slot]
    return [f"{slot}_{i}" for i in range(plan.packet_bundles)]


def bundle_fields(plan: StagePlan, slot: str, instance: str = "") -> list[tuple[str, str]]:
    """The fields of one bundle slot (named for ``instance``, default the slot), in
    deparse order."""
    if slot == "ep":
        return epilog_fields(plan, instance or slot)
    at = instance or slot
    out = [(f"{at}_head", "head_t")]
    if slot != "pro":
        out.append((f"{at}_br", "branch_t"))
    out += [(f"{at}_sel_{r}", "selector_t") for r in plan.registers]
    if slot != "pro":
        out += [(f"{at}_alu", "group_t"), (f"{at}_mem", "group_t")]
        out += [(f"{at}_imm0", "immediate_t"), (f"{at}_imm1", "immediate_t")]
    return out


def epilog_fields(plan: StagePlan, at: str = "ep") -> list[tuple[str, str]]:
    out = [(f"{at}_head", "epilog_t")]
    out += [(f"{at}_push{j}", "reg_byte_t") for j in range(2 * plan.lanes)]
    out += [(f"{at}_steer_imm", "tag16_t"), (f"{at}_steer_reg", "tag8_t")]
    out += [(f"{at}_next_pc", "tag16_t"), (f"{at}_next_reg", "tag8_t")]
    return out


def stack_chunks(plan: StagePlan, stack_depth: int) -> list[int]:
    """The chunk sizes (words) below the top single words, largest first (:mod:`.parser`)."""
    rest = stack_depth - min(stack_depth, 2 * plan.lanes)
    return [1 << k for k in reversed(range(rest.bit_length()))]


def headers_struct(plan: StagePlan, stack_depth: int) -> Header:
    fields = [
        ("ethernet", "ethernet_t"),
        ("ipv4", "ipv4_t"),
        ("udp", "udp_t"),
        ("geneve", "geneve_t"),
        ("sv", "sv_header_t"),
        ("stack_opt", "option_t"),
        ("push", f"word_t[{2 * plan.lanes}]"),
        ("stack", f"word_t[{min(stack_depth, 2 * plan.lanes)}]"),
        *((f"stack_chunk{c}", f"words{c}_t") for c in stack_chunks(plan, stack_depth)),
        ("code_opt", "option_t"),
    ]
    for slot in [*slots(plan), "ep"]:  # the packet's bundles, in their order
        for instance in instances(plan, slot):
            fields += bundle_fields(plan, slot, instance)
    if plan.cut_code:  # the code's end byte and padding (1..3 bytes), cut with the code
        fields += [(name, kind) for name, kind in CODE_END]
    if plan.header_fields:  # the tenant's frame, emitted as it came (:mod:`.inner`)
        fields += list(INNER_HEADERS)
    if plan.packet_bundles > 1:  # the copies the units read (never emitted)
        for slot in [*slots(plan), "ep"]:
            fields += bundle_fields(plan, slot)
    return struct("headers_t", fields)


def metadata(plan: StagePlan, sources: int) -> list[tuple[str, str]]:
    """The metadata fields: registers, prolog sources, the EUs' scratch, the PCs."""
    regs = plan.registers
    out = [(f"r_{r}", "bit<32>") for r in regs]
    out += [(f"pop{j}", "bit<32>") for j in range(2 * plan.lanes)]
    out += [(f"md{m}", "bit<32>") for m in range(sources)] + [("rnd0", "bit<32>")]
    out += [("rnd1", "bit<32>"), ("slot", "bit<10>"), ("ppc", "bit<16>"), ("epc", "bit<16>")]
    out += [("sval", "bit<16>"), ("steer", "bit<8>"), ("nsrc", "bit<8>"), ("npops", "bit<8>")]
    out += [("npush", "bit<8>"), ("perm", "bit<8>")]
    if plan.cut_code:  # HDR_MOD, and the code's bytes the parser counts to reach its padding
        out += [("cut", "bit<8>"), ("code_bytes", "bit<16>")]
    if plan.header_fields:
        out += inner_meta()
    if plan.next_from_register:  # the register NEXT_PC reads, its code + 1 (0: none)
        out += [("nreg", "bit<8>")]
    if plan.cut_code:  # the epilog set the pass's pointer (HDR_MOD keeps it)
        out += [("next_set", "bit<1>")]
    for i in range(plan.lanes):
        out += [(f"daddr{i}", "bit<16>"), (f"saddr{i}", "bit<16>")]
        out += [(f"dok{i}", "bit<8>"), (f"sok{i}", "bit<8>")]
        out += [(f"alu{i}", "bit<8>"), (f"mem{i}", "bit<8>")]
    out += [("xr", "bit<32>"), ("an", "bit<32>"), ("dd", "bit<32>"), ("rev", "bit<8>")]
    out += [("ci0", "bit<32>"), ("ci1", "bit<32>")]
    out += [("ctrl", "bit<8>"), ("pct", "bit<16>"), ("pcn", "bit<16>"), ("halt", "bit<8>")]
    out += [("hint_t", "bit<8>"), ("hint_n", "bit<8>")]
    out += [(f"pc{k}", "bit<16>") for k in range(plan.num_eus + 1)]
    return out
