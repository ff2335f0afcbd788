"""Scenario files as typed data: the error type and codes, and a strict reader that names
the key path of every value it rejects (``kvs.toml: switches[0].pipes: expected an
integer, got "two"``). The schema itself is in the builder: :mod:`.loader` and the modules
it names (each part's keys are listed in its module)."""

from __future__ import annotations

import difflib
import json
import re
import tomllib
from collections.abc import Iterable
from pathlib import Path
from typing import NoReturn

from dpfc.catalog import codes

# Codes of scenario errors (control-plane refusals keep their DPF40xx codes).
CODE_UNREADABLE = (
    codes.SCENARIO_UNREADABLE
)  # the scenario file cannot be read, or has an unknown extension
CODE_SYNTAX = codes.SCENARIO_SYNTAX  # not valid TOML / JSON
CODE_UNKNOWN_KEY = codes.SCENARIO_UNKNOWN_KEY
CODE_MISSING_KEY = codes.SCENARIO_MISSING_KEY
CODE_TYPE = codes.SCENARIO_WRONG_TYPE
CODE_VALUE = (
    codes.SCENARIO_BAD_VALUE
)  # right type, wrong value (range, address syntax, PC syntax, ...)
CODE_UNKNOWN_NAME = (
    codes.SCENARIO_UNKNOWN_NAME
)  # a switch, host or DPF name that the scenario does not define
CODE_TOPOLOGY = codes.SCENARIO_TOPOLOGY  # duplicate name, port in use or out of range
CODE_FILE = codes.SCENARIO_BAD_FILE  # a file the scenario names cannot be read or is malformed
# a tenant entry that takes away what the linked code needs (its tokens, its capabilities)
CODE_PERMISSION = codes.SCENARIO_PERMISSION_CONFLICT
CODE_NOT_SETTLED = codes.SCENARIO_NOT_SETTLED  # the network did not settle

WORD_MAX = 0xFFFF_FFFF
REPEAT_MAX = 1_000_000
INDEX_KEY = re.compile(r"^(0x[0-9a-fA-F]+|[0-9]+)$")
BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")  # keys TOML writes without quotes
MAC_TEXT = re.compile(r"^[0-9a-fA-F]{2}(:[0-9a-fA-F]{2}){5}$")


class ScenarioError(Exception):
    """A scenario is invalid; ``file: error[code]: message`` is how the CLI prints it."""

    def __init__(
        self, file: str, code: str, message: str, *, line: int | None = None, column: int = 1
    ) -> None:
        super().__init__(f"{file}: {message} [{code}]")
        self.file = file
        self.code = code
        self.message = message
        self.line = line  # known for syntax errors only
        self.column = column


# -- the typed reader --------------------------------------------------------------------------


def quote(text: str) -> str:
    return json.dumps(text)


def names(items: Iterable[str]) -> str:
    listed = sorted(items)
    return ", ".join(listed) if listed else "none defined"


