"""``dpfc link``: objects -> one install image (bundle) for one switch (docs/bundle.md).

:func:`link` (:mod:`.linker`) places code (:mod:`.place`, identical bundles shared),
resolves chains, gathers memory, permissions and steering and checks every capacity
(:mod:`.resources`); :mod:`.format` writes and strictly reads the bytes; :mod:`.disasm`
prints an image.
"""

from dpfc.link.disasm import format_image
from dpfc.link.format import MAGIC, VERSION, image_bytes, image_id, read_image
from dpfc.link.image import (
    ChainTarget,
    CodeSlot,
    ExternDPF,
    Image,
    InstallStep,
    LinkedDPF,
    MemoryRequest,
    PermissionEntry,
    PlacedLabel,
    SteeringRequest,
    dpf_key,
    install_rank,
)
from dpfc.link.linker import LinkInput, LinkOptions, link

__all__ = [
    "MAGIC",
    "VERSION",
    "ChainTarget",
    "CodeSlot",
    "ExternDPF",
    "Image",
    "InstallStep",
    "LinkInput",
    "LinkOptions",
    "LinkedDPF",
    "MemoryRequest",
    "PermissionEntry",
    "PlacedLabel",
    "SteeringRequest",
    "dpf_key",
    "format_image",
    "image_bytes",
    "image_id",
    "install_rank",
    "link",
    "read_image",
]
