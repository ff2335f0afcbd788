"""The tenant's frame on a program whose parser reaches it: LOAD_MD's header fields.

Contract: on a plan with ``header_fields`` (a v1model program: its parser reads the code's
end byte and padding, so it knows where the Geneve options end; the Tofino parsers stop at
the end byte), the parser goes on from the end of the options into the inner frame
(:func:`inner_states`, entered at ``inner``) by the rules of ``dpfc.packet.header_fields``
(docs/isa.md §4), as the old program's parser does (:mod:`dpfc.backends.p4.inner`):
bounded by what the UDP length leaves after the options, never extracting past it;
Ethernet, at most one 802.1Q tag, IPv4 (whole: version 4, IHL at least 5 and its options
present; ``meta.inner_ip`` = 1) and, for TCP or UDP of fragment offset 0, the ports
(``hdr.inner_l4``). The headers (:data:`INNER_HEADERS`, after everything else in the
struct) are emitted back unchanged, so the frame leaves as it came.
:func:`header_field_values` gives each field's word (0 where its header is missing), which
the permissions stage loads into ``meta.md<index>`` (:func:`.ends.loaded_sources`).
"""

from __future__ import annotations

from dpfc.backends.p4.inner import GENEVE_AND_UDP, INNER_HEADERS, inner_meta
from dpfc.backends.p4.inner import header_field_values as field_words
from dpfc.backends.p4.lang import Assign, Do, Expr, Header, If, Lit, Select, State, n
from dpfc.target import HEADER_METADATA

hdr, meta, pkt = n("hdr"), n("meta"), n("pkt")
INNER = "inner"  # the parser state that enters the inner frame
HEADER_FIELDS = tuple(field.index for field in HEADER_METADATA)  # LOAD_MD 7..13


def inner_types() -> list[Header]:
    """The header types only the inner frame needs (Ethernet and IPv4 are the outer's)."""
    return [
        Header("vlan_t", [("tci", "bit<16>"), ("ether_type", "bit<16>")]),
        Header("ipv4_opts_t", [("options", "varbit<320>")]),
        Header("l4_ports_t", [("src", "bit<16>"), ("dst", "bit<16>")]),
    ]


def inner_states() -> list[State]:
    left = meta.dot("inner_left")
    eth, vlan, ipv4 = hdr.dot("inner_eth"), hdr.dot("inner_vlan"), hdr.dot("inner_ipv4")
    udp_len = hdr.dot("udp").dot("len")
    options = hdr.dot("geneve").dot("ver_opt_len").slice(5, 0).cast(16) << 2
    ihl = ipv4.dot("version_ihl").slice(3, 0)
    option_bytes = (ihl.cast(16) - 5) << 2

    def take(header: Expr, size: Expr | int) -> list[Do | Assign]:
        return [Do(pkt.dot("extract").call(header)), Assign(left, left - size)]

    def enough(size: int, then: str) -> Select:
        return Select([left], [(f"0..{size - 1}", "accept"), ("default", then)])

    to_ipv4 = ("0x0800", "inner_ipv4_check")
    return [
        State(
            INNER,
            [
                If(
                    udp_len.lt(options + GENEVE_AND_UDP),
                    [Assign(left, Lit(0, 16))],
                    [Assign(left, udp_len - GENEVE_AND_UDP - options)],
                )
            ],
            enough(14, "inner_eth"),
        ),
        State(
            "inner_eth",
            take(eth, 14),
            Select(
                [eth.dot("ether_type")],
                [("0x8100", "inner_vlan_check"), to_ipv4, ("default", "accept")],
            ),
        ),
        State("inner_vlan_check", [], enough(4, "inner_vlan")),
        State(
            "inner_vlan",
            take(vlan, 4),
            Select([vlan.dot("ether_type")], [to_ipv4, ("default", "accept")]),
        ),
        State("inner_ipv4_check", [], enough(20, "inner_ipv4")),
        State(
            "inner_ipv4",
            take(ipv4, 20),
            Select(
                [ipv4.dot("version_ihl")],
                [("0x45", "inner_ip"), ("0x46..0x4F", "inner_ipv4_options"), ("default", "accept")],
            ),
        ),
        State(
            "inner_ipv4_options",
            [If(left.lt(option_bytes), [Assign(meta.dot("inner_short"), Lit(1, 1))])],
            Select([meta.dot("inner_short")], [("1", "accept"), ("default", "inner_ipv4_opts")]),
        ),
        State(
            "inner_ipv4_opts",
            [
                Do(pkt.dot("extract").call(hdr.dot("inner_ipv4_opts"), (ihl.cast(32) - 5) << 5)),
                Assign(left, left - option_bytes),
            ],
            "inner_ip",
        ),
        State(
            "inner_ip",
            [Assign(meta.dot("inner_ip"), Lit(1, 1))],
            Select(
                [ipv4.dot("protocol"), ipv4.dot("frag").slice(12, 0), left],
                [
                    ("(6, 0, 4..0xFFFF)", "inner_l4"),
                    ("(17, 0, 4..0xFFFF)", "inner_l4"),
                    ("default", "accept"),
                ],
            ),
        ),
        State("inner_l4", [Do(pkt.dot("extract").call(hdr.dot("inner_l4")))], "accept"),
    ]


def header_field_values() -> dict[int, Expr]:
    """LOAD_MD index -> the word of that header field (dpfc.target.HEADER_METADATA): the
    old program's words (the inner headers' types and fields are the same)."""
    words = field_words()
    return {field.index: words[field.name] for field in HEADER_METADATA}


__all__ = [
    "HEADER_FIELDS",
    "INNER",
    "INNER_HEADERS",
    "header_field_values",
    "inner_meta",
    "inner_states",
    "inner_types",
]
