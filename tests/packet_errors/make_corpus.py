"""Generate the malformed-packet corpus read by ``tests/test_packet_errors.py``.

Every case starts from a *valid* SwitchVM frame (an example DPF of ``examples/asm`` built
with :func:`dpfc.packet.build.build_packet`) and applies one targeted mutation, described
in :func:`cases`. Run::

    python tests/packet_errors/make_corpus.py          # rewrites every NNN_name.hex
    DPFC_BLESS=1 pytest tests/test_packet_errors.py    # rewrites every NNN_name.expected

and read both diffs before committing. The test also checks that the committed ``.hex``
files are exactly what this script generates.

``NNN_name.hex`` holds comment lines ``# key: value`` -- ``case``, ``mutation`` (what was
changed, with decimal byte offsets into the frame), ``expect`` (the diagnostic code the
mutation is meant to trigger), ``target`` (a built-in profile, or a ``.toml`` profile in
this directory) and ``input`` (``packet``: a whole frame; ``options``: a bare Geneve
options area, for the two errors a frame cannot carry) -- then the bytes, 16 per line,
each line led by the decimal offset of its first byte so that the "at byte N" of an
error message is easy to find. ``NNN_name.expected`` is the exact line that
``dpfc disasm --input KIND --target TARGET FILE.bin`` prints on stderr.

Frame layout of the cache_get base (stack ``0x1234``, tenant 1)::

    0 Ethernet | 14 IPv4 | 34 UDP | 42 Geneve | 50 header option (data at 54)
    66 code option (data at 70; bundles listed by ``Layout``) | 158 stack option | 166 inner
"""

from __future__ import annotations

import struct
import sys
from dataclasses import dataclass
from pathlib import Path

from dpfc.asm import assemble_text
from dpfc.encoding import OPTION_CLASS, SwitchVMHeader, encode_options
from dpfc.packet.build import PacketSpec, build_packet
from dpfc.packet.layers import build_inner
from dpfc.target import TargetProfile, load_profile

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
ETH, IP, UDP, GENEVE, OPTIONS = 0, 14, 34, 42, 50
PAYLOAD = b"SwitchVM"


# -- building blocks ---------------------------------------------------------------------
def _checksum(data: bytes) -> int:
    if len(data) % 2:
        data += b"\0"
    total: int = sum(struct.unpack(f"!{len(data) // 2}H", data))
    while total > 0xFFFF:
        total = (total & 0xFFFF) + (total >> 16)
    return ~total & 0xFFFF


