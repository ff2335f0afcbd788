"""The end of a pass: the epilog's stack, pointer and steering, and where the packet goes.

Contract: :func:`steering` turns the decoded epilog (``meta.e_*``) into the new stack,
DPF pointers and gas, and decides the packet's fate in ``meta.verdict`` (the simulator's
rules R6-R10, R15, R16: a refused privileged action, exhausted gas, a missing forwarding
entry); :func:`finish` writes the new SwitchVM options and lengths when the DPF ran and
sends the packet where the verdict says, through the architecture's primitives.
:func:`route_plain` and :func:`unauthorized` are the two fates of a packet no DPF
changes (R8, and R3/R5/R6's unauthorized action).
"""

from __future__ import annotations

from dpfc.backends.p4.arch import Architecture
from dpfc.backends.p4.engine import epilog_field, pick_register
from dpfc.backends.p4.lang import (
    Assign,
    Do,
    If,
    Lit,
    Stmt,
    Var,
    chain,
    mux,
    n,
)
from dpfc.backends.p4.layout import CODE_OPTION_WORDS, FOREIGN_OPTIONS, Layout
from dpfc.encoding import IN_PACKET, OPTION_CLASS, PTR_NONE

meta, hdr = n("meta"), n("hdr")
# What the pipeline decided to do with the packet (meta.verdict).
OUT_DROP, OUT_ROUTE, OUT_PORT, OUT_MULTICAST, OUT_BACK, OUT_RECIRCULATE = range(6)


def route_plain() -> list[Stmt]:
    """R8: the packet travels on unchanged, routed by its outer IPv4 destination; a frame
    that is not IPv4 has no route and is dropped (the simulator's rule). In the egress pass
    (isa.md item 20) the port is chosen already: the packet leaves by it."""
    ipv4 = hdr.dot("ipv4")
    return [
        If(
            meta.dot("eg_phase").eq(1),
            [
                Assign(meta.dot("verdict"), Lit(OUT_PORT, 3)),
                Assign(meta.dot("out_port"), meta.dot("eg_port")),
            ],
            [
                If(
                    ipv4.dot("isValid").call().land(ipv4.dot("version").eq(4)),
                    [
                        Assign(meta.dot("verdict"), Lit(OUT_ROUTE, 3)),
                        Assign(meta.dot("route_ip"), ipv4.dot("dst")),
                    ],
                    [Assign(meta.dot("verdict"), Lit(OUT_DROP, 3))],
                )
            ],
        )
    ]


def unauthorized() -> list[Stmt]:
    """The tenant's unauthorized action (R3, R5, R6): pass unchanged, or drop."""
    return [
        Assign(meta.dot("running"), Lit(0)),
        Assign(meta.dot("rewrite"), Lit(0)),
        If(
            meta.dot("perm_pass").eq(1),
            route_plain(),
            [Assign(meta.dot("verdict"), Lit(OUT_DROP, 3))],
        ),
    ]


