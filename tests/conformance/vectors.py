"""The conformance vectors: every instruction, branch kind, mapping kind, steering action,
permission refusal, gas exhaustion, malformed input, and the example apps.

Each vector is data (:class:`~tests.conformance.harness.Vector`); its expected outcome is
the golden file ``vectors/<name>.json`` (written from the simulator with ``DPFC_BLESS=1``,
read before committing), which both targets must reproduce byte for byte. Operands are the
boundary words of docs/isa.md §4 (0, 1, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF) in every
pairing, plus a few ordinary words.

Not covered by design: LOAD_MD of ``timestamp`` and ``queue_depth`` — the simulator takes
them from its caller, bmv2 from its clock and queues (docs/p4.md, "Differences").
"""

from __future__ import annotations

import itertools

from tests.conformance.harness import Lane, Packet, Vector
from tests.conformance.header_vectors import header_vectors

BOUNDS = (0, 1, 0x7FFF_FFFF, 0x8000_0000, 0xFFFF_FFFF)
PAIRS = list(itertools.product(BOUNDS, BOUNDS))
WORDS = (*BOUNDS, 0x1234_5678, 0xDEAD_BEEF, 42)
HEAD = ".dpf v\n.target tofino1\n.placement {placement}\n.app 0x77\n"


def asm(body: str, placement: str = "packet") -> str:
    return HEAD.format(placement=placement) + body


def two_operands(body: str) -> str:
    """Prolog: A0, B0 from the stack (top first); the epilog pushes A0, B0."""
    return asm(
        "prolog p:\n    POP A0\n    POP B0\n    JMP e\n" + body + "epilog out:\n    PUSH A0, B0\n"
    )


def alu(op: str) -> Vector:
    operands = "A0" if op == "NEG" else "A0, B0"
    source = two_operands(f"eu0 e:\n    {op} {operands}\n    HALT out\n")
    return Vector(f"alu_{op.lower()}", source, packets=tuple(Packet(p) for p in PAIRS))


def branch(op: str) -> Vector:
    body = (
        f"eu0 e:\n    {op} A0, B0, yes, no\n"
        "eu1 yes:\n    LOAD_IMM B1, 1\n    HALT out\n"
        "eu1 no:\n    LOAD_IMM B1, 2\n    HALT out\n"
    )
    source = asm(
        "prolog p:\n    POP A0\n    POP B0\n    JMP e\n" + body + "epilog out:\n    PUSH B1\n"
    )
    return Vector(f"branch_{op.lower()}", source, packets=tuple(Packet(p) for p in PAIRS))


def branch_immediate() -> Vector:
    body = (
        "eu0 e:\n    BSLT A0, -5, yes, no\n"
        "eu1 yes:\n    LOAD_IMM B1, 1\n    HALT out\n"
        "eu1 no:\n    LOAD_IMM B1, 2\n    HALT out\n"
    )
    source = asm("prolog p:\n    POP A0\n    JMP e\n" + body + "epilog out:\n    PUSH B1\n")
    words = (*BOUNDS, 0xFFFF_FFFB, 0xFFFF_FFFA, 0xFFFF_FFFC)
    return Vector("branch_immediate", source, packets=tuple(Packet((w,)) for w in words))


def memory(op: str, mapping: str) -> Vector:
    text = f"{op} [A1], B1" if op == "STORE" else f"{op} B1, [A1]"
    source = asm(
        "prolog p:\n    POP A1\n    POP B1\n    JMP z\n"
        "eu0 z:\n    JMP e\n"
        f"eu1 e:\n    {text}\n    JMP d\n"
        "eu2 d:\n    HALT out\n"
        "epilog out:\n    PUSH A1, B1\n",
    )
    # eu1 lane 1: 8 words, 5..7 preset; addresses 0..9 (8, 9 unmapped: read 0, write nothing)
    initial = (0, 0, 0, 0, 0, 0x7FFF_FFFF, 0x8000_0000, 0xFFFF_FFFF)
    packets = [Packet((address, value)) for address in (0, 5, 6, 7, 9) for value in BOUNDS]
    packets += [Packet((3, 40)), Packet((3, 2)), Packet((8, 1))]
    return Vector(
        f"mem_{op.lower()}_{mapping}",
        source,
        packets=tuple(packets),
        lanes=(Lane(1, 1, 8, mapping, initial),),
    )


