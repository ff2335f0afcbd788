"""Options several ``dpfc`` commands share, each stated once with one help text.

* ``-q, --quiet`` (every command, added by :class:`~dpfc.cli.conventions.SuggestingGroup`
  like ``--diagnostics-format``): print nothing but diagnostics and the output the command
  was asked for — no resource or size report, summary, step list, progress line, ``ok``
  line or ``wrote FILE`` line. Commands read it with :func:`dpfc.cli.errors.quiet`. What
  ``-q`` once meant on single commands has its own name: ``dpfc compile --no-progress``
  (only the progress line), ``dpfc deploy --no-steps`` (only the summary).
* ``--cache/--no-cache`` (``dpfc compile``, ``dpfc run``): the schedule cache.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

F = TypeVar("F", bound=Callable[..., Any])
QUIET_OPTIONS = ("-q", "--quiet")
QUIET_HELP = (
    "print nothing but diagnostics and the output asked for (no report, summary, progress, "
    "ok or wrote lines)"
)


def _set_quiet(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    if value:
        root = ctx.find_root()
        if root.obj is None:
            root.obj = {}
        root.obj["quiet"] = True


def quiet_option() -> click.Option:
    """``-q, --quiet`` as one command's option (eager, kept in the root context's ``obj``
    as the diagnostics format is)."""
    return click.Option(
        list(QUIET_OPTIONS),
        is_flag=True,
        default=False,
        is_eager=True,
        expose_value=False,
        callback=_set_quiet,
        help=QUIET_HELP,
    )


def cache_option() -> Callable[[F], F]:
    """``--cache/--no-cache``: reuse the schedules of unchanged DPFs (``dpfc compile``, and
    ``dpfc run`` for the ``.dpf`` files a scenario names)."""
    return click.option(
        "--cache/--no-cache",
        "use_cache",
        default=True,
        help="reuse schedules of unchanged DPFs ($DPFC_CACHE_DIR, default "
        "~/.cache/dpfc/schedules; safe to delete)",
    )


__all__ = ["QUIET_HELP", "QUIET_OPTIONS", "cache_option", "quiet_option"]
