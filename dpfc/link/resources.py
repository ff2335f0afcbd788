"""What the linked DPFs need besides code: memory, permission entries, steering indices,
and the check that all of it (and the code) fits the profile.

* Memory: one request per tenant and array (the array's module-qualified name), on the
  pipes of the DPFs that use it, in the lane memories of their pipeline (an egress DPF's
  arrays are egress memory). An array every object places at the same (pipeline, EU,
  lane, mapping, size) has one placement; any difference is DPF7003 naming both objects.
  Two different arrays of one tenant in one lane of one pipeline would share its virtual
  address space (translation is per tenant, pipeline, EU and lane), which is DPF7004.
* Permissions: per tenant, the app ids of its modules (the first one linked is the entry's
  primary token) and the capabilities its code uses: ``metadata`` (a LOAD_MD selector),
  ``privileged`` (a privileged steering action of the profile) and ``recirculate``.
* Steering: every FWD forward/multicast with an immediate index (a register index is
  decided per packet and cannot be listed).
* Capacity, per pipe: code slots per stage, words, direct-mapping entries (and whether the
  lane has a direct table) and segments per lane, permission entries, forwarding entries.
  Every overflow is reported (DPF7005), with the numbers.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

import dpfc.link.errors as errors
from dpfc.catalog import codes
from dpfc.diagnostics import Diagnostic, DiagnosticError
from dpfc.isa import Bundle, EpilogBundle, Imm, SelectorKind, stage_name
from dpfc.link.image import MemoryRequest, PermissionEntry, SteeringRequest
from dpfc.link.place import CodeMemory
from dpfc.machine import MachineProgram
from dpfc.objfile import ObjectDPF, SourceLocation
from dpfc.target import TargetProfile


@dataclass(frozen=True)
class Instance:
    """One tenant's DPF being linked, with where it came from."""

    key: str
    tenant: int | None
    dpf: ObjectDPF
    object: str
    app_id: int
    pipes: frozenset[int]

    @property
    def location(self) -> SourceLocation | None:
        return self.dpf.location


def segments_for(size: int) -> int:
    """Power-of-two segments that cover ``size`` words exactly (one per set bit)."""
    return bin(size).count("1")


def memory_requests(
    base: Sequence[MemoryRequest], instances: Sequence[Instance]
) -> tuple[MemoryRequest, ...]:
    """The base requests (a new user may join one) and the new ones."""
    requests = list(base)
    origin: dict[tuple[int, str], str] = {(r.tenant, r.array): "the base image" for r in base}
    index = {(r.tenant, r.array): i for i, r in enumerate(requests)}
    for instance in instances:
        if instance.tenant is None:
            if instance.dpf.program.arrays:
                raise DiagnosticError(
                    errors.diagnostic(
                        codes.LINK_BAD_OPTION,
                        f"`{instance.dpf.symbol}` ({instance.object}) uses arrays, so it must "
                        "be linked for a tenant (whose memory they are)",
                        instance.location,
                    )
                )
            continue
        for binding in instance.dpf.program.arrays:
            key = (instance.tenant, binding.name)
            here = index.get(key)
            shape = (
                instance.dpf.pipeline,
                binding.eu,
                binding.lane,
                binding.mapping,
                binding.size,
            )
            if here is not None:
                old = requests[here]
                if _old(old) != shape:
                    raise DiagnosticError(
                        errors.diagnostic(
                            codes.LINK_ARRAY_CONFLICT,
                            f"array `{binding.name}` of tenant {instance.tenant} is "
                            f"{_shape(shape)} in {instance.object} but {_shape(_old(old))} "
                            f"in {origin[key]}",
                            instance.location,
                            hint="an array has one place on a switch: compile one module "
                            "against the other's object (dpfc compile --bindings OBJ)",
                        )
                    )
                pipes = tuple(sorted(set(old.pipes) | instance.pipes))
                users = tuple(sorted({*old.users, instance.key}))
                requests[here] = replace(old, pipes=pipes, users=users)
                continue
            origin[key] = instance.object
            index[key] = len(requests)
            requests.append(
                MemoryRequest(
                    instance.tenant,
                    binding.name,
                    binding.eu,
                    binding.lane,
                    binding.mapping,
                    binding.size,
                    tuple(sorted(instance.pipes)),
                    (instance.key,),
                    instance.dpf.pipeline,
                )
            )
    _check_lanes(requests, origin)
    return tuple(requests)


