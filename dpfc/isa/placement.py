"""Legality of bundles in their places: the kind a stage holds, and an in-packet code image.

Contract: :func:`check_stage_bundle` checks a bundle for the code memory of one stage (its
kind must fit the stage, DPF1033; then the rules of :mod:`.check`); :func:`check_image`
checks an in-packet code image as a whole (EU stages and bundles per stage within the
profile's limits, every in-packet PC naming a bundle that exists) and every bundle in it.
Both return :class:`~dpfc.isa.check.Violation` records and never raise.
"""

from __future__ import annotations

from functools import lru_cache

from dpfc.catalog import codes
from dpfc.isa.bundle import (
    EPILOG_STAGE,
    PC,
    PROLOG_STAGE,
    Bundle,
    CodeImage,
    EpilogBundle,
    StageBundle,
    stage_name,
)
from dpfc.isa.check import Violation, check_bundle, check_epilog
from dpfc.isa.opcodes import CtrlOp
from dpfc.target import TargetProfile


def check_stage_bundle(stage: int, bundle: StageBundle, profile: TargetProfile) -> list[Violation]:
    """The rules for ``bundle`` in code memory of ``stage`` (0 prolog, 1..n EUs, 31 epilog),
    including that its kind fits the stage (DPF1033)."""
    if stage == EPILOG_STAGE:
        if not isinstance(bundle, EpilogBundle):
            return [
                Violation(
                    codes.ISA_WRONG_STAGE_KIND, "the epilog stage holds epilog bundles", ("bundle",)
                )
            ]
        return check_epilog(bundle, profile)
    if not isinstance(bundle, Bundle):
        return [
            Violation(
                codes.ISA_WRONG_STAGE_KIND,
                f"{stage_name(stage)} holds bundles, not epilogs",
                ("bundle",),
            )
        ]
    next_stage = "epilog" if stage == profile.num_eus else stage_name(stage + 1)
    return check_bundle(bundle, profile, prolog=stage == PROLOG_STAGE, next_stage=next_stage)


def check_image(image: CodeImage, profile: TargetProfile) -> list[tuple[int, int, Violation]]:
    """Check every bundle of an in-packet code image: (stage, index, violation) triples.

    Beyond per-bundle rules: the image has at most ``num_eus`` EU stages and
    ``packet_bundles_per_stage`` bundles per stage, and every in-packet PC names a bundle
    that exists in the stage it points to.
    """
    return list(_check_image(image, profile))


@lru_cache(maxsize=4096)  # a pure function of frozen values, called for every packet decoded
def _check_image(
    image: CodeImage, profile: TargetProfile
) -> tuple[tuple[int, int, Violation], ...]:
    out: list[tuple[int, int, Violation]] = []
    if len(image.eus) > profile.num_eus:
        out.append(
            (
                1 + profile.num_eus,
                0,
                Violation(
                    codes.ISA_NO_SUCH_EU,
                    f"code for EU{len(image.eus) - 1} but {profile.name} has {profile.num_eus} EUs",
                    ("bundle",),
                ),
            )
        )
        return tuple(out)
    counts = [len(image.prologs), *[len(s) for s in image.eus]]
    counts += [0] * (profile.num_eus - len(image.eus))
    epilog_count = len(image.epilogs)
    names = ["prolog", *[f"eu{k}" for k in range(profile.num_eus)], "epilog"]
    all_counts = [*counts, epilog_count]
    for stage_pos, count in enumerate(all_counts):
        if count > profile.packet_bundles_per_stage:
            stage = 31 if stage_pos == len(all_counts) - 1 else stage_pos
            out.append(
                (
                    stage,
                    0,
                    Violation(
                        codes.ISA_TOO_MANY_PACKET_BUNDLES,
                        f"{count} in-packet bundles for {names[stage_pos]} but {profile.name} parses at "
                        f"most {profile.packet_bundles_per_stage} per stage",
                        ("bundle",),
                    ),
                )
            )

    def exists(pc: PC, stage_pos: int) -> bool:
        return not pc.in_packet or pc.index < all_counts[stage_pos]

    def missing(pc: PC, stage_pos: int, where: tuple[str | int, ...]) -> Violation:
        return Violation(
            codes.ISA_PC_NOT_IN_PACKET,
            f"{pc} names no in-packet bundle of {names[stage_pos]} "
            f"({all_counts[stage_pos]} present)",
            where,
        )

    epilog_pos = len(all_counts) - 1
    stage_bundles: list[tuple[int, int, tuple[Bundle, ...]]] = [(0, 0, image.prologs)]
    stage_bundles += [(k + 1, k + 1, b) for k, b in enumerate(image.eus)]
    for stage, stage_pos, bundles in stage_bundles:
        next_pos = stage_pos + 1
        for index, bundle in enumerate(bundles):
            for v in check_bundle(bundle, profile, prolog=stage == 0, next_stage=names[next_pos]):
                out.append((stage, index, v))
            ctrl = bundle.control
            taken_pos = epilog_pos if ctrl.op is CtrlOp.HALT else next_pos
            if not exists(ctrl.taken, taken_pos):
                out.append((stage, index, missing(ctrl.taken, taken_pos, ("control", "taken"))))
            if ctrl.not_taken is not None and not exists(ctrl.not_taken, next_pos):
                out.append(
                    (stage, index, missing(ctrl.not_taken, next_pos, ("control", "not_taken")))
                )
    for index, epilog in enumerate(image.epilogs):
        for v in check_epilog(epilog, profile):
            out.append((31, index, v))
        if isinstance(epilog.next_pc, PC) and not exists(epilog.next_pc, 0):
            out.append((31, index, missing(epilog.next_pc, 0, ("next_pc",))))
    return tuple(out)
