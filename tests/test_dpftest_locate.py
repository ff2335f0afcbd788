"""Where a key path is written in TOML (``dpfc.backends.testing.locate``): the line a bad
test file's error names.

Examples of every form TOML writes a key in (headers, arrays of tables, dotted keys,
inline tables, multi-line arrays, quoted keys, comments and strings that look like keys),
and a property: for documents written in those forms, every key path is found on the line
it was written on, and tomllib reads the document.
"""

from __future__ import annotations

import json
import tomllib

from hypothesis import given
from hypothesis import strategies as st

from dpfc.backends.scenario import key_path
from dpfc.backends.testing import locate
from dpfc.backends.testing.locate import parse_key_path, positions

TEXT = '''# a comment with [brackets] and key = value
target = "tofino1"   # trailing [comment]
links = [
    ["sw:15", "sw:16"],  # a cable
]
note = """
fake = 1
[[cases]]
"""

[[cases]]
name = "first # not a comment"
expect.stack = [1, 2]
expect.memory = { "kvs.index" = { 100 = 5 }, hits = [0, 1] }

[[cases]]
name = 'second'

[[cases.packets]]
stack = [3]

[[cases.packets]]
expect = { verdict = "pass" }

[config.tenants]
"a.b" = 1
'''


def test_every_form_of_key() -> None:
    assert locate(TEXT, "target") == (2, 1)
    assert locate(TEXT, "links[0][1]") == (4, 15)
    assert locate(TEXT, "cases[0]") == (11, 1)
    assert locate(TEXT, "cases[0].expect.stack[1]") == (13, 20)
    assert locate(TEXT, 'cases[0].expect.memory."kvs.index".100') == (14, 35)
    assert locate(TEXT, "cases[0].expect.memory.hits[1]") == (14, 57)
    assert locate(TEXT, "cases[1].name") == (17, 1)
    assert locate(TEXT, "cases[1].packets[1].expect.verdict") == (23, 12)
    assert locate(TEXT, 'config.tenants."a.b"') == (26, 1)


def test_strings_and_comments_are_not_keys() -> None:
    found = positions(TEXT)
    assert ("fake",) not in found and ("cases", 2) not in found
    assert locate(TEXT, "cases[1].packets[0].stack") == (20, 1)


def test_a_missing_key_gives_the_line_of_its_table() -> None:
    assert locate(TEXT, "cases[1].packets[0].dpf") == (19, 1)
    assert locate(TEXT, "nowhere") is None
    assert locate(TEXT, "the top level") is None


def test_key_paths_as_the_scenario_reader_spells_them() -> None:
    assert parse_key_path('cases[2].expect.memory."counter.counters@1"') == (
        "cases", 2, "expect", "memory", "counter.counters@1",
    )  # fmt: skip
    assert parse_key_path("cases") == ("cases",)
    assert parse_key_path("installing the code of switch sw") is None


# -- the property -------------------------------------------------------------------------------

KEYS = st.sampled_from(["a", "b", "stack", "kvs.index", "x y", "n1", "memory"])
Value = int | list[int]
Table = dict[str, Value]


def _key(name: str) -> str:
    return name if name.replace("_", "").isalnum() else json.dumps(name)


def write(doc: dict[str, object], styles: list[int]) -> tuple[str, dict[str, int]]:
    """TOML text for ``doc`` (values: ints, int lists, tables of ints, arrays of tables of
    ints), each table written inline, as dotted keys or under a header by ``styles``; and
    the line each key path was written on."""
    lines: list[str] = []
    where: dict[str, int] = {}
    arrays: list[tuple[str, list[Table]]] = []
    headers: list[tuple[str, Table]] = []
    for index, (name, value) in enumerate(doc.items()):
        path = key_path("", name)
        style = styles[index % len(styles)]
        if isinstance(value, list) and value and isinstance(value[0], dict):
            arrays.append((name, value))
        elif isinstance(value, dict) and style == 2:
            headers.append((name, value))
        elif isinstance(value, dict) and style == 1:
            for key, item in value.items():
                where[key_path(path, key)] = len(lines) + 1
                lines.append(f"{_key(name)}.{_key(key)} = {json.dumps(item)}")
        else:
            where[path] = len(lines) + 1
            if isinstance(value, dict):
                parts = [f"{_key(key)} = {json.dumps(item)}" for key, item in value.items()]
                lines.append(f"{_key(name)} = {{ {', '.join(parts)} }}")
                for key in value:
                    where[key_path(path, key)] = len(lines)
            else:
                lines.append(f"{_key(name)} = {json.dumps(value)}")
    for name, table in headers:
        where[key_path("", name)] = len(lines) + 1
        lines.append(f"[{_key(name)}]")
        for key, item in table.items():
            where[key_path(key_path("", name), key)] = len(lines) + 1
            lines.append(f"{_key(key)} = {json.dumps(item)}")
    for name, tables in arrays:
        for number, table in enumerate(tables):
            path = f"{key_path('', name)}[{number}]"
            where[path] = len(lines) + 1
            lines.append(f"[[{_key(name)}]]")
            for key, item in table.items():
                where[key_path(path, key)] = len(lines) + 1
                lines.append(f"{_key(key)} = {json.dumps(item)}  # [not] = a key")
    return "\n".join(lines) + "\n", where


SCALARS = st.one_of(st.integers(0, 2**32 - 1), st.lists(st.integers(0, 9), max_size=3))
TABLES = st.dictionaries(KEYS, st.integers(0, 99), min_size=1, max_size=3)
DOCS = st.dictionaries(
    KEYS,
    st.one_of(SCALARS, TABLES, st.lists(TABLES, min_size=1, max_size=3)),
    min_size=1,
    max_size=5,
)


@given(DOCS, st.lists(st.integers(0, 2), min_size=1, max_size=5))
def test_every_key_is_found_on_its_line(doc: dict[str, object], styles: list[int]) -> None:
    text, where = write(doc, styles)
    tomllib.loads(text)  # the writer writes TOML
    for path, line in where.items():
        found = locate(text, path)
        assert found is not None and found[0] == line, (path, text)
