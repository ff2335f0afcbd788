"""Object files, ``dpfc-object`` version 2 (docs/objects.md): what ``dpfc compile`` and
``dpfc asm`` write and ``dpfc link`` reads — each DPF's machine program as bytes (in-packet
options, code-memory words), its assembly and source lines, chain relocations and array
bindings."""

from dpfc.objfile.fields import Fields
from dpfc.objfile.model import DEBUG_VERSION, FORMAT, VERSION, ObjectDPF, ObjectFile, SourceLocation
from dpfc.objfile.read import object_profile, parse_stage, read_object
from dpfc.objfile.text import SourceLines, format_object
from dpfc.objfile.write import write_object

__all__ = [
    "DEBUG_VERSION",
    "FORMAT",
    "VERSION",
    "Fields",
    "ObjectDPF",
    "ObjectFile",
    "SourceLines",
    "SourceLocation",
    "format_object",
    "object_profile",
    "parse_stage",
    "read_object",
    "write_object",
]
