"""How the stage-structured program's control plane reaches a switch: simple_switch_CLI.

Contract: :class:`StagedWriter` is what :class:`~.control.StagedDataPlane` needs: add an
:class:`~.entries.Entry` (its handle), delete one, set a table's default action, write and
read lane-register words, and the multicast operations of
:class:`~dpfc.backends.p4.writer.EntryWriter`. Names are the program's own (:mod:`.plan`);
a writer qualifies them by the ingress control. :class:`StagedCliWriter` renders them as
simple_switch_CLI commands (:func:`table_add`: exact keys as values, ternary keys as
``value&&&mask``, LPM keys as ``value/length``, and a ternary table's priority; bmv2
matches the lowest first, as :mod:`.entries` orders them) on the v1model program, whose
ingress is ``SwitchVMIngress`` (:attr:`.arch.StagedArch.ingress_name`), and sets the
``crc32_custom`` calculations of the EUs' HASH actions to each lane's CRC
(:meth:`StagedCliWriter.set_hash_functions`).
"""

from __future__ import annotations

import json
import re
from abc import abstractmethod
from collections.abc import Sequence

from dpfc.backends.p4.bmv2_control import CliWriter
from dpfc.backends.p4.writer import EntryWriter, Match
from dpfc.target import HASH_FUNCTIONS, TargetProfile

from .entries import Entry, Prefix, Ternary
from .v1model import StagedV1Model

HASH_ACTION = re.compile(r"\beu\d+_sel_a(\d+)_hash$")
BUILTIN_ACTIONS = ("NoAction",)


class StagedWriter(EntryWriter):
    """The operations the stage-structured control plane writes (module docstring)."""

    arch = "tna"  # the architecture of the program written to (:class:`~.plan.StagePlan`)

    @abstractmethod
    def add(self, entry: Entry) -> int: ...

    @abstractmethod
    def delete(self, table: str, handle: int) -> None: ...

    @abstractmethod
    def set_default_action(self, table: str, action: str, params: Sequence[int]) -> None: ...


def qualified(name: str, control: str) -> str:
    return name if name in BUILTIN_ACTIONS else f"{control}.{name}"


def table_add(entry: Entry, control: str) -> str:
    """The simulator_switch_CLI command that adds ``entry``."""
    keys: list[str] = []
    ternary = False
    for _name, value in entry.keys:
        if isinstance(value, Ternary):
            ternary = True
            keys.append(f"{value.value:#x}&&&{value.mask:#x}")
        elif isinstance(value, Prefix):
            keys.append(f"{value.value:#x}/{value.length}")
        else:
            keys.append(f"{value:#x}")
    params = " ".join(f"{value:#x}" for _name, value in entry.params)
    line = f"table_add {qualified(entry.table, control)} {qualified(entry.action, control)}"
    line += f" {' '.join(keys)} => {params}"
    if ternary:
        line += f" {entry.priority}"
    return line.replace("  ", " ").rstrip()


class StagedCliWriter(CliWriter, StagedWriter):
    """The operations as simple_switch_CLI commands on a simple_switch running the v1model
    program (module docstring)."""

    control = StagedV1Model.ingress_name
    arch = "v1model"

    def add(self, entry: Entry) -> int:
        return self._handle(self.run(table_add(entry, self.control)), "add the entry")

    def delete(self, table: str, handle: int) -> None:
        self.delete_entry(qualified(table, self.control), handle)

    def set_default_action(self, table: str, action: str, params: Sequence[int]) -> None:
        c = self.control
        self.set_default(qualified(table, c), qualified(action, c), params)

    def write_register(self, register: str, index: int, value: int) -> None:
        super().write_register(qualified(register, self.control), index, value)

    def read_register(self, register: str, indices: Sequence[int]) -> list[int]:
        return super().read_register(qualified(register, self.control), indices)

    def set_hash_functions(self, profile: TargetProfile, program_json: str) -> None:
        """Each EU's HASH calculation of lane ``i`` computes lane ``i``'s CRC."""
        for action in json.loads(program_json)["actions"]:
            found = HASH_ACTION.search(action["name"])
            if found is None:
                continue
            crc = HASH_FUNCTIONS[profile.hash_functions[int(found.group(1))]]
            for primitive in action["primitives"]:
                for parameter in primitive.get("parameters", []):
                    if parameter.get("type") == "calculation":
                        self.run(
                            f"set_crc32_parameters {parameter['value']} {crc.polynomial:#x} "
                            f"{crc.init:#x} {crc.xor_out:#x} {str(crc.reflect_in).lower()} "
                            f"{str(crc.reflect_out).lower()}"
                        )


__all__ = ["Match", "StagedCliWriter", "StagedWriter", "qualified", "table_add"]
