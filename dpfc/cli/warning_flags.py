"""``-W SPEC``: what the commands that check DPF-language source do with its warnings.

Like a C compiler's flags, each ``-W`` takes one SPEC (``-Werror`` is ``-W error``); they
apply in the order given, a later one winning over an earlier one:

=====================  ===============================================================
``all`` / ``none``     show every warning (the default) / no warning at all
``W`` / ``no-W``       show / hide the warning W
``error``              every warning shown is an error (exit 1, nothing written)
``no-error``           warnings are warnings again
``error=W``            W is an error (and shown); ``no-error=W``: W stays a warning
=====================  ===============================================================

W is a warning's code (``DPF5403``, ``5403``) or its name (``unused-local``): the
catalogue's ``warning`` field (:func:`dpfc.catalog.warning_names`) lists the warnings ``-W``
controls. A SPEC naming no warning is a usage error (DPF0003) with "did you mean"; a code
that is an error, not a warning, says so. The option keeps the resulting
:class:`~dpfc.diagnostics.WarningPolicy` in the root context, where
:func:`dpfc.cli.errors.report_warnings` finds it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import click

from dpfc.catalog import load_catalog, normalize_code, warning_names
from dpfc.cli.conventions import BadValue, did_you_mean
from dpfc.cli.errors import POLICY_KEY
from dpfc.diagnostics import WarningPolicy

F = TypeVar("F", bound=Callable[..., Any])
GLOBAL_SPECS = ("all", "none", "error", "no-error")
HELP = (
    "warnings: -Werror makes them errors, -Wno-W hides W, -Werror=W makes W an error, "
    "-Wnone hides them all (W: a code such as DPF5403 or a name such as unused-local; "
    "repeatable, the last wins)"
)


class SpecError(Exception):
    """A ``-W`` SPEC that names no warning; ``hint`` suggests one."""

    def __init__(self, message: str, hint: str | None) -> None:
        super().__init__(message)
        self.hint = hint


def _warning(word: str, names: dict[str, str]) -> str:
    """The code of the warning ``word`` names (a code or a name)."""
    if word in names:
        return names[word]
    code = normalize_code(word)
    if code is not None and code in names.values():
        return code
    if code is not None and code in load_catalog():
        raise SpecError(
            f"{code} is an error, not a warning: -W turns warnings on and off",
            f"the warnings: {', '.join(names)}",
        )
    choices = [*names, *GLOBAL_SPECS]
    raise SpecError(
        f"`{word}` is not a warning",
        did_you_mean(word, choices) or f"the warnings: {', '.join(names)}",
    )


def parse_policy(specs: Sequence[str]) -> WarningPolicy:
    """The policy that ``-W`` SPECs, in order, describe (see the module docstring)."""
    names = warning_names()
    known = sorted(set(names.values()))
    shown = dict.fromkeys(known, True)
    errors = dict.fromkeys(known, False)
    for spec in specs:
        text = spec.strip()
        if text in ("all", "none"):
            shown = dict.fromkeys(known, text == "all")
            continue
        if text in ("error", "no-error"):
            errors = dict.fromkeys(known, text == "error")
            continue
        negated = text.startswith("no-")
        body = text.removeprefix("no-")
        if body.startswith("error="):
            code = _warning(body.removeprefix("error="), names)
            errors[code] = not negated
            shown[code] = shown[code] or not negated
            continue
        shown[_warning(body, names)] = not negated
    return WarningPolicy(
        frozenset(c for c in known if not shown[c]),
        frozenset(c for c in known if errors[c] and shown[c]),
    )


def _store(ctx: click.Context, param: click.Parameter, value: tuple[str, ...]) -> None:
    try:
        policy = parse_policy(value)
    except SpecError as exc:
        raise BadValue(str(exc), ctx, param, exc.hint) from None
    root = ctx.find_root()
    if root.obj is None:
        root.obj = {}
    root.obj[POLICY_KEY] = policy


def _complete(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[str]:
    """Shell completion of a SPEC: the global ones, then each warning's name, ``no-``
    name and ``error=`` name."""
    names = list(warning_names())
    specs = [
        *GLOBAL_SPECS,
        *names,
        *(f"no-{n}" for n in names),
        *(f"error={n}" for n in names),
    ]
    return [spec for spec in specs if spec.startswith(incomplete)]


def warning_option(func: F) -> F:
    """The ``-W SPEC`` option (repeatable) of a command that checks DPF-language source."""
    option = click.option(
        "-W",
        "--warn",
        "warn",
        multiple=True,
        metavar="SPEC",
        expose_value=False,
        callback=_store,
        shell_complete=_complete,
        help=HELP,
    )
    return option(func)
