"""The named diagnostic codes (dpfc/catalog/codes.py) and the catalogue are one-to-one.

* Every constant's code has a catalogue entry, every entry exactly one constant, and no
  two constants share a code: a code has one name, and the name one code.
* The names are upper snake case and the values ``DPFxxxx``.
* The source names codes by their constants: no string literal that is a code
  (``"DPF5101"``) outside the codes module. Codes inside text (a help message's example)
  are text.
  That codes named by constants are used at all is tests/test_explain.py's check.
"""

from __future__ import annotations

import ast
import re

from dpfc.catalog import codes, load_catalog
from tests.modules import modules, syntax_tree

NAME = re.compile(r"^[A-Z][A-Z0-9]*(_[A-Z0-9]+)*$")
VALUE = re.compile(r"^DPF\d{4}$")
# Folders whose source still writes codes as string literals (being restructured apart).


def named_codes() -> dict[str, str]:
    """Every constant of the codes module: name -> code."""
    return {
        name: value
        for name, value in vars(codes).items()
        if not name.startswith("_") and name.isupper() and isinstance(value, str)
    }


NAMED = named_codes()


def test_names_and_values_are_well_formed() -> None:
    assert len(NAMED) >= 270
    assert [n for n in NAMED if not NAME.match(n)] == []
    assert [v for v in NAMED.values() if not VALUE.match(v)] == []


def test_every_constant_has_a_catalogue_entry() -> None:
    catalog = load_catalog()
    missing = sorted(f"{name} = {code}" for name, code in NAMED.items() if code not in catalog)
    assert missing == [], "constants without a `dpfc explain` entry"


def test_every_entry_has_exactly_one_constant() -> None:
    by_code: dict[str, list[str]] = {}
    for name, code in NAMED.items():
        by_code.setdefault(code, []).append(name)
    assert sorted(set(load_catalog()) - set(by_code)) == [], "entries without a constant"
    shared = {code: names for code, names in by_code.items() if len(names) > 1}
    assert shared == {}, "codes with more than one constant"


def test_the_source_names_codes_by_their_constants() -> None:
    raw = []
    for module in modules():
        shown = module.shown
        if shown == "dpfc/catalog/codes.py":
            continue
        raw += [
            f"{shown}:{node.lineno}: {node.value}"
            for node in ast.walk(syntax_tree(module))
            if isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and VALUE.match(node.value)
        ]
    assert raw == [], "raw code literals (write `codes.NAME`, dpfc/catalog/codes.py)"
