"""Expectations against what a packet did: one :class:`Mismatch` per field that differs.

Contract: :func:`compare` checks only what an :class:`~.spec.Expect` states. ``verdict``
and ``reason`` are the first pass's (the pass the packet entered by), ``passes`` every
pass's verdict in order; ``frames``, ``port``, ``to`` and ``outputs`` are about the frames
that left (one ``port`` or ``to`` means exactly one frame; a list, the frames in order);
``stack``, ``dpf`` and ``egress`` must hold for every frame that left (and there must be
one); memory cells are read after the packet; counters are the tenant's on the case's
switch since the case began; ``reports`` the kinds of the reports the packet caused, in
order. What the target cannot observe (a device tells no verdict, reason or report) is an
:class:`Unchecked` with the reason, never a silent pass. Each mismatch has the expected
and the observed value as data and as text (words in hex, as ``dpfc run`` prints them).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from dpfc.encoding import DecodeError
from dpfc.packet import parse_packet
from dpfc.target import TargetProfile

from .memory import Cell
from .observe import Observed, Output
from .spec import Expect, OutputExpect


@dataclass(frozen=True)
class Mismatch:
    what: str  # "stack", "outputs[1].port", "memory counter.counters[5]", "counters.executed"
    path: str  # the key path of the expectation
    expected: object
    got: object
    expected_text: str
    got_text: str


@dataclass(frozen=True)
class Unchecked:
    what: str
    path: str
    reason: str


@dataclass(frozen=True)
class Frame:
    """A frame that left, as far as the expectations are concerned."""

    port: int
    to: str
    tenant: int | None
    stack: tuple[int, ...] | None  # None: not a SwitchVM packet
    dpf: str | None
    egress: str | None

    def describe(self) -> str:
        where = f"port {self.port}" + (f" to {self.to}" if self.to else "")
        if self.stack is None:
            return f"{where}, not a SwitchVM packet"
        return f"{where}, stack {words(self.stack)}, dpf {self.dpf}"


def words(values: tuple[int, ...] | list[int]) -> str:
    return "[" + ", ".join(f"{v:#x}" for v in values) + "]"


def names(values: list[str]) -> str:
    return "[" + ", ".join(values) + "]"


def frame_of(output: Output, profile: TargetProfile) -> Frame:
    try:
        parsed = parse_packet(output.frame, profile)
    except DecodeError:
        return Frame(output.port, output.to, None, None, None, None)
    header = parsed.header
    if header is None:
        return Frame(output.port, output.to, parsed.tenant_id, None, None, None)
    return Frame(
        output.port,
        output.to,
        parsed.tenant_id,
        header.stack,
        "none" if header.dpf_ptr is None else str(header.dpf_ptr),
        "none" if header.egress_ptr is None else str(header.egress_ptr),
    )


class _Checker:
    def __init__(self, seen: Observed, profile: TargetProfile) -> None:
        self.seen = seen
        self.frames = [frame_of(o, profile) for o in seen.outputs]
        self.mismatches: list[Mismatch] = []
        self.unchecked: list[Unchecked] = []

    def differ(
        self, what: str, path: str, expected: object, got: object, shown: tuple[str, str]
    ) -> None:
        self.mismatches.append(Mismatch(what, path, expected, got, shown[0], shown[1]))

    def equal(
        self,
        what: str,
        path: str,
        expected: object,
        got: object,
        show: Callable[[Any], str] = str,
    ) -> None:
        if expected != got:
            self.differ(what, path, expected, got, (show(expected), show(got)))

    def frames_text(self) -> str:
        if not self.frames:
            return "no frame left"
        return "; ".join(f.describe() for f in self.frames)

    def first_pass(self, expect: Expect) -> None:
        passes = self.seen.passes
        wanted = [("verdict", expect.verdict), ("reason", expect.reason), ("passes", expect.passes)]
        if passes is None:
            for what, value in wanted:
                if value is not None:
                    self.unchecked.append(
                        Unchecked(what, f"{expect.path}.{what}", self.seen.unobservable)
                    )
            return
        first = passes[0] if passes else None
        if expect.verdict is not None:
            got = first.verdict if first else "not processed"
            if got != expect.verdict:
                detail = f"{got} ({first.reason})" if first else got
                self.differ(
                    "verdict",
                    f"{expect.path}.verdict",
                    expect.verdict,
                    got,
                    (expect.verdict, detail),
                )
        if expect.reason is not None:
            got_reason = first.reason if first else ""
            if expect.reason not in got_reason:
                self.differ(
                    "reason", f"{expect.path}.reason", expect.reason, got_reason,
                    (f"a reason containing {json.dumps(expect.reason)}", json.dumps(got_reason)),
                )  # fmt: skip
        if expect.passes is not None:
            got_passes = [p.verdict for p in passes]
            self.equal("passes", f"{expect.path}.passes", list(expect.passes), got_passes, names)

    def outputs(self, expect: Expect) -> None:
        frames = self.frames
        if expect.frames is not None:
            self.equal("frames", f"{expect.path}.frames", expect.frames, len(frames))
        if expect.ports is not None:
            got = [f.port for f in frames]
            if list(expect.ports) != got:
                shown = str(expect.ports[0]) if len(expect.ports) == 1 else str(list(expect.ports))
                self.differ(
                    "port",
                    f"{expect.path}.port",
                    list(expect.ports),
                    got,
                    (shown, self.frames_text()),
                )
        if expect.to is not None:
            got_to = [f.to or "none" for f in frames]
            if list(expect.to) != got_to:
                shown = expect.to[0] if len(expect.to) == 1 else ", ".join(expect.to)
                self.differ(
                    "to", f"{expect.path}.to", list(expect.to), got_to, (shown, self.frames_text())
                )
        each = expect.each
        if (each.stack, each.dpf, each.egress) != (None, None, None):
            if not frames:
                missing: list[tuple[str, object, str]] = []
                if each.stack is not None:
                    missing.append(("stack", list(each.stack), words(each.stack)))
                for what, text in (("dpf", each.dpf), ("egress", each.egress)):
                    if text is not None:
                        missing.append((what, text, text))
                for what, value, shown in missing:
                    self.differ(
                        what, f"{expect.path}.{what}", value, None, (shown, "no frame left")
                    )
            for frame in frames:
                label = "" if len(frames) == 1 else f" of the frame by port {frame.port}"
                self.frame(each, frame, label, expect.path)
        if expect.outputs is not None:
            if len(expect.outputs) != len(frames):
                self.differ(
                    "outputs", f"{expect.path}.outputs", len(expect.outputs), len(frames),
                    (f"{len(expect.outputs)} frame(s)", f"{len(frames)}: {self.frames_text()}"),
                )  # fmt: skip
            for index, (wanted, frame) in enumerate(zip(expect.outputs, frames, strict=False)):
                self.frame(wanted, frame, "", wanted.path, f"outputs[{index}].")

    def frame(
        self, wanted: OutputExpect, frame: Frame, label: str, path: str, prefix: str = ""
    ) -> None:
        def where(key: str) -> str:
            return wanted.path + "." + key if prefix else f"{path}.{key}"

        if wanted.port is not None:
            self.equal(f"{prefix}port{label}", where("port"), wanted.port, frame.port)
        if wanted.to is not None:
            self.equal(f"{prefix}to{label}", where("to"), wanted.to, frame.to or "none")
        if wanted.tenant is not None:
            self.equal(f"{prefix}tenant{label}", where("tenant"), wanted.tenant, frame.tenant)
        if wanted.stack is not None:
            got = list(frame.stack) if frame.stack is not None else None
            if got != list(wanted.stack):
                shown = words(got) if got is not None else "not a SwitchVM packet"
                self.differ(
                    f"{prefix}stack{label}",
                    where("stack"),
                    list(wanted.stack),
                    got,
                    (words(wanted.stack), shown),
                )
        if wanted.dpf is not None:
            self.equal(f"{prefix}dpf{label}", where("dpf"), wanted.dpf, frame.dpf)
        if wanted.egress is not None:
            self.equal(f"{prefix}egress{label}", where("egress"), wanted.egress, frame.egress)

    def state(self, expect: Expect, cells: list[Cell]) -> None:
        for cell in cells:
            got = self.seen.read(cell)
            if got != cell.expected:
                shown = f"{got:#x}" if isinstance(got, int) else got
                self.differ(
                    f"memory {cell.label}",
                    cell.path,
                    cell.expected,
                    got,
                    (f"{cell.expected:#x}", shown),
                )
        for name, value in expect.counters:
            where = f"{expect.path}.counters.{name}"
            if name not in self.seen.counters:
                self.unchecked.append(Unchecked(f"counters.{name}", where, self.seen.unobservable))
                continue
            self.equal(f"counters.{name}", where, value, self.seen.counters[name])
        if expect.reports is not None:
            if self.seen.reports is None:
                self.unchecked.append(
                    Unchecked("reports", f"{expect.path}.reports", self.seen.unobservable)
                )
            else:
                wanted = list(expect.reports)
                self.equal("reports", f"{expect.path}.reports", wanted, self.seen.reports, names)


def compare(
    expect: Expect, cells: list[Cell], seen: Observed, profile: TargetProfile
) -> tuple[list[Mismatch], list[Unchecked]]:
    """The mismatches of ``seen`` against ``expect`` (``cells``: its memory, resolved)."""
    checker = _Checker(seen, profile)
    checker.first_pass(expect)
    checker.outputs(expect)
    checker.state(expect, cells)
    return checker.mismatches, checker.unchecked


__all__ = ["Frame", "Mismatch", "Unchecked", "compare", "frame_of", "names", "words"]
