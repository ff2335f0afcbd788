"""The parser of the SwitchVM program (docs/encoding.md §1-§2).

Contract: :func:`parser` returns the parser's states (Ethernet, an optional 802.1Q tag,
IPv4 with options, UDP to port 6081, Geneve, and its options in a loop) over the headers
of :mod:`.headers`; :func:`parse_meta` lists the metadata fields it fills. The parser
keeps what it reads for the control:

* the header option in ``hdr.sv``; every code option's header and 32-bit data words (the
  words also shifted, in order, into ``meta.code``: the control decodes the variable-length
  bundles from that one wide field, docs/p4.md "In-packet code");
* the stack option's words in ``hdr.stk_w`` and, top first, in ``meta.stack``;
* options of other classes, as raw bytes, before or after the SwitchVM ones (the simulator
  keeps their order and puts all SwitchVM options where the first one was; the deparser
  does the same);
* after the options, the inner frame's headers that LOAD_MD's header fields read
  (:mod:`.inner`).

A packet that is not IPv4/UDP/Geneve is accepted as ordinary traffic (``hdr.geneve``
invalid). A SwitchVM option that breaks the format (version, lengths, counts, a second
header option, more options than the format allows) sets ``meta.malformed``: the packet is
dropped, as the simulator drops what its strict decoder rejects. (The decoder checks more,
e.g. canonical encodings; what the P4 parser checks is listed in docs/p4.md.)
"""

from __future__ import annotations

from dpfc.backends.p4.inner import inner_meta, inner_states
from dpfc.backends.p4.lang import Assign, Do, Expr, If, Lit, Select, State, Stmt, n
from dpfc.backends.p4.layout import Layout
from dpfc.encoding import OPTION_CLASS

GENEVE_PORT = 6081

hdr, meta, pkt = n("hdr"), n("meta"), n("pkt")


def parse_meta(layout: Layout) -> list[tuple[str, str]]:
    """The parser's fields of the metadata struct."""
    return [
        ("opt_left", "bit<16>"),  # option bytes not yet parsed
        ("words_left", "bit<8>"),
        ("seen_sv", "bit<1>"),
        ("sv_depth", "bit<8>"),
        ("code_opts", "bit<4>"),
        ("malformed", "bit<1>"),
        ("foreign_bytes", "bit<16>"),
        ("options_in", "bit<16>"),  # option bytes of the packet as it came
        ("code", f"bit<{layout.code_bits}>"),  # every code data word, right-aligned
        ("code_len0", "bit<16>"),  # data bytes of code option 0 / 1
        ("code_len1", "bit<16>"),
        ("stack", f"bit<{layout.stack_bits}>"),  # stack words, top first, right-aligned
        ("depth", "bit<8>"),
        *inner_meta(),
    ]


def _sub_left(amount: Expr) -> list[Stmt]:
    """opt_left -= amount, marking the packet malformed if the option runs past the area."""
    left = meta.dot("opt_left")
    return [
        If(left.lt(amount), [Assign(meta.dot("malformed"), Lit(1))]),
        Assign(left, left - amount),
    ]


