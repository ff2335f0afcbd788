"""Reading an object's debug notes: source lines and register variables, by debug version.

The debug notes are what a debugger or a trace needs beside the code (docs/objects.md):
each instruction's source location (``bundles[].source``, every version) and, from debug
version 2, the source variable each register holds (``bundles[].registers``). An object
says its version in ``debug_version``; one that does not is version 1, as every object
written before the field existed. :class:`DebugNotes` reads the version and then the notes
of each bundle, as strictly as the rest of the reader: a missing or malformed note, or a
later version than this dpfc knows, is refused with the JSON path.
"""

from __future__ import annotations

from dataclasses import dataclass

from dpfc.isa import RegClass, Register
from dpfc.objfile.fields import Fields
from dpfc.objfile.model import DEBUG_VERSION, SourceLocation
from dpfc.target import TargetProfile

# the keys each debug version adds to each bundle
BUNDLE_KEYS: dict[int, tuple[str, ...]] = {1: (), 2: ("registers",)}


@dataclass(frozen=True)
class DebugNotes:
    """The debug version of one object (``declared``: in its ``debug_version``), and how its
    notes are read."""

    version: int
    declared: bool

    @classmethod
    def of(cls, top: Fields) -> DebugNotes:
        """The version ``top`` (the object's top level) declares; 1 when it declares none."""
        declared = "debug_version" in top.data
        version = top.integer("debug_version", low=1) if declared else 1
        if version not in BUNDLE_KEYS:
            top.reject(
                f"`debug_version` is {version}; this dpfc reads debug versions 1 to "
                f"{DEBUG_VERSION}: compile (or assemble) the source again"
            )
        return cls(version, declared)

    @property
    def top_keys(self) -> tuple[str, ...]:
        return ("debug_version",) if self.declared else ()

    @property
    def bundle_keys(self) -> tuple[str, ...]:
        return BUNDLE_KEYS[self.version]

    def source(self, bundle: Fields, count: int) -> tuple[SourceLocation | None, ...]:
        """A bundle's ``source``: one location (or null) per asm line."""
        items = bundle.array("source")
        if len(items) != count:
            bundle.reject(f"`{bundle.at('source')}` must have one entry per asm line")
        return tuple(
            location(item, bundle, f"{bundle.at('source')}[{k}]") for k, item in enumerate(items)
        )

    def registers(self, bundle: Fields, profile: TargetProfile) -> dict[Register, str]:
        """A bundle's ``registers`` (register name -> the variable it holds); none before
        debug version 2."""
        if "registers" not in self.bundle_keys:
            return {}
        value = bundle.optional_object("registers")
        if value is None:
            bundle.reject(f"`{bundle.at('registers')}` must be an object")
        known = {
            str(reg): reg
            for reg in (Register(cls, lane) for cls in RegClass for lane in range(profile.lanes))
        }
        out: dict[Register, str] = {}
        for key, name in value.items():
            if key not in known:
                bundle.reject(
                    f"`{bundle.at('registers')}` names no register of {profile.name}: {key!r}"
                )
            if not isinstance(name, str) or not name:
                bundle.reject(f"`{bundle.at('registers')}.{key}` must be a variable name")
            out[known[key]] = name
        return out


def location(item: object, fields: Fields, where: str) -> SourceLocation | None:
    """``[file, line, column]`` or null, at ``where``."""
    if item is None:
        return None
    if not (
        isinstance(item, list)
        and len(item) == 3
        and isinstance(item[0], str)
        and all(isinstance(x, int) and not isinstance(x, bool) for x in item[1:])
    ):
        fields.reject(f"`{where}` must be [file, line, column] or null")
    return (item[0], item[1], item[2])


__all__ = ["BUNDLE_KEYS", "DebugNotes", "location"]
