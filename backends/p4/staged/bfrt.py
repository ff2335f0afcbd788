"""The stage-structured program's entries as a BF-RT Python script.

Contract: :func:`bfrt_calls` renders :class:`~.entries.Entry` values as bfrt_python calls
(``bfrt.<program>.pipe.Ingress.<table>.add_with_<action>(key=.., key_mask=..,
MATCH_PRIORITY=.., param=..)``), one line each, in order: the form
:func:`dpfc.backends.p4.bfrt_names.check_script` checks against the compiler's
``bfrt.json``. Exact keys take a value, ternary keys a value and a mask; a ternary table's
entries carry their priority (lower first, as :mod:`.entries` orders them).
"""

from __future__ import annotations

from collections.abc import Sequence

from .entries import Entry, Prefix, Ternary

CONTROL = "Ingress"


def bfrt_calls(entries: Sequence[Entry], program: str) -> list[str]:
    out = []
    for entry in entries:
        args: list[str] = []
        ternary = False
        for key, value in entry.keys:
            if isinstance(value, Ternary):
                ternary = True
                args += [f"{key}={value.value:#x}", f"{key}_mask={value.mask:#x}"]
            elif isinstance(value, Prefix):
                args += [f"{key}={value.value:#x}", f"{key}_p_length={value.length}"]
            else:
                args.append(f"{key}={value:#x}")
        if ternary:
            args.append(f"MATCH_PRIORITY={entry.priority}")
        args += [f"{name}={value:#x}" for name, value in entry.params]
        table = f"bfrt.{program}.pipe.{CONTROL}.{entry.table}"
        out.append(f"{table}.add_with_{entry.action}({', '.join(args)})")
    return out