def steering(layout: Layout) -> list[Stmt]:
    """The epilog's stack, pointer and steering (R6-R10, R15, R16); meta.out says where
    the packet goes, meta.rewrite whether its SwitchVM options change."""
    m, e, sv = meta.dot, epilog_field, hdr.dot("sv")
    profile = layout.profile
    codes = {a.name: a.code for a in profile.steering}
    out: list[Stmt] = [Assign(m("pushed"), Lit(0))]
    for j in range(profile.max_push):
        out.append(
            If(
                e("n_push").gt(j),
                [
                    Assign(
                        m("pushed"),
                        (m("pushed") << 32)
                        | pick_register(layout, e(f"push_{j}").cast(8), "r").cast(
                            layout.stack_bits
                        ),
                    )
                ],
            )
        )
    rest = m("depth") - m("cursor")
    out += [
        Assign(m("new_depth"), e("n_push").cast(8) + rest),
        Assign(
            m("new_stack"),
            n("shl_words").call(m("pushed"), rest) | n("keep_words").call(m("stack"), rest),
        ),
        Assign(
            m("steer"),
            mux(
                e("steer_src").eq(0),
                e("steer_value"),
                pick_register(layout, e("steer_value").slice(7, 0), "r").slice(15, 0),
            ),
        ),
        Assign(m("new_ptr"), mux(sv.dot("isValid").call(), sv.dot("dpf_ptr"), Lit(PTR_NONE, 16))),
        If(e("next_pc_src").eq(1), [Assign(m("new_ptr"), e("next_pc"))]),
        If(
            e("next_pc_src").eq(2),
            [
                Assign(
                    m("new_ptr"), pick_register(layout, e("next_pc").slice(7, 0), "r").slice(15, 0)
                )
            ],
        ),
        Assign(
            m("new_egress"), mux(sv.dot("isValid").call(), sv.dot("egress_ptr"), Lit(PTR_NONE, 16))
        ),
        # In the egress pass NEXT_PC names the next switch's egress DPF (isa.md item 20):
        # the pointers swap roles, and the ingress pointer is the one carried through.
        If(
            m("eg_phase").eq(1),
            [
                Assign(m("swap"), m("new_ptr")),
                Assign(
                    m("new_ptr"),
                    mux(sv.dot("isValid").call(), sv.dot("dpf_ptr"), Lit(PTR_NONE, 16)),
                ),
                If(e("next_pc_src").ne(0), [Assign(m("new_egress"), m("swap"))]),
            ],
        ),
        If(
            e("hdr_mod").eq(1),
            [
                # R10: the code is gone, and so is an in-packet pointer NEXT_PC did not set.
                If(
                    e("next_pc_src")
                    .eq(0)
                    .lor(m("eg_phase").eq(1))
                    .land(m("new_ptr").ne(PTR_NONE))
                    .land((m("new_ptr") & IN_PACKET).ne(0)),
                    [Assign(m("new_ptr"), Lit(PTR_NONE, 16))],
                ),
                If(
                    e("next_pc_src")
                    .eq(0)
                    .lor(m("eg_phase").eq(0))
                    .land(m("new_egress").ne(PTR_NONE))
                    .land((m("new_egress") & IN_PACKET).ne(0)),
                    [Assign(m("new_egress"), Lit(PTR_NONE, 16))],
                ),
            ],
        ),
        Assign(m("gas"), mux(sv.dot("isValid").call(), sv.dot("gas"), Lit(profile.default_gas, 8))),
    ]
    action_ = e("steer_action")
    privileged = action_.eq(codes["set_port"]).land(m("perm_privileged").eq(0))
    recirculate_denied = action_.eq(codes["recirculate"]).land(m("perm_recirculate").eq(0))
    # The egress pass may pass or drop: every other action needs a port not yet chosen.
    egress_steers = (
        m("eg_phase").eq(1).land(action_.ne(codes["pass"]).land(action_.ne(codes["drop"])))
    )
    decide = chain(
        [
            (
                m("new_depth").gt(profile.stack_max_depth).lor(egress_steers),
                [Do(n("count_faults").call()), Assign(m("verdict"), Lit(OUT_DROP, 3))],
            ),
            (privileged.lor(recirculate_denied), [Do(n("count_refused").call()), *unauthorized()]),
            (
                action_.eq(codes["recirculate"]).land(m("gas").eq(0)),
                [Do(n("count_gas_exhausted").call()), Assign(m("verdict"), Lit(OUT_DROP, 3))],
            ),
            (
                action_.eq(codes["drop"]),
                [Assign(m("rewrite"), Lit(1)), Assign(m("verdict"), Lit(OUT_DROP, 3))],
            ),
            (
                action_.eq(codes["recirculate"]),
                [
                    Assign(m("gas"), m("gas") - 1),
                    Assign(m("rewrite"), Lit(1)),
                    Assign(m("verdict"), Lit(OUT_RECIRCULATE, 3)),
                ],
            ),
            (
                action_.eq(codes["return_to_sender"]),
                [Assign(m("rewrite"), Lit(1)), Assign(m("verdict"), Lit(OUT_BACK, 3))],
            ),
            (
                action_.eq(codes["set_port"]),
                [
                    Assign(m("rewrite"), Lit(1)),
                    If(
                        m("steer").lt(m("ports")),
                        [
                            Assign(m("verdict"), Lit(OUT_PORT, 3)),
                            Assign(m("out_port"), m("steer").slice(8, 0)),
                        ],
                        [Assign(m("verdict"), Lit(OUT_DROP, 3))],
                    ),
                ],
            ),
            (
                action_.eq(codes["forward"]),
                [
                    Assign(m("known"), Lit(1)),
                    Do(n("forwarding.apply").call()),
                    If(
                        m("known").eq(0),
                        [Do(n("count_refused").call()), *unauthorized()],
                        [
                            Assign(m("rewrite"), Lit(1)),
                            Assign(
                                m("route_ip"),
                                mux(m("set_ip").eq(1), m("new_ip"), hdr.dot("ipv4").dot("dst")),
                            ),
                        ],
                    ),
                ],
            ),
            (
                action_.eq(codes["multicast"]),
                [
                    Assign(m("known"), Lit(1)),
                    Do(n("multicast.apply").call()),
                    If(
                        m("known").eq(0),
                        [Do(n("count_refused").call()), *unauthorized()],
                        [Assign(m("rewrite"), Lit(1))],
                    ),
                ],
            ),
        ],
        [Assign(m("rewrite"), Lit(1)), *route_plain()],
    )
    out += decide
    return out