def vectors() -> list[Vector]:
    out: list[Vector] = []
    out += [alu(op) for op in ("ADD", "SUB", "AND", "OR", "XOR", "LSH", "RSH", "NEG", "MIN", "MAX")]
    out += [branch(op) for op in ("BEQ", "BSET", "BLT", "BGT", "BSLT", "BSGT")]
    out.append(branch_immediate())
    for op in ("LOAD", "STORE", "FAADD", "FAAND", "FAOR", "FAMAX", "FAMIN"):
        out.append(memory(op, "segment"))
    out.append(memory("FAADD", "direct"))
    out += selectors() + prolog() + epilog() + permissions() + malformed()
    out += egress()
    out += header_vectors()
    out += apps()
    return out


EGRESS_HEAD = ".dpf eg\n.target tofino1\n.placement {placement}\n.pipeline egress\n.app 0x77\n"


def egress_asm(body: str, placement: str = "switch") -> str:
    return EGRESS_HEAD.format(placement=placement) + body


def egress() -> list[Vector]:
    """Egress DPFs (isa.md item 20): the output port, per-pipeline memory, each multicast
    copy, NEXT_PC and HDR_MOD in the egress, refused steering, the ingress's stack."""
    port = (
        "prolog p:\n    POP A0\n    LOAD_MD A1, egress_port\n    LOAD_MD A2, ingress_port\n"
        "    JMP e\n"
        "eu0 e:\n    LOAD_IMM B3, 1\n    FAADD B3, [A3]\n    HALT out\n"
        "epilog out:\n    PUSH A0, A1, A2, B3\n"
    )
    # Each multicast copy counts too, but pushes no count: bmv2 runs the copies' egress
    # passes in whichever order its egress threads take them, so the count a copy would
    # see is not defined (the final count is).
    copy_port = port.replace("PUSH A0, A1, A2, B3", "PUSH A0, A1, A2")
    count = Lane(0, 3, 4, pipeline="egress")
    ingress_count = asm(
        "prolog p:\n    POP A0\n    JMP e\n"
        "eu0 e:\n    LOAD_IMM B3, 7\n    FAADD B3, [A3]\n    HALT out\n"
        "epilog out:\n    PUSH A0, A0\n    FWD multicast, A0\n",
        placement="switch",
    )
    steer = egress_asm(
        "prolog p:\n    POP A0\n    JMP e\neu0 e:\n    HALT out\n"
        "epilog out:\n    PUSH A0\n    FWD forward, 1\n"
    )
    drop = egress_asm(
        "prolog p:\n    POP A0\n    JMP e\neu0 e:\n    BEQ A0, 0, quit, go\n"
        "eu1 go:\n    HALT out\neu1 quit:\n    HALT gone\n"
        "epilog out:\n    PUSH A0\n    NEXT_PC @switch:5\n    HDR_MOD\n"
        "epilog gone:\n    FWD drop\n",
        placement="packet",
    )
    return [
        Vector(
            "egress_in_switch",
            egress_asm(port),
            packets=(Packet((1,)), Packet((2,), port=9), Packet((3,), app_id=0x78)),
            lanes=(count,),
        ),
        Vector(
            "egress_in_packet", egress_asm(port, "packet"), packets=(Packet((4,)),), lanes=(count,)
        ),
        Vector(
            "egress_after_ingress_multicast",
            ingress_count,
            egress=egress_asm(copy_port),
            packets=(Packet((0,)), Packet((2,)), Packet((9,))),
            lanes=(Lane(0, 3, 4), count),
        ),
        Vector("egress_steering_refused", steer, packets=(Packet((1,)),)),
        Vector("egress_next_pc_drop", drop, packets=(Packet((1,)), Packet((0,)))),
        app(
            "app_telemetry",
            "telemetry",
            "max_hop_latency",
            (Packet((0, 0)), Packet((500, 9)), Packet((100, 1))),
            unread=("eu2.lane1.egress",),  # last_report: the switch's clock
        ),
    ]


