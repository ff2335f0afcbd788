"""What changes on a switch when it goes from one image to another: ordered steps.

:func:`plan` compares the image a switch holds (None: an empty switch) with the image it
must hold and lists the control calls, in an order that keeps every packet on a whole DPF
(paper §3.6.2, "replacing the prolog only after all other stages of a DPF have been stored
in the switch"):

1. permission entries (keeping a default DPF the new one replaces until step 3), then
   memory mappings — what the new code touches exists before the code;
2. new code words, from the epilog back to EU0, then the prologs: a prolog is written
   after everything it reaches, so a packet sees the old DPF or the whole new one (an
   in-place replacement is the overwrite of the old prolog slot);
3. default-DPF pointers that name the new prologs;
4. code no longer used: the prologs first (no new packet enters), then the rest;
5. memory no longer used, then permission entries of tenants that are gone.

Installing an image on an empty switch is ``plan(None, image)``; removing it is
``plan(image, None)``. Every step records what it replaces, so a failed deployment can be
rolled back (:func:`inverse`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from dpfc.isa import PROLOG_STAGE, stage_name
from dpfc.link import CodeSlot, Image, MemoryRequest, PermissionEntry, install_rank
from dpfc.switch import Grant


@dataclass(frozen=True)
class WriteCode:
    stage: int
    slot: int
    word: bytes
    pipes: tuple[int, ...]
    previous: bytes | None = None  # the word it overwrites (an in-place replacement)


@dataclass(frozen=True)
class ClearCode:
    stage: int
    slot: int
    pipes: tuple[int, ...]
    previous: bytes = b""


@dataclass(frozen=True)
class MapMemory:
    request: MemoryRequest
    pipes: tuple[int, ...]


@dataclass(frozen=True)
class UnmapMemory:
    request: MemoryRequest
    pipes: tuple[int, ...]


@dataclass(frozen=True)
class GrantEntry:
    tenant: int
    grant: Grant
    pipes: tuple[int, ...]
    previous: Grant | None = None


@dataclass(frozen=True)
class Revoke:
    tenant: int
    pipes: tuple[int, ...]
    previous: Grant | None = None


Step = WriteCode | ClearCode | MapMemory | UnmapMemory | GrantEntry | Revoke


def describe(step: Step) -> str:
    """One line for logs and ``dpfc deploy -v``."""
    if isinstance(step, WriteCode):
        verb = "overwrite" if step.previous is not None else "write"
        return f"{verb} {stage_name(step.stage)} slot {step.slot} on pipes {_pipes(step.pipes)}"
    if isinstance(step, ClearCode):
        return f"clear {stage_name(step.stage)} slot {step.slot} on pipes {_pipes(step.pipes)}"
    if isinstance(step, MapMemory | UnmapMemory):
        r = step.request
        verb = "map" if isinstance(step, MapMemory) else "unmap"
        where = "" if r.pipeline == "ingress" else f" {r.pipeline}"
        return (
            f"{verb} {r.tenant}:{r.array} ({r.size} words {r.mapping}, EU{r.eu} lane {r.lane}"
            f"{where}) on pipes {_pipes(step.pipes)}"
        )
    if isinstance(step, GrantEntry):
        default = (
            "" if step.grant.default_dpf is None else f", default @switch:{step.grant.default_dpf}"
        )
        return f"permit tenant {step.tenant}{default} on pipes {_pipes(step.pipes)}"
    return f"revoke tenant {step.tenant} on pipes {_pipes(step.pipes)}"


def _pipes(pipes: tuple[int, ...]) -> str:
    return ",".join(map(str, pipes))


def grant_of(entry: PermissionEntry, image: Image) -> Grant:
    """The control protocol's view of a permission entry of ``image``."""
    default = None
    if entry.default_dpf is not None:
        default = image.dpf(entry.default_dpf, entry.tenant).entry
    return Grant(entry.app_ids, entry.metadata, entry.privileged, entry.recirculate, default)


def _empty_like(image: Image) -> Image:
    return Image(image.profile, image.pipes, (), (), (), (), (), (), ())