def _shape(shape: tuple[str, int, int, str, int]) -> str:
    pipeline, eu, lane, mapping, size = shape
    where = "" if pipeline == "ingress" else " of the egress pipeline"
    return f"{size} words at EU{eu} lane {lane}{where} ({mapping})"


def _old(request: MemoryRequest) -> tuple[str, int, int, str, int]:
    return (request.pipeline, request.eu, request.lane, request.mapping, request.size)


def _check_lanes(requests: Sequence[MemoryRequest], origin: Mapping[tuple[int, str], str]) -> None:
    by_lane: dict[tuple[int, str, int, int], MemoryRequest] = {}
    for request in requests:
        lane = (request.tenant, request.pipeline, request.eu, request.lane)
        other = by_lane.setdefault(lane, request)
        if other is not request and set(other.pipes) & set(request.pipes):
            raise DiagnosticError(
                errors.diagnostic(
                    codes.LINK_LANE_CONFLICT,
                    f"arrays `{other.array}` ({origin[(other.tenant, other.array)]}) and "
                    f"`{request.array}` ({origin[(request.tenant, request.array)]}) of tenant "
                    f"{request.tenant} are both at EU{request.eu} lane {request.lane}"
                    + ("" if request.pipeline == "ingress" else " of the egress pipeline")
                    + ": they would share its virtual addresses",
                    hint="pin one of them elsewhere, or link them for different tenants",
                )
            )


def permission_entries(
    base: Sequence[PermissionEntry],
    instances: Sequence[Instance],
    programs: Mapping[str, MachineProgram],
    profile: TargetProfile,
    default_dpf: Mapping[int, str],
) -> tuple[PermissionEntry, ...]:
    entries = {entry.tenant: entry for entry in base}
    for instance in instances:
        if instance.tenant is None:
            continue
        program = programs[instance.key]
        needs = _capabilities(program, profile)
        old = entries.get(instance.tenant)
        if old is None:
            entries[instance.tenant] = PermissionEntry(
                instance.tenant, (instance.app_id,), *needs, None, tuple(sorted(instance.pipes))
            )
            continue
        app_ids = old.app_ids if instance.app_id in old.app_ids else (*old.app_ids, instance.app_id)
        entries[instance.tenant] = replace(
            old,
            app_ids=app_ids,
            metadata=old.metadata or needs[0],
            privileged=old.privileged or needs[1],
            recirculate=old.recirculate or needs[2],
            pipes=tuple(sorted(set(old.pipes) | instance.pipes)),
        )
    for tenant, symbol in default_dpf.items():
        entries[tenant] = replace(entries[tenant], default_dpf=symbol)
    return tuple(entries[t] for t in sorted(entries))


def _capabilities(program: MachineProgram, profile: TargetProfile) -> tuple[bool, bool, bool]:
    metadata = privileged = recirculate = False
    for placed in program.bundles:
        bundle = placed.bundle
        if isinstance(bundle, Bundle):
            metadata |= any(s.kind is SelectorKind.LOAD_MD for s in bundle.selectors)
        elif isinstance(bundle, EpilogBundle):
            # docs/isa.md §6 item 12: the privileged bit gates set_port (every privileged
            # action but recirculate), the recirculate bit gates recirculate.
            name = bundle.steering.action
            action = profile.steering_by_name(name)
            recirculate |= name == "recirculate"
            privileged |= action is not None and action.privileged and name != "recirculate"
    return metadata, privileged, recirculate


def _lane_order(item: tuple[tuple[str, int, int], list[MemoryRequest]]) -> tuple[bool, int, int]:
    (pipeline, eu, lane), _ = item
    return pipeline != "ingress", eu, lane


