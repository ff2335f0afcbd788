"""Removing DPFs from an image: what ``dpfc.deploy`` applies to uninstall them.

:func:`without` returns the image minus some tenants' DPF instances: their code slots lose
them as users (a slot nobody uses any more goes), memory and steering indices only they
used go, a tenant with no DPF left loses its permission entry, and a default DPF that
was removed is unset. Nothing that stays moves.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import replace

from dpfc.link.image import Image, install_order


def without(image: Image, keys: Collection[str]) -> Image:
    """``image`` without the DPF instances ``keys`` (``tenant:symbol``)."""
    gone = set(keys)
    unknown = sorted(gone - {d.key for d in image.dpfs})
    if unknown:
        raise KeyError(unknown[0])
    code = tuple(
        replace(slot, users=users)
        for slot in image.code
        if (users := tuple(u for u in slot.users if u not in gone))
    )
    dpfs = tuple(d for d in image.dpfs if d.key not in gone)
    memory = tuple(
        replace(request, users=users)
        for request in image.memory
        if (users := tuple(u for u in request.users if u not in gone))
    )
    steering = tuple(
        replace(request, users=users)
        for request in image.steering
        if (users := tuple(u for u in request.users if u not in gone))
    )
    tenants = {d.tenant for d in dpfs}
    installed = {(d.tenant, d.symbol) for d in dpfs if d.entry is not None}
    permissions = tuple(
        replace(
            entry,
            default_dpf=entry.default_dpf
            if (entry.tenant, entry.default_dpf) in installed
            else None,
        )
        for entry in image.permissions
        if entry.tenant in tenants
    )
    return replace(
        image,
        code=code,
        dpfs=dpfs,
        memory=memory,
        steering=steering,
        permissions=permissions,
        install=install_order(code, memory, permissions, image.profile.num_eus),
    )


__all__ = ["without"]
