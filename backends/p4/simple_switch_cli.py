"""simple_switch_CLI, in process: the commands of bmv2's runtime CLI over its Thrift API.

Contract: :class:`Cli` connects to a running simple_switch and runs CLI command lines
(``table_add``, ``register_read``, ``mc_mgrp_create``, ``set_crc32_parameters``, ...)
with exactly the CLI's parsing and checks, by loading simple_switch_CLI's own Python
modules (nothing of them is in dpfc) from the toolchain or from wherever
:func:`find_cli_modules` finds them: those modules are all a deployment needs of bmv2's
tools (the program's names come from dpfc's own layout and the switch's JSON from the
switch), so a host without p4c deploys. ``run`` returns the command's
output and raises :class:`CliError` when the CLI reports an error (it prints errors
rather than raising them). Every command also goes to ``history``, so what a control did
can be replayed with ``simple_switch_CLI < script``.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import io
import os
import re
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dpfc.backends.p4.bmv2 import DEFAULT_PREFIX, Toolchain, ToolchainMissing

ERROR = re.compile(r"^(Error|Invalid|Unknown|Cannot|Wrong|\*\*\*)", re.MULTILINE)


CLI_MODULES = ("runtime_CLI", "sswitch_CLI")  # simple_switch_CLI's own Python modules


@dataclass(frozen=True)
class CliModules:
    """Where simple_switch_CLI's Python modules are (None: where Python finds them)."""

    site_packages: Path | None


def _has_modules(directory: Path) -> bool:
    return all(
        (directory / f"{name}.py").is_file() or (directory / name).is_dir() for name in CLI_MODULES
    )


def find_cli_modules() -> CliModules:
    """simple_switch_CLI's Python modules (and the Thrift bindings bmv2 installs beside
    them): all that talking to a running simple_switch needs — not p4c, not the
    ``simple_switch`` program, whose host may be another machine. Looked for where Python
    finds modules, then in ``lib/python3*/site-packages`` under ``$DPFC_P4_PREFIX`` (default
    ``/opt/p4``) and under the prefix of ``simple_switch_CLI`` or ``simple_switch`` on
    ``PATH``; else :class:`ToolchainMissing` says where it looked."""
    if all(importlib.util.find_spec(name) is not None for name in CLI_MODULES):
        return CliModules(None)
    prefix = Path(os.environ.get("DPFC_P4_PREFIX", DEFAULT_PREFIX))
    prefixes = [prefix]
    for tool in ("simple_switch_CLI", "simple_switch"):
        found = shutil.which(tool)
        if found is not None:
            prefixes.append(Path(found).resolve().parent.parent)
    for root in dict.fromkeys(prefixes):
        for site in sorted((root / "lib").glob("python3*/site-packages"), reverse=True):
            if _has_modules(site):
                return CliModules(site)
    raise ToolchainMissing(
        f"simple_switch_CLI's Python modules ({', '.join(CLI_MODULES)}) not found where Python "
        f"looks, under {prefix}/lib/python3*/site-packages, nor beside simple_switch_CLI on "
        "PATH (set DPFC_P4_PREFIX to bmv2's install prefix; p4c is not needed to deploy)"
    )


class CliError(RuntimeError):
    def __init__(self, command: str, output: str) -> None:
        super().__init__(f"simple_switch_CLI refused `{command}`: {output.strip()}")
        self.command = command
        self.output = output


class Cli:
    def __init__(
        self, modules: Toolchain | CliModules, thrift_port: int, *, host: str = "127.0.0.1"
    ) -> None:
        if modules.site_packages is not None and str(modules.site_packages) not in sys.path:
            sys.path.append(str(modules.site_packages))
        try:
            runtime: Any = importlib.import_module("runtime_CLI")
            sswitch: Any = importlib.import_module("sswitch_CLI")
        except ImportError as missing:  # e.g. the Thrift library they import
            raise ToolchainMissing(
                f"simple_switch_CLI's Python modules do not import: {missing}"
            ) from None
        pre = runtime.PreType.SimplePreLAG
        services = runtime.RuntimeAPI.get_thrift_services(pre)
        services.extend(sswitch.SimpleSwitchAPI.get_thrift_services())
        with contextlib.redirect_stdout(io.StringIO()):
            standard, mc, sswitch_client = runtime.thrift_connect(host, thrift_port, services)
            # The CLI's load_json_config prints to the stdout it saw at import: load the
            # switch's JSON ourselves.
            runtime.load_json_str(standard.bm_get_config())
            self.api: Any = sswitch.SimpleSwitchAPI(pre, standard, mc, sswitch_client)
        self.clients: tuple[Any, ...] = (standard, mc, sswitch_client)
        self.standard = standard
        self.history: list[str] = []

    def program_json(self) -> str:
        """The JSON of the program the switch runs (bmv2 keeps it and hands it out)."""
        return str(self.standard.bm_get_config())

    def close(self) -> None:
        """Close the Thrift connection (its clients share one socket)."""
        for client in self.clients:
            with contextlib.suppress(Exception):
                client._iprot.trans.close()

    def run(self, command: str) -> str:
        buffer = io.StringIO()
        with contextlib.redirect_stdout(buffer):
            self.api.onecmd(command)
        output = buffer.getvalue()
        self.history.append(command)
        if ERROR.search(output):
            raise CliError(command, output)
        return output

    def script(self) -> str:
        return "\n".join(self.history) + "\n"
