"""The primitive control-plane operations on the SwitchVM program, as a back end renders them.

Contract: :class:`EntryWriter` is what :class:`~dpfc.backends.p4.entries.EntryDataPlane` needs
from a way of reaching a switch: add, modify or delete a table entry, set a table's default
action, write or read register words, create multicast groups and nodes. Tables, actions
and registers are named as :meth:`~dpfc.backends.p4.layout.Layout.name_map` names them
(qualified by their control); key values are :class:`Match`es in the table's key order,
action data the values in the action's parameter order. Implementations: simple_switch_CLI
commands (:class:`~dpfc.backends.p4.bmv2_control.CliWriter`) and bfrt_python lines
(:class:`~dpfc.backends.p4.bfrt.BfrtWriter`).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass

from dpfc.catalog import codes

REFUSED = codes.SWITCH_REFUSED  # the switch refused a table or register operation (or cannot do it)


@dataclass(frozen=True)
class Match:
    """One key field's match: ``value`` exactly, or ``value`` under ``mask`` (ternary)."""

    value: int
    mask: int | None = None


class EntryWriter(ABC):
    """The primitive control-plane operations a back end renders (module docstring)."""

    @abstractmethod
    def add_entry(
        self,
        table: str,
        action: str,
        key: Sequence[Match],
        params: Sequence[int],
        priority: int | None = None,
    ) -> int:
        """Add an entry; returns its handle."""

    @abstractmethod
    def modify_entry(self, table: str, action: str, handle: int, params: Sequence[int]) -> None:
        """Replace the action data of the entry ``handle``."""

    @abstractmethod
    def delete_entry(self, table: str, handle: int) -> None: ...

    @abstractmethod
    def set_default(self, table: str, action: str, params: Sequence[int]) -> None: ...

    @abstractmethod
    def write_register(self, register: str, index: int, value: int) -> None: ...

    @abstractmethod
    def read_register(self, register: str, indices: Sequence[int]) -> list[int]: ...

    @abstractmethod
    def create_group(self, group: int) -> None:
        """A multicast group (replication tree) ``group``."""

    @abstractmethod
    def destroy_group(self, group: int) -> None: ...

    @abstractmethod
    def create_node(self, rid: int, port: int) -> int:
        """A multicast node: a copy with replication id ``rid`` out of ``port``; its handle."""

    @abstractmethod
    def associate(self, group: int, node: int) -> None: ...

    @abstractmethod
    def dissociate(self, group: int, node: int) -> None: ...

    @abstractmethod
    def destroy_node(self, node: int) -> None: ...

    def remove_group(self, group: int, nodes: Sequence[int]) -> None:
        """Take multicast group ``group`` apart: its ``nodes``, then the group."""
        for node in nodes:
            self.dissociate(group, node)
            self.destroy_node(node)
        self.destroy_group(group)


__all__ = ["REFUSED", "EntryWriter", "Match"]
