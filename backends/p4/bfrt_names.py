"""The names a compiled TNA program answers to in BF-RT, and the check of a script against them.

Contract: :func:`read_bfrt_json` reads the BF-RT schema the Tofino compiler writes for a
program (``p4c-barefoot --bf-rt-schema``, :func:`~dpfc.backends.p4.barefoot.compile_tna`
writes it as ``bfrt.json`` beside the logs) into :class:`TableNames` per table
(``pipe.SwitchVMIngress.permissions``): its keys with their match kinds, its actions with
their parameters, and a register's data fields. :func:`check_script` returns one line per
call of a bfrt_python script (as :func:`~dpfc.backends.p4.bfrt.bfrt_script` writes them)
that names a table, action, key, parameter or data field the program lacks, or leaves a
key or parameter out; an empty list says every call is one the switch accepts by name.
Calls to the packet replication engine (``bfrt.pre``) are fixed BF-RT tables, not the
program's, and are not checked.

Why: the script's names come from dpfc's own model of the program; the compiler's schema is
what the switch will answer to. The two agree only if this check says so.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

CALL = re.compile(
    r"^bfrt\.(?P<program>\w+)\.(?P<table>pipe(?:\.\w+)+)\.(?P<method>\w+)\((?P<args>.*)\)$"
)
METHODS = ("add_with_", "mod_with_", "set_default_with_")


@dataclass(frozen=True)
class TableNames:
    keys: dict[str, str]  # key name -> BF-RT match type ("Exact", "Ternary", ...)
    actions: dict[str, tuple[str, ...]]  # action's short name -> its parameters
    data: tuple[str, ...]  # a register's data fields, short names (``f1``)

    def key_arguments(self) -> set[str]:
        """The keyword arguments a key can take: each key, a ternary key's mask, the
        priority (BF-RT's ``$MATCH_PRIORITY`` is ``MATCH_PRIORITY`` in bfrt_python). The
        SwitchVM programs have exact and ternary keys only; an argument of another match
        kind (an LPM prefix length) is reported unknown rather than guessed."""
        out: set[str] = set()
        for name, kind in self.keys.items():
            out.add(name.lstrip("$"))
            if kind == "Ternary":
                out.add(f"{name}_mask")
        return out


def read_bfrt_json(path: Path) -> dict[str, TableNames]:
    schema: dict[str, Any] = json.loads(path.read_text())
    tables: dict[str, TableNames] = {}
    for table in schema.get("tables", []):
        keys = {k["name"]: k.get("match_type", "Exact") for k in table.get("key", [])}
        actions = {
            spec["name"].rsplit(".", 1)[-1]: tuple(p["name"] for p in spec.get("data", []))
            for spec in table.get("action_specs", [])
        }
        data = tuple(
            field["singleton"]["name"].rsplit(".", 1)[-1]
            for field in table.get("data", [])
            if "singleton" in field
        )
        tables[table["name"]] = TableNames(keys, actions, data)
    return tables


def _arguments(text: str) -> dict[str, str]:
    pairs = [part.split("=", 1) for part in text.split(", ") if part]
    return {name: value for name, value in pairs}


def _check_call(table: TableNames, method: str, given: set[str]) -> list[str]:
    keys = {name.lstrip("$") for name in table.keys} - {"MATCH_PRIORITY"}
    if method == "mod" and "REGISTER_INDEX" in keys:
        wanted = {"REGISTER_INDEX", *table.data}
        return (
            [f"{sorted(given ^ wanted)} do not match {sorted(wanted)}"] if given != wanted else []
        )
    if method == "delete":
        missing, unknown = keys - given, given - table.key_arguments()
    else:
        prefix = next((p for p in METHODS if method.startswith(p)), None)
        if prefix is None:
            return [f"no method `{method}`"]
        action = method[len(prefix) :]
        if action not in table.actions:
            return [f"no action `{action}` (has {', '.join(sorted(table.actions))})"]
        params = set(table.actions[action])
        allowed = params if prefix == "set_default_with_" else params | table.key_arguments()
        required = params if prefix == "set_default_with_" else params | keys
        missing, unknown = required - given, given - allowed
    return [f"unknown `{name}`" for name in sorted(unknown)] + [
        f"missing `{name}`" for name in sorted(missing)
    ]


def check_script(script: str, tables: dict[str, TableNames], program: str) -> list[str]:
    """One line per call of ``script`` the program of ``tables`` would not accept by name."""
    problems: list[str] = []
    for number, line in enumerate(script.splitlines(), 1):
        if not line.startswith(f"bfrt.{program}."):
            continue
        call = CALL.match(line)
        if call is None:
            problems.append(f"line {number}: not a table call")
            continue
        table = tables.get(call["table"])
        if table is None:
            problems.append(f"line {number}: no table `{call['table']}`")
            continue
        given = set(_arguments(call["args"]))
        problems += [
            f"line {number}: {call['table']}: {p}"
            for p in _check_call(table, call["method"], given)
        ]
    return problems
