"""CLI glue for JSON objects: user-facing errors for malformed object files."""

from __future__ import annotations

from dpfc.asm.objfile import ObjectError, object_from_json, object_to_json
from dpfc.cli.errors import UserError
from dpfc.machine.program import MachineProgram
from dpfc.target.profile import TargetProfile


def program_from_object(data: bytes, path: str, profile: TargetProfile | None) -> MachineProgram:
    try:
        return object_from_json(data.decode("utf-8"), profile)
    except UnicodeDecodeError:
        raise UserError(f"{path}: not a JSON object file (not UTF-8 text)") from None
    except ObjectError as exc:
        raise UserError(f"{path}: malformed object: {exc}") from None


__all__ = ["object_to_json", "program_from_object"]
