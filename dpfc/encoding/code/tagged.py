"""Bundles in format version 2: the version-1 bytes with a tag before each bundle and part.

Layout (docs/encoding.md §9; tables ``BUNDLE_START``, ``PART_TAG`` and the tags of
:mod:`dpfc.encoding.layouts`)::

    prolog / EU:  0xFB, stage<<3 | v1 bytes 0-3 | [BRANCH] | selectors
                  | [0xF8 ALU group] | [0xF9 memory group] | [0xFA imm 0] [0xFC imm 1] [0xFD imm 2]
    epilog:       0xFB, 0xF8     | v1 bytes 0-1 | pushes
                  | [0xF6 steering immediate | 0xF7 steering register]
                  | [0xF4 NEXT_PC PC | 0xF5 NEXT_PC register]

Every version-1 byte is kept, in its order: a version-2 bundle is its version-1 encoding
(:mod:`.bundle`, :mod:`.epilog`) with :func:`tag_positions` inserted, but for the order of
the immediate slots (:func:`tagged_immediates`: a conditional branch's immediate is slot 0,
so that a parser's comparison reads one in-packet word) and one rule: a branch compares at
most one immediate (:func:`branch_problem`; DPF2007, DPF3026). So the one canonical
encoding gives the one canonical version-2 encoding, and decoding strips and checks the
tags (DPF3024, at the byte of the tag) and leaves the rest to the version-1 decoders, whose
error offsets are mapped back to the packet's bytes.

Contract: :func:`encode_tagged` writes a checked bundle, bundle start included;
:func:`decode_tagged` reads one back after its bundle start and rejects every malformed or
non-canonical byte with the offset of the offending byte; :func:`bundle_field_offset` is
:func:`~.fields.field_offset` in the profile's format. Not responsible for the sequence of bundles
in an option nor its padding (:mod:`.packing`).
"""

from __future__ import annotations

from dpfc.catalog import codes
from dpfc.encoding.code.bundle import decode_bundle, encode_bundle
from dpfc.encoding.code.epilog import decode_epilog, encode_epilog
from dpfc.encoding.code.fields import field_offset
from dpfc.encoding.errors import ByteReader, DecodeError
from dpfc.encoding.layouts import (
    BRANCH,
    BUNDLE_HEAD,
    BUNDLE_START,
    EPILOG_HEAD,
    IMMEDIATE,
    NEXT_PC_IMM,
    NEXT_PC_REG,
    OPERAND,
    PC_FORMAT,
    REGISTER_BYTE,
    SELECTOR,
    STEER_IMMEDIATE,
    TAG_ALU,
    TAG_BUNDLE,
    TAG_IMMEDIATES,
    TAG_MEM,
    TAG_NEXT_PC_IMM,
    TAG_NEXT_PC_REG,
    TAG_STEER_IMM,
    TAG_STEER_REG,
    op_group,
)
from dpfc.isa import (
    EPILOG_STAGE,
    Bundle,
    CtrlOp,
    EpilogBundle,
    Imm,
    StageBundle,
    branch_taken,
)
from dpfc.target import TAGGED_FORMAT, TargetProfile

TAG_NAMES: dict[int, str] = {  # what each tag opens, for messages
    TAG_BUNDLE: "a bundle",
    TAG_ALU: "the ALU group",
    TAG_MEM: "the memory group",
    **{tag: f"immediate {slot}" for slot, tag in enumerate(TAG_IMMEDIATES)},
    TAG_STEER_IMM: "the steering immediate",
    TAG_STEER_REG: "the steering register",
    TAG_NEXT_PC_IMM: "the NEXT_PC PC",
    TAG_NEXT_PC_REG: "the NEXT_PC register",
}
# A selector's first byte is dest:5 | kind:3; one whose dest bits are all set is a tag.
_TAG_DEST = SELECTOR.field("dest").mask


def tag_name(byte: int) -> str:
    """A byte for an error message: ``0xf8 (the ALU group's tag)`` or ``0x12``."""
    name = TAG_NAMES.get(byte)
    return f"{byte:#04x}" + (f" (the tag of {name})" if name else "")


def tagged_immediates(bundle: Bundle) -> tuple[int, ...]:
    """The immediate slots of a bundle in format version 2: a conditional branch's immediate
    operand first (slot 0), then the other distinct values in version-1 order (the LOAD_IMM
    selectors' values, by destination); a LOAD_IMM of the branch's value shares slot 0."""
    ctrl = bundle.control
    branch = [op.value for op in (ctrl.x, ctrl.y) if isinstance(op, Imm)]
    first = branch[:1] if ctrl.op.conditional else []
    return (*first, *(value for value in bundle.immediates() if value not in first))