def finish(layout: Layout, arch: Architecture) -> list[Stmt]:
    """New SwitchVM options and lengths (when the DPF ran), then where the packet goes."""
    m, sv, e = meta.dot, hdr.dot("sv"), epilog_field
    profile = layout.profile
    changed = (
        sv.dot("isValid")
        .call()
        .lor(m("new_depth").ne(0))
        .lor(m("new_ptr").ne(PTR_NONE))
        .lor(m("verdict").eq(OUT_RECIRCULATE))
    )
    new_header = [
        Do(sv.dot("setValid").call()),
        Assign(sv.dot("cls"), Lit(OPTION_CLASS, 16)),
        Assign(sv.dot("type"), Lit(1, 8)),
        Assign(sv.dot("r"), Lit(0, 3)),
        Assign(sv.dot("len"), Lit(3, 5)),
        Assign(sv.dot("version"), Lit(1, 4)),
        Assign(sv.dot("flags"), Lit(0, 4)),
        Assign(sv.dot("app_id"), m("app_id")),
        Assign(sv.dot("n_code"), Lit(0, 4)),
    ]
    # The simulator puts its options where the first SwitchVM option was, or first.
    for j in range(FOREIGN_OPTIONS):
        new_header += [
            Assign(hdr.dot("foreign_post").at(j), hdr.dot("foreign_pre").at(j)),
            Do(hdr.dot("foreign_pre").at(j).dot("setInvalid").call()),
        ]
    stack = [
        If(
            m("new_depth").ne(0),
            [
                Do(hdr.dot("stk_hdr").dot("setValid").call()),
                Assign(hdr.dot("stk_hdr").dot("cls"), Lit(OPTION_CLASS, 16)),
                Assign(hdr.dot("stk_hdr").dot("type"), Lit(3, 8)),
                Assign(hdr.dot("stk_hdr").dot("r"), Lit(0, 3)),
                Assign(hdr.dot("stk_hdr").dot("len"), m("new_depth").slice(4, 0)),
            ],
            [Do(hdr.dot("stk_hdr").dot("setInvalid").call())],
        )
    ]
    for j in range(profile.stack_max_depth):
        word = hdr.dot("stk_w").at(j)
        stack.append(
            If(
                m("new_depth").gt(j),
                [
                    Do(word.dot("setValid").call()),
                    Assign(
                        word.dot("w"),
                        n("stack_word").call(m("new_stack"), m("new_depth"), Lit(j, 8)),
                    ),
                ],
                [Do(word.dot("setInvalid").call())],
            )
        )
    drop_code: list[Stmt] = [Assign(sv.dot("n_code"), Lit(0, 4))]
    for index in (0, 1):
        drop_code.append(Do(hdr.dot(f"code_hdr{index}").dot("setInvalid").call()))
        drop_code += [
            Do(hdr.dot(f"code_w{index}").at(j).dot("setInvalid").call())
            for j in range(CODE_OPTION_WORDS)
        ]
    code_bytes = mux(
        hdr.dot("code_hdr0").dot("isValid").call(), m("code_len0") + 4, Lit(0, 16)
    ) + mux(hdr.dot("code_hdr1").dot("isValid").call(), m("code_len1") + 4, Lit(0, 16))
    rewrite = [
        If(sv.dot("isValid").call().lnot(), new_header),
        Assign(sv.dot("gas"), m("gas")),
        Assign(sv.dot("stack_depth"), m("new_depth")),
        Assign(sv.dot("n_stack"), mux(m("new_depth").ne(0), Lit(1, 4), Lit(0, 4))),
        Assign(sv.dot("dpf_ptr"), m("new_ptr")),
        Assign(sv.dot("egress_ptr"), m("new_egress")),
        If(e("hdr_mod").eq(1), drop_code),
        *stack,
        Assign(
            m("options_out"),
            m("foreign_bytes")
            + 16
            + code_bytes
            + mux(m("new_depth").ne(0), (m("new_depth").cast(16) << 2) + 4, Lit(0, 16)),
        ),
        Assign(m("delta"), m("options_out") - m("options_in")),
        Assign(hdr.dot("geneve").dot("optLen"), (m("options_out") >> 2).slice(5, 0)),
        Assign(hdr.dot("udp").dot("len"), hdr.dot("udp").dot("len") + m("delta")),
        Assign(hdr.dot("udp").dot("checksum"), Lit(0, 16)),
        Assign(hdr.dot("ipv4").dot("totalLen"), hdr.dot("ipv4").dot("totalLen") + m("delta")),
        Assign(m("fix_checksum"), Lit(1)),
    ]
    eth, ipv4 = hdr.dot("eth"), hdr.dot("ipv4")
    destination = [
        If(
            m("set_ip").eq(1),
            [Assign(ipv4.dot("dst"), m("new_ip")), Assign(m("fix_checksum"), Lit(1))],
        ),
        If(m("set_eth").eq(1), [Assign(eth.dot("dst"), m("new_eth"))]),
    ]
    where = chain(
        [
            (m("verdict").eq(OUT_ROUTE), [*destination, Do(n("routes.apply").call())]),
            (
                m("verdict").eq(OUT_PORT),
                [*destination, arch.send_to(m("out_port"))],
            ),
            (m("verdict").eq(OUT_MULTICAST), [arch.multicast(m("mcast"))]),
            (
                m("verdict").eq(OUT_BACK),
                [
                    Var("bit<48>", "mac", eth.dot("dst")),
                    Assign(eth.dot("dst"), eth.dot("src")),
                    Assign(eth.dot("src"), n("mac")),
                    Var("bit<32>", "ip", ipv4.dot("dst")),
                    Assign(ipv4.dot("dst"), ipv4.dot("src")),
                    Assign(ipv4.dot("src"), n("ip")),
                    arch.send_to(arch.ingress_port()),
                ],
            ),
            (m("verdict").eq(OUT_RECIRCULATE), arch.recirculate()),
        ],
        [arch.drop()],
    )
    return [If(m("rewrite").eq(1).land(changed), rewrite), *where]
