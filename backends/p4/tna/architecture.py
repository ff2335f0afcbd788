"""TNA's primitives for the SwitchVM model, and the program it assembles (:class:`Tna`).

Contract: :class:`Tna` implements :class:`~dpfc.backends.p4.arch.Architecture` for one
Tofino chip (``chip`` 1: ``tna.p4``, 2: ``t2na.p4``): the frame (includes, the ingress
parser and control, the egress, the ``Pipeline``), what the switch says about the packet
(intrinsic metadata), the packet's fate (unicast, multicast, drop, recirculation through
the pipe's recirculation port) and the state: a ``Register`` with one ``RegisterAction``
per memory opcode for each lane memory, LOAD_CONST's register, the ``Random`` extern,
counters tallied in metadata (:func:`tally`) and added once at the end of the pass, and a
``Hash`` unit per EU and lane. Why each differs from v1model is the package docstring's;
the frame's other blocks are :mod:`.blocks`'.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from dpfc.backends.p4.arch import (
    MEMORY_OPS,
    PASS_COMMENT,
    Architecture,
    Model,
)
from dpfc.backends.p4.lang import (
    Assign,
    Block,
    Decl,
    DefaultInit,
    Do,
    Expr,
    Function,
    If,
    Implementation,
    Instance,
    Lit,
    Program,
    Raw,
    Stmt,
    Tuple,
    action,
    chain,
    mux,
    n,
    struct,
)
from dpfc.backends.p4.layout import COUNTERS, EGRESS, INGRESS, Layout, LayoutError
from dpfc.isa import MemOp
from dpfc.target import TargetProfile

from .blocks import deparser, egress_parser, named_for_bfrt

meta, hdr, pkt = n("meta"), n("hdr"), n("pkt")
ig_intr_md, ig_prsr_md = n("ig_intr_md"), n("ig_prsr_md")
ig_dprsr_md, ig_tm_md, eg_intr_md = n("ig_dprsr_md"), n("ig_tm_md"), n("eg_intr_md")
# A pipe's first recirculation port (the pipe is the port's bits 8:7).
RECIRCULATION_PORT = {1: 68, 2: 6}
WORD = "bit<32>"
REGISTER = f"Register<{WORD}, {WORD}>"
REGISTER_ACTION = f"RegisterAction<{WORD}, {WORD}, {WORD}>"


def tally(counter: str) -> Expr:
    """The metadata field that counts ``counter``'s events during one pass."""
    return meta.dot(f"tally_{counter}")