def steering_requests(
    base: Sequence[SteeringRequest],
    instances: Sequence[Instance],
    programs: Mapping[str, MachineProgram],
) -> tuple[SteeringRequest, ...]:
    found: dict[tuple[int, str, int], set[str]] = {
        (r.tenant, r.action, r.index): set(r.users) for r in base
    }
    for instance in instances:
        if instance.tenant is None:
            continue
        for placed in programs[instance.key].bundles:
            bundle = placed.bundle
            if not isinstance(bundle, EpilogBundle):
                continue
            steering = bundle.steering
            if steering.action in ("forward", "multicast") and isinstance(steering.value, Imm):
                key = (instance.tenant, steering.action, steering.value.value)
                found.setdefault(key, set()).add(instance.key)
    return tuple(
        SteeringRequest(tenant, action, index, tuple(sorted(users)))
        for (tenant, action, index), users in sorted(found.items())
    )


def check_capacity(
    profile: TargetProfile,
    pipes: int,
    code: CodeMemory,
    memory: Iterable[MemoryRequest],
    permissions: Sequence[PermissionEntry],
    steering: Sequence[SteeringRequest],
) -> None:
    """Raise DPF7005 listing every resource of a pipe the image needs more of than the
    profile has."""
    problems: list[str] = []
    for (stage, pipe), extra in sorted(code.overflow.items()):
        have = profile.code_slots_per_stage
        problems.append(
            f"code memory of {stage_name(stage)} on pipe {pipe}: {have + extra} slots needed, "
            f"{have} exist ({extra} over)"
        )
    memory = list(memory)
    for pipe in range(pipes):
        # the egress pipeline's lane memories are as large as the ingress's, and separate
        lanes: dict[tuple[str, int, int], list[MemoryRequest]] = {}
        for request in memory:
            if pipe in request.pipes:
                lanes.setdefault((request.pipeline, request.eu, request.lane), []).append(request)
        for (pipeline, eu, lane), here in sorted(lanes.items(), key=_lane_order):
            where = f"EU{eu} lane {lane} of pipe {pipe}" + (
                "" if pipeline == "ingress" else " (egress)"
            )
            direct = [r for r in here if r.mapping == "direct"]
            if direct and not profile.lane_has_direct_mapping(lane):
                problems.append(
                    f"{where} has no direct-mapping table, but `{direct[0].array}` of tenant "
                    f"{direct[0].tenant} is mapped directly"
                )
            for what, need, have in (
                ("memory words", sum(r.size for r in here), profile.memory_words_per_lane),
                (
                    "direct-mapping entries",
                    sum(r.size for r in direct),
                    profile.direct_entries_per_lane,
                ),
                (
                    "segments",
                    sum(segments_for(r.size) for r in here if r.mapping == "segment"),
                    profile.segments_per_lane,
                ),
            ):
                if need > have:
                    problems.append(
                        f"{what} of {where}: {need} needed, {have} exist ({need - have} over; "
                        + ", ".join(f"{r.tenant}:{r.array} {r.size}" for r in here)
                        + ")"
                    )
        tenants = sum(1 for entry in permissions if pipe in entry.pipes)
        if tenants > profile.permission_entries:
            problems.append(
                f"permission table of pipe {pipe}: {tenants} tenants, "
                f"{profile.permission_entries} entries ({tenants - profile.permission_entries} over)"
            )
    if len(steering) > profile.forwarding_entries:
        problems.append(
            f"forwarding table: {len(steering)} steering indices named, "
            f"{profile.forwarding_entries} entries"
        )
    if problems:
        raise DiagnosticError(
            [
                Diagnostic(codes.LINK_CAPACITY, f"the image does not fit {profile.name}: {p}", None)
                for p in problems
            ]
        )


__all__ = [
    "Instance",
    "check_capacity",
    "memory_requests",
    "permission_entries",
    "segments_for",
    "steering_requests",
]
