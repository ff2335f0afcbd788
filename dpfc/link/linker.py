"""``dpfc link``: objects (and a base image) -> one install image for one switch.

Contract of :func:`link`:

* every object, the base image and the extern images are for one target profile
  (fingerprints equal, DPF7008); the image has ``pipes`` pipes (the base's, else 1);
* each object's DPFs (those ``only`` names, when given) become instances of one tenant;
  a tenant's symbol defined twice
  (in the objects or the base) is DPF7002, naming both objects and the source;
* in-switch DPFs are installed; an in-packet DPF is installed too when a linked DPF
  chains to it or ``install`` names it (its switch form; DPF7007 when it has none), and
  keeps its in-packet code, with chain targets filled in, for the packets that carry it;
* a chain target is the same tenant's instance of the symbol in the objects or the base,
  else the only instance in an extern image (a DPF installed on another switch); a target
  found nowhere is DPF7001 at the chaining source line, a target of the other pipeline
  (an ingress DPF chaining to an egress one, or back) DPF7011; DPFs are placed targets
  first (a cycle of chains is DPF7006);
* ingress and egress DPFs share the code slots (one address space, written into both
  pipelines' code tables by the switch's control); a default DPF is an installed ingress DPF of its
  tenant (DPF7009);
* code goes through :class:`~dpfc.link.place.CodeMemory`: identical bundles share a slot,
  base slots never move, ``entries`` pins prolog slots (DPF7010 when taken);
* ``replace`` maps base instances (``tenant:symbol``) to the linked instances that replace
  them in place: the new code goes to free slots (the old code stays in use until the
  switch moves to the new image), its prolog overwrites the old prolog slot, and the old
  code's other slots leave the image;
* the code of ``private`` instances shares no slot with other code (a back end may then
  limit its slots to their owners);
* memory, permissions, steering and capacity: :mod:`dpfc.link.resources`;
* the result is deterministic: the same inputs (objects in the same order) give the same
  image, and so the same bytes and id.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

import dpfc.link.errors as errors
from dpfc.catalog import codes
from dpfc.diagnostics import DiagnosticError
from dpfc.encoding import encode_options
from dpfc.isa import PC, PROLOG_STAGE
from dpfc.link.edit import without
from dpfc.link.image import (
    ChainTarget,
    ExternDPF,
    Image,
    LinkedDPF,
    PlacedLabel,
    dpf_key,
    install_order,
)
from dpfc.link.inputs import (
    LinkInput,
    LinkOptions,
    chain_order,
    installed,
    instances,
    option_error,
    owner,
    profile_of,
)
from dpfc.link.place import CodeMemory, SlotConflict, place_program
from dpfc.link.resources import (
    Instance,
    check_capacity,
    memory_requests,
    permission_entries,
    steering_requests,
)
from dpfc.machine import MachineProgram, Placement


def link(inputs: Sequence[LinkInput], options: LinkOptions | None = None) -> Image:
    """Link ``inputs`` (see the module docstring); raises DiagnosticError."""
    options = options or LinkOptions()
    profile = profile_of(inputs, options)
    base = options.base
    pipes = options.pipes or (base.pipes if base is not None else 1)
    if base is not None and pipes != base.pipes:
        raise option_error(f"--pipes {pipes} differs from the base image's {base.pipes} pipes")
    replaced = _replaced(base, options)  # new key -> (old key, old prolog slot)
    linked = instances(inputs, options, pipes)
    unknown = sorted(set(options.replace.values()) - {i.key for i in linked})
    if unknown:
        raise option_error(f"--replace: {unknown[0]} is not among the DPFs linked")
    by_key = {i.key: i for i in linked}
    to_install = installed(linked, options)
    order = chain_order(linked, by_key)
    memory = CodeMemory(profile, pipes)
    if base is not None:
        memory.load(base.code)
        for old_key, _entry in replaced.values():
            memory.rename_user(old_key, old_key + OLD)
        base = without(base, [old for old, _entry in replaced.values()])
    placed: dict[str, LinkedDPF] = {d.key: d for d in (base.dpfs if base else ())}
    externs: dict[str, ExternDPF] = {}
    programs: dict[str, MachineProgram] = {}
    for instance in order:
        chains = _chains(instance, placed, options, externs)
        done, program = _place(
            instance,
            chains,
            instance.key in to_install,
            memory,
            options,
            replaced.get(instance.key),
        )
        placed[instance.key] = done
        programs[instance.key] = program
    for old_key, _entry in replaced.values():
        memory.drop_user(old_key + OLD)
    _check_defaults(options, placed)
    memory_list = memory_requests(base.memory if base else (), linked)
    permissions = permission_entries(
        base.permissions if base else (), linked, programs, profile, options.default_dpf
    )
    steering = steering_requests(base.steering if base else (), linked, programs)
    check_capacity(profile, pipes, memory, memory_list, permissions, steering)
    code = memory.slots()
    dpfs = tuple(placed[k] for k in sorted(placed, key=_key_order))
    return Image(
        profile=profile,
        pipes=pipes,
        code=code,
        dpfs=dpfs,
        externs=tuple(
            sorted((*(base.externs if base else ()), *externs.values()), key=_extern_order)
        ),
        memory=memory_list,
        permissions=permissions,
        steering=steering,
        install=install_order(code, memory_list, permissions, profile.num_eus),
        base=options.base_id,
    )


OLD = "#replaced"  # what a replaced instance is called while its new code is placed


def _replaced(base: Image | None, options: LinkOptions) -> dict[str, tuple[str, int | None]]:
    """New instance -> (the base instance it replaces, whose prolog slot it takes)."""
    out: dict[str, tuple[str, int | None]] = {}
    for old, new in options.replace.items():
        found = [d for d in (base.dpfs if base else ()) if d.key == old]
        if not found:
            raise option_error(f"--replace {old} names no DPF of the base image")
        out[new] = (old, found[0].entry)
    return out


def _key_order(key: str) -> tuple[int, str]:
    tenant, symbol = key.split(":", 1)
    return (-1 if tenant == "*" else int(tenant)), symbol


def _extern_order(extern: ExternDPF) -> tuple[int, str]:
    return (-1 if extern.tenant is None else extern.tenant), extern.symbol


def _check_defaults(options: LinkOptions, placed: Mapping[str, LinkedDPF]) -> None:
    """A default DPF runs in the ingress on packets that name none (§3.4): it must be an
    installed ingress DPF of its tenant."""
    for tenant, symbol in options.default_dpf.items():
        found = placed.get(dpf_key(tenant, symbol))
        if found is None:
            raise option_error(f"--default-dpf {symbol}@{tenant}: no such DPF of tenant {tenant}")
        if found.entry is None:
            raise option_error(
                f"--default-dpf {symbol}@{tenant}: it is not installed in switch code memory "
                f"(link it with --install {symbol})"
            )
        if found.pipeline != "ingress":
            raise option_error(
                f"--default-dpf {symbol}@{tenant}: it is an egress DPF; the default DPF runs in "
                "the ingress, on packets that name no DPF"
            )


def _chains(
    instance: Instance,
    placed: Mapping[str, LinkedDPF],
    options: LinkOptions,
    externs: dict[str, ExternDPF],
) -> dict[str, PC]:
    """label -> the prolog PC its NEXT_PC names."""
    out: dict[str, PC] = {}
    for relocation in instance.dpf.program.relocations:
        target = placed.get(dpf_key(instance.tenant, relocation.target))
        entry = target.entry if target is not None else None
        if target is not None and entry is None:
            raise DiagnosticError(
                errors.diagnostic(
                    codes.LINK_NOT_INSTALLABLE,
                    f"`{relocation.target}` {owner(instance.tenant)} is in the base image "
                    "but not installed in switch code memory, so nothing can chain to it",
                    instance.dpf.line_location(relocation.label, "NEXT_PC"),
                    hint=f"link it again with --install {relocation.target}",
                )
            )
        pipeline = target.pipeline if target is not None else None
        if entry is None:
            extern = _extern(relocation.target, instance.tenant, options)
            if extern is None:
                raise DiagnosticError(
                    errors.diagnostic(
                        codes.LINK_UNRESOLVED_CHAIN,
                        f"{instance.object}: `{instance.dpf.symbol}` chains to "
                        f"`{relocation.target}`, which no object, base or extern image "
                        "linked defines",
                        instance.dpf.line_location(relocation.label, "NEXT_PC"),
                        hint="link its object too, or --extern the image of the switch "
                        "that installs it",
                    )
                )
            externs[dpf_key(extern.tenant, extern.symbol)] = extern
            entry = extern.entry
            pipeline = extern.pipeline
        if pipeline != instance.dpf.pipeline:
            # NEXT_PC sets the pointer of the pipeline the chaining DPF runs in: the next
            # switch runs the target there (sema's DPF5223, for objects built apart).
            raise DiagnosticError(
                errors.diagnostic(
                    codes.LINK_CHAIN_PIPELINE,
                    f"{instance.object}: {instance.dpf.pipeline} DPF `{instance.dpf.symbol}` "
                    f"chains to `{relocation.target}`, an {pipeline} DPF: a chain names a DPF "
                    "of the chaining DPF's pipeline",
                    instance.dpf.line_location(relocation.label, "NEXT_PC"),
                )
            )
        out[relocation.label] = PC(False, entry)
    return out


def _extern(symbol: str, tenant: int | None, options: LinkOptions) -> ExternDPF | None:
    found = [
        ExternDPF(d.symbol, d.tenant, d.entry, ident, d.pipeline)
        for image, ident in options.externs
        for d in image.dpfs
        if d.symbol == symbol and d.entry is not None
    ]
    own = [e for e in found if e.tenant == tenant]
    if own:
        return own[0]
    return found[0] if len({(e.tenant, e.entry) for e in found}) == 1 else None


def _place(
    instance: Instance,
    chains: Mapping[str, PC],
    installed: bool,
    memory: CodeMemory,
    options: LinkOptions,
    replacing: tuple[str, int | None] | None = None,
) -> tuple[LinkedDPF, MachineProgram]:
    dpf = instance.dpf
    program = dpf.program
    encoded = dpf.encoded
    labels: list[PlacedLabel] = []
    entry: int | None = None
    options_bytes = None
    runs = program
    if installed:
        form = program
        if program.placement is Placement.PACKET:
            if encoded.switch_form is None:
                raise DiagnosticError(
                    errors.diagnostic(
                        codes.LINK_NOT_INSTALLABLE,
                        f"`{dpf.symbol}` cannot be installed in switch code memory "
                        f"({encoded.switch_problem}), but a linked DPF chains to it",
                        dpf.location,
                    )
                )
            form = program.as_switch()
        try:
            entry_at = options.entries.get(dpf.symbol)
            if replacing is not None and replacing[1] is not None:
                entry_at = replacing[1]
            done = place_program(
                memory,
                form,
                instance.pipes,
                instance.key,
                chains,
                entry_at=entry_at,
                replacing=None if replacing is None else replacing[0] + OLD,
                private=instance.key in options.private,
            )
        except SlotConflict as exc:
            raise DiagnosticError(
                errors.diagnostic(
                    codes.LINK_SLOT_TAKEN,
                    f"prolog slot {exc.slot}, asked for `{dpf.symbol}`, holds other code "
                    f"(of {', '.join(exc.users)})",
                    dpf.location,
                )
            ) from None
        entry = done.slots[(PROLOG_STAGE, form.entry.index)]
        labels = [PlacedLabel(b.label, b.stage, b.pc.index) for b in done.program.bundles]
        runs = done.program
    if program.placement is Placement.PACKET:
        packet = place_program(
            memory,
            program,
            instance.pipes,
            instance.key,
            chains,
            private=instance.key in options.private,
        )
        header = packet.program.header()
        options_bytes = encode_options(header, program.profile).data
        if not installed:
            labels = [
                PlacedLabel(b.label, b.stage, b.pc.index, b.pc.in_packet)
                for b in packet.program.bundles
            ]
            runs = packet.program
    result = LinkedDPF(
        symbol=dpf.symbol,
        tenant=instance.tenant,
        module=_module(dpf.symbol),
        object=instance.object,
        placement=program.placement.value,
        pipes=tuple(sorted(instance.pipes)),
        app_id=program.app_id,
        params=dpf.params,
        entry=entry,
        labels=tuple(sorted(labels, key=lambda p: (p.stage, p.in_packet, p.slot, p.label))),
        chains=tuple(
            ChainTarget(label, r.target, pc.index)
            for r in program.relocations
            for label, pc in chains.items()
            if r.label == label
        ),
        in_packet_options=options_bytes,
        pipeline=dpf.pipeline,
    )
    return result, replace(runs, relocations=())


def _module(symbol: str) -> str:
    return symbol.rsplit(".", 1)[0] if "." in symbol else symbol


__all__ = ["LinkInput", "LinkOptions", "link"]
