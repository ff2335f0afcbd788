"""The bytes of an install image (``.dpfimg``), version 1 (docs/bundle.md).

::

    offset  size  field
    0       8     magic  b"DPFCIMG\\0"
    8       2     format version, big-endian (2: DPFs, externs and memory name their pipeline)
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

from dpfc.catalog import codes
from dpfc.diagnostics import Diagnostic, DiagnosticError
from dpfc.encoding import DecodeError
from dpfc.isa import stage_name
from dpfc.link.image import (
    Image,
)
from dpfc.link.validate import ImageReader
from dpfc.objfile import Fields
from dpfc.target import TargetProfile

MAGIC = b"DPFCIMG\x00"
VERSION = 2
HEADER = struct.Struct(">8sHHI32s")  # magic, version, reserved, body length, digest


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
                "pipeline": d.pipeline,
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
            {
                "symbol": e.symbol,
                "tenant": e.tenant,
                "entry": e.entry,
                "image": e.image,
                "pipeline": e.pipeline,
            }
            for e in image.externs
        ],
        "memory": [
            {
                "tenant": m.tenant,
                "array": m.array,
                "eu": m.eu,
                "lane": m.lane,
                "mapping": m.mapping,
                "pipeline": m.pipeline,
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
            raise _error(
                codes.IMAGE_NOT_AN_IMAGE, filename, "not a dpfc install image (no DPFCIMG header)"
            )
        raise _error(
            codes.IMAGE_TRUNCATED,
            filename,
            f"truncated: {len(data)} bytes, the header alone is {HEADER.size}",
        )
    magic, version, reserved, length, digest = HEADER.unpack_from(data)
    if magic != MAGIC:
        raise _error(
            codes.IMAGE_NOT_AN_IMAGE, filename, "not a dpfc install image (no DPFCIMG header)"
        )
    if version != VERSION:
        raise _error(
            codes.IMAGE_WRONG_VERSION,
            filename,
            f"install image format version {version}; this dpfc reads version {VERSION}: "
            "link the objects again",
        )
    if reserved != 0:
        raise _error(
            codes.IMAGE_MALFORMED,
            filename,
            "malformed install image: reserved header bytes are set",
        )
    body = data[HEADER.size :]
    if len(body) != length:
        state = "truncated" if len(body) < length else "followed by extra bytes"
        raise _error(
            codes.IMAGE_TRUNCATED,
            filename,
            f"{state}: the header announces a {length}-byte body, the file has {len(body)}",
        )
    if hashlib.sha256(body).digest() != digest:
        raise _error(
            codes.IMAGE_CORRUPT,
            filename,
            "corrupt: the body's SHA-256 does not match the header's digest",
        )
    try:
        document = json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise _error(
            codes.IMAGE_MALFORMED,
            filename,
            f"malformed install image: the body is not JSON ({exc})",
        ) from None

    def fail(reason: str) -> Exception:
        return _Malformed(reason)

    try:
        image = ImageReader(filename, profile).image(Fields(document, "", fail))
    except _Malformed as exc:
        raise _error(
            codes.IMAGE_MALFORMED, filename, f"malformed install image: {exc.reason}"
        ) from None
    except DecodeError as exc:
        raise _error(
            codes.IMAGE_MALFORMED, filename, f"malformed install image: [{exc.code}] {exc.message}"
        ) from None
    if _encode_body(image) != body:
        raise _error(
            codes.IMAGE_MALFORMED,
            filename,
            "malformed install image: the body is not in canonical form (dpfc link writes "
            "keys sorted, no spaces, lists in their documented order)",
        )
    return image


class _Malformed(Exception):
    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


__all__ = ["MAGIC", "VERSION", "image_bytes", "image_id", "read_image"]
