"""The bytes of an install image (``.dpfimg``), version 1 (docs/bundle.md).

::

    offset  size  field
    0       8     magic  b"DPFCIMG\\0"
    8       2     format version, big-endian (1)
    10      2     reserved, 0
    12      4     body length in bytes, big-endian
    16      32    SHA-256 of the body
    48      n     body: UTF-8 JSON, keys sorted, no spaces (docs/bundle.md lists every field)

The image's id is the hex SHA-256 of its body, so equal images have equal ids and a
changed byte changes the id. The body is canonical — the writer's exact output for its
content — and :func:`read_image` insists on it: after checking the header (DPF7101 not an
image, DPF7102 another version, DPF7103 truncated or trailing bytes, DPF7104 digest
mismatch) it validates every field and reference (DPF7100, naming the JSON path) and
compares the body with the one it would write. Code words are decoded with
:mod:`dpfc.encoding`, which checks every ISA rule.
"""

from __future__ import annotations

import hashlib
import json
import struct
from typing import Any

from dpfc.diagnostics import Diagnostic, DiagnosticError
from dpfc.encoding.errors import DecodeError
from dpfc.encoding.header import decode_options
from dpfc.encoding.words import decode_slot, stage_kind
from dpfc.isa.bundle import PROLOG_STAGE, stage_name
from dpfc.link.image import (
    ChainTarget,
    CodeSlot,
    ExternDPF,
    Image,
    InstallStep,
    LinkedDPF,
    MemoryRequest,
    PermissionEntry,
    PlacedLabel,
    SteeringRequest,
    dpf_key,
    install_order,
)
from dpfc.objfile.fields import Fields
from dpfc.objfile.read import object_profile, parse_stage
from dpfc.target.profile import TargetProfile

MAGIC = b"DPFCIMG\x00"
VERSION = 1
HEADER = struct.Struct(">8sHHI32s")  # magic, version, reserved, body length, digest

NOT_AN_IMAGE = "DPF7101"
WRONG_VERSION = "DPF7102"
TRUNCATED = "DPF7103"
CORRUPT = "DPF7104"
MALFORMED = "DPF7100"


def _body(image: Image) -> dict[str, Any]:
    return {
        "target": image.profile.name,
        "target_fingerprint": image.profile.fingerprint(),
        "pipes": image.pipes,
        "base": image.base,
        "code": [
            {
                "stage": stage_name(c.stage),
                "slot": c.slot,
                "word": c.word.hex(),
                "pipes": list(c.pipes),
                "users": list(c.users),
            }
            for c in image.code
        ],
        "dpfs": [
            {
                "symbol": d.symbol,
                "tenant": d.tenant,
                "module": d.module,
                "object": d.object,
                "placement": d.placement,
                "pipes": list(d.pipes),
                "app_id": d.app_id,
                "params": d.params,
                "entry": d.entry,
                "labels": [[p.label, stage_name(p.stage), p.slot, p.in_packet] for p in d.labels],
                "chains": [[c.label, c.target, c.slot] for c in d.chains],
                "in_packet_options": None
                if d.in_packet_options is None
                else d.in_packet_options.hex(),
            }
            for d in image.dpfs
        ],
        "externs": [
            {"symbol": e.symbol, "tenant": e.tenant, "entry": e.entry, "image": e.image}
            for e in image.externs
        ],
        "memory": [
            {
                "tenant": m.tenant,
                "array": m.array,
                "eu": m.eu,
                "lane": m.lane,
                "mapping": m.mapping,
                "size": m.size,
                "pipes": list(m.pipes),
                "users": list(m.users),
            }
            for m in image.memory
        ],
        "permissions": [
            {
                "tenant": p.tenant,
                "app_ids": list(p.app_ids),
                "metadata": p.metadata,
                "privileged": p.privileged,
                "recirculate": p.recirculate,
                "default_dpf": p.default_dpf,
                "pipes": list(p.pipes),
            }
            for p in image.permissions
        ],
        "steering": [
            {"tenant": s.tenant, "action": s.action, "index": s.index, "users": list(s.users)}
            for s in image.steering
        ],
        "install": [[step.kind, step.index] for step in image.install],
    }


