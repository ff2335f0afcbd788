"""v1model's idiom of the stage-structured program: the same stages for bmv2's simple_switch.

Contract: :class:`StagedV1Model` implements :class:`~.arch.StagedArch` with v1model's
primitives, so that bmv2 runs the design that goes to Tofino, table for table (the
tables, keys, actions and parameters keep their names; the ``@stage`` annotations stay,
as notes: bmv2 has no stages and p4c-bm2-ss ignores them). Where v1model differs:

* hash, random and register calls are statements: an identity move is an assignment
  (the low bits when narrower); HASH is a ``hash`` call with ``crc32_custom`` in the
  selector's action ``eu<k>_sel_a<i>_hash``, whose calculation the control plane sets to
  lane ``i``'s CRC of the profile (``set_crc32_parameters``, as for the old program:
  docs/p4.md); RAND is ``random(w, 0, 0xFFFFFFFF)``, bmv2's uniform generator (TNA's
  ``Random`` is the chip's: neither is the simulator's xorshift, so RAND's values differ
  from the simulator's on both);
* a lane memory is a ``register``; each of its four register actions reads the word,
  gives it to the lane's B register, updates it as :func:`.externs.register_writes` says
  (the same statements TNA's ``RegisterAction`` runs) and writes it back; the index is
  the XOR of the 16-bit words of A and the translation's two halves, written out (what
  TNA's ``XOR16`` hash computes), truncated to 16 bits as TNA's;
* ``min`` / ``max`` (TNA externs) are conditional expressions;
* a drop sets ``meta.drop`` and the end of the ingress calls ``mark_to_drop``, so that a
  later unicast or multicast does not undo it (TNA's ``drop_ctl`` holds whatever the
  ports say);
* recirculation sets ``meta.recirculate`` and the egress calls
  ``recirculate_preserving_field_list(0)``, which keeps ``meta.in_port``, the port the
  packet first came in on: LOAD_MD ``ingress_port`` and return-to-sender read it, as the
  simulator's (R15: the recirculated frame re-enters the same port). TNA keeps no
  metadata: there a recirculated packet's ingress port is the recirculation port (68);
* the timestamp is bmv2's microseconds times 1000, the low 32 bits.

A SwitchVM packet leaves with its IPv4 header checksum computed again (v1model's
``update_checksum``, TNA's deparser ``Checksum``) and no UDP checksum (0), as the
simulator writes it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from dpfc.backends.p4.lang import (
    Assign,
    Decl,
    Do,
    Expr,
    If,
    Instance,
    Lit,
    Raw,
    Stmt,
    Tuple,
    Var,
    lit,
    mux,
    n,
)
from dpfc.backends.p4.layout import INGRESS
from dpfc.target import HashFunction

from .arch import StagedArch, Unit
from .egress import EGRESS_CONTROL, EGRESS_METADATA, EGRESS_SUFFIX, in_egress
from .externs import WORD, register_writes

meta, sm = n("meta"), n("sm")
RECIRCULATED = 4  # simple_switch's instance type of a recirculated packet
# the egress control runs the recirculations: the ingress's, and the egress pass's
FRAME = f"""\
control SwitchVMVerify(inout headers_t hdr, inout metadata_t meta) {{
    apply {{ }}
}}
control SwitchVMEgress(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) {{
    apply {{
{EGRESS_CONTROL}
    }}
}}
control SwitchVMComputeChecksum(inout headers_t hdr, inout metadata_t meta) {{
    apply {{
        update_checksum(hdr.sv.isValid(),
            {{ hdr.ipv4.version_ihl, hdr.ipv4.tos, hdr.ipv4.total_len, hdr.ipv4.id,
              hdr.ipv4.frag, hdr.ipv4.ttl, hdr.ipv4.protocol, hdr.ipv4.src, hdr.ipv4.dst }},
            hdr.ipv4.checksum, HashAlgorithm.csum16);
    }}
}}
control IngressDeparser(packet_out pkt, in headers_t hdr) {{
    apply {{ pkt.emit(hdr); }}
}}
V1Switch(IngressParser(), SwitchVMVerify(), SwitchVMIngress(), SwitchVMEgress(),
         SwitchVMComputeChecksum(), IngressDeparser()) main;"""


@dataclass(frozen=True)
class StagedV1Model(StagedArch):
    """v1model as bmv2's simple_switch runs it (see the module docstring)."""

    name = "v1model"
    # named as the old program's controls (v1model.p4 declares Ingress and Egress as types):
    # the ingress qualifies the control plane's names as for the old program
    ingress_name = INGRESS
    port_type = "bit<9>"
    group_type = "bit<16>"

    # -- the frame -----------------------------------------------------------------------------
    def includes(self) -> str:
        return "#include <core.p4>\n#include <v1model.p4>"

    def parser_params(self) -> list[str]:
        return [
            "packet_in pkt",
            "out headers_t hdr",
            "inout metadata_t meta",
            "inout standard_metadata_t sm",
        ]

    def parser_start(self) -> list[Stmt]:
        return []

    def ingress_params(self) -> list[str]:
        return ["inout headers_t hdr", "inout metadata_t meta", "inout standard_metadata_t sm"]

    def extra_metadata(self) -> list[tuple[str, str]]:
        # the port the packet first came in on, kept by recirculate_preserving_field_list(0)
        return [
            ("drop", "bit<1>"),
            ("recirculate", "bit<1>"),
            ("in_port", "@field_list(0) bit<9>"),
            *EGRESS_METADATA,
        ]

    def ingress_start(self) -> list[Stmt]:
        first = sm.dot("instance_type").ne(Lit(RECIRCULATED, 32))
        return [If(first, [Assign(meta.dot("in_port"), sm.dot("ingress_port"))])]

    def ingress_end(self) -> list[Stmt]:
        return [If(meta.dot("drop").eq(1), [Do(n("mark_to_drop").call(sm))])]

    def frame(self) -> list[Decl]:
        return [Raw(FRAME)]

    # -- what the switch says, the packet's fate -----------------------------------------------
    def ingress_port(self) -> Expr:
        return meta.dot("in_port")  # the simulator's: a recirculated packet keeps its port

    def timestamp(self) -> Expr:
        return sm.dot("ingress_global_timestamp") * 1000  # bmv2's clock counts microseconds

    def send_to(self, port: Expr) -> Stmt:
        return Assign(sm.dot("egress_spec"), port)

    def multicast(self, group: Expr) -> Stmt:
        return Assign(sm.dot("mcast_grp"), group)

    def drop(self) -> Stmt:
        return Assign(meta.dot("drop"), lit(1))

    def recirculate(self) -> list[Stmt]:
        # The egress recirculates (it sees meta.recirculate); the port only gets it there.
        return [Assign(meta.dot("recirculate"), lit(1)), self.send_to(sm.dot("ingress_port"))]

    # -- units ---------------------------------------------------------------------------------
    def identity(self, unit: str, target: Expr, source: Expr, width: int = 32) -> Unit:
        del unit
        return [], [Assign(target, source.cast(width))]

    def crc(self, unit: str, function: HashFunction, target: Expr, source: Expr) -> Unit:
        del unit, function  # the control plane sets the calculation's CRC (module docstring)
        call = n("hash").call(
            target, n("HashAlgorithm.crc32_custom"), Lit(0, 32), Tuple((source,)), Lit(1 << 32, 33)
        )
        return [], [Do(call)]

    def random(self, unit: str, target: Expr) -> Unit:
        del unit
        return [], [Do(n("random").call(target, Lit(0, 32), Lit(0xFFFFFFFF, 32)))]

    def lane_memory(
        self, unit: str, index_unit: str, size: int, op: Expr, data: Expr
    ) -> list[Decl]:
        del index_unit, op, data  # each access computes its index and its word
        # the egress pass's words are the egress pipeline's own (:mod:`.egress`)
        return [
            Instance(f"register<{WORD}>", [Lit(size)], unit),
            Instance(f"register<{WORD}>", [Lit(size)], f"{unit}{EGRESS_SUFFIX}"),
        ]

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
        del index_unit
        value, at = n("value"), n("index")
        writes = register_writes(action, op, value, data, self.maximum, self.minimum)
        read = [Assign(target, value)]  # STORE: the word written (B keeps its copy)
        egress = f"{unit}{EGRESS_SUFFIX}"
        return [
            Var("bit<32>", "index", _xor16(index).cast(32)),
            Var(WORD, "value"),
            If(
                in_egress(),
                [Do(n(f"{egress}.read").call(value, at))],
                [Do(n(f"{unit}.read").call(value, at))],
            ),
            *([*writes, *read] if action == "store" else [*read, *writes]),
            If(
                in_egress(),
                [Do(n(f"{egress}.write").call(at, value))],
                [Do(n(f"{unit}.write").call(at, value))],
            ),
        ]

    def minimum(self, a: Expr, b: Expr) -> Expr:
        return mux(a.lt(b), a, b)

    def maximum(self, a: Expr, b: Expr) -> Expr:
        return mux(a.gt(b), a, b)


def _xor16(fields: Sequence[tuple[Expr, int]]) -> Expr:
    """The XOR of the 16-bit words of ``fields`` (each with its width, a multiple of 16)."""
    words = [
        field.slice(lo + 15, lo) if width > 16 else field
        for field, width in fields
        for lo in range(width - 16, -1, -16)
    ]
    out = words[0]
    for word in words[1:]:
        out = out ^ word
    return out


__all__ = ["StagedV1Model"]
