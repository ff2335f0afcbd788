"""Strict, typed access to a parsed JSON document, for the object and bundle readers.

Every getter names the JSON path of the value it rejects (``dpfs[0].bundles[3].word``), and
:meth:`Fields.exactly` rejects unknown keys, so a reader never guesses: a misspelt or
missing field is an error naming where it is, never a default or a ``KeyError``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NoReturn

Fail = Callable[[str], Exception]  # reason -> the exception to raise


class Fields:
    """One JSON object at ``path`` of a document."""

    def __init__(self, data: object, path: str, fail: Fail) -> None:
        self.fail = fail
        self.path = path
        if not isinstance(data, dict):
            self.reject(f"`{path or 'the document'}` must be an object")
        self.data: dict[str, Any] = data

    def reject(self, reason: str) -> NoReturn:
        raise self.fail(reason)

    def at(self, key: str) -> str:
        return f"{self.path}.{key}" if self.path else key

    def exactly(self, *keys: str) -> None:
        """The object has these keys and no others."""
        missing = [k for k in keys if k not in self.data]
        if missing:
            self.reject(f"`{self.at(missing[0])}` is missing")
        extra = sorted(set(self.data) - set(keys))
        if extra:
            self.reject(f"`{self.at(extra[0])}` is not a field of this format")

    def value(self, key: str) -> Any:
        if key not in self.data:
            self.reject(f"`{self.at(key)}` is missing")
        return self.data[key]

    def string(self, key: str, *, choices: tuple[str, ...] = ()) -> str:
        value = self.value(key)
        if not isinstance(value, str):
            self.reject(f"`{self.at(key)}` must be a string")
        if choices and value not in choices:
            self.reject(f"`{self.at(key)}` must be one of {', '.join(choices)}, not {value!r}")
        return value

    def optional_string(self, key: str) -> str | None:
        return None if self.value(key) is None else self.string(key)

    def integer(self, key: str, low: int = 0, high: int = 0xFFFF_FFFF) -> int:
        value = self.value(key)
        if not isinstance(value, int) or isinstance(value, bool):
            self.reject(f"`{self.at(key)}` must be an integer")
        if not low <= value <= high:
            self.reject(f"`{self.at(key)}` is {value}, outside {low}..{high}")
        return value

    def boolean(self, key: str) -> bool:
        value = self.value(key)
        if not isinstance(value, bool):
            self.reject(f"`{self.at(key)}` must be true or false")
        return value

    def hex_bytes(self, key: str) -> bytes:
        text = self.string(key)
        try:
            return bytes.fromhex(text)
        except ValueError:
            self.reject(f"`{self.at(key)}` is not hexadecimal bytes")

    def optional_hex(self, key: str) -> bytes | None:
        return None if self.value(key) is None else self.hex_bytes(key)

    def array(self, key: str) -> list[Any]:
        value = self.value(key)
        if not isinstance(value, list):
            self.reject(f"`{self.at(key)}` must be an array")
        return value

    def objects(self, key: str) -> list[Fields]:
        return [
            Fields(item, f"{self.at(key)}[{i}]", self.fail)
            for i, item in enumerate(self.array(key))
        ]

    def integers(self, key: str, low: int = 0, high: int = 0xFFFF_FFFF) -> list[int]:
        out = []
        for i, item in enumerate(self.array(key)):
            if not isinstance(item, int) or isinstance(item, bool) or not low <= item <= high:
                self.reject(f"`{self.at(key)}[{i}]` must be an integer in {low}..{high}")
            out.append(item)
        return out

    def strings(self, key: str) -> list[str]:
        out = []
        for i, item in enumerate(self.array(key)):
            if not isinstance(item, str):
                self.reject(f"`{self.at(key)}[{i}]` must be a string")
            out.append(item)
        return out

    def optional_object(self, key: str) -> dict[str, Any] | None:
        value = self.value(key)
        if value is not None and not isinstance(value, dict):
            self.reject(f"`{self.at(key)}` must be an object or null")
        return value


__all__ = ["Fail", "Fields"]
