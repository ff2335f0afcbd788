"""A packet's ``inner`` table: the tenant's own frame, whose headers LOAD_MD's header fields
read (docs/isa.md §4; docs/testing.md, "Packets: the inputs").

Contract: :func:`read_inner` checks an ``inner`` table strictly (its keys, types and ranges:
DPF4102–DPF4105 with the key path, like every key of a test file) into an
:class:`InnerSpec`; :meth:`InnerSpec.frame` builds the inner frame with
``dpfc.packet.build_inner``. A key left out keeps ``build_inner``'s default (192.168.0.1 to
192.168.0.2, UDP 9000 to 9000, TTL 64, DSCP 0), so a packet without ``inner`` is the frame
it always was.
"""

from __future__ import annotations

from dataclasses import dataclass

from dpfc.backends.scenario import CODE_VALUE, Fail, Table, quote
from dpfc.packet import build_inner

INNER_KEYS = ("src", "dst", "proto", "sport", "dport", "ttl", "dscp")
PROTOCOLS = {"udp": 17, "tcp": 6, "icmp": 1}


@dataclass(frozen=True)
class InnerSpec:
    src: str = "192.168.0.1"
    dst: str = "192.168.0.2"
    proto: int = 17
    sport: int = 9000
    dport: int = 9000
    ttl: int = 64
    dscp: int = 0

    def frame(self, payload: bytes) -> bytes:
        return build_inner(
            payload,
            src=self.src,
            dst=self.dst,
            proto=self.proto,
            sport=self.sport,
            dport=self.dport,
            ttl=self.ttl,
            dscp=self.dscp,
        )


def read_inner(fail: Fail, table: Table | None) -> InnerSpec:
    """The inner frame a packet's ``inner`` table describes (None: the default frame)."""
    if table is None:
        return InnerSpec()
    table.only(*INNER_KEYS)
    default = InnerSpec()

    def address(key: str, fallback: str) -> str:
        if not table.has(key):
            return fallback
        return ".".join(str(b) for b in fail.ipv4(table.raw(key), table.at(key)))

    proto = default.proto
    if table.has("proto"):
        raw = table.raw("proto")
        if isinstance(raw, str):
            if raw not in PROTOCOLS:
                names = ", ".join(PROTOCOLS)
                fail(
                    CODE_VALUE,
                    f"{table.at('proto')}: {quote(raw)} is not a protocol ({names}, or 0..255)",
                )
            proto = PROTOCOLS[raw]
        else:
            proto = fail.integer(raw, table.at("proto"), high=255)

    def number(key: str, high: int, fallback: int) -> int:
        value = table.optional_integer(key, high=high)
        return fallback if value is None else value

    return InnerSpec(
        src=address("src", default.src),
        dst=address("dst", default.dst),
        proto=proto,
        sport=number("sport", 0xFFFF, default.sport),
        dport=number("dport", 0xFFFF, default.dport),
        ttl=number("ttl", 255, default.ttl),
        dscp=number("dscp", 63, default.dscp),
    )
