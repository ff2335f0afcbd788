"""The stage-structured SwitchVM program for TNA: the model's stages in Tofino's frame.

Contract: :func:`generate` returns the P4-16 source for a profile whose pipeline has the
stages :class:`~.plan.StagePlan` needs, for Tofino-1 (``tna.p4``) or Tofino-2
(``t2na.p4``); deterministic. The ingress applies, in order, permissions | prolog | each
EU's two stages | epilog | steering, every table pinned to its stage (``@stage``). The
prolog's sources (stack words, metadata, random words) live only from the parser to the
prolog, the EUs' scratch (selected copies, comparison words, immediates) only inside the
EUs: ``@pa_mutually_exclusive`` lets them share PHV containers, which the EU's MAU group
(16 32-bit containers) needs.
"""

from __future__ import annotations

from dpfc.backends.p4.lang import Block, Decl, Program, Raw, render, struct
from dpfc.target import TargetProfile

from .ends import METADATA_SOURCES, epilog_stage, permissions_stage, prolog_stage, steering_stage
from .eu import eu_stages
from .headers import header_types, headers_struct, metadata
from .parser import parser_states
from .plan import StagePlan
from .units import Part

PARSER_PARAMS = [
    "packet_in pkt",
    "out headers_t hdr",
    "out metadata_t meta",
    "out ingress_intrinsic_metadata_t ig_intr_md",
]
INGRESS_PARAMS = [
    "inout headers_t hdr",
    "inout metadata_t meta",
    "in ingress_intrinsic_metadata_t ig_intr_md",
    "in ingress_intrinsic_metadata_from_parser_t ig_prsr_md",
    "inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md",
    "inout ingress_intrinsic_metadata_for_tm_t ig_tm_md",
]
FRAME = """\
control IngressDeparser(packet_out pkt, inout headers_t hdr, in metadata_t meta,
                        in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    apply { pkt.emit(hdr); }
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


def generate(profile: TargetProfile, chip: int = 1) -> str:
    """The program for ``profile`` on Tofino-``chip`` (1 or 2)."""
    return render(program(profile, chip))


def program(profile: TargetProfile, chip: int = 1) -> Program:
    plan = StagePlan.for_profile(profile)
    depth = profile.stack_max_depth
    ingress = Part()
    ingress.add(permissions_stage(profile, plan))
    ingress.add(prolog_stage(profile, plan))
    for k in range(plan.num_eus):
        ingress.add(eu_stages(profile, plan, k))
    ingress.add(epilog_stage(profile, plan))
    ingress.add(steering_stage(profile, plan))
    fields = metadata(plan, 0) + [(f"md{i}", "bit<32>") for i in METADATA_SOURCES]
    fields += [(f"fault{i}", "bit<8>") for i in range(plan.lanes)]
    include = "t2na" if chip == 2 else "tna"
    out = Program()
    out.add(Raw(f"// SwitchVM, stage-structured: {profile.summary()}"))
    out.add(Raw(f"#include <core.p4>\n#include <{include}.p4>"))
    out.add(*header_types(plan))
    out.add(headers_struct(plan, depth), struct("metadata_t", fields))
    out.add(Block("parser", "IngressParser", PARSER_PARAMS, parser_states(plan, depth)))
    out.add(*_exclusive(plan))
    out.add(Block("control", "Ingress", INGRESS_PARAMS, ingress.decls, ingress.apply))
    out.add(Raw(FRAME))
    return out


def _exclusive(plan: StagePlan) -> list[Decl]:
    """Prolog sources and EU scratch never live at once (module docstring)."""
    sources = [f"meta.pop{j}" for j in range(2 * plan.lanes)]
    sources += [f"meta.md{i}" for i in METADATA_SOURCES] + ["meta.rnd0", "meta.rnd1"]
    scratch = [f"hdr.push[{j}].w" for j in range(2 * plan.lanes)]
    scratch += ["meta.xr", "meta.an", "meta.dd", "meta.ci0", "meta.ci1"]
    return [
        Raw(f'@pa_mutually_exclusive("ingress", "{a}", "{b}")')
        for a, b in zip(sources, scratch, strict=False)
    ]


__all__ = ["generate", "program"]
