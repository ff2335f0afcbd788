"""A stage of the model: its tables and units, and what applying it runs.

Contract: :class:`Part` collects the declarations (units, actions, tables) and the apply
statements of one piece of the pipeline; :func:`table` declares a table placed in a given
stage (``@stage``: the compiler honours the model's layout, or warns) and returns the
statement that applies it. :func:`guarded` runs statements only while no EU has halted or faulted.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from dpfc.backends.p4.lang import Decl, Do, Expr, If, Stmt, Table, action, n

meta, hdr = n("meta"), n("hdr")
KEY_KINDS = ("exact", "ternary", "lpm")


@dataclass
class Part:
    """Declarations and apply statements of one piece of the pipeline."""

    decls: list[Decl] = field(default_factory=list)
    apply: list[Stmt] = field(default_factory=list)

    def add(self, other: Part) -> None:
        self.decls += other.decls
        self.apply += other.apply

    def action(self, name: str, params: Sequence[str], body: Sequence[Stmt]) -> str:
        self.decls.append(action(name, params, body))
        return name

    def table(
        self,
        name: str,
        stage: int,
        keys: Sequence[tuple[Expr, str]],
        actions: Sequence[str],
        default: str,
        size: int,
        comment: str = "",
        annotations: Sequence[str] = (),
    ) -> None:
        assert all(kind in KEY_KINDS for _, kind in keys)
        self.decls.append(
            Table(
                name,
                keys,
                actions,
                default,
                size,
                comment,
                key_names=[key_name(key) for key, _ in keys],
                annotations=[f"@stage({stage})", *annotations],
            )
        )
        self.apply.append(Do(n(f"{name}.apply").call()))

    def always(self, name: str, stage: int, body: Sequence[Stmt]) -> None:
        """A keyless table whose one action runs ``body`` (a unit a stage runs every pass)."""
        self.decls.append(action(name, [], body))
        self.table(f"{name}_t", stage, [], [name], f"{name}()", 1)


def key_name(key: Expr) -> str:
    """The control plane's name of a key, an identifier as BF-RT's Python takes it: a
    metadata field's name (``meta.pc0``: ``pc0``), ``<header>_<field>`` for a header field,
    ``<header>_valid`` for a header's validity, ``selected<j>`` for the j-th selected copy
    (a push header's word), ``selected<j>_<hi>_<lo>`` for its bits hi..lo."""
    text = key.p4()
    if text.endswith(".isValid()"):
        return text.removesuffix(".isValid()").rsplit(".", 1)[-1] + "_valid"
    found = re.fullmatch(r"hdr\.push\[(\d+)\]\.w(?:\[(\d+):(\d+)\])?", text)
    if found is not None:
        j, hi, lo = found.groups()
        return f"selected{j}" if hi is None else f"selected{j}_{hi}_{lo}"
    parts = text.split(".")
    if parts[0] == "hdr" and len(parts) == 3:
        return f"{parts[1]}_{parts[2]}"
    return parts[-1]


def guarded(stmts: Sequence[Stmt], lanes: int) -> list[Stmt]:
    """``stmts`` while no EU has halted (HALT skips the remaining EUs) and no lane has
    faulted (a fault ends the pass: no later EU runs, and its ALU tables cannot clear the
    lanes' fault flags)."""
    running = meta.dot("halt").eq(0)
    for i in range(lanes):
        running = running.land(meta.dot(f"fault{i}").eq(0))
    return [If(running, list(stmts))] if stmts else []
