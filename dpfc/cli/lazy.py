"""Subcommands imported when they run: ``dpfc --help`` and ``dpfc --version`` load none.

Each command module imports the phases it drives (the scheduler and Z3, the packet layers
and scapy, the JIT and llvmlite), about a second of imports together. The ``dpfc`` group
therefore names its commands as :class:`LazyCommand` entries — the name, where the command
is (``module:attribute``) and the one-line summary ``dpfc --help`` lists — and imports a
command's module only when the command is resolved: to run it, to show its own help, or to
complete its options. Listing the commands (``--help``, completing a command name) uses the
summaries alone. ``tests/test_cli_startup.py`` checks that each summary is what the
command's own help would give, so the listing cannot drift from the commands.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from dataclasses import dataclass

import click

SHORT_HELP = 45  # the width click gives a command's summary when completing its name


@dataclass(frozen=True)
class LazyCommand:
    name: str
    target: str  # "module:attribute"
    summary: str  # the first sentence of the command's help

    def load(self) -> click.Command:
        module, _, attribute = self.target.partition(":")
        command = getattr(importlib.import_module(module), attribute)
        if not isinstance(command, click.Command):
            raise TypeError(f"{self.target} is not a click command")
        return command

    def short_help(self, limit: int) -> str:
        """The summary cut to ``limit`` characters as click cuts a command's help (by a
        command that has only the summary as its help)."""
        return click.Command(self.name, help=self.summary).get_short_help_str(limit)


class LazyCommands:
    """The entries of a group, by name."""

    def __init__(self, entries: Sequence[LazyCommand]) -> None:
        self.entries = {entry.name: entry for entry in entries}

    def names(self) -> list[str]:
        return sorted(self.entries)

    def get(self, name: str) -> LazyCommand | None:
        return self.entries.get(name)


__all__ = ["SHORT_HELP", "LazyCommand", "LazyCommands"]