def selectors() -> list[Vector]:
    mov = asm(
        "prolog p:\n    POP A0\n    POP A1\n    POP A2\n    POP A3\n    POP B0\n    POP B1\n"
        "    POP B2\n    POP B3\n    JMP e\n"
        "eu0 e:\n    MOV A0, B3\n    MOV A1, A0\n    MOV B3, A2\n    MOV B0, B0\n    MOV A3, B1\n"
        "    JMP f\n"
        "eu1 f:\n    HALT out\n"
        "epilog out:\n    PUSH A0, A1, A2, A3, B0, B1, B2, B3\n"
    )
    hash_ = asm(
        "prolog p:\n    POP A0\n    POP A1\n    POP A2\n    POP A3\n    JMP e\n"
        "eu0 e:\n    HASH A0\n    HASH A1\n    HASH A2\n    HASH A3\n    HALT out\n"
        "epilog out:\n    PUSH A0, A1, A2, A3\n"
    )
    imm = asm(
        "prolog p:\n    POP A0\n    JMP e\n"
        "eu0 e:\n    LOAD_IMM B0, 0xffffffff\n    LOAD_IMM B1, 0x80000000\n    HALT out\n"
        "epilog out:\n    PUSH B0, B1, A0\n"
    )
    const = asm(
        "prolog p:\n    POP A0\n    JMP e\n"
        "eu0 e:\n    LOAD_CONST B0, 0\n    LOAD_CONST B1, 5\n    LOAD_CONST B2, 255\n"
        "    LOAD_CONST B3, 7\n    HALT out\n"
        "epilog out:\n    PUSH B0, B1, B2, B3\n"
    )
    words = [tuple(WORDS[(i + k) % len(WORDS)] for k in range(8)) for i in range(len(WORDS))]
    return [
        Vector("sel_mov", mov, packets=tuple(Packet(w) for w in words)),
        Vector("sel_hash", hash_, packets=tuple(Packet(w[:4]) for w in words)),
        Vector("sel_load_imm", imm, packets=(Packet((3,)),)),
        Vector(
            "sel_load_const",
            const,
            packets=(Packet((1,)),),
            constants=((0, 0xFFFF_FFFF), (5, 0x8000_0000), (255, 12345)),
        ),
    ]


def prolog() -> list[Vector]:
    pop_peek = asm(
        "prolog p:\n    PEEK A0\n    POP A1\n    POP B2\n    PEEK B3\n    JMP e\n"
        "eu0 e:\n    HALT out\n"
        "epilog out:\n    PUSH A0, A1, B2, B3\n"
    )
    md = asm(
        "prolog p:\n    LOAD_MD A0, ingress_port\n    LOAD_MD A1, switch_id\n"
        "    LOAD_MD A2, packet_length\n    LOAD_MD A3, pipe_id\n    JMP e\n"
        "eu0 e:\n    HALT out\n"
        "epilog out:\n    PUSH A0, A1, A2, A3\n"
    )
    rand = asm(
        "prolog p:\n    RAND A0\n    RAND B1\n    RAND A3\n    JMP e\n"
        "eu0 e:\n    HALT out\n"
        "epilog out:\n    PUSH A0, B1, A3\n"
    )
    return [
        # three, two, one, zero stack words: underflow reads 0
        Vector(
            "prolog_pop_peek",
            pop_peek,
            packets=(Packet((1, 2, 3)), Packet((9, 8)), Packet((7,)), Packet()),
        ),
        Vector("prolog_load_md", md, packets=(Packet((1,)), Packet((1, 2, 3), port=9))),
        Vector("prolog_rand", rand, packets=(Packet(), Packet(), Packet())),
    ]


def steer(name: str, fwd: str, **kwargs: object) -> Vector:
    source = asm(
        f"prolog p:\n    POP A0\n    JMP e\neu0 e:\n    HALT out\nepilog out:\n    PUSH A0\n{fwd}"
    )
    packets = kwargs.pop("packets", (Packet((2,)), Packet((5,))))
    return Vector(name, source, packets=packets, **kwargs)  # type: ignore[arg-type]


