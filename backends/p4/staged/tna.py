"""TNA's idiom of the stage-structured program: Tofino's frame, units and metadata.

Contract: :class:`StagedTna` implements :class:`~.arch.StagedArch` for Tofino-1
(``tna.p4``) or Tofino-2 (``t2na.p4``). Every use of a unit has its own unit (a Tofino
hash or register unit serves one stage): a CRC ``Hash`` per EU and lane for HASH (the
lane's CRC of the profile, ``CRCPolynomial`` baked in), an identity ``Hash`` per move (it
brings a packet or intrinsic word into a 32-bit field of the reading stage's group without
a PHV move), an ``XOR16`` ``Hash`` per lane memory (the register index), one ``Register``
per lane memory with its four ``RegisterAction`` s (:data:`.externs.REGISTER_ACTIONS`),
and a ``Random`` per random word. The prolog's sources (stack words, metadata, random
words) live only from the parser to the prolog, the EUs' scratch (selected copies,
comparison words, immediates) only inside the EUs: ``@pa_mutually_exclusive`` lets them
share PHV containers, which the EU's MAU group (16 32-bit containers) needs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from dpfc.backends.p4.lang import (
    Assign,
    Decl,
    Do,
    Expr,
    Function,
    Implementation,
    Instance,
    Lit,
    Raw,
    Stmt,
    Tuple,
    n,
)
from dpfc.target import HashFunction

from .arch import StagedArch, Unit
from .externs import INDEX, REGISTER_ACTIONS, WORD, register_writes
from .loads import METADATA_SOURCES
from .plan import StagePlan

ig_intr_md, ig_tm_md, ig_dprsr_md = n("ig_intr_md"), n("ig_tm_md"), n("ig_dprsr_md")
RECIRCULATION_PORT = 68
FRAME = """\
control IngressDeparser(packet_out pkt, inout headers_t hdr, in metadata_t meta,
                        in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    Checksum() ipv4_checksum;
    apply {
        // every packet: a condition would cost a stage (the frames that leave without a
        // SwitchVM header get their checksum recomputed, unchanged when it was right)
        hdr.ipv4.checksum = ipv4_checksum.update(
            { hdr.ipv4.version_ihl, hdr.ipv4.tos, hdr.ipv4.total_len, hdr.ipv4.id,
              hdr.ipv4.frag, hdr.ipv4.ttl, hdr.ipv4.protocol, hdr.ipv4.src, hdr.ipv4.dst });
        pkt.emit(hdr);
    }
}
parser EgressParser(packet_in pkt, out headers_t hdr, out metadata_t meta,
                    out egress_intrinsic_metadata_t eg_intr_md) {
    state start { pkt.extract(eg_intr_md); transition accept; }
}
control Egress(inout headers_t hdr, inout metadata_t meta,
               in egress_intrinsic_metadata_t eg_intr_md,
               in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
               inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md,
               inout egress_intrinsic_metadata_for_output_port_t eg_oport_md) {
    apply { }
}
control EgressDeparser(packet_out pkt, inout headers_t hdr, in metadata_t meta,
                       in egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {
    apply { }
}
Pipeline(IngressParser(), Ingress(), IngressDeparser(), EgressParser(), Egress(),
         EgressDeparser()) pipe;
Switch(pipe) main;"""


@dataclass(frozen=True)
class StagedTna(StagedArch):
    """TNA on Tofino-``chip`` (see the module docstring)."""

    chip: int = 1
    name = "tna"
    ingress_name = "Ingress"
    port_type = "PortId_t"
    group_type = "MulticastGroupId_t"

    # -- the frame -----------------------------------------------------------------------------
    def includes(self) -> str:
        return f"#include <core.p4>\n#include <{'t2na' if self.chip == 2 else 'tna'}.p4>"

    def parser_params(self) -> list[str]:
        return [
            "packet_in pkt",
            "out headers_t hdr",
            "out metadata_t meta",
            "out ingress_intrinsic_metadata_t ig_intr_md",
        ]

    def parser_start(self) -> list[Stmt]:
        return [
            Do(n("pkt").dot("extract").call(ig_intr_md)),
            Do(n("pkt.advance").call(n("PORT_METADATA_SIZE"))),
        ]

    def ingress_params(self) -> list[str]:
        return [
            "inout headers_t hdr",
            "inout metadata_t meta",
            "in ingress_intrinsic_metadata_t ig_intr_md",
            "in ingress_intrinsic_metadata_from_parser_t ig_prsr_md",
            "inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md",
            "inout ingress_intrinsic_metadata_for_tm_t ig_tm_md",
        ]

    def same_stage(self, tables: Sequence[str]) -> list[str]:
        # every drop writes 1 to drop_ctl: the order of two such writes does not matter
        return [f'@ignore_table_dependency("{self.ingress_name}.{t}")' for t in tables]

    def pragmas(self, plan: StagePlan) -> list[Decl]:
        """Prolog sources and EU scratch never live at once (module docstring)."""
        sources = [f"meta.pop{j}" for j in range(2 * plan.lanes)]
        sources += [f"meta.md{i}" for i in METADATA_SOURCES] + ["meta.rnd0", "meta.rnd1"]
        scratch = [f"hdr.push[{j}].w" for j in range(2 * plan.lanes)]
        scratch += ["meta.xr", "meta.an", "meta.dd", "meta.ci0", "meta.ci1"]
        exclusive: list[Decl] = [
            Raw(f'@pa_mutually_exclusive("ingress", "{a}", "{b}")')
            for a, b in zip(sources, scratch, strict=False)
        ]
        # The epilog's tables write the steering action and value in one stage: sharing a
        # container would order them into two (Tofino-2 placed epilog_code a stage late)
        alone = [Raw(f'@pa_solitary("ingress", "meta.{f}")') for f in ("steer", "sval")]
        return exclusive + alone

    def frame(self) -> list[Decl]:
        return [Raw(FRAME)]

    # -- what the switch says, the packet's fate -----------------------------------------------
    def ingress_port(self) -> Expr:
        return ig_intr_md.dot("ingress_port")

    def timestamp(self) -> Expr:
        return ig_intr_md.dot("ingress_mac_tstamp").slice(31, 0)

    def send_to(self, port: Expr) -> Stmt:
        return Assign(ig_tm_md.dot("ucast_egress_port"), port)

    def multicast(self, group: Expr) -> Stmt:
        return Assign(ig_tm_md.dot("mcast_grp_a"), group)

    def drop(self) -> Stmt:
        return Assign(ig_dprsr_md.dot("drop_ctl"), Lit(1, 3))

    def recirculate(self) -> list[Stmt]:
        return [self.send_to(Lit(RECIRCULATION_PORT, 9))]

    # -- units ---------------------------------------------------------------------------------
    def identity(self, unit: str, target: Expr, source: Expr, width: int = 32) -> Unit:
        decls: list[Decl] = [Instance(f"Hash<bit<{width}>>", [n("HashAlgorithm_t.IDENTITY")], unit)]
        return decls, [Assign(target, _get(unit, source))]

    def crc(self, unit: str, function: HashFunction, target: Expr, source: Expr) -> Unit:
        if function.reflect_in != function.reflect_out:
            raise ValueError(
                f"hash `{function.name}` reflects input and output differently; TNA's "
                "CRCPolynomial has one `reversed` flag for both"
            )
        flag = n("true" if function.reflect_in else "false")
        poly = [Lit(function.polynomial, 32), flag, n("false"), n("false")]
        poly += [Lit(function.init, 32), Lit(function.xor_out, 32)]
        decls: list[Decl] = [
            Instance(f"CRCPolynomial<{WORD}>", poly, f"{unit}_poly", f"HASH: {function.name}"),
            Instance(f"Hash<{WORD}>", [n("HashAlgorithm_t.CUSTOM"), n(f"{unit}_poly")], unit),
        ]
        return decls, [Assign(target, _get(unit, source))]

    def random(self, unit: str, target: Expr) -> Unit:
        decls: list[Decl] = [Instance(f"Random<{WORD}>", [], unit)]
        return decls, [Assign(target, n(f"{unit}.get").call())]

    def lane_memory(
        self, unit: str, index_unit: str, size: int, op: Expr, data: Expr
    ) -> list[Decl]:
        """The register ``unit`` and its :data:`.externs.REGISTER_ACTIONS` (``unit_store``
        ...): each returns the word as it was (STORE: the word it writes, ``data``) and writes
        what its opcode makes of it and ``data``; then the XOR16 ``Hash`` of its index."""
        value = n("value")
        params = [f"inout {WORD} value", f"out {WORD} result"]
        out: list[Decl] = [Instance(f"Register<{WORD}, {INDEX}>", [Lit(size, 32)], unit)]
        for action, _ops in REGISTER_ACTIONS:
            writes = register_writes(action, op, value, data, self.maximum, self.minimum)
            # STORE leaves B as its selected copy: its result is the word written (isa.semantics)
            read = [Assign(n("result"), value)]
            stmts = [*writes, *read] if action == "store" else [*read, *writes]
            body = Function("void", "apply", params, stmts)
            out.append(
                Implementation(
                    f"RegisterAction<{WORD}, {INDEX}, {WORD}>",
                    [n(unit)],
                    f"{unit}_{action}",
                    [body],
                )
            )
        out.append(Instance(f"Hash<{INDEX}>", [n("HashAlgorithm_t.XOR16")], index_unit))
        return out

    def memory_access(
        self,
        unit: str,
        index_unit: str,
        action: str,
        index: Sequence[tuple[Expr, int]],
        op: Expr,
        data: Expr,
        target: Expr,
    ) -> list[Stmt]:
        del op, data  # the RegisterAction has them
        return [
            Assign(
                target,
                n(f"{unit}_{action}.execute").call(
                    _get(index_unit, *(field for field, _width in index))
                ),
            )
        ]

    def minimum(self, a: Expr, b: Expr) -> Expr:
        return n("min").call(a, b)

    def maximum(self, a: Expr, b: Expr) -> Expr:
        return n("max").call(a, b)


def _get(unit: str, *fields: Expr) -> Expr:
    return n(f"{unit}.get").call(Tuple(tuple(fields)))


__all__ = ["StagedTna"]
