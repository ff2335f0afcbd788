"""The ingress control's tables, actions and arrays: what the control plane writes.

Contract: :func:`ingress_tables` declares, in a fixed order, the switch settings, the
permission and app-id tables (R1-R4), forwarding, multicast and routes (R7, R8), the
LOAD_CONST and RAND state, the counters, the HASH units, the lane memories with their
translation tables (R11), the code tables of every stage and the in-packet decoders. The
names are :mod:`.layout`'s; how an array is declared and updated is the architecture's.
"""

from __future__ import annotations

from dpfc.backends.p4 import decode, execute, fetch, lane_memory
from dpfc.backends.p4.arch import Architecture
from dpfc.backends.p4.lang import Assign, Decl, If, Lit, Table, action, mux, n
from dpfc.backends.p4.layout import COUNTERS, MAX_TENANT_SLOTS, Layout
from dpfc.backends.p4.steering import OUT_DROP, OUT_MULTICAST, OUT_PORT, OUT_ROUTE

meta, hdr = n("meta"), n("hdr")


def ingress_tables(layout: Layout, arch: Architecture) -> list[Decl]:
    """Every table, action and array of the ingress control, in declaration order."""
    profile = layout.profile
    m = meta.dot
    out: list[Decl] = [
        action(
            "configure",
            [
                "bit<32> switch_id",
                "bit<32> pipe_id",
                "bit<16> ports",
                "bit<1> has_default_port",
                "bit<9> default_port",
            ],
            [
                Assign(m("switch_id"), n("switch_id")),
                Assign(m("pipe_id"), n("pipe_id")),
                Assign(m("ports"), n("ports")),
                Assign(m("has_default_port"), n("has_default_port")),
                Assign(m("default_port"), n("default_port")),
            ],
            "The switch's own settings (LOAD_MD switch_id, set_port's port count, R8's default port).",
        ),
        Table(
            "switch_config",
            [],
            ["configure"],
            "configure(0, 0, 0, 0, 0)",
            1,
            "Keyless: the operator sets its default action (simulator R8, R21).",
        ),
        action(
            "permit",
            [
                "bit<16> slot",
                "bit<32> app_id",
                "bit<1> metadata",
                "bit<1> privileged",
                "bit<1> may_recirculate",
                "bit<1> pass",
                "bit<1> has_default",
                "bit<16> default_dpf",
            ],
            [
                Assign(m("known"), Lit(1)),
                Assign(m("slot"), n("slot")),
                Assign(m("app_id"), n("app_id")),
                Assign(m("perm_metadata"), n("metadata")),
                Assign(m("perm_privileged"), n("privileged")),
                Assign(m("perm_recirculate"), n("may_recirculate")),
                Assign(m("perm_pass"), n("pass")),
                Assign(m("has_default"), n("has_default")),
                Assign(m("default_dpf"), n("default_dpf")),
            ],
            "A permission entry (paper §3.3; isa.md item 12).",
        ),
        Table(
            "permissions",
            [(m("tenant"), "exact")],
            ["permit", "NoAction"],
            "NoAction",
            profile.permission_entries,
            "Tenant (the Geneve VNI) -> its permission entry (R1, R2, R4, R5, R6).",
        ),
        action("app_token", [], [Assign(m("app_ok"), Lit(1))]),
        Table(
            "app_tokens",
            [(m("tenant"), "exact"), (hdr.dot("sv").dot("app_id"), "exact")],
            ["app_token", "NoAction"],
            "NoAction",
            profile.permission_entries * 4,
            "The app-id tokens a tenant's packets may carry (R3).",
        ),
        action(
            "destination",
            [
                "bit<1> has_port",
                "bit<9> port",
                "bit<1> set_ip",
                "bit<32> ip",
                "bit<1> set_eth",
                "bit<48> eth",
            ],
            [
                Assign(m("verdict"), mux(n("has_port").eq(1), Lit(OUT_PORT, 3), Lit(OUT_ROUTE, 3))),
                Assign(m("out_port"), n("port")),
                Assign(m("set_ip"), n("set_ip")),
                Assign(m("new_ip"), n("ip")),
                Assign(m("set_eth"), n("set_eth")),
                Assign(m("new_eth"), n("eth")),
            ],
            "Virtual destination #value of a tenant (R7).",
        ),
        action(
            "no_entry", [], [Assign(m("verdict"), Lit(OUT_DROP, 3)), Assign(m("known"), Lit(0))]
        ),
        Table(
            "forwarding",
            [(m("tenant"), "exact"), (m("steer"), "exact")],
            ["destination", "no_entry"],
            "no_entry",
            profile.forwarding_entries,
            "(tenant, index) -> the destination `forward` names (R7).",
        ),
        action(
            "group",
            ["bit<16> mcast_grp"],
            [Assign(m("mcast"), n("mcast_grp")), Assign(m("verdict"), Lit(OUT_MULTICAST, 3))],
        ),
        Table(
            "multicast",
            [(m("tenant"), "exact"), (m("steer"), "exact")],
            ["group", "no_entry"],
            "no_entry",
            profile.forwarding_entries,
            "(tenant, group) -> the multicast group of its copies (R7).",
        ),
        action("route", ["bit<9> port"], [arch.send_to(n("port"))]),
        action(
            "no_route",
            [],
            [
                If(
                    m("has_default_port").eq(1),
                    [arch.send_to(m("default_port"))],
                    [arch.drop()],
                )
            ],
        ),
        Table(
            "routes",
            [(m("route_ip"), "exact")],
            ["route", "no_route"],
            "no_route",
            4096,
            "R8: routes by IPv4 destination.",
        ),
    ]
    address = (m("slot").cast(32) * profile.const_table_entries) + n("index").cast(32)
    out += arch.constants(MAX_TENANT_SLOTS * profile.const_table_entries, address)
    out += arch.random()
    for counter in COUNTERS:
        out += arch.counter(counter, MAX_TENANT_SLOTS, m("slot").cast(32))
    out += arch.hash_actions(layout)
    out += lane_memory.memory_decls(layout, arch)
    out += execute.code_tables(layout)
    out += [decode.find_bundle(layout), fetch.fetch_bundle(layout), fetch.fetch_epilog(layout)]
    return out