def _encode_body(image: Image) -> bytes:
    return json.dumps(_body(image), sort_keys=True, separators=(",", ":")).encode("utf-8")


def image_bytes(image: Image) -> bytes:
    """The file bytes of ``image``."""
    body = _encode_body(image)
    digest = hashlib.sha256(body).digest()
    return HEADER.pack(MAGIC, VERSION, 0, len(body), digest) + body


def image_id(data: bytes) -> str:
    """The id of an image file: the hex SHA-256 of its body."""
    return hashlib.sha256(data[HEADER.size :]).hexdigest()


def _error(code: str, filename: str, message: str) -> DiagnosticError:
    return DiagnosticError(Diagnostic(code, f"{filename}: {message}", None))


def read_image(
    data: bytes, filename: str = "<image>", profile: TargetProfile | None = None
) -> Image:
    """Check and parse an image file (see the module docstring)."""
    if len(data) < HEADER.size:
        if data[: len(MAGIC)] != MAGIC[: len(data)] or not data:
            raise _error(NOT_AN_IMAGE, filename, "not a dpfc install image (no DPFCIMG header)")
        raise _error(
            TRUNCATED, filename, f"truncated: {len(data)} bytes, the header alone is {HEADER.size}"
        )
    magic, version, reserved, length, digest = HEADER.unpack_from(data)
    if magic != MAGIC:
        raise _error(NOT_AN_IMAGE, filename, "not a dpfc install image (no DPFCIMG header)")
    if version != VERSION:
        raise _error(
            WRONG_VERSION,
            filename,
            f"install image format version {version}; this dpfc reads version {VERSION}: "
            "link the objects again",
        )
    if reserved != 0:
        raise _error(MALFORMED, filename, "malformed install image: reserved header bytes are set")
    body = data[HEADER.size :]
    if len(body) != length:
        state = "truncated" if len(body) < length else "followed by extra bytes"
        raise _error(
            TRUNCATED,
            filename,
            f"{state}: the header announces a {length}-byte body, the file has {len(body)}",
        )
    if hashlib.sha256(body).digest() != digest:
        raise _error(
            CORRUPT, filename, "corrupt: the body's SHA-256 does not match the header's digest"
        )
    try:
        document = json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise _error(
            MALFORMED, filename, f"malformed install image: the body is not JSON ({exc})"
        ) from None

    def fail(reason: str) -> Exception:
        return _Malformed(reason)

    try:
        image = _Reader(filename, profile).image(Fields(document, "", fail))
    except _Malformed as exc:
        raise _error(MALFORMED, filename, f"malformed install image: {exc.reason}") from None
    except DecodeError as exc:
        raise _error(
            MALFORMED, filename, f"malformed install image: [{exc.code}] {exc.message}"
        ) from None
    if _encode_body(image) != body:
        raise _error(
            MALFORMED,
            filename,
            "malformed install image: the body is not in canonical form (dpfc link writes "
            "keys sorted, no spaces, lists in their documented order)",
        )
    return image


