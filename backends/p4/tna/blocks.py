"""The blocks the TNA program adds around the model: BF-RT names, deparsers, egress parser.

Contract: :func:`named_for_bfrt` names a control's tables and actions for BF-RT (an
``@name`` on every table key, and on every action parameter Python reserves);
:func:`deparser` is a deparser control that recomputes the IPv4 checksum with TNA's
``Checksum`` extern when ``meta.fix_checksum`` is set, then emits the headers it is given;
:func:`egress_parser` parses what the egress rewrites of a multicast copy (Ethernet,
VLAN, IPv4). :class:`~.architecture.Tna` assembles them around the model.
"""

from __future__ import annotations

import keyword
from collections.abc import Sequence
from dataclasses import replace

from dpfc.backends.p4.arch import key_name, parameter_names
from dpfc.backends.p4.lang import (
    Assign,
    Block,
    Decl,
    DefaultInit,
    Do,
    Expr,
    Function,
    If,
    Instance,
    Select,
    State,
    Table,
    n,
)

meta, hdr, pkt = n("meta"), n("hdr"), n("pkt")
eg_intr_md = n("eg_intr_md")


def named_for_bfrt(decls: Sequence[Decl]) -> list[Decl]:
    """``decls`` named for the control plane (``@name``): every table key, and every action
    parameter Python reserves (``pass`` becomes ``pass_``: bfrt_python passes action data
    as keyword arguments)."""
    out: list[Decl] = []
    for decl in decls:
        if isinstance(decl, Table):
            decl = replace(decl, key_names=[key_name(k) for k, _ in decl.keys])
        elif isinstance(decl, Function) and decl.ret == "action":
            params = [
                f'@name("{name}_") {param}' if keyword.iskeyword(name) else param
                for param, name in zip(decl.params, parameter_names(decl.params), strict=True)
            ]
            decl = replace(decl, params=params)
        out.append(decl)
    return out


def deparser(
    name: str, metadata: str, intrinsic: str, fields: Expr, emits: Sequence[Expr]
) -> Block:
    ipv4 = hdr.dot("ipv4")
    update = Assign(ipv4.dot("checksum"), n("ipv4_checksum.update").call(fields))
    return Block(
        "control",
        name,
        ["packet_out pkt", "inout headers_t hdr", f"in {metadata} meta", f"in {intrinsic}"],
        [Instance("Checksum", [], "ipv4_checksum")],
        [
            If(meta.dot("fix_checksum").eq(1), [update]),
            *(Do(pkt.dot("emit").call(h)) for h in emits),
        ],
    )


def egress_parser() -> Block:
    """Egress reads the headers a multicast copy's rewrite changes: Ethernet, VLAN, IPv4."""
    eth, vlan = hdr.dot("eth"), hdr.dot("vlan")
    return Block(
        "parser",
        "SwitchVMEgressParser",
        [
            "packet_in pkt",
            "out headers_t hdr",
            "out egress_metadata_t meta",
            "out egress_intrinsic_metadata_t eg_intr_md",
        ],
        [
            State(
                "start",
                [
                    Do(pkt.dot("extract").call(eg_intr_md)),
                    Assign(meta, DefaultInit()),
                    Do(pkt.dot("extract").call(eth)),
                ],
                Select(
                    [eth.dot("etherType")],
                    [("0x8100", "parse_vlan"), ("0x0800", "parse_ipv4"), ("default", "accept")],
                ),
            ),
            State(
                "parse_vlan",
                [Do(pkt.dot("extract").call(vlan))],
                Select([vlan.dot("etherType")], [("0x0800", "parse_ipv4"), ("default", "accept")]),
            ),
            State("parse_ipv4", [Do(pkt.dot("extract").call(hdr.dot("ipv4")))], "accept"),
        ],
    )
