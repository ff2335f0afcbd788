"""Where a key path is written in a TOML file: the line and column of the key a message
names (``case[1].expect.stack``), so that a bad test file is reported at its line.

Contract: :func:`positions` reads TOML text that ``tomllib`` has already accepted and
returns the position of every key, table header and array element it holds, by concrete
path (``("case", 1, "expect", "stack")``); :func:`locate` finds the longest written prefix
of a key path as the scenario reader spells it (:func:`dpfc.backends.scenario` key paths:
``a.b[0]."quoted key"``). Nothing here validates: tomllib did; text this reader does not
follow gives fewer positions, never an error.
"""

from __future__ import annotations

import functools
import json
import re

Path = tuple[str | int, ...]

TOKEN = re.compile(
    r"""(?P<space>[ \t\r]+)|(?P<newline>\n)|(?P<comment>\#[^\n]*)
    |(?P<string>\"\"\"(?:[^\\]|\\.)*?\"\"\"|'''.*?'''|"(?:[^"\\\n]|\\.)*"|'[^'\n]*')
    |(?P<punct>[\[\]{}=,.])|(?P<bare>[^\s\[\]{}=,.\#"']+)""",
    re.VERBOSE | re.DOTALL,
)
SEGMENT = re.compile(r'\.?(?:"((?:[^"\\]|\\.)*)"|([A-Za-z0-9_-]+))|\[(\d+)\]')


class _Tokens:
    def __init__(self, text: str) -> None:
        self.items: list[tuple[str, str, int, int]] = []  # kind, text, line, column
        line, start = 1, 0
        for match in TOKEN.finditer(text):
            kind = match.lastgroup or ""
            value = match.group()
            if kind not in ("space", "comment"):
                self.items.append((kind, value, line, match.start() - start + 1))
            newlines = value.count("\n")
            if newlines:
                line += newlines
                start = match.start() + value.rindex("\n") + 1
        self.index = 0

    def peek(self, skip_newlines: bool = False) -> tuple[str, str, int, int]:
        while (
            skip_newlines
            and self.index < len(self.items)
            and self.items[self.index][0] == "newline"
        ):
            self.index += 1
        if self.index >= len(self.items):
            return ("end", "", 0, 0)
        return self.items[self.index]

    def take(self, skip_newlines: bool = False) -> tuple[str, str, int, int]:
        token = self.peek(skip_newlines)
        self.index += 1
        return token


def _key_text(kind: str, text: str) -> str:
    if kind != "string":
        return text
    if text.startswith("'"):
        return text.strip("'")
    try:
        value = json.loads(text)
    except ValueError:
        return text.strip('"')
    return str(value)


class _Reader:
    def __init__(self, text: str) -> None:
        self.tokens = _Tokens(text)
        self.found: dict[Path, tuple[int, int]] = {}
        self.arrays: dict[Path, int] = {}  # concrete path of an array of tables -> last index

    def record(self, path: Path, line: int, column: int) -> None:
        self.found.setdefault(path, (line, column))

    def keys(self) -> tuple[list[str], int, int]:
        """A dotted key: its parts, and where it starts."""
        parts: list[str] = []
        kind, text, line, column = self.tokens.take(skip_newlines=True)
        parts.append(_key_text(kind, text))
        while self.tokens.peek()[1] == ".":
            self.tokens.take()
            kind, text, _, _ = self.tokens.take()
            parts.append(_key_text(kind, text))
        return parts, line, column

    def concrete(self, names: list[str]) -> Path:
        """A header's names as a concrete path: arrays of tables at their last element."""
        path: Path = ()
        for name in names:
            path = (*path, name)
            if path in self.arrays:
                path = (*path, self.arrays[path])
        return path

    def read(self) -> dict[Path, tuple[int, int]]:
        table: Path = ()
        while self.tokens.peek(skip_newlines=True)[0] != "end":
            _, text, line, column = self.tokens.peek(skip_newlines=True)
            if text == "[":
                self.tokens.take()
                double = self.tokens.peek()[1] == "["
                if double:
                    self.tokens.take()
                names, _, _ = self.keys()
                while self.tokens.peek()[1] == "]":
                    self.tokens.take()
                if double:
                    parent = self.concrete(names[:-1])
                    array = (*parent, names[-1])
                    self.arrays[array] = self.arrays.get(array, -1) + 1
                    table = (*array, self.arrays[array])
                    self.record(array, line, column)
                else:
                    table = self.concrete(names)
                self.record(table, line, column)
                continue
            names, line, column = self.keys()
            path = (*table, *names)
            self.record(path, line, column)
            if self.tokens.peek()[1] == "=":
                self.tokens.take()
                self.value(path)
        return self.found

    def value(self, path: Path) -> None:
        text = self.tokens.peek(skip_newlines=True)[1]
        if text == "{":
            self.tokens.take()
            while self.tokens.peek(skip_newlines=True)[1] not in ("}", ""):
                if self.tokens.peek(skip_newlines=True)[1] == ",":
                    self.tokens.take()
                    continue
                names, key_line, key_column = self.keys()
                inner = (*path, *names)
                self.record(inner, key_line, key_column)
                if self.tokens.peek()[1] == "=":
                    self.tokens.take()
                    self.value(inner)
            self.tokens.take(skip_newlines=True)
        elif text == "[":
            self.tokens.take()
            index = 0
            while self.tokens.peek(skip_newlines=True)[1] not in ("]", ""):
                if self.tokens.peek(skip_newlines=True)[1] == ",":
                    self.tokens.take()
                    continue
                _, _, item_line, item_column = self.tokens.peek(skip_newlines=True)
                self.record((*path, index), item_line, item_column)
                self.value((*path, index))
                index += 1
            self.tokens.take(skip_newlines=True)
        else:
            # an atom: a string, or a number, date or boolean written in bare pieces
            self.tokens.take()
            while self.tokens.peek()[0] in ("bare", "punct") and self.tokens.peek()[1] not in (
                ",",
                "]",
                "}",
                "[",
                "{",
                "=",
            ):
                self.tokens.take()


@functools.lru_cache(maxsize=16)
def positions(text: str) -> dict[Path, tuple[int, int]]:
    """Every key, header and array element of ``text`` by concrete path -> (line, column)
    (read once per text: a report locates many keys of one file; do not change it)."""
    return _Reader(text).read()


def parse_key_path(text: str) -> Path | None:
    """``case[1].expect."a.b"`` -> ``("case", 1, "expect", "a.b")``; None if it is not one."""
    path: list[str | int] = []
    at = 0
    while at < len(text):
        match = SEGMENT.match(text, at)
        if match is None or (at == 0 and text.startswith(".")):
            return None
        quoted, bare, index = match.groups()
        if index is not None:
            path.append(int(index))
        elif quoted is not None:
            path.append(_key_text("string", f'"{quoted}"'))
        else:
            path.append(bare)
        at = match.end()
    return tuple(path) if path else None


def locate(text: str, key_path: str) -> tuple[int, int] | None:
    """Where the longest written prefix of ``key_path`` is in ``text`` (None: nowhere)."""
    path = parse_key_path(key_path)
    if path is None:
        return None
    found = positions(text)
    for length in range(len(path), 0, -1):
        where = found.get(path[:length])
        if where is not None:
            return where
    return None


__all__ = ["locate", "parse_key_path", "positions"]