def epilog() -> list[Vector]:
    halt = asm(
        "prolog p:\n    POP A0\n    POP B0\n    JMP e\n"
        "eu0 e:\n    BEQ A0, 0, stop, go\n"
        "eu1 go:\n    ADD A0, B0\n    JMP f\n"
        "eu1 stop:\n    HALT quit\n"
        "eu2 f:\n    ADD A0, B0\n    HALT out\n"
        "epilog out:\n    PUSH A0\n"
        "epilog quit:\n    PUSH B0\n    FWD drop\n"
    )
    next_pc = asm(
        "prolog p:\n    POP A0\n    JMP e\n"
        "eu0 e:\n    HALT out\n"
        "epilog out:\n    PUSH A0\n    NEXT_PC @switch:9\n    HDR_MOD\n"
    )
    next_reg = (
        "prolog p:\n    POP A0\n    POP B1\n    JMP e\n"
        "eu0 e:\n    HALT out\n"
        "epilog out:\n    PUSH A0\n    NEXT_PC B1\n"
    )
    # NEXT_PC from a register: its low 16 bits (0xFFFF: none), in-packet code naming its own
    # prolog; in-switch code naming in-packet code it lacks is dropped by the simulator
    # only (docs/p4.md, "Differences between bmv2 and the simulator")
    switch_packets = (Packet((4, 9)), Packet((4, 0xFFFF)))
    packet_packets = (*switch_packets, Packet((4, 0x1_8000)))
    loop = asm(
        # recirculates while the counter on the stack is below 3: gas 8 runs it to the end,
        # gas 2 is exhausted first
        "prolog p:\n    POP A0\n    JMP e\n"
        "eu0 e:\n    LOAD_IMM B0, 1\n    ADD A0, B0\n    BLT A0, 3, again, done\n"
        "eu1 again:\n    HALT more\n"
        "eu1 done:\n    HALT out\n"
        "epilog more:\n    PUSH A0\n    FWD recirculate\n    NEXT_PC p\n"
        "epilog out:\n    PUSH A0\n"
    )
    recirculated_md = asm(
        # the second pass reports its metadata: a recirculated packet comes back on the port
        # it arrived by, with its new length
        "prolog p:\n    POP A0\n    LOAD_MD A1, ingress_port\n    LOAD_MD A2, packet_length\n"
        "    JMP e\n"
        "eu0 e:\n    LOAD_IMM B0, 1\n    ADD A0, B0\n    BLT A0, 2, again, done\n"
        "eu1 again:\n    HALT more\n"
        "eu1 done:\n    HALT out\n"
        "epilog more:\n    PUSH A0, A0\n    FWD recirculate\n    NEXT_PC p\n"
        "epilog out:\n    PUSH A0, A1, A2\n"
    )
    wide = asm(
        "prolog p:\n    POP A0\n    POP A1\n    POP A2\n    POP A3\n    POP B0\n    POP B1\n"
        "    POP B2\n    POP B3\n    JMP e\n"
        "eu0 e:\n    HALT out\n"
        "epilog out:\n    PUSH B3, B2, B1, B0, A3, A2, A1, A0\n"
    )
    overflow = asm(
        "prolog p:\n    POP A0\n    JMP e\n"
        "eu0 e:\n    HALT out\n"
        "epilog out:\n    PUSH A0, A0, A0, A0, A0, A0, A0, A0\n"
    )
    return [
        steer("steer_pass", ""),
        steer("steer_drop", "    FWD drop\n"),
        steer("steer_return", "    FWD return_to_sender\n"),
        steer("steer_forward_imm", "    FWD forward, 6\n"),
        steer(
            "steer_forward_reg",
            "    FWD forward, A0\n",
            packets=(Packet((2,)), Packet((5,)), Packet((200,))),
        ),
        steer(
            "steer_multicast",
            "    FWD multicast, A0\n",
            packets=(Packet((0,)), Packet((3,)), Packet((9,))),
        ),
        steer(
            "steer_set_port",
            "    FWD set_port, A0\n",
            packets=(Packet((2,)), Packet((12,)), Packet((99,))),
        ),
        Vector(
            "epilog_halt", halt, packets=(Packet((0, 5)), Packet((1, 5)), Packet((0xFFFF_FFFF, 1)))
        ),
        Vector("epilog_next_pc_hdr_mod", next_pc, packets=(Packet((4,)),)),
        Vector("epilog_next_pc_register", asm(next_reg), packets=packet_packets),
        Vector("epilog_next_pc_register_switch", asm(next_reg, "switch"), packets=switch_packets),
        Vector(
            "recirculated_metadata",
            recirculated_md,
            packets=(Packet((0,)), Packet((0,), port=9)),
        ),
        Vector(
            "gas_recirculate",
            loop,
            packets=(Packet((0,)), Packet((0,), gas=2), Packet((0,), gas=0)),
        ),
        Vector(
            "epilog_push_eight",
            wide,
            packets=(Packet(tuple(range(1, 9))), Packet(tuple(range(1, 17)))),
        ),
        Vector(
            "epilog_stack_overflow",
            overflow,
            packets=(Packet(tuple(range(1, 10))), Packet(tuple(range(1, 11)))),
        ),
    ]


