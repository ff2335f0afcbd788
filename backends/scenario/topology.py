"""The network of a scenario: its switches, hosts and links (``[[switches]]``,
``[[hosts]]``, ``links``).

Contract: each table is checked strictly (unknown keys, types, ranges) and added to the
:class:`~dpfc.backends.sim.network.Network` in file order; a name used twice, a port in use
or out of range is DPF4107, a link end that is not ``"switch:port"`` DPF4105, a switch a
host or link names that does not exist DPF4106. A host's MAC, when not given, is derived
from its IPv4 address (``02:00:a.b.c.d``), so it is unique and reproducible.
"""

from __future__ import annotations

from dpfc.backends.sim import Network, TopologyError

from .lookups import BuilderBase
from .reader import CODE_TOPOLOGY, CODE_VALUE, Table, quote


class TopologyBuilder(BuilderBase):
    """Adds the switches, hosts and links of a scenario to its network."""

    def switch(self, network: Network, table: Table) -> None:
        table.only("name", "pipes", "ports_per_pipe", "switch_id")
        name = table.string("name")
        pipes = table.integer("pipes", 1, low=1, high=64)
        ports = table.integer("ports_per_pipe", 16, low=1, high=1024)
        switch_id = table.optional_integer("switch_id")
        if name in network.switches or name in network.hosts:
            self.fail(CODE_TOPOLOGY, f"{table.at('name')}: the name {quote(name)} is already used")
        try:
            network.add_switch(name, pipes=pipes, ports_per_pipe=ports, switch_id=switch_id)
        except TopologyError as exc:
            self.fail(CODE_TOPOLOGY, f"{table.at('name')}: {exc}")

    def host(self, network: Network, table: Table) -> None:
        table.only("name", "ip", "mac", "switch", "port")
        name = table.string("name")
        if name in network.switches or name in network.hosts:
            self.fail(CODE_TOPOLOGY, f"{table.at('name')}: the name {quote(name)} is already used")
        ip = self.fail.ipv4(table.required("ip"), table.at("ip"))
        # the default MAC is derived from the address, so it is unique and reproducible
        mac = self.fail.mac(table.raw("mac"), table.at("mac")) if table.has("mac") else b"\2\0" + ip
        switch = self.switch_name(network, table.required("switch"), table.at("switch"))
        port = table.integer("port", high=0xFFFF)
        try:
            network.add_host(name, mac=mac, ip=ip, switch=switch, port=port)
        except TopologyError as exc:
            self.fail(CODE_TOPOLOGY, f"{table.path}: {exc}")

    def endpoint(self, network: Network, value: object, path: str) -> tuple[str, int]:
        text = self.fail.string(value, path)
        name, colon, number = text.rpartition(":")
        if not colon or not number.isdigit() or not name:
            self.fail(CODE_VALUE, f'{path}: a link end is "switch:port", got {quote(text)}')
        return self.switch_name(network, name, path), int(number)

    def links(self, network: Network, top: Table) -> None:
        items = self.fail.array(top.raw("links") if top.has("links") else [], "links")
        for index, item in enumerate(items):
            path = f"links[{index}]"
            ends = self.fail.array(item, path)
            if len(ends) != 2:
                self.fail(
                    CODE_VALUE,
                    f'{path}: a link is ["switch:port", "switch:port"], got {len(ends)} item(s)',
                )
            a, port_a = self.endpoint(network, ends[0], f"{path}[0]")
            b, port_b = self.endpoint(network, ends[1], f"{path}[1]")
            try:
                network.connect(a, port_a, b, port_b)
            except TopologyError as exc:
                self.fail(CODE_TOPOLOGY, f"{path}: {exc}")
