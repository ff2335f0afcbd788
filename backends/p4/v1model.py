"""v1model (bmv2's simple_switch): the architecture the conformance suite runs.

Contract: :class:`V1Model` implements :class:`~dpfc.backends.p4.arch.Architecture` with
v1model's primitives: ``standard_metadata`` for ports, timestamps and lengths,
``mark_to_drop``, ``mcast_grp``, recirculation from egress with the ``@field_list(0)``
fields kept, ``register.read`` / ``write`` (a read-modify-write is two calls, which bmv2
runs in order), bmv2's ``crc32_custom`` hash calculations (Bmv2Control sets each one's CRC
from the profile: docs/p4.md) and ``update_checksum`` after egress. One metadata struct
serves ingress and egress, so nothing has to be bridged between them.

The text it produces is the program the conformance suite compiles: any change to it is a
change to what runs on bmv2 (tests/golden/p4/ holds a golden copy).
"""

from __future__ import annotations

from dpfc.backends.p4.arch import MEMORY_OPS, PASS_COMMENT, Architecture, Model
from dpfc.backends.p4.lang import (
    Assign,
    Block,
    Decl,
    Do,
    Expr,
    If,
    Instance,
    Lit,
    Program,
    Raw,
    Stmt,
    Tuple,
    Var,
    action,
    mux,
    n,
    struct,
)
from dpfc.backends.p4.layout import EGRESS, INGRESS, Layout
from dpfc.switch import XORSHIFT32_SHIFTS

meta, hdr, sm = n("meta"), n("hdr"), n("sm")


