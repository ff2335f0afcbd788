"""What ``dpfc compile --emit KIND`` writes, one function per kind (the dispatch table).

Every emitter takes the compiled module and the already validated options
(:class:`EmitRequest`) and writes to ``-o FILE`` or stdout. Bytes come from each DPF's
:class:`~dpfc.machine.encoded.EncodedProgram`: nothing is encoded twice.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import click

from dpfc.cli.errors import UserError
from dpfc.cli.files import write_file
from dpfc.codegen.emit import format_with_source
from dpfc.driver import CompiledModule, CompiledUnit
from dpfc.objfile.write import write_object
from dpfc.packet.build import PacketSpec, build_packet
from dpfc.packet.layers import write_pcap
from dpfc.schedule.explain import format_grid


@dataclass(frozen=True)
class EmitRequest:
    output: str | None
    stack: tuple[int, ...]
    tenant: int


def emit_text(text: str, output: str | None) -> None:
    if output is None:
        click.echo(text, nl=False)
    else:
        write_file(output, text)


def _obj(module: CompiledModule, request: EmitRequest) -> None:
    data = write_object(module.object())
    if request.output is None:
        click.echo(data.decode("utf-8"), nl=False)
    else:
        write_file(request.output, data)


def _asm(module: CompiledModule, request: EmitRequest) -> None:
    emit_text("\n".join(format_with_source(u.compiled) for u in module.units), request.output)


def _schedule(module: CompiledModule, request: EmitRequest) -> None:
    grids = [format_grid(u.result.schedule, result=u.result) for u in module.units]
    emit_text("\n".join(grids), request.output)


def _in_packet(module: CompiledModule) -> list[CompiledUnit]:
    units = [u for u in module.units if u.compiled.encoded.packed is not None]
    if not units:
        raise UserError(
            "no in-packet DPF to emit: in-switch code is installed, not sent "
            "(use --emit obj for the linker)"
        )
    return units


def _header(module: CompiledModule, request: EmitRequest) -> None:
    lines = [
        f"{u.name}: {u.compiled.encoded.header_options(request.stack).data.hex()}\n"
        for u in _in_packet(module)
    ]
    emit_text("".join(lines), request.output)


def _pcap(module: CompiledModule, request: EmitRequest) -> None:
    assert request.output is not None  # checked before compiling
    frames = []
    for unit in _in_packet(module):
        encoded = unit.compiled.encoded
        header = encoded.program.header(request.stack)
        spec = PacketSpec(request.tenant, header, b"")
        frames.append(build_packet(spec, encoded.program.profile, packed=encoded.packed).frame)
    try:
        write_pcap(request.output, frames)
    except OSError as exc:
        raise UserError(f"cannot write {request.output}: {exc.strerror}") from None


Emitter = Callable[[CompiledModule, EmitRequest], None]
EMITTERS: dict[str, Emitter] = {
    "obj": _obj,
    "asm": _asm,
    "header": _header,
    "pcap": _pcap,
    "schedule": _schedule,
}
NEEDS_OUTPUT = frozenset({"pcap"})  # binary formats that never go to a terminal

__all__ = ["EMITTERS", "NEEDS_OUTPUT", "EmitRequest", "Emitter", "emit_text"]
