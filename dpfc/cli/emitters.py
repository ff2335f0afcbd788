"""What ``dpfc compile --emit KIND`` writes, one function per kind (the dispatch table).

Every emitter takes the compiled module and the already validated options
(:class:`EmitRequest`) and writes to ``-o FILE`` or stdout. Bytes come from each DPF's
:class:`~dpfc.machine.encoded.EncodedProgram`: nothing is encoded twice.

Several kinds from one compile (``--emit obj,asm,pcap -o out/kvs``): ``-o`` names a stem
(a known extension on it is dropped; an existing directory ``D`` or ``D/`` means
``D/<source stem>``, ``stdin`` for ``-``; missing directories are created), and each kind
is written to the stem plus its extension (:data:`EXTENSIONS`, :func:`output_paths`). Every
path is checked (:func:`dpfc.cli.files.check_output`) before the compile starts.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import click

from dpfc.cli.errors import UserError
from dpfc.cli.files import check_output, is_stdio, write_file, write_with
from dpfc.codegen import format_module
from dpfc.driver import CompiledModule, CompiledUnit
from dpfc.objfile import write_object
from dpfc.packet import PacketSpec, build_packet, write_pcap
from dpfc.schedule import format_grid


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
    # one file for the whole module: `dpfc asm` and scenarios read it back (docs/assembly.md)
    text = format_module(module.module.name, [u.compiled for u in module.units])
    emit_text(text, request.output)


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
    output = request.output
    assert output is not None  # checked before compiling
    frames = []
    for unit in _in_packet(module):
        encoded = unit.compiled.encoded
        header = encoded.program.header(request.stack)
        spec = PacketSpec(request.tenant, header, b"")
        frames.append(build_packet(spec, encoded.program.profile, packed=encoded.packed).frame)
    write_with(output, lambda path: write_pcap(path, frames))


Emitter = Callable[[CompiledModule, EmitRequest], None]
EMITTERS: dict[str, Emitter] = {
    "obj": _obj,
    "asm": _asm,
    "header": _header,
    "pcap": _pcap,
    "schedule": _schedule,
}
NEEDS_OUTPUT = frozenset({"pcap"})  # binary formats that never go to a terminal
# The file each kind is written to when one compile emits several (the stem's extension);
# canonical source is not `.dpf`, which would be the source file itself.
EXTENSIONS = {
    "obj": ".dpfo",
    "asm": ".s",
    "header": ".hex",
    "pcap": ".pcap",
    "schedule": ".schedule.txt",
    "ast": ".canonical.dpf",
    "ir": ".ir",
    "opt-ir": ".opt.ir",
}


def output_paths(kinds: tuple[str, ...], output: str | None, source: str) -> dict[str, str | None]:
    """Where each kind goes: one kind to ``-o`` (None: stdout), several to ``STEM.EXT``."""
    if len(kinds) == 1:
        (kind,) = kinds
        if kind in NEEDS_OUTPUT and output is None:
            raise UserError(f"--emit {kind} needs -o FILE")
        check_output(output)
        return {kind: output}
    if output is None or is_stdio(output):
        raise UserError(
            f"--emit {','.join(kinds)} writes several files: -o STEM names them "
            f"(e.g. -o out/x writes {', '.join('out/x' + EXTENSIONS[k] for k in kinds)})"
        )
    stem = Path(output)
    if output.endswith(("/", "\\")) or stem.is_dir():
        stem = stem / (Path(source).stem if not is_stdio(source) else "stdin")
    else:
        for extension in sorted(EXTENSIONS.values(), key=len, reverse=True):
            if stem.name.endswith(extension) and len(stem.name) > len(extension):
                stem = stem.with_name(stem.name[: -len(extension)])
                break
    check_output(str(stem.parent), directory=True, given=output)
    try:
        stem.parent.mkdir(parents=True, exist_ok=True)  # `-o out/kvs`: out/ holds them all
    except OSError as exc:
        raise UserError(f"cannot create {stem.parent}: {exc.strerror}") from None
    paths: dict[str, str | None] = {k: str(stem) + EXTENSIONS[k] for k in kinds}
    for path in paths.values():
        check_output(path, given=output)
    if not is_stdio(source):
        for path in paths.values():
            if path is not None and Path(path).resolve() == Path(source).resolve():
                raise UserError(f"-o {output} would overwrite the source {source}")
    return paths


__all__ = [
    "EMITTERS",
    "EXTENSIONS",
    "NEEDS_OUTPUT",
    "EmitRequest",
    "Emitter",
    "emit_text",
    "output_paths",
]
