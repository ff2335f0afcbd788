"""What one Tofino MAU stage can hold, as data: the limits a SwitchVM design for TNA is built on.

Contract: :data:`LIMITS` lists the limits of Tofino-1 and Tofino-2 that decide how the
SwitchVM pipeline can be laid out in stages (docs/p4.md, "What a Tofino stage holds"). Each
:class:`Limit` carries its value and a *probe*: :meth:`Limit.program` writes the smallest TNA
program that exercises the limit at a given size, so that the program at ``value`` compiles
and the program at ``value + 1`` is refused with the limit's message
(:attr:`Limit.refusal`). ``tests/test_tofino_limits.py`` compiles both sides with
``p4c-barefoot`` for every chip: the values are measurements of the compiler dpfc is tested
with (p4c-barefoot 9.13.4), not figures read from a data sheet, and the test fails when a
different compiler moves a boundary.

Why these limits: the SwitchVM EU of the paper is two stages of small tables (§5). Which
register file, selection and comparison fit there is decided by how many actions a table
and a stage can hold, which containers one action may read, what a gateway can compare
and how many ways a register can be updated; every other resource (SRAM, TCAM, crossbars)
scales with table sizes the profile chooses.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Limit:
    """One limit of an MAU stage, measured alike on Tofino-1 and Tofino-2."""

    name: str
    value: int
    meaning: str
    consequence: str
    refusal: str  # a fragment of the compiler's error when the probe exceeds the limit
    probe: Callable[[int], str]  # the ingress control's declarations and apply block

    def program(self, size: int, arch: str = "tna") -> str:
        """The whole TNA (``arch`` ``tna``) or T2NA program of the probe at ``size``."""
        return _frame(self.probe(size), arch)


def _fields(count: int) -> str:
    return " ".join(f"bit<32> f{i};" for i in range(count))


def _one_table(actions: list[str], bodies: list[str]) -> str:
    declared = "\n".join(
        f"    action {a}() {{ {b} }}" for a, b in zip(actions, bodies, strict=True)
    )
    listed = " ".join(f"{a};" for a in actions)
    return (
        f"{declared}\n    table t {{ key = {{ hdr.f.op: ternary; hdr.f.f1[4:0]: ternary; }}\n"
        f"        actions = {{ {listed} }} size = 256; }}\n    apply {{ t.apply(); }}"
    )


def _actions_on_one_container(size: int) -> str:
    """``size`` actions that all write container ``f0``: ALU ops, then constant shifts."""
    ops = ["+", "-", "&", "|", "^"]
    bodies = [f"hdr.f.f0 = hdr.f.f0 {op} hdr.f.f1;" for op in ops]
    bodies += [f"hdr.f.f0 = hdr.f.f0 << {s};" for s in range(1, 32)]
    bodies += [f"hdr.f.f0 = hdr.f.f0 >> {s};" for s in range(1, 32)]
    return _one_table([f"a{i}" for i in range(size)], bodies[:size])


def _moves_in_one_group(size: int) -> str:
    """``size`` 32-bit fields connected by moves (``f[i] = f[i+1]``, a ring)."""
    bodies = [f"hdr.f.f{i} = hdr.f.f{(i + 1) % size};" for i in range(size)]
    return _one_table([f"m{i}" for i in range(size)], bodies)


def _register_actions(size: int) -> str:
    """One register updated ``size`` ways, each by its own RegisterAction."""
    lines = ["    Register<bit<32>, bit<16>>(1024) r;"]
    for i in range(size):
        lines.append(
            f"    RegisterAction<bit<32>, bit<16>, bit<32>>(r) ra{i} = {{\n"
            f"        void apply(inout bit<32> v, out bit<32> rv) {{ rv = v; v = v + {i + 1}; }} }};"
        )
    actions = [f"x{i}" for i in range(size)]
    bodies = [f"hdr.f.f2 = ra{i}.execute(hdr.f.f0[15:0]);" for i in range(size)]
    return "\n".join(lines) + "\n" + _one_table(actions, bodies)


def _hash_outputs(size: int) -> str:
    """One table whose ``size`` actions each move a different 32-bit identity hash."""
    units = "\n".join(f"    Hash<bit<32>>(HashAlgorithm_t.IDENTITY) h{i};" for i in range(size))
    bodies = [f"hdr.f.f{i} = h{i}.get(hdr.f.f{i + 8});" for i in range(size)]
    return units + "\n" + _one_table([f"h_{i}" for i in range(size)], bodies)


def _gateway_comparison(size: int) -> str:
    """A branch on two 32-bit fields: ``size`` 1 compares for equality, 2 for order."""
    condition = "hdr.f.f0 == hdr.f.f1" if size <= 1 else "hdr.f.f0 < hdr.f.f1"
    return (
        "    action yes() { hdr.f.f2 = 1; }\n    action no() { hdr.f.f2 = 0; }\n"
        "    table t { actions = { yes; } default_action = yes(); }\n"
        "    table e { actions = { no; } default_action = no(); }\n"
        f"    apply {{ if ({condition}) {{ t.apply(); }} else {{ e.apply(); }} }}"
    )


LIMITS: tuple[Limit, ...] = (
    Limit(
        name="actions_per_table",
        value=32,
        meaning="actions of one table that write the same container (one instruction-memory "
        "row each, 32 rows in a stage)",
        consequence="an ALU lane cannot have one action per shift amount: LSH and RSH by a "
        "register (docs/isa.md) need 62 constant-shift actions beside the 8 other operations",
        refusal="could not fit within the instruction memory",
        probe=_actions_on_one_container,
    ),
    Limit(
        name="mau_group_containers",
        value=16,
        meaning="32-bit containers one action may read and write together: a move's source "
        "must be in the destination's MAU group of 16 containers, so every field connected "
        "to another by moves shares one group",
        consequence="the register file (2L words), its selected copy (2L) and the comparison "
        "results the branch reads, all connected by selector moves, fit one group of 16 only "
        "for small L",
        refusal="PHV allocation was not successful",
        probe=_moves_in_one_group,
    ),
    Limit(
        name="register_actions",
        value=4,
        meaning="RegisterActions (stateful ALU programs) one register can have",
        consequence="a lane memory's seven memory operations (LOAD, STORE, FAADD, FAAND, "
        "FAOR, FAMAX, FAMIN) must share four programs",
        refusal="too many RegisterActions attached to the Register",
        probe=_register_actions,
    ),
    Limit(
        name="hash_words_per_table",
        value=1,
        meaning="32-bit hash outputs the actions of one table can use: a hash reaches an "
        "action through the 32-bit immediate pathway, not as a PHV source",
        consequence="a word moved through a Hash unit (outside the MAU group of the "
        "registers) needs a table of its own per source; the selectors' HASH takes the one "
        "pathway their table has",
        refusal="immediate pathway",
        probe=_hash_outputs,
    ),
    Limit(
        name="gateway_comparison",
        value=1,
        meaning="kinds of comparison a gateway makes between two fields: equality only "
        "(an order comparison needs one operand constant)",
        consequence="a branch on x < y, both registers, needs the difference computed by an "
        "action in an earlier stage than the table that picks the next PC",
        refusal="must be constant",
        probe=_gateway_comparison,
    ),
)


def _frame(control: str, arch: str) -> str:
    include = "t2na.p4" if arch == "t2na" else "tna.p4"
    return f"""\
