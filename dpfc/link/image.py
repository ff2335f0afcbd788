"""The install bundle ("image") ``dpfc link`` writes and every back end loads, as data.

An image describes what one switch (one target profile, ``pipes`` pipes) must hold so that
the linked DPFs run: the code-memory words per stage and slot (shared by every DPF whose
bundle is that word, with the users named), where each DPF lives (its prolog slot, the
slots of its bundles, or its in-packet code with chain targets filled in), the memory each
tenant's arrays need, the permission entries (app ids, the metadata / privileged /
recirculate bits the code needs, the default DPF) and the steering indices the code names.
``install`` orders all of it: permissions and memory, then code from the epilog back to
EU0, then the prologs, then default-DPF pointers; removal runs it backwards. The byte form
is :mod:`dpfc.link.format` (docs/bundle.md).
"""

from __future__ import annotations

from dataclasses import dataclass

from dpfc.isa import EPILOG_STAGE, PROLOG_STAGE
from dpfc.target import TargetProfile


def dpf_key(tenant: int | None, symbol: str) -> str:
    """How an image names one tenant's instance of a DPF: ``7:kvs.cache_get``; code linked
    for no tenant (shared code that owns no memory or permissions) is ``*:symbol``."""
    return f"{'*' if tenant is None else tenant}:{symbol}"


def install_rank(stage: int, num_eus: int) -> int:
    """Code is written epilog first, then EU(n-1) .. EU0, the prolog last."""
    if stage == EPILOG_STAGE:
        return 0
    if stage == PROLOG_STAGE:
        return num_eus + 1
    return num_eus - stage + 1


@dataclass(frozen=True)
class CodeSlot:
    """One code-memory word at (``stage``, ``slot``) of the ``pipes`` listed; ``users`` are
    the DPF instances (``tenant:symbol``) whose code it is — its reference count."""

    stage: int
    slot: int
    word: bytes
    pipes: tuple[int, ...]
    users: tuple[str, ...]

    @property
    def refs(self) -> int:
        return len(self.users)


@dataclass(frozen=True)
class PlacedLabel:
    """Where a bundle of a DPF ended up: a code slot, or an in-packet index (``slot`` is
    then the index and ``in_packet`` true)."""

    label: str
    stage: int
    slot: int
    in_packet: bool = False


@dataclass(frozen=True)
class ChainTarget:
    """The epilog ``label`` of a DPF chains to ``target``, whose prolog is at ``slot``."""

    label: str
    target: str
    slot: int


@dataclass(frozen=True)
class LinkedDPF:
    """One tenant's instance of a DPF in the image (tenant None: code linked for no
    tenant, which owns no memory or permission entry)."""

    symbol: str
    tenant: int | None
    module: str
    object: str  # the object file it came from
    placement: str  # "packet" | "switch": where its code travels by default
    pipes: tuple[int, ...]
    app_id: int
    params: int
    entry: int | None  # its prolog slot when installed in switch code memory
    labels: tuple[PlacedLabel, ...]
    chains: tuple[ChainTarget, ...]
    in_packet_options: bytes | None  # in-packet DPFs: options (empty stack), chains resolved
    # "ingress" | "egress": which pointer names it (dpf_ptr / egress_ptr), whose lane
    # memories its arrays are in; its code shares the one (stage, slot) space either way
    pipeline: str = "ingress"

    @property
    def key(self) -> str:
        return dpf_key(self.tenant, self.symbol)


@dataclass(frozen=True)
class ExternDPF:
    """A DPF installed on another switch that a DPF of this image chains to."""

    symbol: str
    tenant: int | None
    entry: int
    image: str  # the id of the image that installs it
    pipeline: str = "ingress"


@dataclass(frozen=True)
class MemoryRequest:
    """Tenant ``tenant``'s array ``array``: ``size`` words at (``eu``, ``lane``) of the
    ``pipes`` listed, mapped ``direct`` (one exact-match entry per index 0..size-1) or as
    power-of-two segments covering [0, size), in the lane memories of ``pipeline`` (each
    pipe has an ingress and an egress set: an egress DPF's arrays are egress memory)."""

    tenant: int
    array: str
    eu: int
    lane: int
    mapping: str
    size: int
    pipes: tuple[int, ...]
    users: tuple[str, ...]
    pipeline: str = "ingress"


@dataclass(frozen=True)
class PermissionEntry:
    """The permission-table entry of ``tenant`` on ``pipes``: its app-id tokens (the first
    is the entry's primary token), the capabilities its code needs, its default DPF."""

    tenant: int
    app_ids: tuple[int, ...]
    metadata: bool
    privileged: bool
    recirculate: bool
    default_dpf: str | None  # a symbol of this tenant installed in the image
    pipes: tuple[int, ...]


@dataclass(frozen=True)
class SteeringRequest:
    """A forwarding index or multicast group the tenant's code names (FWD with an
    immediate value); the operator maps it to destinations when deploying."""

    tenant: int
    action: str  # "forward" | "multicast"
    index: int
    users: tuple[str, ...]


@dataclass(frozen=True)
class InstallStep:
    """``kind`` is ``memory``, ``permission``, ``code`` or ``default_dpf``; ``index`` the
    item of that list of the image."""

    kind: str
    index: int


@dataclass(frozen=True)
class Image:
    profile: TargetProfile
    pipes: int
    code: tuple[CodeSlot, ...]
    dpfs: tuple[LinkedDPF, ...]
    externs: tuple[ExternDPF, ...]
    memory: tuple[MemoryRequest, ...]
    permissions: tuple[PermissionEntry, ...]
    steering: tuple[SteeringRequest, ...]
    install: tuple[InstallStep, ...]
    base: str | None = None  # the id of the image this one extends (``--base``)

    def dpf(self, symbol: str, tenant: int | None) -> LinkedDPF:
        """The instance of ``symbol`` linked for ``tenant``."""
        key = dpf_key(tenant, symbol)
        found = next((d for d in self.dpfs if d.key == key), None)
        if found is None:
            raise KeyError(key)
        return found

    def only(self, symbol: str) -> LinkedDPF:
        """The one instance of ``symbol`` (KeyError when there are none or several)."""
        found = [d for d in self.dpfs if d.symbol == symbol]
        if len(found) != 1:
            raise KeyError(symbol)
        return found[0]

    def slot_at(self, stage: int, slot: int) -> CodeSlot | None:
        return next((c for c in self.code if c.stage == stage and c.slot == slot), None)


def install_order(
    code: tuple[CodeSlot, ...],
    memory: tuple[MemoryRequest, ...],
    permissions: tuple[PermissionEntry, ...],
    num_eus: int,
) -> tuple[InstallStep, ...]:
    """Permissions, memory, code from the epilog back to the prologs, default DPFs last."""
    steps = [InstallStep("permission", i) for i in range(len(permissions))]
    steps += [InstallStep("memory", i) for i in range(len(memory))]
    ranked = sorted(
        range(len(code)), key=lambda i: (install_rank(code[i].stage, num_eus), code[i].slot)
    )
    steps += [InstallStep("code", i) for i in ranked]
    steps += [
        InstallStep("default_dpf", i)
        for i, entry in enumerate(permissions)
        if entry.default_dpf is not None
    ]
    return tuple(steps)


__all__ = [
    "ChainTarget",
    "CodeSlot",
    "ExternDPF",
    "Image",
    "InstallStep",
    "LinkedDPF",
    "MemoryRequest",
    "PermissionEntry",
    "PlacedLabel",
    "SteeringRequest",
    "dpf_key",
    "install_order",
    "install_rank",
]
