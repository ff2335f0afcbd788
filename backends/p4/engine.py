"""The state of one DPF run in the P4 program's metadata, as the stages name it.

Contract: :func:`engine_meta` declares the engine's metadata fields: the PC and the run's
flags (running, halted, fault), the stack cursor, the memory lane's address and word, the
branch operands, the RAND word, the HASH inputs, and every register in four views —
``r`` at the EU's entry, ``s`` after selection, ``t`` after the ALU and memory writes,
``v`` as the branch sees it when ``profile.branch_operands`` is LOADED. The other
functions name these fields and those of the bundle being run: :func:`code_field`
(``meta.c_*``, the prolog or EU bundle's word), :func:`epilog_field` (``meta.e_*``, the
epilog's), :func:`register` and :func:`pick_register` (a register by name or by its
run-time code). :mod:`.execute`, :mod:`.lane_memory` and :mod:`.steering` read the run
through these names only.
"""

from __future__ import annotations

from dpfc.backends.p4.lang import Expr, n
from dpfc.backends.p4.layout import Layout

meta = n("meta")


def code_field(field: str) -> Expr:
    """A field of the prolog or EU bundle being run (its code-memory word's, ``meta.c_*``)."""
    return meta.dot(f"c_{field}")


def epilog_field(field: str) -> Expr:
    """A field of the epilog bundle decoded at the end of the run (``meta.e_*``)."""
    return meta.dot(f"e_{field}")


def register(view: str, name: str) -> Expr:
    """Register ``name`` as view ``view`` (``r``, ``s``, ``t`` or ``v``) holds it."""
    return meta.dot(f"{view}_{name}")


def pick_register(layout: Layout, code: Expr, view: str) -> Expr:
    """The register a register code names, as view ``view`` holds it (the program's
    ``pick`` function, :func:`~.decode.helpers`)."""
    return n("pick").call(code, *(register(view, r) for r in layout.registers))


def engine_meta(layout: Layout) -> list[tuple[str, str]]:
    """The engine's fields of the metadata struct."""
    fields = [
        ("pc", "bit<16>"),
        ("running", "bit<1>"),
        ("halted", "bit<1>"),
        ("fault", "bit<1>"),
        ("cursor", "bit<8>"),
        ("md_denied", "bit<1>"),
        ("vaddr", "bit<32>"),
        ("phys", "bit<32>"),
        ("mapped", "bit<1>"),
        ("old", "bit<32>"),
        ("taken", "bit<1>"),
        ("x", "bit<32>"),
        ("y", "bit<32>"),
        ("rng", "bit<32>"),
    ]
    for prefix in ("r", "s", "t", "v"):  # entry, selected, after stage 2, branch view
        fields += [(f"{prefix}_{r}", "bit<32>") for r in layout.registers]
    fields += [(f"hash_in_{i}", "bit<32>") for i in range(layout.lanes)]
    return fields
