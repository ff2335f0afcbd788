"""simple_switch_CLI, in process: the commands of bmv2's runtime CLI over its Thrift API.

Contract: :class:`Cli` connects to a running simple_switch and runs CLI command lines
(``table_add``, ``register_read``, ``mc_mgrp_create``, ``set_crc32_parameters``, ...)
with exactly the CLI's parsing and checks, by loading simple_switch_CLI's own Python
modules from the toolchain (nothing of them is in dpfc). ``run`` returns the command's
output and raises :class:`CliError` when the CLI reports an error (it prints errors
rather than raising them). Every command also goes to ``history``, so what a control did
can be replayed with ``simple_switch_CLI < script``.
"""

from __future__ import annotations

import contextlib
import importlib
import io
import re
import sys
from typing import Any

from dpfc.backends.p4.bmv2 import Toolchain

ERROR = re.compile(r"^(Error|Invalid|Unknown|Cannot|Wrong|\*\*\*)", re.MULTILINE)


class CliError(RuntimeError):
    def __init__(self, command: str, output: str) -> None:
        super().__init__(f"simple_switch_CLI refused `{command}`: {output.strip()}")
        self.command = command
        self.output = output


class Cli:
    def __init__(self, toolchain: Toolchain, thrift_port: int, *, host: str = "127.0.0.1") -> None:
        if toolchain.site_packages is not None and str(toolchain.site_packages) not in sys.path:
            sys.path.append(str(toolchain.site_packages))
        runtime: Any = importlib.import_module("runtime_CLI")
        sswitch: Any = importlib.import_module("sswitch_CLI")
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