def branch_problem(bundle: StageBundle) -> str | None:
    """Why format version 2 cannot carry ``bundle`` (a branch on two immediates), with what
    to write instead; None when it can."""
    if isinstance(bundle, EpilogBundle):
        return None
    ctrl = bundle.control
    if not (ctrl.op.conditional and isinstance(ctrl.x, Imm) and isinstance(ctrl.y, Imm)):
        return None
    taken = branch_taken(ctrl.op, ctrl.x.value, ctrl.y.value)
    outcome = ctrl.taken if taken else ctrl.not_taken
    return (
        f"{ctrl.op.name} {ctrl.x}, {ctrl.y} compares two immediates; format version 2 "
        f"carries at most one per branch (a parser compares one in-packet word): the branch "
        f"is always {'taken' if taken else 'not taken'}, write `JMP {outcome}`"
    )


def tag_positions(stage: int, v1: bytes, profile: TargetProfile) -> tuple[tuple[int, int], ...]:
    """(index into ``v1``, tag) of every part tag of a valid version-1 bundle of ``stage``:
    the tag goes in front of the byte at that index."""
    out: list[tuple[int, int]] = []
    if stage == EPILOG_STAGE:
        head = EPILOG_HEAD.unpack(v1)
        at = EPILOG_HEAD.size + REGISTER_BYTE.size * head["n_push"]
        action = profile.steering_by_code(head["steer_action"])
        if action is not None and action.takes_value:
            register = head["steer_src"] == 1
            out.append((at, TAG_STEER_REG if register else TAG_STEER_IMM))
            at += REGISTER_BYTE.size if register else STEER_IMMEDIATE.size
        if head["next_pc_src"] == NEXT_PC_IMM:
            out.append((at, TAG_NEXT_PC_IMM))
        elif head["next_pc_src"] == NEXT_PC_REG:
            out.append((at, TAG_NEXT_PC_REG))
        return tuple(out)
    head = BUNDLE_HEAD.unpack(v1)
    at = BUNDLE_HEAD.size + SELECTOR.size * head["n_sel"]
    if CtrlOp(head["ctrl_op"]).conditional:
        at += BRANCH.size
    group = op_group(profile.lanes).size
    for flag, tag in (("has_alu", TAG_ALU), ("has_mem", TAG_MEM)):
        if head[flag]:
            out.append((at, tag))
            at += group
    for slot in range(head["n_imm"]):
        out.append((at, TAG_IMMEDIATES[slot]))
        at += IMMEDIATE.size
    return tuple(out)


def _encode_v1(bundle: StageBundle, profile: TargetProfile) -> bytes:
    if isinstance(bundle, EpilogBundle):
        return encode_epilog(bundle, profile)
    return encode_bundle(bundle, profile, tagged_immediates)


def encode_tagged(stage: int, bundle: StageBundle, profile: TargetProfile) -> bytes:
    """The version-2 bytes of a (checked) bundle of ``stage``, its bundle start included."""
    v1 = _encode_v1(bundle, profile)
    out = bytearray(BUNDLE_START.pack(tag=TAG_BUNDLE, stage=stage))
    done = 0
    for at, tag in tag_positions(stage, v1, profile):
        out += v1[done:at]
        out.append(tag)
        done = at
    out += v1[done:]
    return bytes(out)


def bundle_field_offset(
    stage: int, bundle: StageBundle, where: tuple[str | int, ...], profile: TargetProfile
) -> int:
    """:func:`~.fields.field_offset` in the profile's format (in version 2 counted from the
    bundle start)."""
    offset = field_offset(bundle, where, profile)
    if profile.code_format != TAGGED_FORMAT:
        return offset
    v1 = _encode_v1(bundle, profile)
    tags = sum(1 for at, _ in tag_positions(stage, v1, profile) if at <= offset)
    return BUNDLE_START.size + offset + tags


class _Stripper:
    """Reads a version-2 bundle body: copies its version-1 bytes (remembering where each
    was) and checks each tag."""

    def __init__(self, reader: ByteReader) -> None:
        self.reader = reader
        self.v1 = bytearray()
        self.where: list[int] = []  # the packet offset of each byte of v1

    def copy(self, count: int, what: str) -> bytes:
        at = self.reader.offset
        chunk = self.reader.take(count, what)
        self.v1 += chunk
        self.where.extend(range(at, at + count))
        return chunk

    def tag(self, expected: int, why: str) -> None:
        at = self.reader.offset
        found = self.reader.u8(f"tag of {TAG_NAMES[expected]}")
        if found != expected:
            raise DecodeError(
                f"expected {expected:#04x}, the tag of {TAG_NAMES[expected]} ({why}), "
                f"found {tag_name(found)}: a part is missing, out of order or mistagged",
                at,
                codes.DECODE_PART_TAG,
            )

    def packet_offset(self, v1_offset: int) -> int:
        if v1_offset < len(self.where):
            return self.where[v1_offset]
        return self.reader.offset


