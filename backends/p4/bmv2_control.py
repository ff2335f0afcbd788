"""The bmv2 control: the control protocol (:class:`~dpfc.switch.SwitchControl`) on simple_switch.

Contract: :class:`Bmv2Control` implements the protocol for one simple_switch running the
v1model program ``dpfc p4`` generated for the same profile. The protocol's logic —
validation and the lane memories' allocation (the switch contract's ledger), tenant slots,
which entries each call writes — is :class:`~dpfc.backends.p4.entries.EntryControl`'s;
this module renders its operations as simple_switch_CLI commands (:class:`CliWriter`,
through :mod:`.simple_switch_cli`), reads handles and register words back from the CLI's
output (a command the CLI refuses is the switch's refusal, DPF4099, so a deployment rolls
back), and adds what only bmv2's program has: the CRC parameters of its ``crc32_custom``
calculations and the RAND generator's state.

One pipe: bmv2's simple_switch has a single pipeline (``pipe_count`` is 1).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from functools import cache
from pathlib import Path

from dpfc.backends.p4.entries import EntryControl
from dpfc.backends.p4.simple_switch_cli import Cli, CliError
from dpfc.backends.p4.writer import REFUSED, EntryWriter, Match
from dpfc.switch import SwitchRefused, seed_state
from dpfc.target import HASH_FUNCTIONS, TargetProfile

HANDLE = re.compile(r"handle (\d+)")
READ_ONE_BY_ONE = 8  # more words are read as the whole register array, in one call
HASH_ACTION = re.compile(r"\bhash_lane_(\d+)$")


class CliWriter(EntryWriter):
    """The entry operations as simple_switch_CLI commands on one switch."""

    def __init__(self, cli: Cli) -> None:
        self.cli = cli

    def run(self, command: str) -> str:
        """One CLI command; the CLI's refusal is the switch's (so a deployment rolls back)."""
        try:
            return self.cli.run(command)
        except CliError as refused:
            raise SwitchRefused(
                REFUSED, f"bmv2 refused `{command}`: {refused.output.strip()}"
            ) from None

    def _handle(self, output: str, what: str) -> int:
        found = HANDLE.search(output)
        if found is None:
            raise SwitchRefused(REFUSED, f"bmv2 did not {what}: {output.strip()}")
        return int(found.group(1))

    def add_entry(
        self,
        table: str,
        action: str,
        key: Sequence[Match],
        params: Sequence[int],
        priority: int | None = None,
    ) -> int:
        keys = " ".join(str(m.value) if m.mask is None else f"{m.value}&&&{m.mask}" for m in key)
        line = f"table_add {table} {action} {keys} => {' '.join(str(p) for p in params)}"
        if priority is not None:
            line += f" {priority}"
        return self._handle(self.run(line), "add the entry")

    def modify_entry(self, table: str, action: str, handle: int, params: Sequence[int]) -> None:
        self.run(f"table_modify {table} {action} {handle} => {' '.join(str(p) for p in params)}")

    def delete_entry(self, table: str, handle: int) -> None:
        self.run(f"table_delete {table} {handle}")

    def set_default(self, table: str, action: str, params: Sequence[int]) -> None:
        self.run(f"table_set_default {table} {action} {' '.join(str(p) for p in params)}")

    def write_register(self, register: str, index: int, value: int) -> None:
        self.run(f"register_write {register} {index} {value}")

    def read_register(self, register: str, indices: Sequence[int]) -> list[int]:
        if len(indices) <= READ_ONE_BY_ONE:
            return [
                int(self.run(f"register_read {register} {p}").rsplit("=", 1)[1]) for p in indices
            ]
        # One call reads the whole array ("name= w0, w1, ..."): faster than a call per word.
        words = self.run(f"register_read {register}").split("=", 1)[1].split(",")
        return [int(words[p]) for p in indices]

    def create_group(self, group: int) -> None:
        self.run(f"mc_mgrp_create {group}")

    def destroy_group(self, group: int) -> None:
        self.run(f"mc_mgrp_destroy {group}")

    def create_node(self, rid: int, port: int) -> int:
        return self._handle(self.run(f"mc_node_create {rid} {port}"), "create the node")

    def associate(self, group: int, node: int) -> None:
        self.run(f"mc_node_associate {group} {node}")

    def dissociate(self, group: int, node: int) -> None:
        self.run(f"mc_node_dissociate {group} {node}")

    def destroy_node(self, node: int) -> None:
        self.run(f"mc_node_destroy {node}")


class Bmv2Control(EntryControl):
    """The control protocol on one simple_switch (see the module docstring)."""

    def __init__(
        self, cli: Cli, profile: TargetProfile, program_json: Path | str | None = None
    ) -> None:
        self.cli_writer = CliWriter(cli)
        super().__init__(self.cli_writer, profile)
        self.cli = cli
        if program_json is not None:
            self.set_hash_functions(program_json)

    def seed_random(self, state: int) -> None:
        """The xorshift32 state RAND draws from (the simulator's generator, same seed)."""
        register = self.entry_plane.qualified("rng_state")
        for pipeline in (0, 1):  # the ingress's state and the egress pass's
            self.writer.write_register(register, pipeline, seed_state(state))

    def set_hash_functions(self, program_json: Path | str) -> None:
        """bmv2's crc32_custom calculations get each lane's CRC of the profile. A lane's
        calculations are the ones its ``hash_lane_<i>`` action uses (p4c names them
        ``calc``, ``calc_0``, ... and feeds them temporaries, so only the action tells)."""
        text = program_json.read_text() if isinstance(program_json, Path) else program_json
        for name, lane in hash_calculations(text):
            crc = HASH_FUNCTIONS[self.profile.hash_functions[lane]]
            self.cli_writer.run(
                f"set_crc32_parameters {name} {crc.polynomial:#x} {crc.init:#x} "
                f"{crc.xor_out:#x} {str(crc.reflect_in).lower()} {str(crc.reflect_out).lower()}"
            )


@cache
def hash_calculations(program_json: str) -> tuple[tuple[str, int], ...]:
    """(calculation, lane) of every HASH calculation of a compiled program (its JSON)."""
    program = json.loads(program_json)
    found: list[tuple[str, int]] = []
    for action in program["actions"]:
        lane = HASH_ACTION.search(action["name"])
        if lane is None:
            continue
        for primitive in action["primitives"]:
            for parameter in primitive.get("parameters", []):
                if parameter.get("type") == "calculation":
                    found.append((parameter["value"], int(lane.group(1))))
    return tuple(found)


__all__ = ["Bmv2Control", "CliError", "CliWriter"]
