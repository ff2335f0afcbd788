"""The stateful and hashing units the stage-structured program uses, in TNA's idiom.

Contract: each function returns the declarations of one unit and the expression or
statement that uses it. Every use has its own unit (a Tofino hash or register unit serves
one stage): a CRC ``Hash`` per EU and lane for HASH (the lane's CRC of the profile),
an identity ``Hash`` per in-packet immediate (it moves the packet's word into a 32-bit
field of the EU's group without a PHV move), an ``XOR16`` ``Hash`` per lane memory (the
register index, docs/p4.md), one ``Register`` per lane memory with its four
``RegisterAction`` s (:data:`REGISTER_ACTIONS`: Tofino allows four per register), and the
``Random`` words of the prolog.
"""

from __future__ import annotations

from collections.abc import Sequence

from dpfc.backends.p4.lang import (
    Assign,
    Decl,
    Expr,
    Function,
    If,
    Implementation,
    Instance,
    Lit,
    Stmt,
    Tuple,
    mux,
    n,
)
from dpfc.isa import MemOp
from dpfc.target import HashFunction

WORD = "bit<32>"
INDEX = "bit<16>"

# The register actions of a lane memory and the opcodes each serves (the op decides inside
# the action where two share one: Tofino allows four RegisterActions per register).
REGISTER_ACTIONS: tuple[tuple[str, tuple[MemOp, ...]], ...] = (
    ("store", (MemOp.STORE,)),
    ("add", (MemOp.LOAD, MemOp.FAADD)),
    ("logic", (MemOp.FAAND, MemOp.FAOR)),
    ("order", (MemOp.FAMAX, MemOp.FAMIN)),
)


def crc_unit(name: str, crc: HashFunction) -> list[Decl]:
    """A 32-bit CRC hash unit computing ``crc`` (reflection as the profile says)."""
    if crc.reflect_in != crc.reflect_out:
        raise ValueError(
            f"hash `{crc.name}` reflects input and output differently; TNA's "
            "CRCPolynomial has one `reversed` flag for both"
        )
    flag = n("true" if crc.reflect_in else "false")
    poly = [Lit(crc.polynomial, 32), flag, n("false"), n("false")]
    poly += [Lit(crc.init, 32), Lit(crc.xor_out, 32)]
    return [
        Instance(f"CRCPolynomial<{WORD}>", poly, f"{name}_poly", f"HASH: {crc.name}"),
        Instance(f"Hash<{WORD}>", [n("HashAlgorithm_t.CUSTOM"), n(f"{name}_poly")], name),
    ]


def identity_unit(name: str, width: int = 32) -> list[Decl]:
    return [Instance(f"Hash<bit<{width}>>", [n("HashAlgorithm_t.IDENTITY")], name)]


def xor16_unit(name: str) -> list[Decl]:
    return [Instance(f"Hash<{INDEX}>", [n("HashAlgorithm_t.XOR16")], name)]


def hash_get(unit: str, *fields: Expr) -> Expr:
    return n(f"{unit}.get").call(Tuple(tuple(fields)))


def lane_memory(name: str, size: int, op: Expr, data: Expr) -> list[Decl]:
    """The register ``name`` and its :data:`REGISTER_ACTIONS` (``name_store`` ...): each
    returns the word as it was and writes what its opcode makes of it and ``data``."""
    value, ret = n("value"), n("result")

    def body(writes: Sequence[Stmt]) -> Function:
        params = [f"inout {WORD} value", f"out {WORD} result"]
        return Function("void", "apply", params, [Assign(ret, value), *writes])

    bodies: dict[str, list[Stmt]] = {
        "store": [Assign(value, data)],
        "add": [If(op.eq(int(MemOp.FAADD)), [Assign(value, value + data)])],
        "logic": [
            If(
                op.eq(int(MemOp.FAAND)),
                [Assign(value, value & data)],
                [Assign(value, value | data)],
            )
        ],
        "order": [
            Assign(value, mux(op.eq(int(MemOp.FAMAX)), _max(value, data), _min(value, data)))
        ],
    }
    out: list[Decl] = [Instance(f"Register<{WORD}, {INDEX}>", [Lit(size, 32)], name)]
    for action, _ops in REGISTER_ACTIONS:
        out.append(
            Implementation(
                f"RegisterAction<{WORD}, {INDEX}, {WORD}>",
                [n(name)],
                f"{name}_{action}",
                [body(bodies[action])],
            )
        )
    return out


def _max(a: Expr, b: Expr) -> Expr:
    return n("max").call(a, b)


def _min(a: Expr, b: Expr) -> Expr:
    return n("min").call(a, b)


def execute(memory: str, action: str, index: Expr) -> Expr:
    return n(f"{memory}_{action}.execute").call(index)


def random_unit(name: str) -> list[Decl]:
    return [Instance(f"Random<{WORD}>", [], name)]


def random_get(unit: str) -> Expr:
    return n(f"{unit}.get").call()
