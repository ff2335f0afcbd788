"""The tenant's packet in the SwitchVM program: the inner headers LOAD_MD's header fields read.

Contract: the rules of ``dpfc.packet.header_fields`` (docs/isa.md §4) as P4. The parser
goes on from the end of the Geneve options (:func:`inner_states`, entered at ``inner``)
into the inner frame, bounded by what the UDP length leaves after the options (the
simulator's inner frame), never extracting past it, so a short frame is no parser error:
Ethernet, at most one 802.1Q tag, IPv4 (whole: 20 bytes, version 4, IHL at least 5 and its
options present; ``meta.inner_ip`` = 1) and, for TCP or UDP of fragment offset 0, the 4
bytes of the ports (``hdr.inner_l4``). The headers are declared by :mod:`.headers` (their
struct fields: :data:`INNER_HEADERS`) and emitted back unchanged by the deparser, so the
frame leaves byte for byte as it came. :func:`header_field_values` gives each field's
word for the prolog's LOAD_MD (0 where its header is missing).
"""

from __future__ import annotations

from dpfc.backends.p4.lang import Assign, Do, Expr, If, Lit, Select, State, mux, n

hdr, meta, pkt = n("hdr"), n("meta"), n("pkt")

# (struct field, header type) in the packet's order, after the Geneve options
INNER_HEADERS: tuple[tuple[str, str], ...] = (
    ("inner_eth", "ethernet_t"),
    ("inner_vlan", "vlan_t"),
    ("inner_ipv4", "ipv4_t"),
    ("inner_ipv4_opts", "ipv4_opts_t"),
    ("inner_l4", "l4_ports_t"),
)
L4_PORTS_FIELDS = (("src", "bit<16>"), ("dst", "bit<16>"))
GENEVE_AND_UDP = 16  # the UDP header and the Geneve header before the options


def inner_meta() -> list[tuple[str, str]]:
    """The parser's fields of the metadata struct for the inner frame."""
    return [
        ("inner_left", "bit<16>"),  # bytes of the inner frame not yet parsed
        ("inner_short", "bit<1>"),  # the IPv4 options run past the frame
        ("inner_ip", "bit<1>"),  # a whole IPv4 header: the IPv4 fields are its
    ]


def inner_states() -> list[State]:
    left = meta.dot("inner_left")
    eth, vlan, ipv4 = hdr.dot("inner_eth"), hdr.dot("inner_vlan"), hdr.dot("inner_ipv4")
    udp_len, options = hdr.dot("udp").dot("len"), meta.dot("options_in")
    option_bytes = (ipv4.dot("ihl").cast(16) - 5) << 2

    def extract(header: Expr, size: Expr | int) -> list[Do | Assign]:
        return [Do(pkt.dot("extract").call(header)), Assign(left, left - size)]

    def enough(size: int, then: str) -> Select:
        return Select([left], [(f"0..{size - 1}", "accept"), ("default", then)])

    return [
        State(
            "inner",
            [
                If(
                    udp_len.lt(options + GENEVE_AND_UDP),
                    [Assign(left, Lit(0))],
                    [Assign(left, udp_len - GENEVE_AND_UDP - options)],
                )
            ],
            enough(14, "inner_eth"),
            "The tenant's frame (LOAD_MD header fields, isa.md §4), up to the UDP length's end.",
        ),
        State(
            "inner_eth",
            extract(eth, 14),
            Select(
                [eth.dot("etherType")],
                [
                    ("0x8100", "inner_vlan_check"),
                    ("0x0800", "inner_ipv4_check"),
                    ("default", "accept"),
                ],
            ),
        ),
        State("inner_vlan_check", [], enough(4, "inner_vlan")),
        State(
            "inner_vlan",
            extract(vlan, 4),
            Select(
                [vlan.dot("etherType")], [("0x0800", "inner_ipv4_check"), ("default", "accept")]
            ),
        ),
        State("inner_ipv4_check", [], enough(20, "inner_ipv4")),
        State(
            "inner_ipv4",
            extract(ipv4, 20),
            Select(
                [ipv4.dot("version"), ipv4.dot("ihl")],
                [
                    ("(4, 5)", "inner_ip"),
                    ("(4, 6..15)", "inner_ipv4_options"),
                    ("default", "accept"),
                ],
            ),
            "A header that is not IPv4 (version, IHL below 5) leaves the IPv4 fields 0.",
        ),
        State(
            "inner_ipv4_options",
            [If(left.lt(option_bytes), [Assign(meta.dot("inner_short"), Lit(1))])],
            Select([meta.dot("inner_short")], [("1", "accept"), ("default", "inner_ipv4_opts")]),
        ),
        State(
            "inner_ipv4_opts",
            [
                Do(
                    pkt.dot("extract").call(
                        hdr.dot("inner_ipv4_opts"), (ipv4.dot("ihl").cast(32) - 5) << 5
                    )
                ),
                Assign(left, left - option_bytes),
            ],
            "inner_ip",
        ),
        State(
            "inner_ip",
            [Assign(meta.dot("inner_ip"), Lit(1))],
            Select(
                [ipv4.dot("protocol"), ipv4.dot("flagsFrag").slice(12, 0), left],
                [
                    ("(6, 0, 4..0xFFFF)", "inner_l4"),
                    ("(17, 0, 4..0xFFFF)", "inner_l4"),
                    ("default", "accept"),
                ],
            ),
            "TCP and UDP start with the ports; a later fragment (offset > 0) has none.",
        ),
        State("inner_l4", [Do(pkt.dot("extract").call(hdr.dot("inner_l4")))], "accept"),
    ]


def header_field_values() -> dict[str, Expr]:
    """LOAD_MD's word of each header field (dpfc.target.HEADER_METADATA's names)."""
    ipv4, l4 = hdr.dot("inner_ipv4"), hdr.dot("inner_l4")
    is_ip = meta.dot("inner_ip").eq(1)
    has_ports = l4.dot("isValid").call()
    zero = Lit(0, 32)
    return {
        "ipv4_src": mux(is_ip, ipv4.dot("src"), zero),
        "ipv4_dst": mux(is_ip, ipv4.dot("dst"), zero),
        "ip_proto": mux(is_ip, ipv4.dot("protocol").cast(32), zero),
        "dscp": mux(is_ip, (ipv4.dot("tos") >> 2).cast(32), zero),
        "ttl": mux(is_ip, ipv4.dot("ttl").cast(32), zero),
        "l4_src": mux(has_ports, l4.dot("src").cast(32), zero),
        "l4_dst": mux(has_ports, l4.dot("dst").cast(32), zero),
    }
