"""The diagnostic-code catalogue: the long explanation of every ``DPFxxxx`` code.

``dpfc explain DPF5101`` prints one :class:`Entry`: what the code means, why the rule
exists (with the paper or docs sentence it rests on), an example that produces it and how
to fix it. The texts are data, one TOML file per code range next to this module (shipped
in the wheel as package data):

=================  ===================================================================
``cli_asm.toml``   DPF0xxx: files and options of the CLI, the assembler's syntax and structure
``isa.toml``       DPF10xx: the machine rules of docs/isa.md (checker of bundles)
``encoding.toml``  DPF20xx: what the encoder cannot put in a packet
``decode.toml``    DPF30xx: malformed bytes (packets, options, code-memory words)
``sim.toml``       DPF40xx: the control plane of a switch (simulator, bmv2, BF-RT)
``scenario.toml``  DPF41xx: scenario files of ``dpfc run``
``syntax.toml``    DPF50xx: the DPF language's syntax
``sema.toml``      DPF51xx, DPF52xx: names, types and rules of the DPF language
``ir.toml``        DPF53xx: textual IR and the IR verifier
``lints.toml``     DPF54xx: the DPF language's warnings (lints)
``schedule.toml``  DPF6xxx: scheduling, code generation, object files
``link.toml``      DPF7xxx: the linker, deployment and install images
``verify.toml``    DPF8xxx: ``dpfc verify``: policy files, and what code may not do
=================  ===================================================================

An entry is a TOML table named by its code::

    [DPF5101]
    summary = "unknown name"             # one line, for `dpfc explain` without a code
    meaning = "..."                      # what it means and why the rule exists
    fix = "..."                          # how to fix it
    command = "dpfc check example.dpf"   # the example: a command line (steps joined by
                                         # ` && `: the last one reports the code) ...
    files = { "example.dpf" = "..." }    # ... and the text files it reads
    hex_files = { "x.bin" = "01 02" }    # ... and binary files, as hex bytes
    example = "..."                      # or a free-form example (no command)
    unchecked = "why"                    # the tests do not run this example, and why
    warning = "unused-local"             # a warning's name for the `-W` flags (warnings only)

:mod:`.codes` names every code: the source writes ``codes.UNKNOWN_NAME``, not ``"DPF5101"``.

``tests/test_explain.py`` keeps the catalogue honest: every code in the package's source has
an entry and every entry a code in the source; every ``command`` without ``unchecked`` is
run on its files (steps joined by `` && `` in order, each but the last succeeding) and must
report its code.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from functools import cache
from importlib import resources

from dpfc.catalog import codes

__all__ = [
    "CODE",
    "SECTIONS",
    "CatalogError",
    "Entry",
    "close_codes",
    "codes",
    "load_catalog",
    "normalize_code",
    "warning_names",
]

CODE = re.compile(r"^DPF\d{4}$")
WARNING_NAME = re.compile(r"^[a-z]+(-[a-z]+)*$")
FIELDS = frozenset(
    {
        "summary",
        "meaning",
        "fix",
        "command",
        "files",
        "hex_files",
        "example",
        "unchecked",
        "warning",
    }
)
# The catalogue's files in the order `dpfc explain` lists them.
SECTIONS: tuple[tuple[str, str], ...] = (
    ("cli_asm.toml", "DPF0xxx: files, options, assembler syntax and structure"),
    ("isa.toml", "DPF10xx: machine rules (the bundle checker)"),
    ("encoding.toml", "DPF20xx: encoding SwitchVM options"),
    ("decode.toml", "DPF30xx: malformed bytes (packets, options, code-memory words)"),
    ("sim.toml", "DPF40xx: the control plane of a switch"),
    ("scenario.toml", "DPF41xx: scenario files of dpfc run"),
    ("syntax.toml", "DPF50xx: DPF-language syntax"),
    ("sema.toml", "DPF51xx-DPF52xx: DPF-language names, types and rules"),
    ("ir.toml", "DPF53xx: textual IR and the IR verifier"),
    ("lints.toml", "DPF54xx: DPF-language warnings (lints)"),
    ("schedule.toml", "DPF6xxx: scheduling, code generation, object files"),
    ("link.toml", "DPF7xxx: linking, deployment, install images"),
    ("verify.toml", "DPF8xxx: verification of machine code against a policy"),
)


class CatalogError(Exception):
    """A malformed catalogue file (a packaging bug: the tests load every file)."""


@dataclass(frozen=True)
class Entry:
    """The explanation of one diagnostic code."""

    code: str
    summary: str
    meaning: str
    fix: str
    section: str
    command: str | None = None
    files: tuple[tuple[str, str], ...] = ()
    hex_files: tuple[tuple[str, str], ...] = ()
    example: str | None = None
    unchecked: str | None = None
    warning: str | None = None  # the name of a warning for `-W` (None: not a warning)

    def file_bytes(self) -> dict[str, bytes]:
        """Every file of the example by name, as the bytes to write before the command."""
        out = {name: text.encode() for name, text in self.files}
        for name, text in self.hex_files:
            out[name] = bytes.fromhex(re.sub(r"\s+", "", text))
        return out

    def render(self) -> str:
        """The text ``dpfc explain CODE`` prints."""
        lines = [f"{self.code}: {self.summary}", "", _block(self.meaning), ""]
        lines.append("Example:")
        if self.example is not None:
            lines.extend(_indent(self.example.rstrip("\n")))
        for name, text in self.files:
            lines.append(f"  {name}:")
            lines.extend(_indent(text.rstrip("\n"), "    | "))
        for name, text in self.hex_files:
            lines.append(f"  {name} (bytes, hex):")
            lines.extend(_indent(text.strip("\n"), "    | "))
        if self.command is not None:
            lines.append(f"  $ {self.command}")
        lines += ["", "How to fix it:", _block(self.fix)]
        return "\n".join(lines) + "\n"


def _block(text: str) -> str:
    return "\n".join("  " + line if line else "" for line in text.strip("\n").splitlines())


def _indent(text: str, prefix: str = "  ") -> list[str]:
    return [(prefix + line).rstrip() for line in text.splitlines()]


def _text(code: str, table: dict[str, object], key: str, required: bool) -> str | None:
    value = table.get(key)
    if value is None and not required:
        return None
    if not isinstance(value, str) or not value.strip():
        raise CatalogError(f"{code}: `{key}` must be a non-empty string")
    return value


def _named(code: str, table: dict[str, object], key: str) -> tuple[tuple[str, str], ...]:
    value = table.get(key, {})
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise CatalogError(f"{code}: `{key}` must map file names to strings")
    return tuple((str(name), str(text)) for name, text in value.items())


def _entry(code: str, table: object, section: str) -> Entry:
    if not CODE.match(code):
        raise CatalogError(f"{section}: `{code}` is not a diagnostic code (DPF and 4 digits)")
    if not isinstance(table, dict):
        raise CatalogError(f"{code}: an entry is a table")
    unknown = sorted(set(table) - FIELDS)
    if unknown:
        raise CatalogError(f"{code}: unknown field(s) {', '.join(unknown)}")
    entry = Entry(
        code=code,
        summary=_text(code, table, "summary", True) or "",
        meaning=_text(code, table, "meaning", True) or "",
        fix=_text(code, table, "fix", True) or "",
        section=section,
        command=_text(code, table, "command", False),
        files=_named(code, table, "files"),
        hex_files=_named(code, table, "hex_files"),
        example=_text(code, table, "example", False),
        unchecked=_text(code, table, "unchecked", False),
        warning=_text(code, table, "warning", False),
    )
    if "\n" in entry.summary:
        raise CatalogError(f"{code}: the summary is one line")
    if entry.command is None and entry.example is None:
        raise CatalogError(f"{code}: an entry needs an example (`command` or `example`)")
    if entry.command is None and entry.unchecked is None:
        raise CatalogError(f"{code}: an example without a command needs `unchecked` (why)")
    if entry.warning is not None and not WARNING_NAME.match(entry.warning):
        raise CatalogError(f"{code}: a warning's name is lower-case words joined by `-`")
    return entry


@cache
def load_catalog() -> dict[str, Entry]:
    """Every entry by code, in code order (read once from the package data)."""
    entries: dict[str, Entry] = {}
    package = resources.files(__name__)
    for name, _title in SECTIONS:
        try:
            data = tomllib.loads(package.joinpath(name).read_text(encoding="utf-8"))
        except (OSError, tomllib.TOMLDecodeError) as exc:
            raise CatalogError(f"{name}: {exc}") from None
        for code, table in data.items():
            if code in entries:
                raise CatalogError(f"{code} is explained twice ({entries[code].section}, {name})")
            entries[code] = _entry(code, table, name)
    return dict(sorted(entries.items()))


def warning_names() -> dict[str, str]:
    """Every warning that ``-W`` controls: its name (``unused-local``) -> its code."""
    return {e.warning: e.code for e in load_catalog().values() if e.warning is not None}


def close_codes(code: str, known: list[str] | None = None) -> list[str]:
    """Known codes one typo away from ``code`` (for "did you mean"): one digit changed, or
    two adjacent digits swapped; the numerically closest first, at most three."""
    pool = known if known is not None else list(load_catalog())

    def one_typo(other: str) -> bool:
        diff = [i for i, (a, b) in enumerate(zip(code, other, strict=True)) if a != b]
        if len(diff) == 1:
            return True
        return (
            len(diff) == 2
            and diff[1] == diff[0] + 1
            and (code[diff[0]], code[diff[1]]) == (other[diff[1]], other[diff[0]])
        )

    if not CODE.match(code):
        return []
    close = [other for other in pool if other != code and one_typo(other)]
    return sorted(close, key=lambda other: abs(int(other[3:]) - int(code[3:])))[:3]


def normalize_code(text: str) -> str | None:
    """``DPF5101`` from ``DPF5101``, ``dpf5101``, ``5101`` or ``[DPF5101]``; None if not a code."""
    stripped = text.strip().strip("[]").upper()
    if stripped.isdigit() and len(stripped) == 4:
        stripped = "DPF" + stripped
    return stripped if CODE.match(stripped) else None
