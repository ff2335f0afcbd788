"""Generate the malformed install-image corpus read by ``tests/test_bundle_errors.py``.

Every case starts from one *valid* image — the hand-written counter and LB2 DPFs
(``examples/asm``) linked for tenant 3 on a two-pipe tofino1 switch — and applies one
targeted mutation (:func:`cases`): to the header, to the body's bytes, or to one field of
the body's JSON, the body then written canonically again and the header's length and
digest fixed, so each case reaches the check it is meant for. Run::

    python tests/bundle_errors/make_corpus.py        # rewrites every NNN_name.dpfimg
    DPFC_BLESS=1 pytest tests/test_bundle_errors.py  # rewrites every NNN_name.stderr

and read both diffs before committing. ``NNN_name.stderr`` is exactly what
``dpfc disasm NNN_name.dpfimg`` prints on stderr; the test also checks that the committed
images are what this script generates.
"""

from __future__ import annotations

import hashlib
import json
import struct
from collections.abc import Callable
from pathlib import Path
from typing import Any

from dpfc.asm import assemble_text
from dpfc.link import LinkInput, LinkOptions, image_bytes, link
from dpfc.link.format import VERSION
from dpfc.machine import encode_program
from dpfc.objfile import ObjectFile
from dpfc.target import BUILTIN_PROFILES

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent

HEADER = struct.Struct(">8sHHI32s")
Document = dict[str, Any]


def base() -> bytes:
    """The valid image every case mutates."""
    profile = BUILTIN_PROFILES["tofino1"]
    objects = []
    for name in ("counter", "lb2"):
        path = ROOT / "examples" / "asm" / f"{name}.dpfasm"
        program = assemble_text(path.read_text(encoding="utf-8"), f"{name}.dpfasm", profile)
        objects.append(ObjectFile.of_program(encode_program(program)))
    return image_bytes(link([LinkInput(o, 3) for o in objects], LinkOptions(pipes=2)))


def body_of(data: bytes) -> Document:
    document: Document = json.loads(data[HEADER.size :])
    return document


def wrap(body: bytes, *, version: int = VERSION, reserved: int = 0) -> bytes:
    """A header with the right length and digest around ``body``."""
    return (
        HEADER.pack(b"DPFCIMG\x00", version, reserved, len(body), hashlib.sha256(body).digest())
        + body
    )


def canonical(document: Document) -> bytes:
    return json.dumps(document, sort_keys=True, separators=(",", ":")).encode()


def edit(change: Callable[[Document], None]) -> Callable[[bytes], bytes]:
    """A mutation of one JSON field; the body is rewritten canonically, the header fixed."""

    def apply(data: bytes) -> bytes:
        document = body_of(data)
        change(document)
        return wrap(canonical(document))

    return apply


def _set(path: tuple[str | int, ...], value: object) -> Callable[[Document], None]:
    def change(document: Document) -> None:
        target: Any = document
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value

    return change


def _delete(key: str) -> Callable[[Document], None]:
    return lambda document: document.pop(key)


def _swap_install(document: Document) -> None:
    steps = document["install"]
    steps[-1], steps[-2] = steps[-2], steps[-1]


def _duplicate_slot(document: Document) -> None:
    document["code"].insert(1, dict(document["code"][0]))


def cases() -> list[tuple[str, str, Callable[[bytes], bytes]]]:
    """(name, what is wrong, mutation of the base image's bytes)."""
    return [
        ("empty_file", "no bytes at all", lambda d: b""),
        ("text_file", "a text file, not an image", lambda d: b"hello, switch\n"),
        ("truncated_header", "cut inside the 48-byte header", lambda d: d[:20]),
        ("truncated_body", "the last 10 bytes of the body are missing", lambda d: d[:-10]),
        ("trailing_bytes", "bytes after the body", lambda d: d + b"\x00\x00"),
        (
            "wrong_version",
            "format version 1 (before DPFs and memory named their pipeline)",
            lambda d: wrap(d[HEADER.size :], version=1),
        ),
        ("reserved_set", "reserved header bytes set", lambda d: wrap(d[HEADER.size :], reserved=1)),
        ("corrupt_byte", "one body byte changed, digest kept", lambda d: d[:-3] + b"X" + d[-2:]),
        ("body_not_json", "a body that is not JSON", lambda d: wrap(b"{not json")),
        (
            "not_canonical",
            "the body with spaces (valid JSON, not the writer's form)",
            lambda d: wrap(json.dumps(body_of(d), sort_keys=True, indent=1).encode()),
        ),
        ("unknown_field", "a field the format does not have", edit(_set(("extra",), 1))),
        ("missing_code", "no `code` list", edit(_delete("code"))),
        ("unknown_target", "a target profile that is not built in", edit(_set(("target",), "tofino9"))),
        ("wrong_fingerprint", "the profile's fingerprint changed", edit(_set(("target_fingerprint",), "0" * 16))),
        ("zero_pipes", "a switch of 0 pipes", edit(_set(("pipes",), 0))),
        ("word_not_hex", "a code word that is not hex", edit(_set(("code", 0, "word"), "zz"))),
        ("word_too_short", "a code word of the wrong length", edit(_set(("code", 0, "word"), "00"))),
        ("unknown_stage", "a code slot of an EU the profile lacks", edit(_set(("code", 0, "stage"), "eu9"))),
        ("slot_beyond_memory", "a slot beyond code memory", edit(_set(("code", 0, "slot"), 4096))),
        ("slot_twice", "one slot given twice", edit(_duplicate_slot)),
        ("unknown_user", "a code slot used by a DPF the image lacks", edit(_set(("code", 0, "users"), ["3:nobody"]))),
        ("pipe_out_of_range", "a pipe the switch lacks", edit(_set(("code", 0, "pipes"), [0, 5]))),
        ("entry_not_a_prolog", "a DPF whose entry slot holds none of its code", edit(_set(("dpfs", 0, "entry"), 77))),
        ("memory_eu_out_of_range", "an array in an EU the profile lacks", edit(_set(("memory",), [{"tenant": 3, "array": "x", "eu": 9, "lane": 0, "mapping": "segment", "pipeline": "ingress", "size": 4, "pipes": [0], "users": ["3:counter"]}]))),
        ("default_dpf_unknown", "a default DPF the image does not install", edit(_set(("permissions", 0, "default_dpf"), "nothing"))),
        ("install_order_changed", "two install steps swapped", edit(_swap_install)),
        ("steering_action", "a steering request of an unknown action", edit(_set(("steering",), [{"tenant": 3, "action": "teleport", "index": 1, "users": ["3:counter"]}]))),
        ("options_malformed", "in-packet options that do not decode", edit(_set(("dpfs", 0, "in_packet_options"), "fff0"))),
    ]  # fmt: skip


def corpus_files() -> dict[str, bytes]:
    data = base()
    return {
        f"{number:03}_{name}.dpfimg": mutate(data)
        for number, (name, _why, mutate) in enumerate(cases(), start=1)
    }


def main() -> None:
    for old in HERE.glob("*.dpfimg"):
        old.unlink()
    for name, data in corpus_files().items():
        (HERE / name).write_bytes(data)
    print(f"wrote {len(cases())} images to {HERE}")


if __name__ == "__main__":
    main()
