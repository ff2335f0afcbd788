"""Installing machine programs on a simulated switch in tests, the way dpfc deploys code:
each program becomes a one-DPF object, is linked into the image the switch holds (nothing
installed moves) and the image change is applied through the simulator's control protocol,
prologs last.

Each install gets its own symbol (``counter#2``), so a test may install one program
twice; ``owners`` links the copy as private code and then limits its slots to those
tenants (the simulator's per-slot owner sets). Without ``tenant`` the program is linked as
code only (its array bindings and relocations dropped): the test maps memory and writes
chain targets itself.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from dataclasses import dataclass, replace
from weakref import WeakKeyDictionary

from dpfc.backends.sim import ControlPlane, SimControl
from dpfc.deploy import Deployment, Step
from dpfc.encoding import encode_slot, stage_kind
from dpfc.isa.bundle import PC, StageBundle
from dpfc.link import Image, LinkInput, LinkOptions, dpf_key, link
from dpfc.machine import MachineProgram, encode_program
from dpfc.objfile import ObjectFile
from dpfc.target import TargetProfile

_SERIAL = itertools.count(1)
_DEPLOYMENTS: WeakKeyDictionary[ControlPlane, Deployment] = WeakKeyDictionary()


def word(stage: int, bundle: StageBundle, profile: TargetProfile) -> bytes:
    """The code-memory word of ``bundle`` in ``stage`` (what the control plane takes)."""
    return encode_slot(stage_kind(stage), bundle, profile)


@dataclass(frozen=True)
class Installed:
    """Where an installed program went: its prolog and every (stage, slot) it uses."""

    key: str
    entry: PC
    slots: tuple[tuple[int, int], ...]


def deployment(control: ControlPlane) -> Deployment:
    if control not in _DEPLOYMENTS:
        _DEPLOYMENTS[control] = Deployment(SimControl(control))
    return _DEPLOYMENTS[control]


def _input(control: ControlPlane, program: MachineProgram, tenant: int | None) -> LinkInput:
    if tenant is None:
        # Code only: the test maps the memory itself, where the program's bindings say.
        program = replace(program, arrays=(), relocations=())
    obj = ObjectFile.of_program(encode_program(program))
    symbol = f"{program.name}#{next(_SERIAL)}"
    obj = replace(obj, dpfs=(replace(obj.dpfs[0], symbol=symbol),))
    return LinkInput(obj, tenant)


def _installed(image: Image, key: str) -> Installed:
    dpf = next(d for d in image.dpfs if d.key == key)
    assert dpf.entry is not None
    slots = tuple((p.stage, p.slot) for p in dpf.labels if not p.in_packet)
    return Installed(key, PC(False, dpf.entry), slots)


def install_program(
    control: ControlPlane,
    program: MachineProgram,
    *,
    prolog_slot: int | None = None,
    owners: Iterable[int] | None = None,
    pipes: int | Iterable[int] | None = None,
    tenant: int | None = None,
) -> Installed:
    """Link ``program`` into the switch's image and deploy it (see the module docstring)."""
    item = _input(control, program, tenant)
    symbol = item.obj.dpfs[0].symbol
    key = dpf_key(tenant, symbol)
    chosen = None if pipes is None else ([pipes] if isinstance(pipes, int) else list(pipes))
    options = LinkOptions(
        place={} if chosen is None else {symbol: tuple(chosen)},
        entries={} if prolog_slot is None else {symbol: prolog_slot},
        install=(symbol,),
        private=frozenset({key}) if owners is not None else frozenset(),
    )
    image = deployment(control).link([item], options)
    installed = _installed(image, key)
    if owners is not None:
        owner_list = list(owners)
        for stage, slot in installed.slots:
            code = image.slot_at(stage, slot)
            assert code is not None
            control.install_code(stage, slot, code.word, owners=owner_list, pipes=code.pipes)
    return installed


def plan_replace(
    control: ControlPlane, old: Installed, program: MachineProgram
) -> tuple[list[Step], Installed, Image]:
    """The steps that replace ``old`` by ``program`` in place (same prolog slot), not yet
    applied (``deployment(control).apply(image, between=...)`` applies them)."""
    held = deployment(control)
    tenant_text = old.key.split(":", 1)[0]
    tenant = None if tenant_text == "*" else int(tenant_text)
    item = _input(control, program, tenant)
    key = dpf_key(tenant, item.obj.dpfs[0].symbol)
    assert held.image is not None
    image = link(
        [item],
        LinkOptions(
            profile=control.profile,
            pipes=len(control.pipes),
            install=(item.obj.dpfs[0].symbol,),
            replace={old.key: key},
            base=held.image,
            base_id=held.image_id,
        ),
    )
    return held.plan(image), _installed(image, key), image


__all__ = ["Installed", "deployment", "install_program", "plan_replace", "word"]