def _strip_bundle(strip: _Stripper, profile: TargetProfile) -> None:
    """Copy a prolog/EU body's version-1 bytes, checking its tags; stops early where the
    version-1 decoder reports the problem of the bytes copied so far."""
    first = strip.copy(2, "bundle header")
    head = BUNDLE_HEAD.unpack(first + bytes(BUNDLE_HEAD.size - 2))
    try:
        conditional = CtrlOp(head["ctrl_op"]).conditional
    except ValueError:
        return
    if head["reserved"]:
        return
    strip.copy(BUNDLE_HEAD.size - 2, "pc_taken")
    if conditional:
        at = strip.reader.offset
        branch = BRANCH.unpack(strip.copy(BRANCH.size, "branch"))
        if all(OPERAND.unpack_int(branch[xy])["immediate"] for xy in ("x", "y")):
            raise DecodeError(
                f"the branch compares two immediates (operand bytes {branch['x']:#04x}, "
                f"{branch['y']:#04x}); format version 2 carries at most one per branch "
                "(a branch whose outcome is known is a JMP)",
                at + BRANCH.field("y").byte,
                codes.DECODE_BRANCH_TWO_IMMEDIATES,
            )
    n_sel = head["n_sel"]
    if n_sel > profile.registers:
        return
    for index in range(n_sel):
        reader = strip.reader
        if reader.remaining() and reader.data[reader.pos] >> 3 == _TAG_DEST:
            raise DecodeError(
                f"found {tag_name(reader.data[reader.pos])} where selector {index} of the "
                f"{n_sel} the bundle header announces must be",
                reader.offset,
                codes.DECODE_PART_TAG,
            )
        strip.copy(SELECTOR.size, "selector")
    group = op_group(profile.lanes).size
    if head["has_alu"]:
        strip.tag(TAG_ALU, "has_alu is set")
        strip.copy(group, "ALU ops")
    if head["has_mem"]:
        strip.tag(TAG_MEM, "has_mem is set")
        strip.copy(group, "memory ops")
    for slot in range(head["n_imm"]):
        strip.tag(TAG_IMMEDIATES[slot], f"n_imm is {head['n_imm']}")
        strip.copy(IMMEDIATE.size, "immediate")


def _strip_epilog(strip: _Stripper, profile: TargetProfile) -> None:
    """:func:`_strip_bundle` of an epilog body."""
    head = EPILOG_HEAD.unpack(strip.copy(EPILOG_HEAD.size, "epilog header"))
    action = profile.steering_by_code(head["steer_action"])
    if head["reserved"] or action is None or head["n_push"] > profile.max_push:
        return
    strip.copy(REGISTER_BYTE.size * head["n_push"], "PUSH registers")
    if action.takes_value:
        if head["steer_src"]:
            strip.tag(TAG_STEER_REG, f"`{action.name}` takes a value, steer_src is 1")
            strip.copy(REGISTER_BYTE.size, "steering register")
        else:
            strip.tag(TAG_STEER_IMM, f"`{action.name}` takes a value, steer_src is 0")
            strip.copy(STEER_IMMEDIATE.size, "steering value")
    elif head["steer_src"]:
        return
    if head["next_pc_src"] == NEXT_PC_IMM:
        strip.tag(TAG_NEXT_PC_IMM, "next_pc_src is 1")
        strip.copy(PC_FORMAT.size, "NEXT_PC")
    elif head["next_pc_src"] == NEXT_PC_REG:
        strip.tag(TAG_NEXT_PC_REG, "next_pc_src is 2")
        strip.copy(REGISTER_BYTE.size, "NEXT_PC register")


def decode_tagged(reader: ByteReader, stage: int, profile: TargetProfile) -> StageBundle:
    """Decode the body of a version-2 bundle of ``stage`` (its bundle start already read);
    rejects malformed and non-canonical bytes with the offset of the offending byte."""
    strip = _Stripper(reader)
    epilog = stage == EPILOG_STAGE
    (_strip_epilog if epilog else _strip_bundle)(strip, profile)
    v1 = ByteReader(bytes(strip.v1))
    try:
        bundle: StageBundle = (
            decode_epilog(v1, profile)
            if epilog
            else decode_bundle(
                v1, profile, tagged_immediates, "version-2 (a branch's immediate first)"
            )
        )
    except DecodeError as exc:
        raise DecodeError(exc.message, strip.packet_offset(exc.offset), exc.code) from None
    # the version-1 decoder reads exactly what the header announces, as the stripper did
    assert v1.remaining() == 0, "the stripper and the version-1 decoder disagree"
    return bundle