def parser(layout: Layout) -> list[State]:
    stack_bits, code_bits = layout.stack_bits, layout.code_bits
    length = hdr.dot("geneve").dot("optLen").cast(16) << 2

    def option_words(option: Expr) -> Expr:
        return option.dot("len").cast(16) << 2

    def malformed() -> Stmt:
        return Assign(meta.dot("malformed"), Lit(1))

    states = [
        State(
            "start",
            [Do(pkt.dot("extract").call(hdr.dot("eth")))],
            Select(
                [hdr.dot("eth").dot("etherType")],
                [("0x8100", "parse_vlan"), ("0x0800", "parse_ipv4"), ("default", "accept")],
            ),
        ),
        State(
            "parse_vlan",
            [Do(pkt.dot("extract").call(hdr.dot("vlan")))],
            Select(
                [hdr.dot("vlan").dot("etherType")],
                [("0x0800", "parse_ipv4"), ("default", "accept")],
            ),
        ),
        State(
            "parse_ipv4",
            [Do(pkt.dot("extract").call(hdr.dot("ipv4")))],
            Select(
                [hdr.dot("ipv4").dot("version"), hdr.dot("ipv4").dot("ihl")],
                [
                    ("(4, 5)", "ipv4_protocol"),
                    ("(4, 6..15)", "ipv4_options"),
                    ("default", "accept"),
                ],
            ),
            "Not IPv4 (or a header length below 20) is ordinary traffic, as in the simulator.",
        ),
        State(
            "ipv4_options",
            [
                Do(
                    pkt.dot("extract").call(
                        hdr.dot("ipv4_opts"),
                        (hdr.dot("ipv4").dot("ihl").cast(32) - 5) << 5,
                    )
                )
            ],
            "ipv4_protocol",
        ),
        State(
            "ipv4_protocol",
            [],
            Select([hdr.dot("ipv4").dot("protocol")], [("17", "parse_udp"), ("default", "accept")]),
        ),
        State(
            "parse_udp",
            [Do(pkt.dot("extract").call(hdr.dot("udp")))],
            Select(
                [hdr.dot("udp").dot("dstPort")],
                [(str(GENEVE_PORT), "parse_geneve"), ("default", "accept")],
            ),
        ),
        State(
            "parse_geneve",
            [
                Do(pkt.dot("extract").call(hdr.dot("geneve"))),
                Assign(meta.dot("opt_left"), length),
                Assign(meta.dot("options_in"), length),
            ],
            "options",
        ),
        State(
            "options",
            [],
            Select(
                [meta.dot("malformed"), meta.dot("opt_left")],
                [("(1, _)", "accept"), ("(0, 0)", "inner"), ("default", "option")],
            ),
            "Each Geneve option in turn, until the options area is used up.",
        ),
        State(
            "option",
            [],
            Select(
                [pkt.dot("lookahead<bit<32>>").call().slice(31, 8)],
                [
                    (f"0x{OPTION_CLASS:04x}01", "sv_header"),
                    (f"0x{OPTION_CLASS:04x}02", "code_option"),
                    (f"0x{OPTION_CLASS:04x}03", "stack_option"),
                    ("default", "foreign_option"),
                ],
            ),
        ),
        State(
            "sv_header",
            [
                If(meta.dot("seen_sv").eq(1), [malformed()]),
                Do(pkt.dot("extract").call(hdr.dot("sv"))),
                Assign(meta.dot("seen_sv"), Lit(1)),
                Assign(meta.dot("sv_depth"), hdr.dot("sv").dot("stack_depth")),
                If(
                    hdr.dot("sv")
                    .dot("len")
                    .ne(3)
                    .lor(hdr.dot("sv").dot("r").ne(0))
                    .lor(hdr.dot("sv").dot("version").ne(1))
                    .lor(hdr.dot("sv").dot("stack_depth").gt(layout.profile.stack_max_depth)),
                    [malformed()],
                ),
                *_sub_left(Lit(16)),
            ],
            "options",
            "The header option: version 1, 12 data bytes, a stack the profile allows.",
        ),
        State(
            "code_option",
            [If(meta.dot("seen_sv").eq(0), [malformed()])],
            Select(
                [meta.dot("code_opts")],
                [("0", "code_option0"), ("1", "code_option1"), ("default", "too_many")],
            ),
            "At most two code options: the canonical packing of 236 bytes (encoding.md §3).",
        ),
        State("too_many", [malformed()], "accept"),
    ]
    for index in (0, 1):
        header, words = hdr.dot(f"code_hdr{index}"), hdr.dot(f"code_w{index}")
        states += [
            State(
                f"code_option{index}",
                [
                    Do(pkt.dot("extract").call(header)),
                    Assign(meta.dot("code_opts"), meta.dot("code_opts") + 1),
                    Assign(meta.dot("words_left"), header.dot("len").cast(8)),
                    Assign(meta.dot(f"code_len{index}"), option_words(header)),
                    If(header.dot("len").eq(0).lor(header.dot("r").ne(0)), [malformed()]),
                    *_sub_left(option_words(header) + 4),
                ],
                f"code_words{index}",
            ),
            State(
                f"code_words{index}",
                [],
                Select(
                    [meta.dot("words_left")], [("0", "options"), ("default", f"code_word{index}")]
                ),
            ),
            State(
                f"code_word{index}",
                [
                    Do(pkt.dot("extract").call(words.dot("next"))),
                    Assign(
                        meta.dot("code"),
                        (meta.dot("code") << 32) | words.dot("last").dot("w").cast(code_bits),
                    ),
                    Assign(meta.dot("words_left"), meta.dot("words_left") - 1),
                ],
                f"code_words{index}",
            ),
        ]
    states += [
        State(
            "stack_option",
            [
                If(
                    meta.dot("seen_sv").eq(0).lor(hdr.dot("stk_hdr").dot("isValid").call()),
                    [malformed()],
                ),
                Do(pkt.dot("extract").call(hdr.dot("stk_hdr"))),
                Assign(meta.dot("words_left"), hdr.dot("stk_hdr").dot("len").cast(8)),
                If(
                    hdr.dot("stk_hdr")
                    .dot("len")
                    .cast(8)
                    .ne(meta.dot("sv_depth"))
                    .lor(hdr.dot("stk_hdr").dot("r").ne(0)),
                    [malformed()],
                ),
                *_sub_left(option_words(hdr.dot("stk_hdr")) + 4),
            ],
            Select([meta.dot("malformed")], [("1", "accept"), ("default", "stack_entries")]),
            "One stack option holds the whole stack (stack_max_depth <= 31), top first.",
        ),
        State(
            "stack_entries",
            [],
            Select([meta.dot("words_left")], [("0", "options"), ("default", "stack_entry")]),
        ),
        State(
            "stack_entry",
            [
                Do(pkt.dot("extract").call(hdr.dot("stk_w").dot("next"))),
                Assign(
                    meta.dot("stack"),
                    (meta.dot("stack") << 32)
                    | hdr.dot("stk_w").dot("last").dot("w").cast(stack_bits),
                ),
                Assign(meta.dot("depth"), meta.dot("depth") + 1),
                Assign(meta.dot("words_left"), meta.dot("words_left") - 1),
            ],
            "stack_entries",
        ),
        State(
            "foreign_option",
            [],
            Select([meta.dot("seen_sv")], [("0", "foreign_pre"), ("default", "foreign_post")]),
            "Options of other classes keep their place before or after SwitchVM's.",
        ),
    ]
    for where in ("pre", "post"):
        size = pkt.dot("lookahead<bit<32>>").call().slice(4, 0).cast(16) << 2
        states.append(
            State(
                f"foreign_{where}",
                [
                    Assign(meta.dot("foreign_bytes"), meta.dot("foreign_bytes") + size + 4),
                    *_sub_left(size + 4),
                    Do(
                        pkt.dot("extract").call(
                            hdr.dot(f"foreign_{where}").dot("next"),
                            (pkt.dot("lookahead<bit<32>>").call().slice(4, 0).cast(32)) << 5,
                        )
                    ),
                ],
                "options",
            )
        )
    return states + inner_states()
