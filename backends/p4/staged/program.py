"""The stage-structured SwitchVM program: the model's stages in an architecture's frame.

Contract: :func:`generate` returns the P4-16 source for a profile whose pipeline has the
stages :class:`~.plan.StagePlan` needs, for TNA on Tofino-1 (``tna.p4``) or Tofino-2
(``t2na.p4``), or for v1model (bmv2's simple_switch); deterministic. The ingress applies,
in order, permissions | prolog | each EU's two stages | epilog | steering, every table
pinned to its stage (``@stage``). Both architectures get the same tables, keys, actions
and parameters from the same builders (:data:`ARCHITECTURES`: :mod:`.tna`, :mod:`.v1model`
say what each writes in its own idiom), so one control plane serves both.
"""

from __future__ import annotations

from dpfc.backends.p4.lang import Block, Program, Raw, n, render, struct
from dpfc.target import TargetProfile

from .arch import StagedArch
from .bundles import cut_code, drop_copies, select_bundle
from .ends import epilog_stage, permissions_stage, prolog_stage, steering_stage
from .eu import eu_stages
from .headers import header_types, headers_struct, metadata
from .loads import loaded_sources
from .parser import parser_states
from .plan import PlanError, StagePlan
from .stack import restack_stage
from .tna import StagedTna
from .units import Part
from .v1model import StagedV1Model

ARCHITECTURES = ("tna", "v1model")


def architecture(arch: str, chip: int = 1) -> StagedArch:
    """The architecture named ``arch`` (:data:`ARCHITECTURES`); ``chip`` is TNA's."""
    if arch == "tna":
        return StagedTna(chip)
    if arch == "v1model":
        return StagedV1Model()
    raise ValueError(f"unknown architecture `{arch}` (known: {', '.join(ARCHITECTURES)})")


def generate(profile: TargetProfile, arch: str = "tna", chip: int = 1) -> str:
    """The program for ``profile`` in ``arch`` (TNA: on Tofino-``chip``, 1 or 2)."""
    return render(program(profile, arch, chip))


def program(profile: TargetProfile, arch: str = "tna", chip: int = 1) -> Program:
    target = architecture(arch, chip)
    plan = StagePlan.for_profile(profile, arch)
    depth = profile.stack_max_depth
    if plan.packet_bundles > 1 and arch == "tna":
        raise PlanError(
            f"profile `{profile.name}`: a TNA program reads one in-packet bundle per stage "
            f"(packet_bundles_per_stage = 1; this profile has {plan.packet_bundles})"
        )
    meta = n("meta")
    ingress = Part()
    ingress.add(permissions_stage(profile, plan, target))
    ingress.apply += select_bundle(plan, "pro", meta.dot("ppc"))
    ingress.add(prolog_stage(profile, plan, target))
    for k in range(plan.num_eus):
        ingress.apply += select_bundle(plan, f"eu{k}", meta.dot(f"pc{k}"))
        ingress.add(eu_stages(profile, plan, k, target))
    ingress.apply += select_bundle(plan, "ep", meta.dot("epc"))
    ingress.add(epilog_stage(profile, plan, target))
    ingress.add(steering_stage(profile, plan, target))
    ingress.add(restack_stage(profile, plan, target))
    ingress.apply += cut_code(plan) + drop_copies(plan)
    fields = metadata(plan, 0) + [(f"md{i}", "bit<32>") for i in loaded_sources(plan)]
    fields += [(f"fault{i}", "bit<8>") for i in range(plan.lanes)]
    fields += target.extra_metadata()
    out = Program()
    out.add(Raw(f"// SwitchVM, stage-structured: {profile.summary()}"))
    out.add(Raw(target.includes()))
    out.add(*header_types(plan))
    out.add(headers_struct(plan, depth), struct("metadata_t", fields))
    states = parser_states(plan, depth, target)
    out.add(Block("parser", "IngressParser", target.parser_params(), states))
    out.add(*target.pragmas(plan))
    apply = target.ingress_start() + ingress.apply + target.ingress_end()
    out.add(Block("control", target.ingress_name, target.ingress_params(), ingress.decls, apply))
    out.add(*target.frame())
    return out


__all__ = ["ARCHITECTURES", "architecture", "generate", "program"]