def permissions() -> list[Vector]:
    md = asm(
        "prolog p:\n    LOAD_MD A0, ingress_port\n    JMP e\n"
        "eu0 e:\n    HALT out\n"
        "epilog out:\n    PUSH A0\n"
    )
    plain = asm(
        "prolog p:\n    POP A0\n    JMP e\neu0 e:\n    HALT out\nepilog out:\n    PUSH A0\n"
    )
    loop = asm(
        "prolog p:\n    POP A0\n    JMP e\neu0 e:\n    HALT out\n"
        "epilog out:\n    PUSH A0\n    FWD recirculate\n"
    )
    switch_code = asm(
        "prolog p:\n    POP A0\n    JMP e\neu0 e:\n    NEG A0\n    HALT out\nepilog out:\n    PUSH A0\n",
        placement="switch",
    )
    return [
        Vector("perm_no_metadata", md, metadata=False, packets=(Packet(),)),
        Vector("perm_no_recirculate", loop, recirculate=False, packets=(Packet((1,)),)),
        Vector(
            "perm_wrong_app_id",
            plain,
            packets=(Packet((1,), app_id=0x78), Packet((1,), tenant=99), Packet((1,))),
        ),
        Vector(
            "perm_pass_unauthorized",
            plain,
            unauthorized="pass",
            packets=(Packet((1,), app_id=0x78),),
        ),
        Vector(
            "perm_default_dpf",
            switch_code,
            default_dpf=True,
            packets=(Packet((5,), no_dpf=True), Packet((5,))),
        ),
    ]


def malformed() -> list[Vector]:
    plain = asm(
        "prolog p:\n    POP A0\n    JMP e\neu0 e:\n    HALT out\nepilog out:\n    PUSH A0\n"
    )
    from dpfc.packet.layers import build_frame, build_inner

    good = build_frame(tenant_id=7, options=b"", inner=build_inner(b"x"))
    not_ipv4 = bytes(12) + b"\x86\xdd" + bytes(60)
    truncated = good[:40]
    return [
        Vector(
            "malformed_frames",
            plain,
            packets=(
                Packet(raw=not_ipv4),
                Packet(raw=truncated),
                Packet(raw=good),
                Packet((1,)),
            ),
        )
    ]


def app(
    name: str, modules: str, entry: str, packets: tuple[Packet, ...], **kwargs: object
) -> Vector:
    return Vector(name, modules, kind="app", entry=entry, packets=packets, **kwargs)  # type: ignore[arg-type]


VALID = 0x8000_0000


def apps() -> list[Vector]:
    return [
        app("app_counter", "counter", "counter", (Packet((5,)), Packet((5,)), Packet((9,)))),
        app(
            "app_kvs_get",
            "small_kvs count_min",
            "cache_get",
            (Packet((3,)), Packet((4,)), Packet((3,))),
            arrays={
                "index": (0, 0, 0, VALID | 2, 0),
                "values0": (0, 0, 11),
                "values1": (0, 0, 22),
                "values2": (0, 0, 33),
            },
        ),
        app("app_count_min", "count_min", "count_min", (Packet((3,)), Packet((3,)), Packet((77,)))),
        app("app_lb1", "lb1", "lb1", tuple(Packet((v,)) for v in (1, 2, 3, 0xABCDEF, 0xFFFF_FFFF))),
        app("app_lb2", "lb2", "lb2", tuple(Packet() for _ in range(4))),
        app("app_lb3_client", "lb3", "lb3_client", (Packet(), Packet(), Packet())),
        app("app_paxos_leader", "paxos", "leader", (Packet(), Packet())),
        app(
            "app_paxos_acceptor",
            "paxos",
            "acceptor",
            (Packet((0, 5, 100)), Packet((0, 3, 101)), Packet((0, 5, 102)), Packet((0, 9, 103))),
        ),
    ]