#include <core.p4>
#include <{include}>
header eth_h {{ bit<48> dst; bit<48> src; bit<16> type; }}
header f_h {{ {_fields(17)} bit<8> op; }}
struct headers_t {{ eth_h eth; f_h f; }}
struct meta_t {{ }}
parser IgP(packet_in pkt, out headers_t hdr, out meta_t meta,
           out ingress_intrinsic_metadata_t ig_intr_md) {{
    state start {{
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        pkt.extract(hdr.eth);
        pkt.extract(hdr.f);
        transition accept;
    }}
}}
control Ig(inout headers_t hdr, inout meta_t meta, in ingress_intrinsic_metadata_t ig_intr_md,
           in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
           inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
           inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {{
{control}
}}
control IgD(packet_out pkt, inout headers_t hdr, in meta_t meta,
            in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {{
    apply {{ pkt.emit(hdr); }}
}}
parser EgP(packet_in pkt, out headers_t hdr, out meta_t meta,
           out egress_intrinsic_metadata_t eg_intr_md) {{
    state start {{ pkt.extract(eg_intr_md); transition accept; }}
}}
control Eg(inout headers_t hdr, inout meta_t meta, in egress_intrinsic_metadata_t eg_intr_md,
           in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
           inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md,
           inout egress_intrinsic_metadata_for_output_port_t eg_oport_md) {{
    apply {{ }}
}}
control EgD(packet_out pkt, inout headers_t hdr, in meta_t meta,
            in egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {{
    apply {{ }}
}}
Pipeline(IgP(), Ig(), IgD(), EgP(), Eg(), EgD()) pipe;
Switch(pipe) main;
"""