@dataclass(frozen=True)
class Tna(Architecture):
    """TNA on one chip (see the module docstring)."""

    chip: int  # 1: Tofino-1 (tna.p4), 2: Tofino-2 (t2na.p4)
    name = "tna"

    @classmethod
    def for_profile(cls, profile: TargetProfile) -> Tna:
        """The chip is the one whose stage count the profile has (Tofino-2: 20 stages)."""
        return cls(2 if profile.hardware_stages > 12 else 1)

    # -- the frame -----------------------------------------------------------------------------
    def includes(self) -> str:
        return f"#include <core.p4>\n#include <{'t2na' if self.chip == 2 else 'tna'}.p4>"

    def defines(self) -> dict[str, int]:
        # bf-p4c sets it from --target; TNA's includes refuse to be read without it.
        return {"__TARGET_TOFINO__": self.chip}

    def preserved(self, type_: str) -> str:
        return type_  # nothing survives a recirculation but what the packet carries

    def extra_metadata(self, layout: Layout) -> list[tuple[str, str]]:
        return [(f"tally_{c}", "bit<8>") for c in COUNTERS]

    def ingress_end(self, layout: Layout) -> list[Stmt]:
        slot = meta.dot("slot").cast(32)
        out: list[Stmt] = [
            If(tally(c).ne(0), [Do(n(f"counter_{c}_add.execute").call(slot))]) for c in COUNTERS
        ]
        # The deparser's Checksum covers a header without options only (as v1model's).
        out.append(
            If(
                hdr.dot("ipv4_opts").dot("isValid").call(),
                [Assign(meta.dot("fix_checksum"), Lit(0))],
            )
        )
        return out

    def assemble(self, model: Model) -> Program:
        program = Program()
        note = (
            f"// TNA for Tofino-{self.chip}: checked with p4test; docs/p4.md lists what the "
            "Tofino back end would refuse."
        )
        program.add(Raw(f"{model.title}\n{note}\n{self.includes()}"))
        program.add(*model.headers)
        program.add(struct("metadata_t", list(model.metadata)))
        program.add(struct("egress_metadata_t", [("fix_checksum", "bit<1>")]))
        program.add(*model.helpers)
        start, *states = model.parser
        intrinsic = [
            Do(pkt.dot("extract").call(ig_intr_md)),
            Do(pkt.dot("advance").call(n("PORT_METADATA_SIZE"))),
            Assign(meta, DefaultInit()),  # v1model's metadata starts zeroed; TNA's is unset
        ]
        program.add(
            Block(
                "parser",
                "SwitchVMIngressParser",
                [
                    "packet_in pkt",
                    "out headers_t hdr",
                    "out metadata_t meta",
                    "out ingress_intrinsic_metadata_t ig_intr_md",
                ],
                [replace(start, body=[*intrinsic, *start.body]), *states],
            )
        )
        program.add(
            Block(
                "control",
                INGRESS,
                [
                    "inout headers_t hdr",
                    "inout metadata_t meta",
                    "in ingress_intrinsic_metadata_t ig_intr_md",
                    "in ingress_intrinsic_metadata_from_parser_t ig_prsr_md",
                    "inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md",
                    "inout ingress_intrinsic_metadata_for_tm_t ig_tm_md",
                ],
                named_for_bfrt(model.ingress_locals),
                [*self.ingress_start(), *model.ingress, *self.ingress_end(model.layout)],
                PASS_COMMENT,
            )
        )
        program.add(
            deparser(
                "SwitchVMIngressDeparser",
                "metadata_t",
                "ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md",
                model.checksum_fields,
                model.emits,
            )
        )
        program.add(egress_parser())
        ipv4 = hdr.dot("ipv4")
        program.add(
            Block(
                "control",
                EGRESS,
                [
                    "inout headers_t hdr",
                    "inout egress_metadata_t meta",
                    "in egress_intrinsic_metadata_t eg_intr_md",
                    "in egress_intrinsic_metadata_from_parser_t eg_prsr_md",
                    "inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md",
                    "inout egress_intrinsic_metadata_for_output_port_t eg_oport_md",
                ],
                named_for_bfrt(model.egress_locals),
                [
                    *model.egress,
                    If(ipv4.dot("ihl").ne(5), [Assign(meta.dot("fix_checksum"), Lit(0))]),
                ],
                "Multicast copies get their destinations (R7).",
            )
        )
        program.add(
            deparser(
                "SwitchVMEgressDeparser",
                "egress_metadata_t",
                "egress_intrinsic_metadata_for_deparser_t eg_dprsr_md",
                model.checksum_fields,
                [hdr.dot("eth"), hdr.dot("vlan"), ipv4],
            )
        )
        program.add(
            Raw(
                f"Pipeline(SwitchVMIngressParser(), {INGRESS}(), SwitchVMIngressDeparser(), "
                f"SwitchVMEgressParser(), {EGRESS}(), SwitchVMEgressDeparser()) pipe;\n"
                "Switch(pipe) main;"
            )
        )
        return program

    # -- what the switch says about the packet -------------------------------------------------
    def parser_failed(self) -> Expr:
        return ig_prsr_md.dot("parser_err").ne(0)

    def ingress_port(self) -> Expr:
        return ig_intr_md.dot("ingress_port")

    def timestamp_ns(self) -> Expr:
        return ig_prsr_md.dot("global_tstamp").slice(31, 0)

    def queue_depth(self) -> Expr:
        return Lit(0, 32)  # ingress runs before the packet is queued

    def packet_length(self) -> Expr:
        # Ethernet, an optional 802.1Q tag and the IPv4 datagram: a SwitchVM packet is one.
        vlan = mux(hdr.dot("vlan").dot("isValid").call(), Lit(18, 32), Lit(14, 32))
        return hdr.dot("ipv4").dot("totalLen").cast(32) + vlan

    def replication_id(self) -> Expr:
        return eg_intr_md.dot("egress_rid")

    # -- the packet's fate ---------------------------------------------------------------------
    def send_to(self, port: Expr) -> Stmt:
        return Assign(ig_tm_md.dot("ucast_egress_port"), port)

    def drop(self) -> Stmt:
        return Assign(ig_dprsr_md.dot("drop_ctl"), Lit(1, 3))

    def multicast(self, group: Expr) -> Stmt:
        return Assign(ig_tm_md.dot("mcast_grp_a"), group)

    def recirculate(self) -> list[Stmt]:
        port = (
            ig_intr_md.dot("ingress_port").slice(8, 7).concat(Lit(RECIRCULATION_PORT[self.chip], 7))
        )
        return [Assign(ig_tm_md.dot("ucast_egress_port"), port)]

    # -- state ---------------------------------------------------------------------------------
    def constants(self, size: int, address: Expr) -> list[Decl]:
        return [
            Instance(REGISTER, [Lit(size)], "constants", "LOAD_CONST tables (isa.md item 10)."),
            _register_action("constants", "constants_read", []),
            action(
                "read_constant",
                ["in bit<8> index"],
                [Assign(meta.dot("old"), n("constants_read.execute").call(address))],
            ),
        ]

    def random(self) -> list[Decl]:
        return [
            Instance(f"Random<{WORD}>", [], "random_source", "RAND (not the simulator's)."),
            action("draw_random", [], [Assign(meta.dot("rng"), n("random_source.get").call())]),
        ]

    def counter(self, name: str, size: int, index: Expr) -> list[Decl]:
        del index  # the tally is added at the end of the pass (ingress_end)
        register = f"counter_{name}"
        add = Function(
            "void",
            "apply",
            [f"inout {WORD} value"],
            [Assign(n("value"), n("value") + tally(name).cast(32))],
        )
        return [
            Instance(REGISTER, [Lit(size)], register),
            Implementation(REGISTER_ACTION, [n(register)], f"{register}_add", [add]),
            action(f"count_{name}", [], [Assign(tally(name), tally(name) + 1)]),
        ]

    def hash_actions(self, layout: Layout) -> list[Decl]:
        out: list[Decl] = []
        for i in range(layout.lanes):
            crc = layout.profile.hash_for_lane(i)
            if crc.reflect_in != crc.reflect_out:
                raise LayoutError(
                    f"hash `{crc.name}` reflects input and output differently; TNA's "
                    "CRCPolynomial has one `reversed` flag for both"
                )
            out.append(
                Instance(
                    f"CRCPolynomial<{WORD}>",
                    [
                        Lit(crc.polynomial, 32),
                        n("true" if crc.reflect_in else "false"),
                        n("false"),  # msb: the CRC register's top bit first is the default
                        n("false"),  # extended: no
                        Lit(crc.init, 32),
                        Lit(crc.xor_out, 32),
                    ],
                    f"crc_lane_{i}",
                    f"HASH in lane {i}: {crc.name} (isa.md §6 item 3).",
                )
            )
        for k in range(layout.eus):
            for i in range(layout.lanes):
                unit, field = f"hash_unit_e{k}_l{i}", meta.dot(f"hash_in_{i}")
                out.append(
                    Instance(
                        f"Hash<{WORD}>", [n("HashAlgorithm_t.CUSTOM"), n(f"crc_lane_{i}")], unit
                    )
                )
                out.append(
                    action(
                        self.hash_action(k, i),
                        [],
                        [Assign(field, n(f"{unit}.get").call(Tuple((field,))))],
                    )
                )
        return out

    def hash_action(self, eu: int, lane: int) -> str:
        return f"hash_e{eu}_l{lane}"  # a hash unit per use: each EU's own

    def lane_memory(self, name: str, size: int, data: Expr, comment: str) -> list[Decl]:
        value = n("value")
        out: list[Decl] = [Instance(REGISTER, [Lit(size)], name, comment)]
        out.append(_register_action(name, f"{name}_load", []))
        for op, update in MEMORY_OPS:
            writes = [Assign(value, update(value, data))]
            out.append(_register_action(name, f"{name}_{op.name.lower()}", writes))
        return out

    def memory_access(
        self, name: str, op: Expr, address: Expr, data: Expr, old: Expr
    ) -> list[Stmt]:
        del data  # each RegisterAction was built with it
        codes = [MemOp.LOAD, *(code for code, _ in MEMORY_OPS)]
        return chain(
            [
                (
                    op.eq(code),
                    [Assign(old, n(f"{name}_{code.name.lower()}.execute").call(address))],
                )
                for code in codes
            ]
        )


def _register_action(register: str, name: str, writes: Sequence[Stmt]) -> Implementation:
    """A RegisterAction of ``register`` that returns the word as it was, then ``writes``."""
    apply = Function(
        "void",
        "apply",
        [f"inout {WORD} value", f"out {WORD} rv"],
        [Assign(n("rv"), n("value")), *writes],
    )
    return Implementation(REGISTER_ACTION, [n(register)], name, [apply])