def plan(old: Image | None, new: Image | None) -> list[Step]:
    """The steps that turn a switch holding ``old`` into one holding ``new``."""
    reference = new if new is not None else old
    if reference is None:
        return []
    before = old if old is not None else _empty_like(reference)
    after = new if new is not None else _empty_like(reference)
    num_eus = after.profile.num_eus
    steps: list[Step] = []
    # 1. permissions, then memory (a switch maps memory for a tenant it knows)
    old_grants = {e.tenant: (e, grant_of(e, before)) for e in before.permissions}
    final: list[GrantEntry] = []
    for entry in after.permissions:
        grant = grant_of(entry, after)
        was_entry, was_grant = old_grants.get(entry.tenant, (None, None))
        # The new default DPF is set once its prolog is in (step 3); until then the entry
        # keeps the old one, whose code stays until step 4.
        kept = None if was_grant is None else was_grant.default_dpf
        early = replace(grant, default_dpf=kept)
        if was_grant != early or (was_entry is not None and was_entry.pipes != entry.pipes):
            steps.append(GrantEntry(entry.tenant, early, entry.pipes, was_grant))
        if early != grant:
            final.append(GrantEntry(entry.tenant, grant, entry.pipes, early))
    old_memory = {(r.tenant, r.array): r for r in before.memory}
    new_memory = {(r.tenant, r.array): r for r in after.memory}
    for key, request in new_memory.items():
        was = old_memory.get(key)
        extra = tuple(sorted(set(request.pipes) - set(was.pipes if was else ())))
        if extra:
            steps.append(MapMemory(request, extra))
    # 2. code, epilog back to EU0, prologs last
    old_code = {(c.stage, c.slot): c for c in before.code}
    new_code = {(c.stage, c.slot): c for c in after.code}
    writes = [w for c in after.code if (w := _write(c, old_code.get((c.stage, c.slot))))]
    writes.sort(key=lambda w: (install_rank(w.stage, num_eus), w.slot))
    steps += writes
    # 3. default DPFs
    steps += final
    # 4. code no longer used: prologs first
    clears = [
        ClearCode(c.stage, c.slot, gone, c.word)
        for c in before.code
        if (gone := _gone(c, new_code.get((c.stage, c.slot))))
    ]
    clears.sort(key=lambda c: (c.stage != PROLOG_STAGE, -install_rank(c.stage, num_eus), c.slot))
    steps += clears
    # 5. memory, then tenants
    for key, request in old_memory.items():
        now = new_memory.get(key)
        gone = tuple(sorted(set(request.pipes) - set(now.pipes if now else ())))
        if gone:
            steps.append(UnmapMemory(request, gone))
    new_tenants = {e.tenant: e for e in after.permissions}
    for entry in before.permissions:
        now_entry = new_tenants.get(entry.tenant)
        gone = tuple(sorted(set(entry.pipes) - set(now_entry.pipes if now_entry else ())))
        if gone:
            steps.append(Revoke(entry.tenant, gone, old_grants[entry.tenant][1]))
    return steps


def _write(slot: CodeSlot, was: CodeSlot | None) -> WriteCode | None:
    if was is None:
        return WriteCode(slot.stage, slot.slot, slot.word, slot.pipes)
    if was.word != slot.word:
        return WriteCode(slot.stage, slot.slot, slot.word, slot.pipes, was.word)
    extra = tuple(sorted(set(slot.pipes) - set(was.pipes)))
    return WriteCode(slot.stage, slot.slot, slot.word, extra) if extra else None


def _gone(slot: CodeSlot, now: CodeSlot | None) -> tuple[int, ...]:
    """The pipes where ``slot`` is no longer used (not overwritten: that is a write)."""
    if now is None:
        return slot.pipes
    return tuple(sorted(set(slot.pipes) - set(now.pipes)))


def inverse(step: Step) -> Step | None:
    """The step that undoes ``step`` (for a rollback), or None when none is needed."""
    if isinstance(step, WriteCode):
        if step.previous is None:
            return ClearCode(step.stage, step.slot, step.pipes, step.word)
        return WriteCode(step.stage, step.slot, step.previous, step.pipes, step.word)
    if isinstance(step, ClearCode):
        return WriteCode(step.stage, step.slot, step.previous, step.pipes)
    if isinstance(step, MapMemory):
        return UnmapMemory(step.request, step.pipes)
    if isinstance(step, UnmapMemory):
        return MapMemory(step.request, step.pipes)
    if isinstance(step, GrantEntry):
        if step.previous is None:
            return Revoke(step.tenant, step.pipes)
        return GrantEntry(step.tenant, step.previous, step.pipes, step.grant)
    if step.previous is not None:
        return GrantEntry(step.tenant, step.previous, step.pipes)
    return None


__all__ = [
    "ClearCode",
    "GrantEntry",
    "MapMemory",
    "Revoke",
    "Step",
    "UnmapMemory",
    "WriteCode",
    "describe",
    "grant_of",
    "inverse",
    "plan",
]
