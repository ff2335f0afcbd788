"""The conventions every ``dpfc`` command follows, enforced in one place.

* **Exit codes.** 0 success; 1 any user error, usage errors included (click's own
  ``UsageError``, ``BadParameter`` and ``NoSuchOption`` would exit 2); 2 an internal
  compiler error only (:func:`dpfc.cli.errors.handle_errors`). :class:`DpfcGroup` runs click
  in non-standalone mode and turns its exceptions into diagnostics.
* **Diagnostics.** A usage error is a :class:`~dpfc.diagnostics.Diagnostic` with code
  ``DPF0003`` rendered like every other one, as JSON with ``--diagnostics-format json``.
  That option is accepted before the subcommand and on every (sub)command: :class:`DpfcGroup`
  adds it to each command it is given, and reads it from the raw arguments before click
  parses them, so even an unknown option is reported in the format asked for.
* **Did you mean.** A value that is not one of a fixed set (``--emit objj``, ``--arch
  v1modl``, ``--target tofno1``, a misspelt subcommand or option) names the closest
  candidate (:func:`did_you_mean`) in the diagnostic's hint.
* **``-q, --quiet``** means one thing on every command, which gets it like
  ``--diagnostics-format``: nothing but diagnostics and the output asked for
  (:mod:`.options`).
* **``--version``** names dpfc and the libraries its output depends on.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

import click
from click.shell_completion import CompletionItem

from dpfc import __version__
from dpfc.catalog import codes
from dpfc.cli.lazy import SHORT_HELP, LazyCommand, LazyCommands
from dpfc.cli.options import QUIET_OPTIONS, quiet_option
from dpfc.diagnostics import Diagnostic, render_all
from dpfc.diagnostics import did_you_mean as suggest
from dpfc.target import BUILTIN_PROFILES

FORMATS = ("text", "json")
FORMAT_OPTION = "--diagnostics-format"
# The libraries whose versions decide what dpfc prints (schedules, parses, packets, graphs).
LIBRARIES = ("z3-solver", "lark", "click", "scapy", "networkx")


def did_you_mean(word: str, candidates: Sequence[str]) -> str | None:
    """``did you mean `x`?`` for the closest candidate (None: none is close): the
    language's one helper (:func:`dpfc.diagnostics.did_you_mean`), so the CLI's
    suggestions read and rank like the compiler's."""
    return suggest(word, candidates)


class BadValue(click.BadParameter):
    """A bad option value with a hint (the diagnostic's ``hint:`` line)."""

    def __init__(
        self,
        message: str,
        ctx: click.Context | None = None,
        param: click.Parameter | None = None,
        hint: str | None = None,
    ) -> None:
        super().__init__(message, ctx, param)
        self.hint = hint