class V1Model(Architecture):
    """v1model as bmv2's simple_switch runs it (see the module docstring)."""

    name = "v1model"

    # -- the frame -----------------------------------------------------------------------------
    def includes(self) -> str:
        return "#include <core.p4>\n#include <v1model.p4>"

    def preserved(self, type_: str) -> str:
        # v1model keeps the fields of the list recirculate_preserving_field_list names.
        return f"@field_list(0) {type_}"

    def assemble(self, model: Model) -> Program:
        intrinsic = "inout standard_metadata_t sm"
        program = Program()
        program.add(Raw(f"{model.title}\n{self.includes()}"))
        program.add(*model.headers)
        program.add(struct("metadata_t", list(model.metadata)))
        program.add(*model.helpers)
        program.add(
            Block(
                "parser",
                "SwitchVMParser",
                ["packet_in pkt", "out headers_t hdr", "inout metadata_t meta", intrinsic],
                model.parser,
            )
        )
        program.add(
            Block("control", "SwitchVMVerify", ["inout headers_t hdr", "inout metadata_t meta"])
        )
        controls = ["inout headers_t hdr", "inout metadata_t meta", intrinsic]
        program.add(
            Block(
                "control",
                INGRESS,
                controls,
                model.ingress_locals,
                [*self.ingress_start(), *model.ingress, *self.ingress_end(model.layout)],
                PASS_COMMENT,
            )
        )
        recirculate = Do(n("recirculate_preserving_field_list").call(Lit(0, 8)))
        program.add(
            Block(
                "control",
                EGRESS,
                controls,
                model.egress_locals,
                [*model.egress, If(meta.dot("recirculate").eq(1), [recirculate])],
            )
        )
        program.add(_compute_checksum(model.checksum_fields))
        program.add(
            Block(
                "control",
                "SwitchVMDeparser",
                ["packet_out pkt", "in headers_t hdr"],
                apply=[Do(n("pkt.emit").call(h)) for h in model.emits],
            )
        )
        program.add(
            Raw(
                f"V1Switch(SwitchVMParser(), SwitchVMVerify(), {INGRESS}(), {EGRESS}(), "
                "SwitchVMComputeChecksum(), SwitchVMDeparser()) main;"
            )
        )
        return program

    # -- what the switch says about the packet -------------------------------------------------
    def parser_failed(self) -> Expr:
        return sm.dot("parser_error").ne(n("error.NoError"))

    def ingress_port(self) -> Expr:
        # The port the packet first arrived by: bmv2 gives a recirculated packet port 0,
        # the simulator (and a Tofino's recirculation of the same pipe) keeps it (R15).
        return n("meta").dot("in_port")

    def egress_pass(self, runs: Expr) -> list[Stmt]:
        # recirculate_preserving_field_list in the egress replaces the transmission: the
        # frame re-enters the ingress with in_port, eg_phase and eg_port kept.
        return [
            If(
                runs,
                [
                    Assign(meta.dot("eg_phase"), Lit(1)),
                    Assign(meta.dot("eg_port"), sm.dot("egress_port")),
                    Assign(meta.dot("recirculate"), Lit(1)),
                ],
            )
        ]

    def ingress_start(self) -> list[Stmt]:
        first_pass = sm.dot("instance_type").eq(0)  # not a recirculated instance
        return [If(first_pass, [Assign(n("meta").dot("in_port"), sm.dot("ingress_port"))])]

    def timestamp_ns(self) -> Expr:
        # bmv2's clock counts microseconds.
        return (sm.dot("ingress_global_timestamp") * 1000).cast(32)

    def queue_depth(self) -> Expr:
        return Lit(0, 32)  # ingress runs before the packet is queued

    def packet_length(self) -> Expr:
        return sm.dot("packet_length")

    def replication_id(self) -> Expr:
        return sm.dot("egress_rid")

    # -- the packet's fate ---------------------------------------------------------------------
    def send_to(self, port: Expr) -> Stmt:
        return Assign(sm.dot("egress_spec"), port)

    def drop(self) -> Stmt:
        return Do(n("mark_to_drop").call(sm))

    def multicast(self, group: Expr) -> Stmt:
        return Assign(sm.dot("mcast_grp"), group)

    def recirculate(self) -> list[Stmt]:
        # Egress recirculates (it sees meta.recirculate); the port only lets it get there.
        return [
            Assign(meta.dot("recirculate"), Lit(1)),
            Assign(sm.dot("egress_spec"), sm.dot("ingress_port")),
        ]

    # -- state ---------------------------------------------------------------------------------
    def constants(self, size: int, address: Expr) -> list[Decl]:
        return [
            Instance(
                "register<bit<32>>",
                [Lit(size)],
                "constants",
                "LOAD_CONST tables (isa.md item 10), per tenant slot.",
            ),
            action(
                "read_constant",
                ["in bit<8> index"],
                [Do(n("constants.read").call(meta.dot("old"), address))],
            ),
        ]

    def random(self) -> list[Decl]:
        rng = meta.dot("rng")
        return [
            Instance(
                "register<bit<32>>",
                [Lit(2)],
                "rng_state",
                "RAND: xorshift32, the simulator's generator; [0] ingress, [1] egress pass.",
            ),
            action(
                "draw_random",
                [],
                [
                    Do(n("rng_state.read").call(rng, meta.dot("eg_phase").cast(32))),
                    *[
                        Assign(rng, rng ^ (rng << amount if direction == "<<" else rng >> amount))
                        for direction, amount in XORSHIFT32_SHIFTS
                    ],
                    Do(n("rng_state.write").call(meta.dot("eg_phase").cast(32), rng)),
                ],
            ),
        ]

    def counter(self, name: str, size: int, index: Expr) -> list[Decl]:
        register = f"counter_{name}"
        return [
            Instance("register<bit<32>>", [Lit(size)], register),
            action(
                f"count_{name}",
                [],
                [
                    Var("bit<32>", "value"),
                    Do(n(f"{register}.read").call(n("value"), index)),
                    Do(n(f"{register}.write").call(index, n("value") + 1)),
                ],
            ),
        ]

    def hash_actions(self, layout: Layout) -> list[Decl]:
        """HASH of lane i: the CRC of the lane's profile function over the entry A[i]. Each
        lane's call is one bmv2 calculation (crc32_custom), whose parameters Bmv2Control sets
        from the profile; its input field meta.hash_in_i names the lane in bmv2's JSON."""
        out: list[Decl] = []
        for i in range(layout.lanes):
            field = meta.dot(f"hash_in_{i}")
            out.append(
                action(
                    self.hash_action(0, i),
                    [],
                    [
                        Do(
                            n("hash").call(
                                field,
                                n("HashAlgorithm.crc32_custom"),
                                Lit(0, 32),
                                Tuple((field,)),
                                Lit(1 << 32, 33),
                            )
                        )
                    ],
                    f"HASH in lane {i}: {layout.profile.hash_functions[i]} (isa.md §6 item 3).",
                )
            )
        return out

    def hash_action(self, eu: int, lane: int) -> str:
        del eu  # every EU runs the lane's one calculation (bmv2 has no per-stage units)
        return f"hash_lane_{lane}"

    def lane_memory(self, name: str, size: int, data: Expr, comment: str) -> list[Decl]:
        del data  # memory_access computes the word written
        return [Instance("register<bit<32>>", [Lit(size)], name, comment)]

    def memory_access(
        self, name: str, op: Expr, address: Expr, data: Expr, old: Expr
    ) -> list[Stmt]:
        new = old
        for code, update in reversed(MEMORY_OPS):
            new = mux(op.eq(code), update(old, data), new)
        return [
            Do(n(name).dot("read").call(old, address)),
            Do(n(name).dot("write").call(address, new)),
        ]


def _compute_checksum(fields: Expr) -> Block:
    ipv4 = hdr.dot("ipv4")
    return Block(
        "control",
        "SwitchVMComputeChecksum",
        ["inout headers_t hdr", "inout metadata_t meta"],
        apply=[
            Do(
                n("update_checksum").call(
                    meta.dot("fix_checksum")
                    .eq(1)
                    .land(hdr.dot("ipv4_opts").dot("isValid").call().lnot()),
                    fields,
                    ipv4.dot("checksum"),
                    n("HashAlgorithm.csum16"),
                )
            )
        ],
    )
