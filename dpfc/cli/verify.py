"""``dpfc verify CODE --policy POLICY.toml``: what a tenant's code may do, decided on every path.

CODE is an object file (``dpfc compile`` / ``dpfc asm --emit obj``: every DPF in it), an
install image (``dpfc link``: every DPF instance, as a packet runs it from the image's code
memory or its in-packet options; with ``chain_loops = false``, each loop of its chains is
an error too) or a pcap of SwitchVM packets (the in-packet code each one carries, under the
name ``packet<i>``). Each DPF runs symbolically (:mod:`dpfc.verify.check`); every rule the
policy (:mod:`dpfc.verify.policy`, docs/verify.md) forbids and some input does is an error
(DPF8002) naming the stage, PC and assembly line, the source line when the object has one,
the path's condition and an input that does it; with ``--packets DIR`` each violation's
packet (that input's stack) is written as ``DIR/<dpf>-<n>.pcap``. Exit 1 when a rule is
broken, 0 when every DPF keeps the policy. ``--json`` prints the report as JSON on stdout.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from dpfc.catalog import codes
from dpfc.cli.conventions import TARGET
from dpfc.cli.errors import UserError, handle_errors, quiet
from dpfc.cli.files import read_bytes
from dpfc.diagnostics import Diagnostic, DiagnosticError, Note
from dpfc.encoding import DecodeError, EncodingError, encode_options
from dpfc.isa import stage_name
from dpfc.link import Image, read_image
from dpfc.machine import MachineProgram, program_from_image, program_lines
from dpfc.objfile import ObjectDPF, read_object
from dpfc.packet import build_frame, build_inner, parse_packet, read_pcap, write_pcap
from dpfc.target import DEFAULT_PROFILE, TargetProfile, load_profile
from dpfc.verify import Report, Violation, chain_loops, image_programs, read_policy, verify_program

CONDITION_SHOWN = 240  # characters of a path condition in the text report
TENANT = 1  # the VNI of a written packet (any tenant the policy is about)


PCAP_MAGICS = (b"\xd4\xc3\xb2\xa1", b"\xa1\xb2\xc3\xd4", b"\x0a\x0d\x0d\x0a")


def _programs(
    data: bytes, path: str, profile: TargetProfile | None
) -> tuple[TargetProfile, list[tuple[MachineProgram, ObjectDPF | None]], Image | None]:
    if data[:1] == b"{":
        obj = read_object(data, path, profile)
        return obj.profile, [(d.program, d) for d in obj.dpfs], None
    if data[:4] not in PCAP_MAGICS:  # an install image (its reader names what is wrong)
        image = read_image(data, path, profile)
        return image.profile, [(p, None) for _, p in image_programs(image)], image
    target = profile or DEFAULT_PROFILE
    try:
        frames = read_pcap(path)
    except (OSError, ValueError) as exc:
        raise UserError(f"{path}: neither an object file nor a pcap ({exc})") from None
    out: list[tuple[MachineProgram, ObjectDPF | None]] = []
    for index, frame in enumerate(frames):
        try:
            parsed = parse_packet(frame, target)
        except DecodeError as exc:
            raise DiagnosticError(
                Diagnostic(exc.code, f"{path}: packet {index}: {exc.message}")
            ) from None
        header = parsed.header
        if header is None or header.code.is_empty() or header.dpf_ptr is None:
            continue
        name = f"packet{index}"
        out.append((program_from_image(header.code, target, name=name, entry=header.dpf_ptr), None))
    return target, out, None


def _packet(program: MachineProgram, stack: tuple[int, ...]) -> bytes | None:
    """A frame whose header invokes ``program`` with ``stack`` (None: it cannot be encoded)."""
    try:
        options = encode_options(program.header(stack), program.profile).data
    except EncodingError:
        return None
    return build_frame(tenant_id=TENANT, options=options, inner=build_inner(b"verify"))


def _source(obj: ObjectDPF, violation: Violation) -> tuple[str, int, int] | None:
    """Where the violating instruction is in the source (an object compiled with one)."""
    lines = program_lines(obj.program).get(violation.label, [])
    for line, location in zip(lines, obj.source.get(violation.label, ()), strict=False):
        if line == violation.line:
            return location
    return None


def _diagnostic(
    violation: Violation, obj: ObjectDPF | None, depth: int, written: str
) -> Diagnostic:
    notes: list[Note] = []
    if violation.stage is not None and violation.pc is not None:
        where = f"{stage_name(violation.stage)} {violation.pc} ({violation.label})"
        notes.append(Note(f"at {where}: {violation.line}"))
        location = _source(obj, violation) if obj is not None else None
        if location is not None:
            notes.append(Note(f"source: {location[0]}:{location[1]}:{location[2]}"))
    if violation.condition:
        shown = violation.condition
        if len(shown) > CONDITION_SHOWN:
            shown = shown[:CONDITION_SHOWN] + " ..."
        notes.append(Note(f"on the path where {shown}"))
    if violation.inputs or violation.stage is not None:
        stack = ", ".join(f"{w:#x}" for w in violation.stack(depth))
        others = sorted((k, v) for k, v in violation.inputs.items() if not k.startswith("stack"))
        given = "".join(f", {k} = {v:#x}" for k, v in others)
        notes.append(Note(f"an input that does it: stack [{stack}]{given}{written}"))
    message = f"{violation.dpf}: {violation.rule}: {violation.message}"
    return Diagnostic(codes.POLICY_VIOLATION, message, notes=tuple(notes))


def _json(report: Report, policy_name: str) -> dict[str, Any]:
    return {
        "dpf": report.dpf,
        "policy": policy_name,
        "paths": report.paths,
        "stack_depth": report.stack_depth,
        "unknown": list(report.unknown),
        "violations": [
            {
                "rule": v.rule,
                "message": v.message,
                "stage": v.stage,
                "pc": None if v.pc is None else str(v.pc),
                "label": v.label,
                "line": v.line,
                "condition": v.condition,
                "inputs": v.inputs,
                "stack": list(v.stack(report.stack_depth)),
            }
            for v in report.violations
        ],
    }


@click.command("verify")
@click.argument("code", metavar="CODE", type=click.Path(dir_okay=False, allow_dash=True))
@click.option(
    "--policy",
    "policy_path",
    required=True,
    type=click.Path(dir_okay=False),
    help="the policy (TOML, docs/verify.md)",
)
@click.option(
    "--target",
    type=TARGET,
    default=None,
    help="target profile (default: the object's; for a pcap: tofino1)",
)
@click.option(
    "--packets",
    type=click.Path(file_okay=False),
    default=None,
    help="write each violation's packet as DIR/<dpf>-<n>.pcap",
)
@click.option("--json", "as_json", is_flag=True, help="print the report as JSON on stdout")
@handle_errors
def verify_command(
    code: str, policy_path: str, target: str | None, packets: str | None, as_json: bool
) -> None:
    """Decide on every path whether a tenant's code (an object, image or pcap) keeps a policy:
    instructions, metadata, steering, chains, stack, memory, code slots."""
    profile = load_profile(target) if target is not None else None
    profile, programs, image = _programs(read_bytes(code), code, profile)
    try:
        text = Path(policy_path).read_text(encoding="utf-8")
    except OSError as exc:
        raise UserError(f"cannot read {policy_path}: {exc.strerror}") from None
    policy = read_policy(text, policy_path, profile)
    if not programs:
        raise UserError(f"{code}: no DPF to verify (no packet carries in-packet code)")
    reports, problems = [], []
    for program, obj in programs:
        report = verify_program(program, policy)
        reports.append(report)
        for n, violation in enumerate(report.violations, 1):
            written = ""
            if packets is not None and violation.inputs:
                frame = _packet(program, violation.stack(report.stack_depth))
                if frame is not None:
                    Path(packets).mkdir(parents=True, exist_ok=True)
                    out = str(Path(packets) / f"{report.dpf}-{n}.pcap")
                    write_pcap(out, [frame])
                    written = f" (written to {out})"
            problems.append(_diagnostic(violation, obj, report.stack_depth, written))
    if image is not None and not policy.chain_loops:
        for loop in chain_loops(image, image_programs(image)):
            cycle = " -> ".join([*loop, loop[0]])
            message = f"{loop[0]}: chain_loops: the image's chains loop: {cycle}"
            problems.append(Diagnostic(codes.POLICY_VIOLATION, message))
    if as_json:
        click.echo(json.dumps([_json(r, policy.name) for r in reports], indent=2))
    elif not quiet():
        for report in reports:
            state = "keeps" if not report.violations else f"breaks ({len(report.violations)})"
            open_ = f", {len(report.unknown)} undecided" if report.unknown else ""
            click.echo(
                f"{report.dpf}: {report.paths} path(s), {state} policy `{policy.name}`{open_}",
                err=True,
            )
    if problems:
        raise DiagnosticError(problems)