class Choice(click.Choice):  # type: ignore[type-arg]
    """click's Choice whose error suggests the closest choice."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if value in self.choices:
            return value
        raise BadValue(
            f"`{value}` is not one of {', '.join(map(str, self.choices))}",
            ctx,
            param,
            did_you_mean(str(value), [str(c) for c in self.choices]),
        )


class ChoiceList(click.ParamType):  # type: ignore[type-arg]  # generic from click 8.3
    """A comma-separated list of choices (``--emit obj,asm``), each checked, in order,
    without repeats."""

    name = "kinds"

    def __init__(self, choices: Sequence[str]) -> None:
        self.choices = tuple(choices)

    def get_metavar(self, param: click.Parameter, ctx: click.Context | None = None) -> str:
        return "[" + "|".join(self.choices) + "][,...]"

    def shell_complete(
        self, ctx: click.Context, param: click.Parameter, incomplete: str
    ) -> list[CompletionItem]:
        """The choices not yet in the list, after the ones already typed (``obj,a`` ->
        ``obj,asm``)."""
        done, comma, last = incomplete.rpartition(",")
        typed = done.split(",") if comma else []
        head = done + comma
        return [
            CompletionItem(head + choice)
            for choice in self.choices
            if choice.startswith(last) and choice not in typed
        ]

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, tuple):
            return value
        kinds: list[str] = []
        for item in str(value).split(","):
            item = item.strip()
            if item not in self.choices:
                raise BadValue(
                    f"`{item}` is not one of {', '.join(self.choices)}",
                    ctx,
                    param,
                    did_you_mean(item, self.choices),
                )
            if item not in kinds:
                kinds.append(item)
        return tuple(kinds)


class TargetName(click.ParamType):  # type: ignore[type-arg]
    """``--target``: a built-in profile's name or a ``.toml`` file (read by the command,
    whose errors in the file are DPF0002); a misspelt built-in name gets a suggestion."""

    name = "profile"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        text = str(value)
        if text in BUILTIN_PROFILES or Path(text).suffix == ".toml":
            return text
        known = ", ".join(BUILTIN_PROFILES)
        raise BadValue(
            f"unknown target `{text}` (built-in: {known}; or a .toml file)",
            ctx,
            param,
            did_you_mean(text, list(BUILTIN_PROFILES)),
        )

    def shell_complete(
        self, ctx: click.Context, param: click.Parameter, incomplete: str
    ) -> list[CompletionItem]:
        """The built-in profiles, then the shell's own file completion (a .toml file)."""
        names = [CompletionItem(n) for n in BUILTIN_PROFILES if n.startswith(incomplete)]
        return names or [CompletionItem(incomplete, type="file")]


TARGET = TargetName()


def version_text() -> str:
    """dpfc's version, then each library's (``not installed`` when it is missing)."""
    lines = [f"dpfc, version {__version__}"]
    for name in LIBRARIES:
        try:
            found = metadata.version(name)
        except metadata.PackageNotFoundError:
            found = "not installed"
        lines.append(f"  {name} {found}")
    lines.append(f"  python {sys.version.split()[0]}")
    return "\n".join(lines)


