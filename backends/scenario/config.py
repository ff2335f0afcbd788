"""The ``[[config]]`` blocks of a scenario: which switch and pipes each configures, its
code entries (``[[config.code]]``, linked and deployed by :mod:`.code`), its tenants'
permission entries (merged with those of the linked code: :mod:`.permissions`), forwarding
and multicast, its routes and default port.

Contract: a block's tables are read strictly, each control-plane call under the key path
of the value it came from (:meth:`~.lookups.BuilderBase.refusals`); a tenant's tokens are
``app_id``, ``app_ids`` (not both, DPF4105) or those the switch's linked code granted it; a
destination is a host (reached through its port on this switch, else through the route
to its address), a port number or a table ``{host, port, ip, mac}``. The tenant's memory, arrays and
constants are :mod:`.memory`'s.
"""

from __future__ import annotations

from dpfc.backends.sim import Destination, Network

from .code import SUFFIXES, CodeEntry
from .lookups import TENANT_MAX
from .memory import MemoryBuilder
from .model import Scenario
from .permissions import CAPABILITIES, Stated, permission_entries
from .reader import CODE_VALUE, Table, key_path, quote

TENANT_KEYS = (
    "id",
    "app_id",
    "app_ids",
    "default_dpf",
    "unauthorized",
    "metadata",
    "privileged",
    "recirculate",
    "memory",
    "arrays",
    "constants",
    "forwarding",
    "multicast",
)
CODE_KEYS = ("file", "name", "tenant", "prolog_slot", "owners", "placement")
PLACEMENTS = ("packet", "switch")