def frame_of(options: bytes, inner: bytes, tenant: int = 1) -> bytes:
    """Ethernet/IPv4/UDP(6081)/Geneve around an options area, with correct lengths and
    checksums: byte-identical to :func:`dpfc.packet.layers.build_frame` for valid options
    (checked in :func:`base`), and it also wraps option areas scapy would not rebuild."""
    geneve = bytes([len(options) // 4, 0, 0x65, 0x58]) + tenant.to_bytes(3, "big") + b"\0"
    udp_length = 8 + len(geneve) + len(options) + len(inner)
    src, dst = bytes([10, 0, 0, 1]), bytes([10, 0, 0, 2])
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + udp_length, 1, 0, 64, 17, 0, src, dst)
    ip = ip[:10] + _checksum(ip).to_bytes(2, "big") + ip[12:]
    body = geneve + options + inner
    pseudo = src + dst + struct.pack("!BBH", 0, 17, udp_length)
    udp = struct.pack("!HHHH", 50000, 6081, udp_length, 0)
    udp_sum = _checksum(pseudo + udp + body) or 0xFFFF
    udp = udp[:6] + udp_sum.to_bytes(2, "big")
    eth = bytes.fromhex("0200000000020200000000010800")
    return eth + ip + udp + body


def option(opt_type: int, data: bytes, opt_class: int = OPTION_CLASS, reserved: int = 0) -> bytes:
    """One Geneve option; ``data`` is padded with zeros to whole 4-byte words."""
    data += bytes(-len(data) % 4)
    return opt_class.to_bytes(2, "big") + bytes([opt_type, (reserved << 5) | len(data) // 4]) + data


def header_data(
    *,
    depth: int,
    n_code: int,
    n_stack: int,
    app_id: int = 0x4B5601,
    dpf: int = 0x8000,
    version: int = 1,
    gas: int = 8,
) -> bytes:
    """The 12 data bytes of a SwitchVM header option."""
    return (
        bytes([(version << 4), gas, depth, (n_code << 4) | n_stack])
        + app_id.to_bytes(4, "big")
        + dpf.to_bytes(2, "big")
        + b"\xff\xff"
    )


def stack_data(*values: int) -> bytes:
    return b"".join(v.to_bytes(4, "big") for v in values)


def patch(data: bytes, offset: int, new: bytes | int) -> bytes:
    chunk = bytes([new]) if isinstance(new, int) else new
    return data[:offset] + chunk + data[offset + len(chunk) :]


def insert(data: bytes, offset: int, new: bytes) -> bytes:
    return data[:offset] + new + data[offset:]


def fix_lengths(frame: bytes) -> bytes:
    """Make the IPv4 total length and UDP length match a (truncated) frame."""
    if len(frame) >= IP + 4:
        frame = patch(frame, IP + 2, (len(frame) - IP).to_bytes(2, "big"))
    if len(frame) >= UDP + 6:
        frame = patch(frame, UDP + 4, (len(frame) - UDP).to_bytes(2, "big"))
    return frame


@dataclass(frozen=True)
class Base:
    """A valid packet of an example DPF and where its pieces are."""

    name: str
    profile: TargetProfile
    header: SwitchVMHeader
    frame: bytes
    inner: bytes
    options: bytes  # the whole SwitchVM options area
    code: bytes  # data of the (single) code option
    bundles: dict[tuple[int, int], int]  # (stage, index) -> offset in ``code``

    @property
    def code_at(self) -> int:
        """Frame offset of the code option's data."""
        return OPTIONS + 16 + 4

    def bundle_at(self, stage: int, index: int = 0) -> int:
        """Frame offset of a bundle (stage 0 prolog, k+1 = EU k, 31 epilog)."""
        return self.code_at + self.bundles[(stage, index)]

    def with_code(self, code: bytes, *, n_code: int = 1) -> bytes:
        """The frame with other code-option data (the header still announces ``n_code``)."""
        stack = self.header.stack
        return frame_of(
            option(1, header_data(depth=len(stack), n_code=n_code, n_stack=1 if stack else 0))
            + option(2, code)
            + (option(3, stack_data(*stack)) if stack else b""),
            self.inner,
        )


def base(name: str, stack: tuple[int, ...] = (0x1234,), target: str | None = None) -> Base:
    profile = load_profile(target) if target is not None else None
    text = (ROOT / "examples" / "asm" / f"{name}.dpfasm").read_text(encoding="utf-8")
    program = assemble_text(text, f"{name}.dpfasm", profile)
    header = program.header(stack)
    built = build_packet(PacketSpec(1, header, PAYLOAD), program.profile)
    encoded = encode_options(header, program.profile)
    assert encoded.code_options == 1, "the corpus bases have one code option"
    inner = build_inner(PAYLOAD)
    assert frame_of(encoded.data, inner) == built.frame, "frame_of must match build_frame"
    code = encoded.data[20 : 20 + encoded.code_bytes - 4]
    bundles: dict[tuple[int, int], int] = {}
    sizes = {(stage, index): size for stage, index, size in encoded.bundle_sizes}
    position = 1  # after the block count
    for stage, stage_bundles in header.code.stages():
        if stage_bundles:
            position += 1  # block header
        for index in range(len(stage_bundles)):
            bundles[(stage, index)] = position
            position += sizes[(stage, index)]
    return Base(name, program.profile, header, built.frame, inner, encoded.data, code, bundles)


# -- the corpus --------------------------------------------------------------------------
@dataclass(frozen=True)
class Case:
    name: str
    mutation: str
    expect: str  # the diagnostic code the mutation is meant to trigger
    data: bytes
    target: str = "tofino1"
    input: str = "packet"


LANES3_ASM = """\
.dpf lanes3
.placement packet
prolog entry:
    POP A0
    JMP work
eu0 work:
    LOAD_IMM B0, 5
    ADD A0, B0
    HALT out
epilog out:
    PUSH A0
"""


def cases() -> list[Case]:
    """Every malformed packet of the corpus, in file order."""
    cg = base("cache_get")
    lb3 = base("lb3_client")
    f = cg.frame
    code = cg.code
    out: list[Case] = []

    def add(name: str, mutation: str, expect: str, data: bytes, **kw: str) -> None:
        out.append(Case(name, mutation, expect, data, **kw))

    # Truncation, layer by layer (IPv4/UDP lengths left as they were, unless "fixed").
    add(
        "truncated_ethernet", "frame cut to 10 bytes, inside the Ethernet source", "DPF3002", f[:10]
    )
    add("truncated_ethertype", "frame cut to 13 bytes, inside the EtherType", "DPF3002", f[:13])
    add(
        "truncated_ipv4_header",
        "frame cut to 30 bytes, before the IPv4 destination",
        "DPF3002",
        f[:30],
    )
    add(
        "truncated_udp_header",
        "frame cut to 38 bytes, inside the UDP header (a short capture)",
        "DPF3063",
        f[:38],
    )
    add(
        "truncated_udp_lengths_fixed",
        "frame cut to 38 bytes and the IPv4 total length set to the 24 bytes left",
        "DPF3063",
        fix_lengths(f[:38]),
    )
    add(
        "truncated_geneve_header",
        "frame cut to 46 bytes, inside the Geneve header; IPv4 and UDP lengths fixed",
        "DPF3066",
        fix_lengths(f[:46]),
    )
    add(
        "truncated_option_header",
        "frame cut to 52 bytes, inside the header option's Geneve option header; "
        "IPv4 and UDP lengths fixed",
        "DPF3068",
        fix_lengths(f[:52]),
    )
    add(
        "truncated_option_data",
        "options area ends 40 bytes into the code option's 88 data bytes (Geneve opt len "
        "and IPv4/UDP lengths consistent with it, no stack option)",
        "DPF3002",
        frame_of(cg.options[: 16 + 4 + 40], cg.inner),
    )
    add(
        "truncated_bundle",
        "code option shortened to 12 data bytes: the EU0 bundle (data byte 9) loses its "
        "pc_taken's second byte",
        "DPF3002",
        cg.with_code(code[:12]),
    )
    add(
        "truncated_immediate",
        "lb3_client's code option shortened to 24 data bytes: 3 of the 4 bytes of the "
        "EU0 bundle's immediate (data byte 21) remain",
        "DPF3002",
        lb3.with_code(lb3.code[:24]),
    )

    # Outer headers.
    add(
        "wrong_ethertype",
        "EtherType (byte 12) 0x0800 -> 0x86dd (IPv6)",
        "DPF3060",
        patch(f, 12, b"\x86\xdd"),
    )
    add(
        "vlan_not_ipv4",
        "802.1Q tag inserted at byte 12 whose inner EtherType is 0x0806 (ARP)",
        "DPF3060",
        insert(patch(f, 12, b"\x08\x06"), 12, b"\x81\x00\x00\x07"),
    )
    add("ip_version_6", "IP version nibble (byte 14) 4 -> 6", "DPF3061", patch(f, IP, 0x65))
    add("ipv4_ihl_below_5", "IPv4 IHL (byte 14) 5 -> 4 words", "DPF3062", patch(f, IP, 0x44))
    add(
        "ipv4_total_length_past_frame",
        f"IPv4 total length (byte 16) {len(f) - IP} -> {len(f) - IP + 1}, one byte more "
        "than the frame holds",
        "DPF3063",
        patch(f, IP + 2, (len(f) - IP + 1).to_bytes(2, "big")),
    )
    add("ipv4_not_udp", "IPv4 protocol (byte 23) 17 -> 6 (TCP)", "DPF3064", patch(f, IP + 9, 6))
    add(
        "udp_other_port",
        "UDP destination port (byte 36) 6081 -> 4789 (VXLAN)",
        "DPF3065",
        patch(f, UDP + 2, (4789).to_bytes(2, "big")),
    )
    add(
        "udp_length_past_ipv4",
        f"UDP length (byte 38) {len(f) - UDP} -> {len(f) - UDP + 4}, past the end of the "
        "IPv4 packet",
        "DPF3066",
        patch(f, UDP + 4, (len(f) - UDP + 4).to_bytes(2, "big")),
    )
    add(
        "udp_length_too_small",
        f"UDP length (byte 38) {len(f) - UDP} -> 12, too short for the Geneve header",
        "DPF3066",
        patch(f, UDP + 4, (12).to_bytes(2, "big")),
    )
    add(
        "geneve_version_1",
        "Geneve version (byte 42, top 2 bits) 0 -> 1",
        "DPF3067",
        patch(f, GENEVE, 0x40 | f[GENEVE]),
    )
    add(
        "geneve_opt_len_past_payload",
        f"Geneve opt len (byte 42) {f[GENEVE]} -> 63 words (252 bytes) in a "
        f"{len(f) - GENEVE}-byte Geneve packet",
        "DPF3068",
        patch(f, GENEVE, 63),
    )

    # Geneve options and the SwitchVM header option (at byte 50, data at 54).
    add(
        "option_reserved_bits",
        "reserved bits of the header option's length byte (byte 53) set: 0x03 -> 0x23",
        "DPF3030",
        patch(f, OPTIONS + 3, 0x23),
    )
    add(
        "no_switchvm_option",
        "a bare options area holding only an option of class 0x0102 (input: options)",
        "DPF3032",
        option(0x01, b"\x00" * 4, opt_class=0x0102),
        input="options",
    )
    add(
        "options_area_over_252",
        "a bare options area of 256 bytes: the valid cache_get options plus a 140-byte "
        "option of class 0x0102 (input: options)",
        "DPF3031",
        cg.options
        + option(0x01, b"\x00" * 120, opt_class=0x0102)
        + option(0x02, b"\x00" * 16, opt_class=0x0102),
        input="options",
    )
    add(
        "header_option_wrong_length",
        "header option with 16 data bytes (4 zero bytes appended, length byte 53: 3 -> 4)",
        "DPF3034",
        frame_of(
            option(1, cg.options[4:16] + b"\0\0\0\0") + cg.options[16:],
            cg.inner,
        ),
    )
    add(
        "unknown_format_version",
        "format version nibble (byte 54) 1 -> 2",
        "DPF3035",
        patch(f, 54, 0x20),
    )
    add(
        "header_option_not_first",
        "code option moved before the header option",
        "DPF3033",
        frame_of(cg.options[16:108] + cg.options[:16] + cg.options[108:], cg.inner),
    )
    add(
        "code_count_disagrees",
        "header announces 2 code options (byte 57: 0x11 -> 0x21), 1 present",
        "DPF3037",
        patch(f, 57, 0x21),
    )
    add(
        "stack_count_disagrees",
        "header announces 0 stack options (byte 57: 0x11 -> 0x10), 1 present",
        "DPF3037",
        patch(f, 57, 0x10),
    )
    add(
        "options_out_of_order",
        "stack option moved before the code option",
        "DPF3037",
        frame_of(cg.options[:16] + cg.options[108:] + cg.options[16:108], cg.inner),
    )
    add(
        "stack_depth_over_16",
        "17 stack entries with a matching depth byte (byte 56) on tofino1 (limit 16)",
        "DPF3036",
        frame_of(
            option(1, header_data(depth=17, n_code=1, n_stack=1))
            + cg.options[16:108]
            + option(3, stack_data(*range(17))),
            cg.inner,
        ),
    )
    add(
        "stack_depth_disagrees",
        "stack depth (byte 56) 1 -> 2 with one entry in the stack option",
        "DPF3038",
        patch(f, 56, 2),
    )

    # Code option structure (data at byte 70).
    c = cg.code_at
    add("code_option_no_blocks", "block count (byte 70) 6 -> 0", "DPF3020", patch(f, c, 0))
    add(
        "blocks_out_of_stage_order",
        "EU1 block header (byte 85) stage 2 -> 0: a prolog block after the EU0 block",
        "DPF3021",
        patch(f, c + 15, 0x00),
    )
    add(
        "eu4_on_tofino1",
        "EU3 block header (byte 129) stage 4 -> 5: code for EU4 on a 4-EU target",
        "DPF3022",
        patch(f, c + 59, 5 << 3),
    )
    add(
        "trailing_garbage_after_blocks",
        "last padding byte of the code option (byte 157) 0x00 -> 0xaa",
        "DPF3023",
        patch(f, c + 87, 0xAA),
    )
    add(
        "extra_word_after_blocks",
        "a zero word appended to the code option's data (6 bytes follow the blocks)",
        "DPF3023",
        cg.with_code(code + bytes(4)),
    )

    # Prolog/EU bundles. EU0 (byte 79): 01 00 80 00 | mem 10 00 (LOAD in lane 0).
    # EU1 (byte 86): 3a 38 80 00 | BSET x=B0 (0x10) y=imm slot 1 (0x81), not taken 80 01 |
    # 7 selectors (2 bytes each) | ALU 33 30 | immediates 0x7fffffff 0x80000000.
    # Epilogs at bytes 145 (22 80 | PUSH 03 13 11 12) and 151 (08 10 | 00 01).
    eu0, eu1 = cg.bundle_at(1), cg.bundle_at(2)
    epi0 = cg.bundle_at(31, 0)
    prolog = cg.bundle_at(0)
    add(
        "unknown_control_opcode",
        "EU0 control opcode (byte 79, high nibble) 0 -> 8",
        "DPF3012",
        patch(f, eu0, 0x81),
    )
    add(
        "bundle_reserved_bits",
        "reserved bits of the EU0 bundle header (byte 80) set: 0x00 -> 0x01",
        "DPF3011",
        patch(f, eu0 + 1, 0x01),
    )
    add(
        "epilog_reserved_bits",
        "reserved bits of the first epilog's header (byte 146) set: 0x80 -> 0x81",
        "DPF3011",
        patch(f, epi0 + 1, f[epi0 + 1] | 0x01),
    )
    add(
        "more_selectors_than_registers",
        "EU1 selector count (byte 87) 7 -> 9 on an 8-register target",
        "DPF3013",
        patch(f, eu1 + 1, 9 << 3),
    )
    add(
        "invalid_mov_source_register",
        "EU1's first selector MOV A0, B0: source register (byte 95) 0x10 -> 0x25",
        "DPF3010",
        patch(f, eu1 + 9, 0x25),
    )
    add(
        "register_lane_beyond_profile",
        "EU1's first selector MOV A0, B0: source (byte 95) 0x10 -> 0x05 (A5; tofino1 has 4 lanes)",
        "DPF1001",
        patch(f, eu1 + 9, 0x05),
    )
    add(
        "invalid_push_register",
        "first epilog's first PUSH register (byte 147) 0x03 -> 0x20",
        "DPF3010",
        patch(f, epi0 + 2, 0x20),
    )
    add(
        "load_imm_slot_out_of_range",
        "EU1 LOAD_IMM B0 (selector at byte 102) names immediate slot 0 -> 2 of 2",
        "DPF3014",
        patch(f, eu1 + 17, 0x02),
    )
    add(
        "branch_imm_slot_out_of_range",
        "EU1 BSET operand y (byte 91) immediate slot 1 -> 3 (0x81 -> 0x83)",
        "DPF3014",
        patch(f, eu1 + 5, 0x83),
    )
    add(
        "invalid_branch_register",
        "EU1 BSET operand x (byte 90) register 0x10 -> 0x7f",
        "DPF3010",
        patch(f, eu1 + 4, 0x7F),
    )
    add(
        "unknown_alu_opcode",
        "EU1 ALU op of lane 1 (byte 108, low nibble) AND (3) -> 11",
        "DPF3016",
        patch(f, eu1 + 22, 0x3B),
    )
    add(
        "unknown_memory_opcode",
        "EU0 memory op of lane 0 (byte 83, high nibble) LOAD (1) -> 9",
        "DPF3016",
        patch(f, eu0 + 4, 0x90),
    )
    lanes3 = base_lanes3()
    add(
        "padding_nibble_not_zero",
        "3-lane target: EU0's ALU group (2 bytes, 4 nibbles) gets its padding nibble "
        f"(byte {lanes3[1]}, low nibble) set to 1",
        "DPF3015",
        patch(lanes3[0], lanes3[1], lanes3[0][lanes3[1]] | 0x01),
        target="lanes3.toml",
    )
    add(
        "unknown_steering_action",
        "first epilog's steering action (byte 145, low 3 bits) 2 -> 7",
        "DPF3017",
        patch(f, epi0, (f[epi0] & 0xF8) | 7),
    )
    add(
        "push_over_2L",
        "first epilog's PUSH count (byte 145, high 5 bits) 4 -> 9 on a 4-lane target",
        "DPF3018",
        patch(f, epi0, (9 << 3) | (f[epi0] & 7)),
    )
    add(
        "steering_takes_no_value",
        "first epilog (return_to_sender) gets steer_src set (byte 146: 0x80 -> 0xc0)",
        "DPF3019",
        patch(f, epi0 + 1, f[epi0 + 1] | 0x40),
    )
    add(
        "next_pc_source_3",
        "second epilog's NEXT_PC source (byte 152, bits 5..4) 1 -> 3",
        "DPF3019",
        patch(f, cg.bundle_at(31, 1) + 1, f[cg.bundle_at(31, 1) + 1] | 0x30),
    )
    add(
        "packet_pc_names_missing_bundle",
        "prolog pc_taken (byte 74) @packet:0 -> @packet:1; EU0 has one in-packet bundle",
        "DPF1032",
        patch(f, prolog + 2, b"\x80\x01"),
    )
    add(
        "switch_pc_out_of_range",
        "prolog pc_taken (byte 74) @packet:0 -> @switch:5000; tofino1 has 4096 slots",
        "DPF1002",
        patch(f, prolog + 2, (5000).to_bytes(2, "big")),
    )
    add(
        "pop_in_eu_selector",
        "EU1's first selector (byte 94) MOV A0 -> POP A0 (prolog only)",
        "DPF1012",
        patch(f, eu1 + 8, 0x04),
    )

    # Valid content, non-canonical bytes.
    split_at = cg.bundles[(3, 0)] - 1  # the EU2 block header
    first = bytes([3]) + code[1:split_at]
    second = bytes([3]) + code[split_at:86]
    add(
        "noncanonical_split_code",
        "code split into two options before the EU2 block (3 + 3 blocks) though it fits "
        "one; header announces 2 code options",
        "DPF3040",
        frame_of(
            option(1, header_data(depth=1, n_code=2, n_stack=1))
            + option(2, first)
            + option(2, second)
            + cg.options[108:],
            cg.inner,
        ),
    )
    eu2_block = cg.bundles[(3, 0)] - 1
    eu2_second = cg.bundles[(3, 1)]
    add(
        "noncanonical_split_block",
        "EU2's block of 2 bundles split into two blocks of 1 (7 blocks, same option size)",
        "DPF3040",
        cg.with_code(
            bytes([7])
            + code[1:eu2_block]
            + bytes([3 << 3])
            + code[eu2_block + 1 : eu2_second]
            + bytes([3 << 3])
            + code[eu2_second:86]
            + bytes(1)
        ),
    )
    eu0_data = cg.bundles[(1, 0)]
    add(
        "noncanonical_all_nop_alu_group",
        "EU0 bundle gets has_alu set and an all-NOP ALU group (2 zero bytes) before its "
        "memory group",
        "DPF3040",
        cg.with_code(
            patch(insert(code, eu0_data + 4, b"\0\0"), eu0_data, code[eu0_data] | 0x02)[:88]
        ),
    )
    eu1_data = cg.bundles[(2, 0)]
    add(
        "noncanonical_unused_immediate",
        "a third, unused immediate 0x11223344 appended to EU1's immediates (n_imm 2 -> 3)",
        "DPF3040",
        cg.with_code(
            insert(
                patch(code, eu1_data, code[eu1_data] + (1 << 2)), eu1_data + 32, b"\x11\x22\x33\x44"
            )[: 86 + 4]
        ),
    )
    lb3_eu0 = lb3.bundles[(1, 0)]
    add(
        "noncanonical_duplicate_immediate",
        "lb3_client EU0: LOAD_IMM B1 reads a second copy of the immediate 7 (slot 1)",
        "DPF3040",
        lb3.with_code(
            insert(
                patch(patch(lb3.code, lb3_eu0, lb3.code[lb3_eu0] + (1 << 2)), lb3_eu0 + 7, 0x01),
                lb3_eu0 + 14,
                stack_data(7),
            )[: len(lb3.code) + 4]
        ),
    )
    add(
        "noncanonical_split_stack",
        "two stack entries carried in two stack options of one entry each",
        "DPF3040",
        frame_of(
            option(1, header_data(depth=2, n_code=1, n_stack=2))
            + cg.options[16:108]
            + option(3, stack_data(1))
            + option(3, stack_data(2)),
            cg.inner,
        ),
    )
    add(
        "foreign_option_then_noncanonical",
        "an option of class 0x0102 first, then cache_get's options with the code split "
        "as in noncanonical_split_code (the offset must skip the foreign option)",
        "DPF3040",
        frame_of(
            option(0x05, b"\xab" * 8, opt_class=0x0102)
            + option(1, header_data(depth=1, n_code=2, n_stack=1))
            + option(2, first)
            + option(2, second)
            + cg.options[108:],
            cg.inner,
        ),
    )
    add(
        "dpf_pointer_names_missing_prolog",
        "header's DPF pointer set to @packet:1; the packet carries one prolog",
        "DPF3041",
        frame_of(
            option(1, header_data(depth=1, n_code=1, n_stack=1, dpf=0x8001)) + cg.options[16:],
            cg.inner,
        ),
    )
    add(
        "dpf_pointer_beyond_code_memory",
        "header's DPF pointer set to @switch:5000; tofino1 has 4096 slots per stage",
        "DPF3041",
        frame_of(
            option(1, header_data(depth=1, n_code=1, n_stack=1, dpf=5000)) + cg.options[16:],
            cg.inner,
        ),
    )
    out += tagged_cases(cg)
    return out


def tagged_cases(cg: Base) -> list[Case]:
    """Format version 2 (``tagged.toml``): the cache_get packet, its code option's data at
    frame byte 78 (after the header option and the stack option); the bundles start at
    data bytes 0 (prolog), 8 (EU0), 17 (EU1, its ALU tag at 41), 54 and 63 (EU2), 69 (EU3),
    87 and 95 (epilogs), the end byte at 103 (docs/encoding.md §9)."""
    target = "tagged.toml"
    profile = load_profile(str(HERE / target))
    text = (ROOT / "examples" / "asm" / "cache_get.dpfasm").read_text(encoding="utf-8")
    header = assemble_text(text, "cache_get.dpfasm", profile).header(cg.header.stack)
    f = build_packet(PacketSpec(1, header, PAYLOAD), profile).frame
    code = OPTIONS + 16 + 8 + 4
    assert f[code] == f[code + 8] == f[code + 17] == 0xFB and f[code + 41] == 0xF8
    assert f[code + 23] == 0x10 and f[code + 24] == 0x80  # EU1's branch: B0, immediate 0
    out: list[Case] = []

    def add(name: str, mutation: str, expect: str, data: bytes) -> None:
        out.append(Case(f"tagged_{name}", mutation, expect, data, target=target))

    add(
        "alu_tag_wrong",
        f"EU1's ALU group tag (byte {code + 41}) 0xf8 -> 0xf9, the memory group's tag",
        "DPF3024",
        patch(f, code + 41, 0xF9),
    )
    add(
        "bundle_start_missing",
        f"the prolog's bundle start (byte {code}) 0xfb -> 0xfa",
        "DPF3024",
        patch(f, code, 0xFA),
    )
    add(
        "part_not_announced",
        f"EU0's has_mem cleared (byte {code + 10}: 0x01 -> 0x00): its memory group's tag "
        "follows a bundle that announces no part",
        "DPF3024",
        patch(f, code + 10, 0x00),
    )
    add(
        "tag_for_a_selector",
        f"EU0's n_sel 0 -> 1 (byte {code + 11}: 0x00 -> 0x08): the memory group's tag "
        "stands where the selector must be",
        "DPF3024",
        patch(f, code + 11, 0x08),
    )
    add(
        "end_byte_not_ff",
        f"the end byte after the last bundle (byte {code + 103}) 0xff -> 0x00",
        "DPF3025",
        patch(f, code + 103, 0x00),
    )
    data = f[code : code + 103]  # the bundles
    head, stack = f[OPTIONS : OPTIONS + 16], f[OPTIONS + 16 : code - 4]
    two_codes = patch(head, 7, 0x21)  # n_code 2, n_stack 1
    add(
        "end_byte_missing",
        "the code in two options, the last epilog bundle alone in the second, which ends "
        "right after it (8 bytes: no end byte)",
        "DPF3025",
        frame_of(
            two_codes + stack + option(2, data[:95] + b"\xff") + option(2, data[95:]), cg.inner
        ),
    )
    add(
        "end_byte_and_padding_too_long",
        "the code option's data ends with 5 bytes 0xff after the bundles (at most 4)",
        "DPF3023",
        frame_of(head + stack + option(2, data + b"\xff" * 5), cg.inner),
    )
    add(
        "branch_on_two_immediates",
        f"EU1's branch operand x (byte {code + 23}) 0x10 (B0) -> 0x80 (immediate slot 0, as y)",
        "DPF3026",
        patch(f, code + 23, 0x80),
    )
    out.append(
        Case(
            "tagged_too_many_code_options",
            "the code in two options (each ended as the last would be: valid where the "
            "profile allows two) for tagged_single.toml, which allows one",
            "DPF3027",
            frame_of(
                two_codes
                + stack
                + option(2, data[:95] + b"\xff")
                + option(2, data[95:] + b"\xff" * 4),
                cg.inner,
            ),
            target="tagged_single.toml",
        )
    )
    add(
        "stage_reserved_bits",
        f"the prolog's stage byte (byte {code + 1}) 0x00 -> 0x01",
        "DPF3011",
        patch(f, code + 1, 0x01),
    )
    add(
        "stage_order",
        f"EU1's stage byte (byte {code + 18}) 0x10 -> 0x00: a prolog after EU0",
        "DPF3021",
        patch(f, code + 18, 0x00),
    )
    add(
        "version_1_packet",
        "the version-1 cache_get packet (the corpus base) for a version-2 profile",
        "DPF3035",
        cg.frame,
    )
    add(
        "version_1_option_order",
        "a version-2 header and code with the stack option after the code option, as in version 1",
        "DPF3037",
        frame_of(
            f[OPTIONS : OPTIONS + 16] + f[code - 4 : code + 104] + f[OPTIONS + 16 : code - 4],
            cg.inner,
        ),
    )
    out.append(
        Case(
            "tagged_packet_on_tofino1",
            "the version-2 cache_get packet for tofino1 (format version 1)",
            "DPF3035",
            f,
        )
    )
    return out


def base_lanes3() -> tuple[bytes, int]:
    """A valid packet for the 3-lane profile ``lanes3.toml`` and the frame offset of the
    byte holding its EU0 bundle's ALU padding nibble."""
    profile = load_profile(str(HERE / "lanes3.toml"))
    program = assemble_text(LANES3_ASM, "lanes3.dpfasm", profile)
    header = program.header((5,))
    frame = build_packet(PacketSpec(1, header, PAYLOAD), profile).frame
    # code data: count, prolog block, prolog (6 bytes), EU0 block, EU0: 4 header bytes,
    # 1 selector (2 bytes), then the ALU group.
    alu_group = OPTIONS + 16 + 4 + 1 + 1 + 6 + 1 + 4 + 2
    assert frame[alu_group] == 0x10, "lanes3 EU0 ALU group must be ADD, NOP | NOP, pad"
    return frame, alu_group + 1


# -- files -------------------------------------------------------------------------------
def hex_text(case: Case, number: int) -> str:
    lines = [
        f"# case: {number:03d}_{case.name}",
        f"# mutation: {case.mutation}",
        f"# expect: {case.expect}",
        f"# target: {case.target}",
        f"# input: {case.input}",
    ]
    for start in range(0, len(case.data), 16):
        chunk = case.data[start : start + 16]
        lines.append(f"{start:4d}  " + " ".join(f"{b:02x}" for b in chunk))
    return "\n".join(lines) + "\n"


def corpus_files() -> dict[str, str]:
    """File name -> contents of every ``.hex`` file."""
    return {
        f"{number:03d}_{case.name}.hex": hex_text(case, number)
        for number, case in enumerate(cases(), start=1)
    }


def read_hex(text: str) -> tuple[dict[str, str], bytes]:
    """The ``# key: value`` fields and the bytes of a ``.hex`` file."""
    fields: dict[str, str] = {}
    data = bytearray()
    for line in text.splitlines():
        if line.startswith("#"):
            key, _, value = line[1:].partition(":")
            fields[key.strip()] = value.strip()
        elif line.strip():
            data += bytes.fromhex("".join(line.split()[1:]))
    return fields, bytes(data)


def main() -> int:
    files = corpus_files()
    for old in [*HERE.glob("*.hex"), *HERE.glob("*.expected")]:
        if old.with_suffix(".hex").name not in files:
            old.unlink()
    for name, text in files.items():
        (HERE / name).write_text(text, encoding="utf-8")
    print(f"wrote {len(files)} cases to {HERE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
