"""What a loaded scenario is: its network, ready to run, and what the run reports on.

:class:`Scenario` is what :func:`~dpfc.backends.scenario.load_scenario` returns: the
network with every switch configured and every packet queued (:class:`QueuedPacket`, in
the order they are sent), the linked image and installed DPFs of each switch, the objects
its code came from, and the memory to print after the run (:class:`MemoryWatch`). More pcap
traffic can be queued with :meth:`Scenario.send_pcap` (``dpfc run --pcap``), whose errors
are :class:`ScenarioError`. :meth:`Scenario.trace_sources` gives what
:func:`dpfc.backends.sim.render_trace` needs to print the run's traces with their source.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from dpfc.backends.sim import Network
from dpfc.diagnostics import Diagnostic
from dpfc.link import Image, LinkedDPF
from dpfc.objfile import ObjectDPF
from dpfc.packet import read_pcap
from dpfc.target import TargetProfile

from .reader import CODE_FILE, CODE_UNKNOWN_NAME, ScenarioError, names, quote
from .sources import CodeSources


@dataclass(frozen=True)
class QueuedPacket:
    """A frame the scenario queued: its network packet id, sender and where it came from."""

    id: int
    host: str
    origin: str  # "packets[2]", "packets[2] #3" for repeats, "frames.pcap #1"
    summary: str  # tenant, DPF pointer and stack, or "pcap frame"
    frame: bytes


@dataclass(frozen=True)
class MemoryWatch:
    """Words to print after the run (the ``watch`` section)."""

    label: str
    switch: str
    pipe: int
    tenant: int
    eu: int
    lane: int
    vaddr: int
    count: int
    pipeline: str = "ingress"  # whose lane memories: the ingress's or the egress's


@dataclass
class Scenario:
    file: str
    directory: Path
    profile: TargetProfile
    network: Network
    packets: list[QueuedPacket] = field(default_factory=list)
    # the linked image each switch with code holds, and its id
    images: dict[str, tuple[Image, str]] = field(default_factory=dict)
    # every installed DPF by symbol (and by the name its code entry gives) -> (switch, DPF)
    dpfs: dict[str, tuple[str, LinkedDPF]] = field(default_factory=dict)
    watches: list[MemoryWatch] = field(default_factory=list)
    # the warnings of the DPF-language sources it compiled (dpfc run reports them)
    warnings: list[Diagnostic] = field(default_factory=list)
    # switch -> DPF instance (``tenant:symbol``) -> the object DPF it was linked from
    linked: dict[str, dict[str, ObjectDPF]] = field(default_factory=dict)
    # every object DPF the scenario read (code files, in-packet code of packets)
    objects: list[ObjectDPF] = field(default_factory=list)
    sources: CodeSources | None = field(default=None, repr=False, compare=False)

    def trace_sources(self) -> CodeSources:
        """The source of the scenario's code, for :func:`dpfc.backends.sim.render_trace`
        (built once, when first asked for: a run without traces reads no source)."""
        if self.sources is None:
            images = {switch: image for switch, (image, _) in self.images.items()}
            self.sources = CodeSources(
                self.profile, images, self.linked, self.objects, self.directory
            )
        return self.sources

    def send_pcap(self, pcap: str | Path, host: str, *, origin: str | None = None) -> None:
        """Queue every frame of ``pcap`` as sent by ``host`` (path relative to the cwd)."""
        if host not in self.network.hosts:
            raise ScenarioError(
                self.file,
                CODE_UNKNOWN_NAME,
                f"no host named {quote(host)} (hosts: {names(self.network.hosts)})",
            )
        name = origin if origin is not None else str(pcap)
        try:
            frames = read_pcap(str(pcap))
        except OSError as exc:
            raise ScenarioError(
                self.file, CODE_FILE, f"cannot read {name}: {exc.strerror}"
            ) from None
        except ValueError as exc:
            raise ScenarioError(self.file, CODE_FILE, f"{name}: {exc}") from None
        for number, frame in enumerate(frames, start=1):
            packet = self.network.send(host, frame)
            self.packets.append(
                QueuedPacket(packet, host, f"{name} #{number}", "pcap frame", frame)
            )