class _Malformed(Exception):
    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class _Reader:
    def __init__(self, filename: str, profile: TargetProfile | None) -> None:
        self.filename = filename
        self.given = profile
        self.profile: TargetProfile | None = None
        self.pipes = 0

    def stage(self, item: Fields, key: str) -> int:
        assert self.profile is not None
        stage = parse_stage(item.string(key), self.profile)
        if stage is None:
            item.reject(f"`{item.at(key)}` names no stage of {self.profile.name}")
        return stage

    def pipe_list(self, item: Fields, key: str = "pipes") -> tuple[int, ...]:
        pipes = item.integers(key, 0, self.pipes - 1)
        if not pipes or pipes != sorted(set(pipes)):
            item.reject(f"`{item.at(key)}` must list pipes once each, in order, at least one")
        return tuple(pipes)

    def image(self, top: Fields) -> Image:
        top.exactly(
            "target", "target_fingerprint", "pipes", "base", "code", "dpfs", "externs",
            "memory", "permissions", "steering", "install",
        )  # fmt: skip
        self.profile = profile = object_profile(
            top.string("target"), top.string("target_fingerprint"), self.given, self.filename
        )
        self.pipes = top.integer("pipes", 1, 64)
        base = top.optional_string("base")
        code = tuple(self.code_slot(item) for item in top.objects("code"))
        taken: dict[tuple[int, int], set[int]] = {}
        for item, slot in zip(top.objects("code"), code, strict=True):
            pipes = taken.setdefault((slot.stage, slot.slot), set())
            if pipes & set(slot.pipes):
                item.reject(f"{stage_name(slot.stage)} slot {slot.slot} is given twice")
            pipes |= set(slot.pipes)
        dpfs = tuple(self.dpf(item, code) for item in top.objects("dpfs"))
        keys = {d.key for d in dpfs}
        if len(keys) != len(dpfs):
            top.reject("a DPF of a tenant is listed twice in `dpfs`")
        for item, slot in zip(top.objects("code"), code, strict=True):
            stray = [u for u in slot.users if u not in keys]
            if stray or not slot.users:
                item.reject(f"`{item.at('users')}` must name DPFs of the image, not {stray}")
        externs = tuple(self.extern(item) for item in top.objects("externs"))
        memory = tuple(self.memory(item, keys) for item in top.objects("memory"))
        permissions = tuple(self.permission(item, dpfs) for item in top.objects("permissions"))
        steering = tuple(self.steering(item, keys) for item in top.objects("steering"))
        steps = []
        for i, step in enumerate(top.array("install")):
            if not _is_step(step):
                top.reject(f"`install[{i}]` must be [kind, index]")
            steps.append(InstallStep(step[0], step[1]))
        install = tuple(steps)
        if install != install_order(code, memory, permissions, profile.num_eus):
            top.reject(
                "`install` is not the install order (permissions, memory, code from the "
                "epilog back to the prologs, default DPFs) of the image's items"
            )
        return Image(
            profile, self.pipes, code, dpfs, externs, memory, permissions, steering, install, base
        )

    def code_slot(self, item: Fields) -> CodeSlot:
        assert self.profile is not None
        item.exactly("stage", "slot", "word", "pipes", "users")
        stage = self.stage(item, "stage")
        slot = item.integer("slot", 0, self.profile.code_slots_per_stage - 1)
        word = item.hex_bytes("word")
        try:
            decode_slot(stage_kind(stage), word, self.profile)
        except DecodeError as exc:
            item.reject(f"`{item.at('word')}`: [{exc.code}] {exc.message}")
        return CodeSlot(stage, slot, word, self.pipe_list(item), tuple(item.strings("users")))

    def dpf(self, item: Fields, code: tuple[CodeSlot, ...]) -> LinkedDPF:
        assert self.profile is not None
        item.exactly(
            "symbol", "tenant", "module", "object", "placement", "pipes", "app_id", "params",
            "entry", "labels", "chains", "in_packet_options",
        )  # fmt: skip
        tenant = None if item.value("tenant") is None else item.integer("tenant", 0, (1 << 24) - 1)
        symbol = item.string("symbol")
        key = dpf_key(tenant, symbol)
        slots = {(c.stage, c.slot): c for c in code}
        entry = None if item.value("entry") is None else item.integer("entry")
        if entry is not None and key not in getattr(slots.get((PROLOG_STAGE, entry)), "users", ()):
            item.reject(f"`{item.at('entry')}` is not a prolog slot of this DPF")
        labels = []
        for k, raw in enumerate(item.array("labels")):
            where = f"{item.at('labels')}[{k}]"
            if not (
                isinstance(raw, list)
                and len(raw) == 4
                and isinstance(raw[0], str)
                and isinstance(raw[1], str)
                and isinstance(raw[2], int)
                and isinstance(raw[3], bool)
            ):
                item.reject(f"`{where}` must be [label, stage, slot, in_packet]")
            stage = parse_stage(raw[1], self.profile)
            if stage is None:
                item.reject(f"`{where}` names no stage")
            if not raw[3] and key not in getattr(slots.get((stage, raw[2])), "users", ()):
                item.reject(f"`{where}` names a slot that does not hold this DPF's code")
            labels.append(PlacedLabel(raw[0], stage, raw[2], raw[3]))
        chains = []
        for k, raw in enumerate(item.array("chains")):
            if not (
                isinstance(raw, list)
                and len(raw) == 3
                and all(isinstance(x, str) for x in raw[:2])
                and isinstance(raw[2], int)
            ):
                item.reject(f"`{item.at('chains')}[{k}]` must be [label, target, slot]")
            chains.append(ChainTarget(raw[0], raw[1], raw[2]))
        options = item.optional_hex("in_packet_options")
        if options is not None:
            decode_options(options, self.profile)
        return LinkedDPF(
            symbol=symbol,
            tenant=tenant,
            module=item.string("module"),
            object=item.string("object"),
            placement=item.string("placement", choices=("packet", "switch")),
            pipes=self.pipe_list(item),
            app_id=item.integer("app_id"),
            params=item.integer("params", 0, 255),
            entry=entry,
            labels=tuple(labels),
            chains=tuple(chains),
            in_packet_options=options,
        )

    def extern(self, item: Fields) -> ExternDPF:
        assert self.profile is not None
        item.exactly("symbol", "tenant", "entry", "image")
        return ExternDPF(
            item.string("symbol"),
            None if item.value("tenant") is None else item.integer("tenant", 0, (1 << 24) - 1),
            item.integer("entry", 0, self.profile.code_slots_per_stage - 1),
            item.string("image"),
        )

    def memory(self, item: Fields, keys: set[str]) -> MemoryRequest:
        assert self.profile is not None
        item.exactly("tenant", "array", "eu", "lane", "mapping", "size", "pipes", "users")
        users = tuple(item.strings("users"))
        if not users or not set(users) <= keys:
            item.reject(f"`{item.at('users')}` must name DPFs of the image")
        return MemoryRequest(
            item.integer("tenant", 0, (1 << 24) - 1),
            item.string("array"),
            item.integer("eu", 0, self.profile.num_eus - 1),
            item.integer("lane", 0, self.profile.lanes - 1),
            item.string("mapping", choices=("direct", "segment")),
            item.integer("size", 1, self.profile.memory_words_per_lane),
            self.pipe_list(item),
            users,
        )

    def permission(self, item: Fields, dpfs: tuple[LinkedDPF, ...]) -> PermissionEntry:
        item.exactly(
            "tenant", "app_ids", "metadata", "privileged", "recirculate", "default_dpf", "pipes"
        )
        tenant = item.integer("tenant", 0, (1 << 24) - 1)
        app_ids = tuple(item.integers("app_ids"))
        if not app_ids:
            item.reject(f"`{item.at('app_ids')}` needs at least the primary app id")
        default = item.optional_string("default_dpf")
        if default is not None and not any(
            d.symbol == default and d.tenant == tenant and d.entry is not None for d in dpfs
        ):
            item.reject(f"`{item.at('default_dpf')}` names no installed DPF of tenant {tenant}")
        return PermissionEntry(
            tenant,
            app_ids,
            item.boolean("metadata"),
            item.boolean("privileged"),
            item.boolean("recirculate"),
            default,
            self.pipe_list(item),
        )

    def steering(self, item: Fields, keys: set[str]) -> SteeringRequest:
        item.exactly("tenant", "action", "index", "users")
        users = tuple(item.strings("users"))
        if not users or not set(users) <= keys:
            item.reject(f"`{item.at('users')}` must name DPFs of the image")
        return SteeringRequest(
            item.integer("tenant", 0, (1 << 24) - 1),
            item.string("action", choices=("forward", "multicast")),
            item.integer("index", 0, 0xFFFF),
            users,
        )


def _is_step(step: object) -> bool:
    return (
        isinstance(step, list)
        and len(step) == 2
        and step[0] in ("memory", "permission", "code", "default_dpf")
        and isinstance(step[1], int)
        and not isinstance(step[1], bool)
    )


__all__ = ["MAGIC", "VERSION", "image_bytes", "image_id", "read_image"]
