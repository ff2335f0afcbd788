"""``dpfc explain [CODE]``: the long description of a diagnostic code, or the list of codes.

With a code (``DPF5101``, ``dpf5101`` or ``5101``) it prints the catalogue's entry
(:mod:`dpfc.catalog`): what the code means and why the rule exists, an example that
produces it (its files and command line) and how to fix it. Without one it lists every
code with its one-line summary, grouped by range. A code the catalogue does not know is a
user error (DPF0002, exit 1) with the closest known codes as "did you mean". The shell
completes CODE from the catalogue (``DPF41<TAB>``, ``41<TAB>``), each code with its summary.
"""

from __future__ import annotations

from typing import Any

import click
from click.shell_completion import CompletionItem

from dpfc.catalog import SECTIONS, close_codes, codes, load_catalog, normalize_code
from dpfc.cli.errors import handle_errors
from dpfc.diagnostics import Diagnostic, DiagnosticError


def _listing() -> str:
    entries = load_catalog()
    lines: list[str] = []
    for name, title in SECTIONS:
        section = [e for e in entries.values() if e.section == name]
        if not section:
            continue
        if lines:
            lines.append("")
        lines.append(title)
        lines.extend(f"  {e.code}  {e.summary}" for e in section)
    lines += ["", f"{len(entries)} codes; `dpfc explain CODE` explains one."]
    return "\n".join(lines)


def _unknown(text: str, code: str | None) -> DiagnosticError:
    if code is None:
        return DiagnosticError(
            Diagnostic(
                codes.USER_ERROR,
                f"`{text}` is not a diagnostic code",
                hint="a code is DPF and four digits, as in `error[DPF5101]`; "
                "`dpfc explain` lists them all",
            )
        )
    close = close_codes(code)
    suggestion = f"; did you mean {' or '.join(close)}?" if close else ""
    return DiagnosticError(
        Diagnostic(
            codes.USER_ERROR,
            f"no diagnostic code {code}{suggestion}",
            hint="`dpfc explain` lists every code with a one-line summary",
        )
    )


class CodeName(click.ParamType):  # type: ignore[type-arg]  # generic from click 8.3
    """A diagnostic code as the user types it (``DPF5101``, ``dpf5101``, ``5101``; the
    command normalises it); completed from the catalogue, each code with its summary."""

    name = "code"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        return str(value)

    def shell_complete(
        self, ctx: click.Context, param: click.Parameter, incomplete: str
    ) -> list[CompletionItem]:
        typed = incomplete.strip().upper()
        prefix = typed if typed.startswith("DPF") else "DPF" + typed
        return [
            CompletionItem(entry.code, help=entry.summary)
            for entry in load_catalog().values()
            if entry.code.startswith(prefix)
        ]


@click.command("explain")
@click.argument("code", required=False, type=CodeName())
@handle_errors
def explain_command(code: str | None) -> None:
    """Explain a diagnostic code such as DPF5101: what it means, why, an example, the fix.
    Without CODE, list every code."""
    if code is None:
        click.echo(_listing())
        return
    normalized = normalize_code(code)
    entry = load_catalog().get(normalized or "")
    if entry is None:
        raise _unknown(code, normalized)
    click.echo(entry.render(), nl=False)