class ConfigBuilder(MemoryBuilder):
    """Reads the ``config`` blocks: their switch and pipes, code entries and tenants."""

    def config_target(self, network: Network, table: Table) -> tuple[str, list[int] | None]:
        table.only("switch", "pipes", "code", "tenants", "routes", "default_port")
        name = self.switch_name(network, table.required("switch"), table.at("switch"))
        value = table.raw("pipes") if table.has("pipes") else "all"
        if value == "all":
            return name, None
        path = table.at("pipes")
        if not isinstance(value, list):
            self.fail.wrong_type(path, '"all" or an array of pipe numbers', value)
        if not value:
            self.fail(CODE_VALUE, f'{path}: list at least one pipe (or write "all")')
        last = len(network.switches[name].pipes) - 1
        return name, [self.fail.integer(v, f"{path}[{i}]", 0, last) for i, v in enumerate(value)]

    def code(self, table: Table, switch: str, pipes: list[int] | None) -> CodeEntry:
        table.only(*CODE_KEYS)
        relative = table.string("file")
        path = self.resolve(relative)
        self.files.check_suffix(path, relative, table.at("file"), SUFFIXES)
        owners = None
        if table.has("owners"):
            where = table.at("owners")
            items = self.fail.array(table.raw("owners"), where)
            owners = tuple(
                self.fail.integer(v, f"{where}[{i}]", 0, TENANT_MAX) for i, v in enumerate(items)
            )
        placements: list[tuple[str, str]] = []
        given = table.table("placement")
        if given is not None and path.suffix.lower() != ".dpf":
            self.fail(
                CODE_VALUE,
                f"{given.path}: placement overrides the @placement of a .dpf source compiled "
                f"here; {quote(relative)} is compiled already",
            )
        for name, value in given.data.items() if given is not None else ():
            where = key_path(given.path, name) if given is not None else name
            placement = self.fail.string(value, where)
            if placement not in PLACEMENTS:
                self.fail(
                    CODE_VALUE, f'{where}: expected "packet" or "switch", got {quote(placement)}'
                )
            placements.append((name, placement))
        last_slot = self.files.profile.code_slots_per_stage - 1
        return CodeEntry(
            path=table.path,
            switch=switch,
            pipes=None if pipes is None else tuple(sorted(set(pipes))),
            file=path,
            name=table.string("name") if table.has("name") else None,
            tenant=table.optional_integer("tenant", high=TENANT_MAX),
            prolog_slot=table.optional_integer("prolog_slot", high=last_slot),
            owners=owners,
            placements=tuple(sorted(placements)),
        )

    def configure(
        self, scenario: Scenario, table: Table, switch: str, pipes: list[int] | None
    ) -> None:
        network = scenario.network
        control = network.switches[switch].control
        for tenant in table.tables("tenants"):
            self.tenant(scenario, tenant, switch, pipes)
        routes = table.table("routes")
        for key, value in routes.data.items() if routes is not None else ():
            path = key_path(table.at("routes"), key)
            if key in network.hosts:
                address = network.hosts[key].ip
            elif isinstance(value, dict):
                self.fail(
                    CODE_VALUE,
                    f'{path}: a route is "a.b.c.d" = port or host = port (quote an IPv4 '
                    "address used as a key, or TOML reads its dots as nested tables)",
                )
            else:
                address = self.fail.ipv4(key, path)
            port = self.fail.integer(value, path, 0, 0xFFFF)
            with self.refusals(path):
                control.set_route(address, port, pipes=pipes)
        if table.has("default_port"):
            value = table.raw("default_port")
            port_or_none = None if value == "none" else table.integer("default_port", high=0xFFFF)
            with self.refusals(table.at("default_port")):
                control.set_default_port(port_or_none, pipes=pipes)

    def tenant(
        self, scenario: Scenario, table: Table, switch: str, pipes: list[int] | None
    ) -> None:
        table.only(*TENANT_KEYS)
        control = scenario.network.switches[switch].control
        tenant = table.integer("id", high=TENANT_MAX)
        default = None
        if table.has("default_dpf"):
            default = self.pointer(scenario, table.raw("default_dpf"), table.at("default_dpf"))
        unauthorized = table.string("unauthorized", "drop")
        if unauthorized not in ("drop", "pass"):
            self.fail(
                CODE_VALUE,
                f'{table.at("unauthorized")}: expected "drop" or "pass", got {quote(unauthorized)}',
            )
        stated = Stated(
            table.path,
            tenant,
            self.app_ids(table),
            table.at("app_ids" if table.has("app_ids") else "app_id"),
            default,
            table.has("default_dpf"),
            unauthorized,
            {name: table.boolean(name, False) for name in CAPABILITIES if table.has(name)},
        )
        image = scenario.images.get(switch)
        pipe_count = len(scenario.network.switches[switch].pipes)
        for entry in permission_entries(
            stated, image[0] if image else None, switch, pipes, pipe_count, self.fail
        ):
            with self.refusals(table.path):
                control.authorize(
                    tenant,
                    app_id=entry.app_ids[0],
                    app_ids=entry.app_ids[1:],
                    default_dpf=entry.default_dpf,
                    unauthorized=entry.unauthorized,
                    metadata=entry.metadata,
                    privileged=entry.privileged,
                    recirculate=entry.recirculate,
                    pipes=entry.pipes,
                )
        for memory in table.tables("memory"):
            self.memory(control, memory, tenant, pipes)
        self.arrays(scenario, table, tenant, switch, pipes)
        self.constants(control, table, tenant, pipes)
        forwarding = table.table("forwarding")
        for key, value in forwarding.data.items() if forwarding is not None else ():
            path = key_path(table.at("forwarding"), key)
            index = self.fail.index_key(key, path, "a forwarding index")
            destination = self.destination(scenario, value, path, switch)
            with self.refusals(path):
                control.set_forwarding(tenant, index, destination, pipes=pipes)
        multicast = table.table("multicast")
        for key, value in multicast.data.items() if multicast is not None else ():
            path = key_path(table.at("multicast"), key)
            group = self.fail.index_key(key, path, "a multicast group")
            items = self.fail.array(value, path)
            destinations = [
                self.destination(scenario, item, f"{path}[{i}]", switch)
                for i, item in enumerate(items)
            ]
            with self.refusals(path):
                control.set_multicast_group(tenant, group, destinations, pipes=pipes)

    def app_ids(self, table: Table) -> tuple[int, ...] | None:
        """The tokens a table states, primary first: ``app_id = N`` or ``app_ids = [N, M,
        ...]`` (one per app the tenant runs: the KVS's cache and update apps); None when it
        states neither (:mod:`.permissions` then takes the linked code's)."""
        if table.has("app_id") and table.has("app_ids"):
            self.fail(
                CODE_VALUE,
                f"{table.at('app_ids')}: give app_id or app_ids, not both "
                "(app_ids lists every token, the primary first)",
            )
        if table.has("app_id"):
            return (table.integer("app_id"),)
        if table.has("app_ids"):
            where = table.at("app_ids")
            items = self.fail.array(table.raw("app_ids"), where)
            if not items:
                self.fail(CODE_VALUE, f"{where}: list at least one app id")
            tokens = [self.fail.integer(v, f"{where}[{i}]") for i, v in enumerate(items)]
            return tuple(dict.fromkeys(tokens))
        return None

    def destination(self, scenario: Scenario, value: object, path: str, switch: str) -> Destination:
        """A host name, a port number, or a table {host, port, ip, mac}. A host on this
        switch is reached through its port, a host elsewhere through the route to its IPv4
        address."""
        network = scenario.network
        if isinstance(value, int) and not isinstance(value, bool):
            return Destination(port=self.fail.integer(value, path, 0, 0xFFFF))
        if isinstance(value, str):
            host = network.hosts[self.host_name(network, value, path)]
            port = host.port if host.switch == switch else None
            return Destination(port=port, ip_dst=host.ip, eth_dst=host.mac)
        table = self.fail.table(value, path)
        table.only("host", "port", "ip", "mac")
        port = table.optional_integer("port", high=0xFFFF)
        ip = self.fail.ipv4(table.raw("ip"), table.at("ip")) if table.has("ip") else None
        mac = self.fail.mac(table.raw("mac"), table.at("mac")) if table.has("mac") else None
        if table.has("host"):
            host = network.hosts[self.host_name(network, table.raw("host"), table.at("host"))]
            ip = host.ip if ip is None else ip
            mac = host.mac if mac is None else mac
            if port is None and host.switch == switch:
                port = host.port
        if port is None and ip is None:
            self.fail(CODE_VALUE, f"{path}: a destination needs a host, a port or an ip")
        return Destination(port=port, ip_dst=ip, eth_dst=mac)
