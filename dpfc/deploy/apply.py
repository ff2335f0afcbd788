"""Deploying images through a switch's :class:`~dpfc.switch.SwitchControl`.

A :class:`Deployment` is what dpfc knows a switch holds (an image, or nothing). Moving it to
another image executes :func:`dpfc.deploy.plan.plan`'s steps one control call at a time —
optionally calling back between steps, so a test can send packets between any two writes
— and, when the switch refuses a step, undoes the steps already done, newest first, so
the switch is left as it was. :meth:`Deployment.link` links objects against the deployed
image (nothing deployed moves) and applies the result.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from dpfc.catalog import codes
from dpfc.deploy.plan import (
    ClearCode,
    GrantEntry,
    MapMemory,
    Step,
    UnmapMemory,
    WriteCode,
    inverse,
    plan,
)
from dpfc.link import Image, LinkInput, LinkOptions, image_bytes, image_id, link
from dpfc.switch import SwitchControl, SwitchRefused


def execute(switch: SwitchControl, step: Step) -> None:
    """One control call."""
    if isinstance(step, WriteCode):
        switch.write_code(step.stage, step.slot, step.word, step.pipes)
    elif isinstance(step, ClearCode):
        switch.clear_code(step.stage, step.slot, step.pipes)
    elif isinstance(step, MapMemory):
        r = step.request
        if r.pipeline == "ingress":
            # the keyword's default: controls written before egress memory keep working
            switch.map_memory(r.tenant, r.eu, r.lane, r.mapping, r.size, step.pipes)
        else:
            switch.map_memory(
                r.tenant, r.eu, r.lane, r.mapping, r.size, step.pipes, pipeline=r.pipeline
            )
    elif isinstance(step, UnmapMemory):
        r = step.request
        if r.pipeline == "ingress":
            switch.unmap_memory(r.tenant, r.eu, r.lane, r.mapping, r.size, step.pipes)
        else:
            switch.unmap_memory(
                r.tenant, r.eu, r.lane, r.mapping, r.size, step.pipes, pipeline=r.pipeline
            )
    elif isinstance(step, GrantEntry):
        switch.grant(step.tenant, step.grant, step.pipes)
    else:
        switch.revoke(step.tenant, step.pipes)


class Deployment:
    """The image a switch holds, and how it changes."""

    def __init__(self, switch: SwitchControl, image: Image | None = None) -> None:
        self.switch = switch
        self.image = image

    @property
    def image_id(self) -> str | None:
        return None if self.image is None else image_id(image_bytes(self.image))

    def check(self, image: Image) -> None:
        """The image is for this switch's profile and pipes (DPF7008), and its DPFs for the
        switch's pipelines (DPF4022)."""
        profile = self.switch.profile
        if image.profile.fingerprint() != profile.fingerprint():
            raise SwitchRefused(
                codes.LINK_PROFILE_MISMATCH,
                f"the image is for target `{image.profile.name}`, the switch is `{profile.name}`",
            )
        if image.pipes != self.switch.pipe_count:
            raise SwitchRefused(
                codes.LINK_PROFILE_MISMATCH,
                f"the image is for a switch of {image.pipes} pipes, this one has "
                f"{self.switch.pipe_count}",
            )

        # an egress DPF on a switch without an egress pipeline would never run (DPF4022)
        egress = [d.key for d in image.dpfs if d.pipeline not in self.switch.pipelines]
        if egress:
            raise SwitchRefused(
                codes.SWITCH_NO_EGRESS_DPFS,
                f"the switch runs no egress DPFs: {', '.join(egress)} would never run",
            )

    def plan(self, image: Image | None) -> list[Step]:
        return plan(self.image, image)

    def apply(
        self, image: Image | None, *, between: Callable[[Step], None] | None = None
    ) -> list[Step]:
        """Make the switch hold ``image`` (None: remove everything deployed); returns the
        steps done. On a refused step the switch is rolled back and the error raised."""
        if image is not None:
            self.check(image)
        steps = self.plan(image)
        done: list[Step] = []
        try:
            for step in steps:
                execute(self.switch, step)
                done.append(step)
                if between is not None:
                    between(step)
        except SwitchRefused:
            for step in reversed(done):
                undo = inverse(step)
                if undo is not None:
                    execute(self.switch, undo)
            raise
        self.image = image
        return steps

    def link(
        self,
        inputs: Sequence[LinkInput],
        options: LinkOptions | None = None,
        *,
        between: Callable[[Step], None] | None = None,
    ) -> Image:
        """Link ``inputs`` into the deployed image (nothing deployed moves) and apply it."""
        options = options or LinkOptions()
        linked = link(
            inputs,
            replace(
                options,
                profile=options.profile or self.switch.profile,
                pipes=options.pipes or self.switch.pipe_count,
                base=self.image,
                base_id=self.image_id,
            ),
        )
        self.apply(linked, between=between)
        return linked


__all__ = ["Deployment", "execute"]
