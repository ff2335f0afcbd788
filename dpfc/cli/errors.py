"""How the CLI reports failures: user errors exit 1, internal compiler errors exit 2.

:func:`handle_errors` wraps every command: a :class:`~dpfc.diagnostics.DiagnosticError`,
a decode or encoding error, a :class:`UserError` (DPF0002) or a bad target profile is
rendered on stderr in the ``--diagnostics-format`` asked for and exits 1; anything else is
an internal compiler error (exit 2) naming the input and where the compiler failed. Usage
errors are click's, handled by :class:`dpfc.cli.conventions.DpfcGroup`.

Warnings go through :func:`report_warnings`, which applies the command's ``-W`` flags
(:mod:`dpfc.cli.warning_flags`): a warning made an error fails the command like any error.
In JSON the warnings are held back until the command reports something else or ends, so
that stderr carries one JSON array with the warnings and any errors.
"""

from __future__ import annotations

import functools
import os
import sys
import traceback
from collections.abc import Callable
from typing import Any, TypeVar

import click

from dpfc.catalog import codes
from dpfc.diagnostics import Diagnostic, DiagnosticError, Severity, WarningPolicy, render_all
from dpfc.encoding import DecodeError, EncodingError
from dpfc.target import TargetError

F = TypeVar("F", bound=Callable[..., Any])


class UserError(Exception):
    """A plain user error (bad option value, unreadable file) without a source span."""


def diagnostics_format() -> str:
    """``text`` or ``json``: what ``--diagnostics-format`` asked for (on the group or on
    the command; :mod:`dpfc.cli.conventions` keeps it in the root context's ``obj``)."""
    ctx = click.get_current_context(silent=True)
    if ctx is not None and ctx.find_root().obj:
        return str(ctx.find_root().obj.get("diagnostics_format", "text"))
    return "text"


# Keys of the root context's `obj`: the `-W` policy (dpfc.cli.warning_flags), and the
# warnings held back in JSON so that stderr carries one JSON array.
POLICY_KEY = "warning_policy"
PENDING_KEY = "pending_warnings"


def _root_obj() -> dict[str, Any] | None:
    ctx = click.get_current_context(silent=True)
    if ctx is None:
        return None
    root = ctx.find_root()
    if root.obj is None:
        root.obj = {}
    return root.obj if isinstance(root.obj, dict) else None


def _take_pending() -> list[Diagnostic]:
    obj = _root_obj()
    pending: list[Diagnostic] = obj.pop(PENDING_KEY, []) if obj is not None else []
    return pending


def quiet() -> bool:
    """Whether ``-q`` was given (on the group or on the command; :mod:`dpfc.cli.options`):
    print nothing but diagnostics and the output asked for."""
    ctx = click.get_current_context(silent=True)
    return bool(ctx is not None and ctx.find_root().obj and ctx.find_root().obj.get("quiet"))


def report_diagnostics(diagnostics: list[Diagnostic]) -> None:
    """Render ``diagnostics`` on stderr (after the warnings held back, in JSON)."""
    found = [*_take_pending(), *diagnostics]
    click.echo(render_all(found, diagnostics_format()), err=True)


def report_warnings(warnings: list[Diagnostic]) -> None:
    """Report a checked program's warnings as the command's ``-W`` flags ask: hidden ones
    dropped; when one is made an error, raise :class:`DiagnosticError` with every one
    (exit 1). In text they are printed at once; in JSON they are held back and printed
    with what the command reports next, or when it ends (one JSON array on stderr)."""
    obj = _root_obj()
    policy = obj.get(POLICY_KEY) if obj is not None else None
    found = (policy if isinstance(policy, WarningPolicy) else WarningPolicy()).apply(warnings)
    if any(d.severity is Severity.ERROR for d in found):
        raise DiagnosticError(found)
    if not found:
        return
    if diagnostics_format() == "json" and obj is not None:
        obj.setdefault(PENDING_KEY, []).extend(found)
        return
    report_diagnostics(found)


def flush_warnings() -> None:
    """Print the warnings held back (JSON) when a command ends without another report."""
    pending = _take_pending()
    if pending:
        report_diagnostics(pending)


# The commands' input-file arguments, named in an internal-error report.
INPUT_ARGUMENTS = ("source", "input_file", "scenario_file")


def handle_errors(func: F) -> F:
    """Turn every failure into a message on stderr and the conventional exit code."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            result = func(*args, **kwargs)
            flush_warnings()
            return result
        except DiagnosticError as exc:
            report_diagnostics(exc.diagnostics)
            sys.exit(1)
        except DecodeError as exc:
            report_diagnostics(
                [Diagnostic(exc.code, f"malformed input at byte {exc.offset}: {exc.message}")]
            )
            sys.exit(1)
        except EncodingError as exc:
            report_diagnostics([Diagnostic(exc.code, exc.message)])
            sys.exit(1)
        except (UserError, TargetError) as exc:
            report_diagnostics([Diagnostic(codes.USER_ERROR, str(exc))])
            sys.exit(1)
        except SystemExit:
            flush_warnings()  # a command that printed its own error keeps the warnings
            raise
        except (
            click.exceptions.Exit,
            click.ClickException,
            click.Abort,
            KeyboardInterrupt,
        ):
            raise
        except BrokenPipeError:
            # The reader of stdout went away (`dpfc ... | head`): stop quietly, as Unix tools do.
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            sys.exit(1)
        except Exception as exc:
            where = traceback.extract_tb(exc.__traceback__)[-1]
            inputs = [str(kwargs[k]) for k in INPUT_ARGUMENTS if kwargs.get(k)]
            click.echo(
                f"dpfc: internal compiler error: {type(exc).__name__}: {exc}\n"
                + "".join(f"  while processing {name}\n" for name in inputs)
                + f"  at {where.filename}:{where.lineno} in {where.name}\n"
                "  please report this with the input that caused it (set DPFC_TRACEBACK=1 for details)",
                err=True,
            )
            if os.environ.get("DPFC_TRACEBACK"):
                traceback.print_exc()
            sys.exit(2)

    return wrapper  # type: ignore[return-value]
