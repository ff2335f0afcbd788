"""``dpfc disasm FILE``: explain SwitchVM bytes.

``FILE`` (``-``: standard input) holds a pcap, a raw Ethernet frame, raw SwitchVM Geneve
options, a dpfc object or an install image; ``--input auto`` tells them apart by their
magic bytes and suffix (:func:`detect_input`). Text that dpfc reads with another command —
DPF source (``.dpf``) or SwitchVM assembly (``.dpfasm``) — is a user error naming that
command, not a "malformed packet" (a DPF file's first bytes are no EtherType).
A pcap's malformed frames are reported one by one (exit 1), the others still explained.
"""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path

import click

from dpfc.catalog import codes
from dpfc.cli.assemble import TARGET_HELP, profile_of
from dpfc.cli.conventions import TARGET, Choice
from dpfc.cli.errors import UserError, handle_errors
from dpfc.cli.files import display_name, is_stdio, output_option, read_bytes, write_file
from dpfc.diagnostics import Diagnostic, DiagnosticError
from dpfc.encoding import OPTION_CLASS, DecodeError, SwitchVMHeader, decode_options
from dpfc.link import MAGIC as IMAGE_MAGIC
from dpfc.link import format_image, image_id, read_image
from dpfc.machine import disassemble_header
from dpfc.objfile import format_object, read_object
from dpfc.packet import describe_packet, parse_packet, read_pcap
from dpfc.target import DEFAULT_PROFILE, TargetProfile

PCAP_MAGICS = (
    b"\xa1\xb2\xc3\xd4",
    b"\xd4\xc3\xb2\xa1",
    b"\xa1\xb2\x3c\x4d",
    b"\x4d\x3c\xb2\xa1",
    b"\x0a\x0d\x0d\x0a",
)
# The first significant line of DPF source and of assembly (comments and blanks skipped).
DPF_SOURCE = re.compile(r"^\s*(module|import|const|dpf|struct|header|@\w+|(segment|direct)\s)")
ASSEMBLY = re.compile(r"^\s*(\.(dpf|target|placement|pipeline|app)\b|(prolog|epilog|eu\d+)\s)")


def text_kind(data: bytes, path: str) -> str | None:
    """``source`` or ``assembly`` when the bytes are DPF source or SwitchVM assembly."""
    suffix = Path(path).suffix.lower()
    if suffix == ".dpf":
        return "source"
    if suffix in (".dpfasm", ".s"):
        return "assembly"
    try:
        text = data[:4096].decode("utf-8")
    except UnicodeDecodeError:
        return None
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith(("//", ";", "#")):
            continue
        if DPF_SOURCE.match(line):
            return "source"
        if ASSEMBLY.match(line):
            return "assembly"
        return None
    return None


def detect_input(data: bytes, path: str) -> str:
    if data[: len(IMAGE_MAGIC)] == IMAGE_MAGIC or Path(path).suffix.lower() == ".dpfimg":
        return "image"
    if data[:4] in PCAP_MAGICS or Path(path).suffix.lower() in (".pcap", ".pcapng", ".cap"):
        return "pcap"
    if data[:1] == b"{" or Path(path).suffix.lower() in (".json", ".dpfo"):
        return "object"
    if data[:2] == OPTION_CLASS.to_bytes(2, "big"):
        return "options"
    return text_kind(data, path) or "packet"


def _not_bytes(kind: str, name: str) -> DiagnosticError:
    if kind == "source":
        what, hint = "DPF source", "use `dpfc check` or `dpfc compile` for DPF source"
    else:
        what, hint = "SwitchVM assembly", "use `dpfc asm FILE --disasm` for assembly"
    return DiagnosticError(
        Diagnostic(
            codes.USER_ERROR,
            f"{name} is {what}, not SwitchVM bytes: disasm explains pcaps, frames, "
            "options, objects and images",
            hint=hint,
        )
    )


def _pcap_frames(data: bytes, path: str) -> list[bytes]:
    name = display_name(path)
    try:
        if not is_stdio(path):
            return read_pcap(path)
        handle, temporary = tempfile.mkstemp(prefix="dpfc-", suffix=".pcap")
        try:
            os.write(handle, data)
            os.close(handle)
            return read_pcap(temporary)
        finally:
            os.unlink(temporary)
    except (OSError, ValueError) as exc:
        raise UserError(f"{name}: {exc}") from None


def _pcap_text(data: bytes, path: str, profile: TargetProfile) -> tuple[list[str], int]:
    frames = _pcap_frames(data, path)
    chunks: list[str] = []
    failures = 0
    for number, frame in enumerate(frames, start=1):
        try:
            text = describe_packet(parse_packet(frame, profile), profile)
        except DecodeError as exc:
            failures += 1
            click.echo(
                f"{display_name(path)}: packet {number}: error[{exc.code}]: malformed packet "
                f"at byte {exc.offset}: {exc.message}",
                err=True,
            )
            continue
        chunks.append(f"; ---- packet {number} of {len(frames)} ----\n{text}")
    if not frames:
        chunks.append("; the pcap file holds no packets\n")
    return chunks, failures


@click.command("disasm")
@click.argument("input_file", metavar="FILE", type=click.Path(dir_okay=False, allow_dash=True))
@click.option(
    "--input",
    "input_kind",
    type=Choice(["auto", "pcap", "packet", "options", "object", "image"]),
    default="auto",
    show_default=True,
    help="what FILE holds (auto: pcap magic, an install image, a dpfc object, SwitchVM "
    "options, else a raw frame)",
)
@click.option("--target", "target", type=TARGET, default=None, help=TARGET_HELP)
@output_option("write the text here instead of stdout")
@click.option(
    "--source",
    "with_source",
    is_flag=True,
    help="FILE is a dpfc object: print its assembly with each line's source line",
)
@handle_errors
def disasm_command(
    input_file: str, input_kind: str, target: str | None, output: str | None, with_source: bool
) -> None:
    """Explain SwitchVM bytes (FILE, or - for stdin): a pcap, a raw frame, raw Geneve
    options, an object file or an install image; with --source, an object annotated with
    the source lines."""
    profile = profile_of(target) or DEFAULT_PROFILE
    data = read_bytes(input_file)
    name = display_name(input_file)
    kind = detect_input(data, input_file) if input_kind == "auto" else input_kind
    if with_source:
        kind = "object"
    if kind in ("source", "assembly"):
        raise _not_bytes(kind, name)
    failures = 0
    chunks: list[str] = []
    if kind == "pcap":
        chunks, failures = _pcap_text(data, input_file, profile)
    elif kind == "packet":
        chunks.append(describe_packet(parse_packet(data, profile), profile))
    elif kind == "image":
        chunks.append(format_image(read_image(data, name, profile_of(target)), image_id(data)))
    elif kind == "options":
        header: SwitchVMHeader = decode_options(data, profile)
        chunks.append(disassemble_header(header, profile))
    else:
        obj = read_object(data, name, profile_of(target))
        chunks.append(format_object(obj, with_source=with_source))
    text = "\n".join(chunks)
    if output is not None:
        write_file(output, text)
    else:
        click.echo(text, nl=False)
    if failures:
        raise SystemExit(1)


__all__ = ["detect_input", "disasm_command", "text_kind"]
