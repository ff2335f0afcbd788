"""What ``dpfc link`` links: its inputs and options, checked, as instances of DPFs.

:func:`instances` turns each object's DPFs into one tenant's instances (a DPF defined twice
is DPF7002) on the pipes ``place`` gives; :func:`profile_of` checks that everything is for
one target profile (DPF7008); :func:`installed` says which instances go to switch code
memory; :func:`chain_order` orders instances so that chain targets come first (a cycle is
DPF7006).
"""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import dpfc.link.errors as errors
from dpfc.catalog import codes
from dpfc.diagnostics import DiagnosticError
from dpfc.link.image import Image, dpf_key
from dpfc.link.resources import Instance
from dpfc.machine import Placement
from dpfc.objfile import ObjectFile
from dpfc.target import TargetProfile


@dataclass(frozen=True)
class LinkInput:
    """An object, linked for one tenant (None: shared code for no tenant, which may bind
    no arrays and gets no permission entry)."""

    obj: ObjectFile
    tenant: int | None = 1


@dataclass(frozen=True)
class LinkOptions:
    profile: TargetProfile | None = None  # --target: must match the objects
    pipes: int | None = None  # --pipes (default: the base's, else 1)
    only: tuple[str, ...] = ()  # --dpf: link only these DPFs of the objects (default: all)
    place: Mapping[str, tuple[int, ...]] = field(default_factory=dict)  # symbol glob -> pipes
    entries: Mapping[str, int] = field(default_factory=dict)  # symbol -> prolog slot
    install: tuple[str, ...] = ()  # in-packet symbols to install in switch code memory too
    # base instance (tenant:symbol) -> the linked instance that replaces it in place
    replace: Mapping[str, str] = field(default_factory=dict)
    private: frozenset[str] = frozenset()  # instances (tenant:symbol) that share no code
    default_dpf: Mapping[int, str] = field(default_factory=dict)  # tenant -> symbol
    base: Image | None = None
    base_id: str | None = None
    externs: tuple[tuple[Image, str], ...] = ()  # (image, its id)


def owner(tenant: int | None) -> str:
    return "(shared code)" if tenant is None else f"of tenant {tenant}"


def option_error(message: str) -> DiagnosticError:
    return DiagnosticError(errors.diagnostic(codes.LINK_BAD_OPTION, message))


def profile_of(inputs: Sequence[LinkInput], options: LinkOptions) -> TargetProfile:
    """The one profile of every object, the base and the externs."""
    named: list[tuple[str, TargetProfile]] = [(i.obj.path, i.obj.profile) for i in inputs]
    if options.profile is not None:
        named.insert(0, ("--target", options.profile))
    if options.base is not None:
        named.append(("the base image", options.base.profile))
    named += [(f"extern image {ident[:16]}", image.profile) for image, ident in options.externs]
    if not named:
        raise option_error("nothing to link: give objects (or --base)")
    first_name, first = named[0]
    for name, profile in named[1:]:
        if profile.fingerprint() != first.fingerprint():
            raise DiagnosticError(
                errors.diagnostic(
                    codes.LINK_PROFILE_MISMATCH,
                    f"{name} is for target `{profile.name}`, but {first_name} is for "
                    f"`{first.name}`: one image holds code for one target profile",
                )
            )
    return first


def instances(inputs: Sequence[LinkInput], options: LinkOptions, pipes: int) -> list[Instance]:
    seen: dict[str, Instance] = {}
    base = {d.key: d for d in (options.base.dpfs if options.base else ())}
    used_patterns: set[str] = set()
    for item in inputs:
        if item.tenant is not None and not 0 <= item.tenant < 1 << 24:
            raise option_error(f"tenant {item.tenant} is not a 24-bit Geneve VNI")
        for dpf in item.obj.dpfs:
            if options.only and dpf.symbol not in options.only:
                continue
            key = dpf_key(item.tenant, dpf.symbol)
            first = seen.get(key)
            old = base.get(key)
            if first is not None or (old is not None and key not in options.replace):
                other = (
                    first.object
                    if first is not None
                    else f"the base image ({old.object if old is not None else '?'})"
                )
                raise DiagnosticError(
                    errors.diagnostic(
                        codes.LINK_DUPLICATE_DPF,
                        f"DPF `{dpf.symbol}` {owner(item.tenant)} is defined twice: in "
                        f"{item.obj.path} and in {other}",
                        dpf.location,
                        notes=(("the other definition", first.location if first else None),),
                        hint="link each module once per tenant",
                    )
                )
            chosen = _pipes_of(dpf.symbol, options, pipes, used_patterns)
            seen[key] = Instance(key, item.tenant, dpf, item.obj.path, dpf.program.app_id, chosen)
    missing = sorted(set(options.only) - {d.symbol for i in inputs for d in i.obj.dpfs})
    if missing:
        raise option_error(f"--dpf {missing[0]} names no DPF of the objects linked")
    unused = sorted(set(options.place) - used_patterns)
    if unused:
        raise option_error(f"--place {unused[0]} names no DPF of the objects linked")
    return list(seen.values())


def _pipes_of(symbol: str, options: LinkOptions, pipes: int, used: set[str]) -> frozenset[int]:
    for pattern, chosen in options.place.items():
        if fnmatch.fnmatchcase(symbol, pattern):
            used.add(pattern)
            bad = [p for p in chosen if not 0 <= p < pipes]
            if bad:
                raise option_error(
                    f"--place {pattern}: pipe {bad[0]} does not exist (the image has "
                    f"pipes 0..{pipes - 1}; --pipes sets how many)"
                )
            return frozenset(chosen)
    return frozenset(range(pipes))


def installed(instances: Sequence[Instance], options: LinkOptions) -> set[str]:
    """Keys of the instances whose code goes to switch code memory."""
    keys = {i.key for i in instances}
    out = {i.key for i in instances if i.dpf.program.placement is Placement.SWITCH}
    out |= {i.key for i in instances if i.dpf.symbol in options.install}
    missing = sorted(set(options.install) - {i.dpf.symbol for i in instances})
    if missing:
        raise option_error(f"--install {missing[0]} names no DPF of the objects linked")
    for instance in instances:
        for relocation in instance.dpf.program.relocations:
            target = dpf_key(instance.tenant, relocation.target)
            if target in keys:
                out.add(target)
    return out


def chain_order(instances: Sequence[Instance], by_key: Mapping[str, Instance]) -> list[Instance]:
    """Chain targets before the DPFs that chain to them (input order otherwise)."""
    order: list[Instance] = []
    state: dict[str, str] = {}

    def visit(instance: Instance, path: list[Instance]) -> None:
        if state.get(instance.key) == "done":
            return
        if state.get(instance.key) == "open":
            cycle = [*path[path.index(instance) :], instance]
            raise DiagnosticError(
                errors.diagnostic(
                    codes.LINK_CHAIN_CYCLE,
                    "DPFs chain to each other in a cycle: "
                    + " -> ".join(f"`{i.dpf.symbol}`" for i in cycle),
                    instance.location,
                    hint="a packet may not run a DPF again through chaining",
                )
            )
        state[instance.key] = "open"
        for relocation in instance.dpf.program.relocations:
            target = by_key.get(dpf_key(instance.tenant, relocation.target))
            if target is not None:
                visit(target, [*path, instance])
        state[instance.key] = "done"
        order.append(instance)

    for instance in instances:
        visit(instance, [])
    return order


__all__ = [
    "LinkInput",
    "LinkOptions",
    "chain_order",
    "installed",
    "instances",
    "option_error",
    "owner",
    "profile_of",
]
