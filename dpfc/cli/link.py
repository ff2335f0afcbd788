"""``dpfc link OBJ... -o IMAGE``: objects -> an install image for one switch (docs/bundle.md).

Every option is checked before anything is linked. ``OBJ`` links the object for
``--tenant`` (default 1); ``OBJ@TENANT`` for another tenant, so one image can hold several
tenants' code. The command prints what the image holds (code slots per stage, what is
shared, memory, tenants) and writes the image with ``-o``; ``--base`` links new objects
into a deployed image without moving anything it placed.
"""

from __future__ import annotations

from pathlib import Path

import click

from dpfc.cli.conventions import TARGET
from dpfc.cli.errors import UserError, handle_errors, quiet
from dpfc.cli.files import is_stdio, output_option, read_bytes, write_file
from dpfc.cli.numbers import number
from dpfc.isa import stage_name
from dpfc.link import Image, LinkInput, LinkOptions, image_bytes, image_id, link, read_image
from dpfc.objfile import read_object
from dpfc.target import TargetProfile, load_profile

TENANT_MAX = (1 << 24) - 1


def _split_tenant(text: str, default: int) -> tuple[str, int]:
    """``PATH`` or ``PATH@TENANT`` (a file that exists under the whole name wins)."""
    path, at, tenant = text.rpartition("@")
    if not at or Path(text).exists():
        return text, default
    return path, number(tenant, f"tenant of {path}", TENANT_MAX)


def _pairs(values: tuple[str, ...], option: str, what: str) -> list[tuple[str, str]]:
    out = []
    for value in values:
        key, eq, rest = value.partition("=")
        if not eq or not key or not rest:
            raise UserError(f"{option} takes SYMBOL={what}, got `{value}`")
        out.append((key, rest))
    return out


def _pipes(text: str, option: str) -> tuple[int, ...]:
    try:
        return tuple(sorted({int(p, 0) for p in text.split(",")}))
    except ValueError:
        raise UserError(f"{option}: pipes are comma-separated numbers, got `{text}`") from None


def _image(path: str, profile: TargetProfile | None) -> tuple[Image, str]:
    data = read_bytes(path)
    return read_image(data, path, profile), image_id(data)


@click.command("link")
@click.argument("objects", metavar="OBJ[@TENANT]...", nargs=-1)
@output_option("write the image here (- for stdout)")
@click.option("--target", type=TARGET, default=None, help="target profile the objects must be for")
@click.option("--tenant", default="1", show_default=True, help="tenant of OBJ without @TENANT")
@click.option("--pipes", default=None, help="pipes of the switch (default: the base's, else 1)")
@click.option("--base", "base", default=None, help="an image to extend; nothing in it moves")
@click.option("--dpf", "only", multiple=True, help="SYMBOL: link only these DPFs of the objects")
@click.option(
    "--place", multiple=True, help="SYMBOL=P,Q: run DPFs matching SYMBOL (a glob) on these pipes"
)
@click.option("--entry", multiple=True, help="SYMBOL=SLOT: put the DPF's prolog at this slot")
@click.option(
    "--install", multiple=True, help="SYMBOL: install an in-packet DPF in switch memory too"
)
@click.option("--default-dpf", multiple=True, help="SYMBOL[@TENANT]: the tenant's default DPF")
@click.option(
    "--extern",
    multiple=True,
    help="an image of another switch whose installed DPFs chains may target",
)
@handle_errors
def link_command(
    objects: tuple[str, ...],
    output: str | None,
    target: str | None,
    tenant: str,
    pipes: str | None,
    base: str | None,
    only: tuple[str, ...],
    place: tuple[str, ...],
    entry: tuple[str, ...],
    install: tuple[str, ...],
    default_dpf: tuple[str, ...],
    extern: tuple[str, ...],
) -> None:
    """Link objects into an install image for one switch: code slots (identical bundles
    shared), chain targets, memory, permissions and steering, checked against the profile."""
    if not objects and base is None:
        raise UserError("nothing to link: give object files (or --base IMAGE)")
    profile = load_profile(target) if target is not None else None
    default_tenant = number(tenant, "tenant id", TENANT_MAX)
    pipe_count = number(pipes, "pipes", 64) if pipes is not None else None
    if pipe_count == 0:
        raise UserError("--pipes must be at least 1")
    placements = {key: _pipes(value, "--place") for key, value in _pairs(place, "--place", "P,Q")}
    entries = {
        key: number(value, f"--entry {key}", 0x7FFF)
        for key, value in _pairs(entry, "--entry", "SLOT")
    }
    defaults: dict[int, str] = {}
    for value in default_dpf:
        symbol, owner = _split_tenant(value, default_tenant)
        defaults[owner] = symbol
    inputs = []
    for text in objects:
        path, owner = _split_tenant(text, default_tenant)
        inputs.append(LinkInput(read_object(read_bytes(path), path, profile), owner))
    base_image = _image(base, profile) if base is not None else None
    options = LinkOptions(
        profile=profile,
        pipes=pipe_count,
        only=only,
        place=placements,
        entries=entries,
        install=install,
        default_dpf=defaults,
        base=base_image[0] if base_image else None,
        base_id=base_image[1] if base_image else None,
        externs=tuple(_image(path, profile) for path in extern),
    )
    image = link(inputs, options)
    data = image_bytes(image)
    # The summary goes to stderr when the image itself goes to stdout (none with -q).
    if not quiet():
        click.echo(summary(image, image_id(data)), nl=False, err=is_stdio(output))
    if output is not None:
        write_file(output, data)


def summary(image: Image, ident: str) -> str:
    """What an image holds, in a few lines."""
    tenants = sorted({d.tenant for d in image.dpfs if d.tenant is not None})
    per_stage: dict[int, int] = {}
    for slot in image.code:
        per_stage[slot.stage] = per_stage.get(slot.stage, 0) + 1
    shared = [slot for slot in image.code if slot.refs > 1]
    saved = sum(slot.refs - 1 for slot in shared)
    stages = ", ".join(f"{stage_name(s)} {n}" for s, n in sorted(per_stage.items()))
    lines = [
        f"image {ident[:16]}: {len(image.dpfs)} DPFs of {len(tenants)} tenant"
        f"{'s' if len(tenants) != 1 else ''} on {image.profile.name} with {image.pipes} pipe"
        f"{'s' if image.pipes != 1 else ''}"
        + (f", extending {image.base[:16]}" if image.base else ""),
        f"  code slots: {len(image.code)} ({stages or 'none'}); {len(shared)} shared, "
        f"saving {saved} slot{'s' if saved != 1 else ''}",
    ]
    for dpf in image.dpfs:
        where = f"@switch:{dpf.entry}" if dpf.entry is not None else "in-packet"
        if dpf.pipeline != "ingress":
            where = f"{dpf.pipeline} {where}"
        lines.append(f"  {dpf.key}: {where} on pipes {','.join(map(str, dpf.pipes))}")
    words = sum(m.size * len(m.pipes) for m in image.memory)
    lines.append(f"  memory: {len(image.memory)} arrays, {words} words in all pipes")
    return "\n".join(lines) + "\n"


__all__ = ["link_command", "summary"]
