"""A tenant's permission entry in a scenario: a ``[[config.tenants]]`` table merged with the
entry the switch's linked code made.

Contract: linking gives every tenant with code on a switch one permission entry
(:class:`~dpfc.link.PermissionEntry`, on the pipes its DPFs run on): the app-id tokens its
DPFs carry, the capability bits their code needs (``metadata`` for LOAD_MD, ``privileged``
for set_port and the other privileged steering, ``recirculate``) and its default DPF. A
``[[config.tenants]]`` table for that tenant does not replace that entry but is merged with
it (:func:`permission_entries`): a key the table states wins, a key it leaves out keeps the
image's value. A stated value that takes away what the linked code needs — tokens that leave
out one the code's packets carry, or ``metadata``/``privileged``/``recirculate = false``
where the code needs the bit — would make the switch refuse the tenant's own packets; it is
refused, DPF4110, naming the key, the tenant and why. On pipes the image's entry does not
cover, the table alone makes the entry (a key left out: its default; the tokens: those the
linked code granted the tenant, else 0).

Example: the image grants tenant 7 the token ``0x67756172`` and LOAD_MD; ``[[config.tenants]]
id = 7`` with ``forwarding = {...}`` keeps both, ``app_ids = [5, 0x67756172]`` adds a
token, ``app_id = 5`` is DPF4110.
"""

from __future__ import annotations

from dataclasses import dataclass

from dpfc.isa import PC
from dpfc.link import Image, PermissionEntry

from .reader import CODE_PERMISSION, Fail

# The capability bits of a permission entry, and what code needs each.
CAPABILITIES = {
    "metadata": "reads switch metadata (LOAD_MD)",
    "privileged": "steers with a privileged action (set_port)",
    "recirculate": "recirculates packets",
}


@dataclass(frozen=True)
class Stated:
    """What a ``[[config.tenants]]`` table states about the permission entry."""

    path: str  # the table's key path
    tenant: int
    tokens: tuple[int, ...] | None  # app_id / app_ids (None: neither key)
    tokens_at: str  # the key path of the tokens
    default_dpf: PC | None
    has_default: bool
    unauthorized: str
    bits: dict[str, bool]  # the capability keys the table states


@dataclass(frozen=True)
class Entry:
    """One permission entry to authorize on ``pipes`` (None: every pipe)."""

    pipes: list[int] | None
    app_ids: tuple[int, ...]
    default_dpf: PC | None
    unauthorized: str
    metadata: bool
    privileged: bool
    recirculate: bool


def permission_entries(
    stated: Stated,
    image: Image | None,
    switch: str,
    pipes: list[int] | None,
    pipe_count: int,
    fail: Fail,
) -> list[Entry]:
    """The entries a table makes on the block's ``pipes``: merged with the image's entry
    where it has one, the table's alone elsewhere (see the module docstring)."""
    granted = None
    if image is not None:
        granted = next((p for p in image.permissions if p.tenant == stated.tenant), None)
    if granted is None:
        return [_alone(stated, pipes, None)]
    wanted = list(range(pipe_count)) if pipes is None else pipes
    covered = [p for p in wanted if p in granted.pipes]
    rest = [p for p in wanted if p not in granted.pipes]
    if not covered:
        return [_alone(stated, pipes, granted)]
    assert image is not None
    _check(stated, granted, image, switch, fail)
    merged = _merged(stated, granted, image, pipes if not rest else covered)
    return [merged] + ([_alone(stated, rest, granted)] if rest else [])


def _alone(stated: Stated, pipes: list[int] | None, granted: PermissionEntry | None) -> Entry:
    """The table's entry where the image has none (the tokens: the code's, else 0)."""
    tokens = stated.tokens
    if tokens is None:
        tokens = granted.app_ids if granted is not None else (0,)
    return Entry(
        pipes,
        tokens,
        stated.default_dpf,
        stated.unauthorized,
        stated.bits.get("metadata", False),
        stated.bits.get("privileged", False),
        stated.bits.get("recirculate", False),
    )


def _merged(
    stated: Stated, granted: PermissionEntry, image: Image, pipes: list[int] | None
) -> Entry:
    default = stated.default_dpf
    if not stated.has_default and granted.default_dpf is not None:
        slot = image.dpf(granted.default_dpf, granted.tenant).entry
        default = None if slot is None else PC(False, slot)
    return Entry(
        pipes,
        stated.tokens if stated.tokens is not None else granted.app_ids,
        default,
        stated.unauthorized,
        stated.bits.get("metadata", granted.metadata),
        stated.bits.get("privileged", granted.privileged),
        stated.bits.get("recirculate", granted.recirculate),
    )


def _check(stated: Stated, granted: PermissionEntry, image: Image, switch: str, fail: Fail) -> None:
    """DPF4110 for a stated value that takes away what the linked code needs."""
    owner = f"tenant {stated.tenant}'s linked code on switch {switch}"
    if stated.tokens is not None:
        missing = [t for t in granted.app_ids if t not in stated.tokens]
        if missing:
            users = sorted(
                d.symbol for d in image.dpfs if d.tenant == stated.tenant and d.app_id in missing
            )
            keep = ", ".join(f"{t:#x}" for t in (*stated.tokens, *missing))
            fail(
                CODE_PERMISSION,
                f"{stated.tokens_at}: leaves out the token{'s' if len(missing) > 1 else ''} "
                f"{', '.join(f'{t:#x}' for t in missing)} that {owner} carries "
                f"({', '.join(users)}): the switch would refuse those packets as unauthorized "
                f"(list every token, app_ids = [{keep}], or leave the tokens out to keep the "
                "code's)",
            )
    for name, reason in CAPABILITIES.items():
        if stated.bits.get(name) is False and getattr(granted, name):
            fail(
                CODE_PERMISSION,
                f"{stated.path}.{name}: false, but {owner} {reason}, which needs it: the "
                f"switch would refuse that code's packets (leave {name} out to keep the "
                "image's entry)",
            )


__all__ = ["CAPABILITIES", "Entry", "Stated", "permission_entries"]
