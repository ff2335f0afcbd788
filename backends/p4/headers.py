"""The headers of the SwitchVM program (docs/encoding.md §1-§2) and the deparser's order.

Contract: :func:`headers` declares every header the parser extracts and the
``headers_t`` struct that holds them: Ethernet, an optional 802.1Q tag, IPv4 with its
options, UDP, Geneve, the options of other classes kept before and after SwitchVM's
(:data:`~.layout.FOREIGN_OPTIONS` each), the SwitchVM header option, two code options
and the stack option with their 32-bit words, then the inner frame's headers
(:mod:`.inner`). The option headers' fields are
:mod:`dpfc.encoding`'s layout tables (``OPTION_HEAD``, ``HEADER_OPTION``), renamed for
P4. :func:`deparser_emits` lists what the deparser emits: the struct's headers in the
struct's order, which is the packet's (invalid headers are skipped by ``emit``).
"""

from __future__ import annotations

from dpfc.backends.p4.inner import INNER_HEADERS, L4_PORTS_FIELDS
from dpfc.backends.p4.lang import Decl, Expr, Header, n, struct
from dpfc.backends.p4.layout import CODE_OPTION_WORDS, FOREIGN_OPTIONS, STACK_OPTION_WORDS, Layout
from dpfc.encoding import HEADER_OPTION, OPTION_HEAD, ByteLayout

hdr = n("hdr")


def _fields(table: ByteLayout, names: dict[str, str]) -> list[tuple[str, str]]:
    """A P4 header's fields for a layout table: (P4 name, its type) in the table's order."""
    return [(names.get(f.name, f.name), f"bit<{f.width}>") for f in table.fields]


def headers(layout: Layout) -> list[Decl]:
    option = _fields(
        OPTION_HEAD,
        {"option_class": "cls", "option_type": "type", "reserved": "r", "length": "len"},
    )
    return [
        Header("ethernet_t", [("dst", "bit<48>"), ("src", "bit<48>"), ("etherType", "bit<16>")]),
        Header("vlan_t", [("tci", "bit<16>"), ("etherType", "bit<16>")]),
        Header(
            "ipv4_t",
            [
                ("version", "bit<4>"),
                ("ihl", "bit<4>"),
                ("tos", "bit<8>"),
                ("totalLen", "bit<16>"),
                ("identification", "bit<16>"),
                ("flagsFrag", "bit<16>"),
                ("ttl", "bit<8>"),
                ("protocol", "bit<8>"),
                ("checksum", "bit<16>"),
                ("src", "bit<32>"),
                ("dst", "bit<32>"),
            ],
        ),
        Header("ipv4_opts_t", [("data", "varbit<320>")]),
        Header(
            "udp_t",
            [
                ("srcPort", "bit<16>"),
                ("dstPort", "bit<16>"),
                ("len", "bit<16>"),
                ("checksum", "bit<16>"),
            ],
        ),
        Header(
            "geneve_t",
            [
                ("ver", "bit<2>"),
                ("optLen", "bit<6>"),
                ("o", "bit<1>"),
                ("c", "bit<1>"),
                ("rsvd", "bit<6>"),
                ("protocol", "bit<16>"),
                ("vni", "bit<24>"),
                ("rsvd2", "bit<8>"),
            ],
        ),
        Header("option_t", option, "A Geneve option header (code and stack options)."),
        Header("raw_option_t", [*option, ("data", "varbit<992>")], "An option of another class."),
        Header(
            "switchvm_t",
            [
                *option,
                *_fields(HEADER_OPTION, {"n_code_opts": "n_code", "n_stack_opts": "n_stack"}),
            ],
            "The SwitchVM header option (encoding.md §2.1).",
        ),
        Header("word_t", [("w", "bit<32>")]),
        Header("l4_ports_t", list(L4_PORTS_FIELDS), "The ports a TCP or UDP header starts with."),
        struct(
            "headers_t",
            [
                ("eth", "ethernet_t"),
                ("vlan", "vlan_t"),
                ("ipv4", "ipv4_t"),
                ("ipv4_opts", "ipv4_opts_t"),
                ("udp", "udp_t"),
                ("geneve", "geneve_t"),
                ("foreign_pre", f"raw_option_t[{FOREIGN_OPTIONS}]"),
                ("sv", "switchvm_t"),
                ("code_hdr0", "option_t"),
                ("code_w0", f"word_t[{CODE_OPTION_WORDS}]"),
                ("code_hdr1", "option_t"),
                ("code_w1", f"word_t[{CODE_OPTION_WORDS}]"),
                ("stk_hdr", "option_t"),
                ("stk_w", f"word_t[{STACK_OPTION_WORDS}]"),
                ("foreign_post", f"raw_option_t[{FOREIGN_OPTIONS}]"),
                *INNER_HEADERS,
            ],
        ),
    ]


def deparser_emits() -> list[Expr]:
    """What the deparser emits, in order (invalid headers are skipped by ``emit``)."""
    names = [
        "eth",
        "vlan",
        "ipv4",
        "ipv4_opts",
        "udp",
        "geneve",
        "foreign_pre",
        "sv",
        "code_hdr0",
        "code_w0",
        "code_hdr1",
        "code_w1",
        "stk_hdr",
        "stk_w",
        "foreign_post",
        *(name for name, _ in INNER_HEADERS),
    ]
    return [hdr.dot(name) for name in names]