def show(value: object) -> str:
    """How a value is named in an error message."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return quote(value)
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "a table"
    if value is None:
        return "null"
    return type(value).__name__  # pragma: no cover - TOML/JSON give only the above


def key_path(path: str, key: str) -> str:
    shown = key if BARE_KEY.match(key) else quote(key)
    return f"{path}.{shown}" if path else shown


class Table:
    """One table of the file with its key path. :meth:`only` rejects unknown keys before
    anything is built (a typo is an error, not a silent default); typed getters check each
    value."""

    def __init__(self, fail: Fail, path: str, data: dict[str, object]) -> None:
        self.fail = fail
        self.path = path
        self.data = data

    def only(self, *allowed: str) -> None:
        for key in self.data:
            if key in allowed:
                continue
            close = difflib.get_close_matches(key, allowed, n=1)
            hint = f" (did you mean {quote(close[0])}?)" if close else ""
            where = self.path or "the top level"
            self.fail(
                CODE_UNKNOWN_KEY,
                f"{where}: unknown key {quote(key)}{hint}; allowed keys: {', '.join(allowed)}",
            )

    def at(self, key: str) -> str:
        return key_path(self.path, key)

    def has(self, key: str) -> bool:
        return key in self.data

    def raw(self, key: str) -> object:
        return self.data.get(key)

    def required(self, key: str) -> object:
        if key not in self.data:
            where = self.path or "the top level"
            self.fail(CODE_MISSING_KEY, f"{where}: missing required key {quote(key)}")
        return self.data[key]

    def integer(
        self, key: str, default: int | None = None, *, low: int = 0, high: int = WORD_MAX
    ) -> int:
        value = self.required(key) if default is None else self.data.get(key, default)
        return self.fail.integer(value, self.at(key), low, high)

    def optional_integer(self, key: str, *, low: int = 0, high: int = WORD_MAX) -> int | None:
        if key not in self.data:
            return None
        return self.integer(key, low=low, high=high)

    def string(self, key: str, default: str | None = None) -> str:
        value = self.required(key) if default is None else self.data.get(key, default)
        return self.fail.string(value, self.at(key))

    def boolean(self, key: str, default: bool) -> bool:
        value = self.data.get(key, default)
        if not isinstance(value, bool):
            self.fail.wrong_type(self.at(key), "a boolean (true or false)", value)
        return value

    def tables(self, key: str) -> list[Table]:
        """An array of tables (absent: empty)."""
        value = self.data.get(key, [])
        items = self.fail.array(value, self.at(key))
        return [
            self.fail.table(item, f"{self.at(key)}[{index}]") for index, item in enumerate(items)
        ]

    def table(self, key: str) -> Table | None:
        if key not in self.data:
            return None
        return self.fail.table(self.data[key], self.at(key))


class Fail:
    """Raises :class:`ScenarioError` for one file; also checks loose values (array items)."""

    def __init__(self, file: str) -> None:
        self.file = file

    def __call__(self, code: str, message: str) -> NoReturn:
        raise ScenarioError(self.file, code, message)

    def wrong_type(self, path: str, expected: str, value: object) -> NoReturn:
        self(CODE_TYPE, f"{path}: expected {expected}, got {show(value)}")

    def integer(self, value: object, path: str, low: int = 0, high: int = WORD_MAX) -> int:
        if not isinstance(value, int) or isinstance(value, bool):
            self.wrong_type(path, "an integer", value)
        if not low <= value <= high:
            self(CODE_VALUE, f"{path}: {value} is out of range {low}..{high}")
        return value

    def string(self, value: object, path: str) -> str:
        if not isinstance(value, str):
            self.wrong_type(path, "a string", value)
        return value

    def array(self, value: object, path: str) -> list[object]:
        if not isinstance(value, list):
            self.wrong_type(path, "an array", value)
        return value

    def table(self, value: object, path: str) -> Table:
        if not isinstance(value, dict):
            self.wrong_type(path, "a table", value)
        return Table(self, path, value)

    def ipv4(self, value: object, path: str) -> bytes:
        text = self.string(value, path)
        parts = text.split(".")
        if len(parts) != 4 or not all(p.isdigit() and int(p) <= 255 for p in parts):
            self(CODE_VALUE, f"{path}: {quote(text)} is not an IPv4 address (a.b.c.d)")
        return bytes(int(p) for p in parts)

    def mac(self, value: object, path: str) -> bytes:
        text = self.string(value, path)
        if not MAC_TEXT.match(text):
            self(CODE_VALUE, f"{path}: {quote(text)} is not a MAC address (xx:xx:xx:xx:xx:xx)")
        return bytes.fromhex(text.replace(":", ""))

    def index_key(self, key: str, path: str, what: str, high: int = 0xFFFF) -> int:
        if not INDEX_KEY.match(key):
            self(CODE_VALUE, f"{path}: {what} must be an integer key, got {quote(key)}")
        value = int(key, 0)
        if value > high:
            self(CODE_VALUE, f"{path}: {what} {value} is out of range 0..{high}")
        return value


def mac_text(mac: bytes) -> str:
    return ":".join(f"{b:02x}" for b in mac)


def ip_text(ip: bytes) -> str:
    return ".".join(str(b) for b in ip)


def parse_file(path: Path, file: str) -> dict[str, object]:
    suffix = path.suffix.lower()
    if suffix not in (".toml", ".json"):
        raise ScenarioError(
            file,
            CODE_UNREADABLE,
            f"a scenario is a .toml or .json file, got {quote(path.suffix or path.name)}",
        )
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ScenarioError(file, CODE_UNREADABLE, f"cannot read: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise ScenarioError(file, CODE_UNREADABLE, "cannot read: not UTF-8 text") from None
    if suffix == ".json":
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ScenarioError(
                file, CODE_SYNTAX, f"invalid JSON: {exc.msg}", line=exc.lineno, column=exc.colno
            ) from None
        if not isinstance(data, dict):
            raise ScenarioError(
                file, CODE_TYPE, f"the top level must be a JSON object, got {show(data)}"
            )
        return data
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        message = str(exc)
        match = re.search(r" \(at line (\d+), column (\d+)\)$", message)
        if match is None:
            raise ScenarioError(file, CODE_SYNTAX, f"invalid TOML: {message}") from None
        raise ScenarioError(
            file,
            CODE_SYNTAX,
            f"invalid TOML: {message[: match.start()]}",
            line=int(match.group(1)),
            column=int(match.group(2)),
        ) from None


__all__ = [
    "BARE_KEY",
    "CODE_FILE",
    "CODE_MISSING_KEY",
    "CODE_NOT_SETTLED",
    "CODE_PERMISSION",
    "CODE_SYNTAX",
    "CODE_TOPOLOGY",
    "CODE_TYPE",
    "CODE_UNKNOWN_KEY",
    "CODE_UNKNOWN_NAME",
    "CODE_UNREADABLE",
    "CODE_VALUE",
    "INDEX_KEY",
    "REPEAT_MAX",
    "WORD_MAX",
    "Fail",
    "ScenarioError",
    "Table",
    "ip_text",
    "key_path",
    "mac_text",
    "names",
    "parse_file",
    "quote",
]
