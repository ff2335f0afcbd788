"""Loading a :class:`~dpfc.target.profile.TargetProfile`: a built-in by name, or a TOML file.

Contract: :func:`load_profile` returns a built-in profile for its name and reads any other
``.toml`` path with :func:`profile_from_toml`, which starts from a built-in ``base`` and
overrides fields by name (the rules are in ``docs/targets.md``). Every failure (unreadable
file, invalid TOML, unknown key, wrong type, a profile that fails
:meth:`~dpfc.target.profile.TargetProfile.problems`) is a :class:`TargetError` naming the
file; nothing else is raised.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import fields, replace
from enum import Enum
from pathlib import Path
from typing import Any

from dpfc.target.parts import CRC32_FAMILY
from dpfc.target.profile import (
    BUILTIN_PROFILES,
    DEFAULT_PROFILE,
    PROFILE_NAME,
    BranchOperands,
    DirectMappingLanes,
    MemoryAddress,
    MetadataField,
    TargetError,
    TargetProfile,
)

_ENUM_FIELDS: dict[str, type[Enum]] = {
    "branch_operands": BranchOperands,
    "memory_address": MemoryAddress,
    "direct_mapping_lanes": DirectMappingLanes,
}


def profile_from_toml(text: str, origin: str = "<toml>") -> TargetProfile:
    """Build a profile from TOML text: a built-in ``base`` profile (default:
    :data:`DEFAULT_PROFILE`) plus overriding keys.

    ``[[metadata]]`` tables (name, index, description) replace the metadata list.
    """
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise TargetError(f"{origin}: invalid TOML: {exc}") from None
    if "profile" in data and isinstance(data["profile"], dict):
        data = {**data["profile"], **{k: v for k, v in data.items() if k != "profile"}}
    base_name = data.pop("base", DEFAULT_PROFILE.name)
    if not isinstance(base_name, str) or base_name not in BUILTIN_PROFILES:
        raise TargetError(f"{origin}: unknown base profile `{base_name}`")
    base = BUILTIN_PROFILES[base_name]
    known = {f.name for f in fields(TargetProfile)}
    overrides: dict[str, Any] = {}
    for key, value in data.items():
        if key not in known or key == "steering":
            raise TargetError(f"{origin}: unknown profile key `{key}`")
        if key in _ENUM_FIELDS:
            try:
                value = _ENUM_FIELDS[key](value)
            except ValueError:
                allowed = ", ".join(str(e.value) for e in _ENUM_FIELDS[key])
                raise TargetError(f"{origin}: `{key}` must be one of {allowed}") from None
        elif key == "metadata":
            value = _metadata_from_toml(value, origin)
        elif key == "hash_functions":
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise TargetError(f"{origin}: `hash_functions` must be a list of names")
            value = tuple(value)
        elif key == "shift_amounts":
            if not isinstance(value, list) or not all(
                isinstance(v, int) and not isinstance(v, bool) for v in value
            ):
                raise TargetError(f"{origin}: `shift_amounts` must be a list of integers")
            value = tuple(value)
        else:
            expected = type(getattr(base, key))
            if not isinstance(value, expected) or isinstance(value, bool) != (expected is bool):
                raise TargetError(
                    f"{origin}: `{key}` must be {expected.__name__}, got {type(value).__name__}"
                )
        overrides[key] = value
    if "name" not in overrides:
        overrides["name"] = _name_from_path(origin)
    if "lanes" in overrides and "hash_functions" not in overrides:
        # One hash per lane, in family order (repeating the family beyond 8 lanes).
        family = [h.name for h in CRC32_FAMILY]
        overrides["hash_functions"] = tuple(
            family[lane % len(family)] for lane in range(max(overrides["lanes"], 1))
        )
    try:
        return replace(base, **overrides)
    except TargetError as exc:
        raise TargetError(f"{origin}: {exc}") from None


def _name_from_path(origin: str) -> str:
    """The default profile name of a TOML file: its stem, made a valid assembler name."""
    if origin == "<toml>":
        return "custom"
    name = re.sub(r"[^A-Za-z0-9_]", "_", Path(origin).stem)
    return name if PROFILE_NAME.fullmatch(name) else f"_{name}"


def _metadata_from_toml(value: object, origin: str) -> tuple[MetadataField, ...]:
    if not isinstance(value, list):
        raise TargetError(f"{origin}: `metadata` must be an array of tables")
    out = []
    for item in value:
        if not isinstance(item, dict) or not {"name", "index"} <= item.keys():
            raise TargetError(f"{origin}: each metadata entry needs `name` and `index`")
        name, index = item["name"], item["index"]
        description = item.get("description", "")
        if not isinstance(name, str) or not isinstance(description, str):
            raise TargetError(f"{origin}: metadata `name` and `description` must be strings")
        if not isinstance(index, int) or isinstance(index, bool):
            raise TargetError(
                f"{origin}: metadata `{name}` needs an integer `index`, got {type(index).__name__}"
            )
        unknown = item.keys() - {"name", "index", "description"}
        if unknown:
            raise TargetError(f"{origin}: unknown metadata key `{sorted(unknown)[0]}` in `{name}`")
        out.append(MetadataField(name, index, description))
    return tuple(out)


def load_profile(name_or_path: str) -> TargetProfile:
    """A built-in profile by name, or a profile from a ``.toml`` file path."""
    if name_or_path in BUILTIN_PROFILES:
        return BUILTIN_PROFILES[name_or_path]
    path = Path(name_or_path)
    if path.suffix == ".toml":
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise TargetError(f"cannot read target profile {path}: {exc.strerror}") from None
        return profile_from_toml(text, str(path))
    known = ", ".join(BUILTIN_PROFILES)
    raise TargetError(f"unknown target `{name_or_path}` (built-in: {known}; or a .toml file)")
