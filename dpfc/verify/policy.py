"""What an operator allows a tenant's code to do: the policy file of ``dpfc verify``.

Contract: :func:`read_policy` parses a policy (TOML, docs/verify.md) into a :class:`Policy`,
or raises a :class:`~dpfc.diagnostics.DiagnosticError` (DPF8001) that names the file, the
key and what is wrong: unknown keys, wrong types, unknown instruction classes, metadata
fields or steering actions of the profile, empty or reversed ranges. Every rule is
optional; a policy without a rule allows what the rule would limit.

* ``instructions``: the instruction classes the code may use (:data:`CLASSES`);
* ``metadata``: the LOAD_MD fields it may read (the profile's names);
* ``steering``: the steering actions it may take; ``[steering_values]``: for an action, the
  ranges (inclusive pairs) its value must lie in (``set_port = [[1, 8]]``);
* ``chains``: whether its epilogs may set the DPF pointer (NEXT_PC); ``chain_loops``
  (images): whether the chains of an image may form a loop;
* ``max_stack_growth``: the most words a pass may leave on the stack beyond those it read;
* ``memory_words``: the most words of lane memory per (EU, lane);
* ``code_slots``: the most code-memory slots its in-switch bundles take.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field

from dpfc.catalog import codes
from dpfc.diagnostics import Diagnostic, DiagnosticError
from dpfc.target import TargetProfile

# The instruction classes a policy names, and what each covers (docs/verify.md).
CLASSES = {
    "alu": "the lane ALU operations (ADD .. MAX)",
    "hash": "HASH selectors (the lane's CRC)",
    "const": "LOAD_CONST selectors",
    "load": "LOAD",
    "store": "STORE",
    "atomic": "the fetch-and-ops (FAADD, FAAND, FAOR, FAMAX, FAMIN)",
    "rand": "RAND prolog loads",
    "metadata": "LOAD_MD prolog loads",
}
KEYS = frozenset(
    {
        "name",
        "instructions",
        "metadata",
        "steering",
        "steering_values",
        "chains",
        "chain_loops",
        "max_stack_growth",
        "memory_words",
        "code_slots",
    }
)


@dataclass(frozen=True)
class Policy:
    """The rules of one policy file (module docstring); None: no limit."""

    name: str = "policy"
    instructions: frozenset[str] | None = None
    metadata: frozenset[str] | None = None
    steering: frozenset[str] | None = None
    steering_values: dict[str, tuple[tuple[int, int], ...]] = field(default_factory=dict)
    chains: bool = True
    chain_loops: bool = True
    max_stack_growth: int | None = None
    memory_words: int | None = None
    code_slots: int | None = None


def _fail(filename: str, message: str) -> DiagnosticError:
    return DiagnosticError(Diagnostic(codes.POLICY_MALFORMED, f"{filename}: {message}"))


def read_policy(text: str, filename: str, profile: TargetProfile) -> Policy:
    """The policy in ``text`` (read from ``filename``), its names checked against ``profile``."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise _fail(filename, f"not TOML: {exc}") from None
    unknown = sorted(set(data) - KEYS)
    if unknown:
        raise _fail(filename, f"unknown key `{unknown[0]}` (known: {', '.join(sorted(KEYS))})")

    def names(key: str, known: set[str]) -> frozenset[str] | None:
        value = data.get(key)
        if value is None:
            return None
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise _fail(filename, f"`{key}` must be a list of names")
        wrong = [v for v in value if v not in known]
        if wrong:
            raise _fail(
                filename, f"`{key}`: unknown `{wrong[0]}` (known: {', '.join(sorted(known))})"
            )
        return frozenset(value)

    def count(key: str) -> int | None:
        value = data.get(key)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise _fail(filename, f"`{key}` must be a whole number of at least 0")
        return value

    actions = {s.name for s in profile.steering}
    ranges: dict[str, tuple[tuple[int, int], ...]] = {}
    given = data.get("steering_values", {})
    if not isinstance(given, dict):
        raise _fail(filename, "`steering_values` must be a table: action = [[low, high], ...]")
    for action, pairs in given.items():
        if action not in actions:
            raise _fail(filename, f"`steering_values`: unknown action `{action}`")
        ok = isinstance(pairs, list) and all(
            isinstance(p, list) and len(p) == 2 and all(type(v) is int for v in p) for p in pairs
        )
        if not ok or not pairs:
            raise _fail(filename, f"`steering_values.{action}` must be a list of [low, high] pairs")
        if any(not 0 <= low <= high <= 0xFFFF_FFFF for low, high in pairs):
            raise _fail(filename, f"`steering_values.{action}`: each range is 0 <= low <= high")
        ranges[action] = tuple((low, high) for low, high in pairs)
    chains, loops = data.get("chains", True), data.get("chain_loops", True)
    for key, flag in (("chains", chains), ("chain_loops", loops)):
        if not isinstance(flag, bool):
            raise _fail(filename, f"`{key}` must be true or false")
    name = data.get("name", filename)
    if not isinstance(name, str):
        raise _fail(filename, "`name` must be a string")
    return Policy(
        name=name,
        instructions=names("instructions", set(CLASSES)),
        metadata=names("metadata", {m.name for m in profile.metadata}),
        steering=names("steering", actions),
        steering_values=ranges,
        chains=chains,
        chain_loops=loops,
        max_stack_growth=count("max_stack_growth"),
        memory_words=count("memory_words"),
        code_slots=count("code_slots"),
    )


__all__ = ["CLASSES", "Policy", "read_policy"]