def _show_version(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    if not value or ctx.resilient_parsing:
        return
    click.echo(version_text())
    ctx.exit(0)


version_option = click.option(
    "--version",
    is_flag=True,
    expose_value=False,
    is_eager=True,
    callback=_show_version,
    help="show the versions of dpfc and of the libraries it uses, and exit",
)


def _set_format(ctx: click.Context, _param: click.Parameter, value: str | None) -> None:
    if value is not None:
        root = ctx.find_root()
        if root.obj is None:
            root.obj = {}
        root.obj["diagnostics_format"] = value


def format_option() -> click.Option:
    """``--diagnostics-format text|json`` as one command's option (eager: it is set before
    any other option's value is checked, so their errors use it)."""
    return click.Option(
        [FORMAT_OPTION],
        type=Choice(FORMATS),
        default=None,
        is_eager=True,
        expose_value=False,
        callback=_set_format,
        help="how errors are printed on stderr: text (default) or json",
    )


def _with_common_options(command: click.Command) -> None:
    """``--diagnostics-format`` and ``-q`` on ``command`` and its subcommands."""
    given = {opt for p in command.params for opt in getattr(p, "opts", ())}
    if FORMAT_OPTION not in given:
        command.params.append(format_option())
    if not given & set(QUIET_OPTIONS):
        command.params.append(quiet_option())
    if isinstance(command, click.Group):
        for sub in command.commands.values():
            _with_common_options(sub)


def format_in(args: Sequence[str]) -> str:
    """The diagnostics format the raw arguments ask for (the last one given wins)."""
    found = "text"
    for index, arg in enumerate(args):
        if arg == "--":
            break
        value = None
        if arg == FORMAT_OPTION and index + 1 < len(args):
            value = args[index + 1]
        elif arg.startswith(FORMAT_OPTION + "="):
            value = arg.partition("=")[2]
        if value in FORMATS:
            found = value
    return found


class SuggestingGroup(click.Group):
    """A group whose unknown subcommand names the closest ones, and which gives every
    command added to it the ``--diagnostics-format`` and ``-q`` options (and has them
    itself)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        _with_common_options(self)

    def add_command(self, cmd: click.Command, name: str | None = None) -> None:
        _with_common_options(cmd)
        super().add_command(cmd, name)

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        name = args[0] if args else ""
        if self.get_command(ctx, name) is None and not name.startswith("-"):
            raise UsageProblem(
                f"no such command `{name}` in `{ctx.command_path}`",
                ctx,
                did_you_mean(name, self.list_commands(ctx))
                or f"`{ctx.command_path} --help` lists the commands",
            )
        return super().resolve_command(ctx, args)


class UsageProblem(click.UsageError):
    """A usage error with a hint."""

    def __init__(self, message: str, ctx: click.Context | None, hint: str | None) -> None:
        super().__init__(message, ctx)
        self.hint = hint


def usage_diagnostic(exc: click.UsageError) -> Diagnostic:
    """A click usage error as a DPF0003 diagnostic: click's message, and a hint that names
    the closest valid spelling when there is one, else where the usage is shown."""
    hint: str | None = getattr(exc, "hint", None)
    message = exc.format_message()
    if isinstance(exc, click.NoSuchOption):
        message = f"no such option `{exc.option_name}`"
        hint = did_you_mean(exc.option_name, sorted(exc.possibilities or ()))
    if hint is None and exc.ctx is not None:
        hint = f"`{exc.ctx.command_path} --help` shows the usage"
    return Diagnostic(codes.USAGE_ERROR, message, hint=hint)


class DpfcGroup(SuggestingGroup):
    """The ``dpfc`` group: click's exceptions become diagnostics and exit 1 (see the
    module docstring); an internal error still exits 2 (``handle_errors``). Its commands
    are ``lazy`` entries, each imported when it is resolved (:mod:`.lazy`)."""

    def __init__(self, *args: Any, lazy: Sequence[LazyCommand] = (), **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.lazy = LazyCommands(lazy)

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*self.commands, *self.lazy.names()})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands:
            entry = self.lazy.get(cmd_name)
            if entry is None:
                return None
            self.add_command(entry.load(), cmd_name)
        return self.commands[cmd_name]

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The commands and their summaries, without importing any (click's layout)."""
        names = self.list_commands(ctx)
        if not names:
            return
        limit = formatter.width - 6 - max(len(name) for name in names)
        with formatter.section("Commands"):
            formatter.write_dl([(name, self._summary(name, limit)) for name in names])

    def shell_complete(self, ctx: click.Context, incomplete: str) -> list[CompletionItem]:
        """Command names (with their summaries, none imported), then the group's options."""
        names = [n for n in self.list_commands(ctx) if n.startswith(incomplete)]
        items = [CompletionItem(n, help=self._summary(n, SHORT_HELP)) for n in names]
        return items + click.Command.shell_complete(self, ctx, incomplete)

    def _summary(self, name: str, limit: int) -> str:
        entry = self.lazy.get(name)
        if name in self.commands or entry is None:
            return self.commands[name].get_short_help_str(limit)
        return entry.short_help(limit)

    def main(
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> Any:
        argv = list(sys.argv[1:] if args is None else args)
        fmt = format_in(argv)
        extra.setdefault("obj", {"diagnostics_format": fmt})
        try:
            result = super().main(argv, prog_name, complete_var, standalone_mode=False, **extra)
            code = result if isinstance(result, int) else 0
        except click.exceptions.NoArgsIsHelpError as exc:
            click.echo(exc.ctx.get_help() if exc.ctx is not None else "")
            code = 0
        except click.UsageError as exc:
            click.echo(render_all([usage_diagnostic(exc)], fmt), err=True)
            code = 1
        except click.ClickException as exc:
            click.echo(
                render_all([Diagnostic(codes.USER_ERROR, exc.format_message())], fmt), err=True
            )
            code = 1
        except click.Abort:
            click.echo("dpfc: aborted", err=True)
            code = 1
        if standalone_mode:
            sys.exit(code)
        return code


__all__ = [
    "FORMATS",
    "TARGET",
    "BadValue",
    "Choice",
    "ChoiceList",
    "DpfcGroup",
    "SuggestingGroup",
    "did_you_mean",
    "format_in",
    "usage_diagnostic",
    "version_option",
]
