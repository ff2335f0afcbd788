"""Scenario files: a simulated network, its configuration and its traffic, written as data.

A scenario is a TOML (``.toml``) or JSON (``.json``) file; both use one schema, described in
``docs/simulator.md`` ("Scenario files"). :func:`load_scenario` reads it, checks every key
strictly, builds the :class:`~dpfc.backends.sim.network.Network`, configures each switch
through its :class:`~dpfc.backends.sim.control.ControlPlane` (so every table entry passes
the checks an operator's call would) and queues the packets. The result,
:class:`Scenario`, is ready to ``network.run()``.

Contract:

* Nothing escapes as a traceback. A malformed file, a missing or unknown key, a value of the
  wrong type or range, an unknown name raises :class:`ScenarioError`, which names the file
  and the key path: ``kvs.toml: switches[0].pipes: expected an integer, got "two"``.
* A refused control-plane call keeps its code (DPF40xx) and gets the key path in front of
  its message; a packet the encoder refuses keeps its DPF2xxx code; assembly errors are the
  assembler's own :class:`~dpfc.diagnostics.DiagnosticError` (with source excerpts), with a
  note naming the scenario key that asked for the file.
* Files a scenario names (assembly, objects, DPF sources, images, pcaps, TOML profiles) are
  relative to the scenario's directory.
* Order of effects: the network, then the code of every ``config`` block, linked into one
  image per switch and deployed (:mod:`.code`: memory, permissions and code, prologs
  last; so a tenant may name a DPF installed by a later block), then each block's tenants
  (permission entries — replacing the ones the image made —, memory, array words,
  constants, forwarding, multicast), routes and default port; last, the packets are
  queued in file order (``repeat`` copies one after the other).

This module holds the schema and the builder; the typed reader is :mod:`.reader`.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from dpfc.backends.sim import ControlPlane, ControlPlaneError, Destination, Network, TopologyError
from dpfc.encoding import EncodingError, SwitchVMHeader, decode_options, encode_options
from dpfc.isa.bundle import PC
from dpfc.link import Image, LinkedDPF, MemoryRequest
from dpfc.packet import build_frame, build_inner, read_pcap
from dpfc.target import BUILTIN_PROFILES, TargetError, TargetProfile, load_profile

from .code import SUFFIXES, CodeEntry, CodeFiles, deploy, link_switches
from .reader import (
    CODE_FILE,
    CODE_TOPOLOGY,
    CODE_UNKNOWN_NAME,
    CODE_VALUE,
    REPEAT_MAX,
    Fail,
    ScenarioError,
    Table,
    ip_text,
    key_path,
    mac_text,
    names,
    parse_file,
    quote,
)


@dataclass(frozen=True)
class QueuedPacket:
    """A frame the scenario queued: its network packet id, sender and where it came from."""

    id: int
    host: str
    origin: str  # "packets[2]", "packets[2] #3" for repeats, "frames.pcap #1"
    summary: str  # tenant, DPF pointer and stack, or "pcap frame"
    frame: bytes


@dataclass(frozen=True)
class MemoryWatch:
    """Words to print after the run (the ``watch`` section)."""

    label: str
    switch: str
    pipe: int
    tenant: int
    eu: int
    lane: int
    vaddr: int
    count: int
    pipeline: str = "ingress"  # whose lane memories: the ingress's or the egress's


@dataclass
class Scenario:
    file: str
    directory: Path
    profile: TargetProfile
    network: Network
    packets: list[QueuedPacket] = field(default_factory=list)
    # the linked image each switch with code holds, and its id
    images: dict[str, tuple[Image, str]] = field(default_factory=dict)
    # every installed DPF by symbol (and by the name its code entry gives) -> (switch, DPF)
    dpfs: dict[str, tuple[str, LinkedDPF]] = field(default_factory=dict)
    watches: list[MemoryWatch] = field(default_factory=list)

    def send_pcap(self, pcap: str | Path, host: str, *, origin: str | None = None) -> None:
        """Queue every frame of ``pcap`` as sent by ``host`` (path relative to the cwd)."""
        if host not in self.network.hosts:
            raise ScenarioError(
                self.file,
                CODE_UNKNOWN_NAME,
                f"no host named {quote(host)} (hosts: {names(self.network.hosts)})",
            )
        name = origin if origin is not None else str(pcap)
        try:
            frames = read_pcap(str(pcap))
        except OSError as exc:
            raise ScenarioError(
                self.file, CODE_FILE, f"cannot read {name}: {exc.strerror}"
            ) from None
        except ValueError as exc:
            raise ScenarioError(self.file, CODE_FILE, f"{name}: {exc}") from None
        for number, frame in enumerate(frames, start=1):
            packet = self.network.send(host, frame)
            self.packets.append(
                QueuedPacket(packet, host, f"{name} #{number}", "pcap frame", frame)
            )


def load_scenario(path: str | Path) -> Scenario:
    """Read, check and build the scenario at ``path`` (errors name it as given)."""
    file = str(path)
    data = parse_file(Path(path), file)
    return _Builder(file, Path(path).parent).build(data)


TOP_KEYS = ("target", "seed", "switches", "hosts", "links", "config", "packets", "watch")
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
CODE_KEYS = ("file", "name", "tenant", "prolog_slot", "owners")
WATCH_KEYS = (
    "label", "switch", "pipe", "pipeline", "tenant", "eu", "lane", "vaddr", "array", "count"
)  # fmt: skip
MEMORY_KEYS = {
    "segment": ("kind", "pipeline", "eu", "lane", "vaddr", "size", "values"),
    "null_segment": ("kind", "pipeline", "eu", "lane", "vaddr", "size"),
    "direct": ("kind", "pipeline", "eu", "lane", "vaddr", "value"),
}
PACKET_KEYS = (
    "from", "to", "tenant", "code", "dpf", "egress", "stack", "app_id", "gas", "payload", "repeat"
)  # fmt: skip
PIPELINES = ("ingress", "egress")
TENANT_MAX = (1 << 24) - 1


class _Builder:
    """Builds one scenario; every check names the key path of the value it rejects."""

    def __init__(self, file: str, directory: Path) -> None:
        self.file = file
        self.directory = directory
        self.fail = Fail(file)

    @contextmanager
    def refusals(self, path: str) -> Iterator[None]:
        """Report a refused control-plane call with its own code, at ``path``."""
        try:
            yield
        except ControlPlaneError as exc:
            self.fail(exc.code, f"{path}: {exc.message}")

    def resolve(self, relative: str) -> Path:
        return self.directory / relative

    # -- the whole file ------------------------------------------------------------------------
    def build(self, data: dict[str, object]) -> Scenario:
        top = Table(self.fail, "", data)
        top.only(*TOP_KEYS)
        profile = self.target(top)
        network = Network(profile, seed=top.integer("seed", 0, high=2**63 - 1))
        scenario = Scenario(self.file, self.directory, profile, network)
        for table in top.tables("switches"):
            self.switch(network, table)
        for table in top.tables("hosts"):
            self.host(network, table)
        self.links(network, top)
        configs = top.tables("config")
        targets = [self.config_target(network, table) for table in configs]
        self.files = CodeFiles.for_scenario(self.fail, self.file, profile)
        entries = [
            self.code(code, name, pipes)
            for table, (name, pipes) in zip(configs, targets, strict=True)
            for code in table.tables("code")
        ]
        scenario.images = link_switches(self.files, network, entries)
        scenario.dpfs = deploy(self.files, network, entries, scenario.images)
        for table, (name, pipes) in zip(configs, targets, strict=True):
            self.configure(scenario, table, name, pipes)
        for index, table in enumerate(top.tables("packets")):
            self.packets(scenario, table, f"packets[{index}]")
        scenario.watches = [self.watch(scenario, table) for table in top.tables("watch")]
        return scenario

    def target(self, top: Table) -> TargetProfile:
        name = top.string("target", "tofino1")
        if name in BUILTIN_PROFILES:
            return BUILTIN_PROFILES[name]
        if not name.endswith(".toml"):
            self.fail(
                CODE_VALUE,
                f"target: unknown target {quote(name)} (built-in: {', '.join(BUILTIN_PROFILES)};"
                " or a .toml profile file)",
            )
        try:
            return load_profile(str(self.resolve(name)))
        except TargetError as exc:
            self.fail(CODE_FILE, f"target: {exc}")

    # -- topology ------------------------------------------------------------------------------
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

    def switch_name(self, network: Network, value: object, path: str) -> str:
        name = self.fail.string(value, path)
        if name not in network.switches:
            self.fail(
                CODE_UNKNOWN_NAME,
                f"{path}: no switch named {quote(name)} (switches: {names(network.switches)})",
            )
        return name

    def host_name(self, network: Network, value: object, path: str) -> str:
        name = self.fail.string(value, path)
        if name not in network.hosts:
            self.fail(
                CODE_UNKNOWN_NAME,
                f"{path}: no host named {quote(name)} (hosts: {names(network.hosts)})",
            )
        return name

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

    # -- per-switch configuration --------------------------------------------------------------
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
        )

    def installed(self, scenario: Scenario, text: str, path: str) -> tuple[str, LinkedDPF]:
        """The installed DPF ``text`` names: a symbol (``flow_guard.flow_guard``), a code
        entry's ``name``, or a DPF's own name when one module alone has a DPF of that name
        (``flow_guard``)."""
        found = scenario.dpfs.get(text)
        if found is not None:
            return found
        # several entries may name one DPF (its symbol and an entry's name): count DPFs
        short = {id(dpf): (switch, dpf) for switch, dpf in scenario.dpfs.values()}
        matches = [m for m in short.values() if m[1].symbol.rpartition(".")[2] == text]
        if len(matches) == 1:
            return matches[0]
        if matches:
            listed = ", ".join(sorted(quote(m[1].symbol) for m in matches))
            self.fail(
                CODE_UNKNOWN_NAME, f"{path}: {quote(text)} is ambiguous: name one of {listed}"
            )
        self.fail(
            CODE_UNKNOWN_NAME,
            f"{path}: no installed DPF named {quote(text)} (installed: {names(scenario.dpfs)})",
        )

    def pointer(
        self, scenario: Scenario, value: object, path: str, pipeline: str = "ingress"
    ) -> PC | None:
        """``@switch:N``, ``@packet:N``, ``none`` or the name of an installed DPF of
        ``pipeline`` (the DPF pointer and a default DPF name ingress DPFs, the egress
        pointer egress DPFs)."""
        text = self.fail.string(value, path)
        if text == "none":
            return None
        if text.startswith("@"):
            try:
                return PC.parse(text)
            except ValueError:
                self.fail(
                    CODE_VALUE,
                    f"{path}: a DPF pointer is @switch:N, @packet:N, none or the name of an "
                    f"installed DPF, got {quote(text)}",
                )
        _switch, dpf = self.installed(scenario, text, path)
        if dpf.entry is None:
            self.fail(
                CODE_VALUE,
                f"{path}: {quote(text)} is in-packet code, not installed in switch code memory",
            )
        if dpf.pipeline != pipeline:
            hint = " (name it with egress)" if dpf.pipeline == "egress" else ""
            self.fail(
                CODE_VALUE,
                f"{path}: {quote(text)} is an {dpf.pipeline} DPF; this pointer names an "
                f"{pipeline} DPF{hint}",
            )
        return PC(False, dpf.entry)

    def named_dpf(self, scenario: Scenario, value: object, path: str) -> LinkedDPF | None:
        """The installed DPF a pointer value names, if it names one (not ``@switch:N``)."""
        text = self.fail.string(value, path)
        if text == "none" or text.startswith("@"):
            return None
        return self.installed(scenario, text, path)[1]

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
        app_ids = self.app_ids(scenario, table, tenant, switch)
        default = None
        if table.has("default_dpf"):
            default = self.pointer(scenario, table.raw("default_dpf"), table.at("default_dpf"))
        unauthorized = table.string("unauthorized", "drop")
        if unauthorized not in ("drop", "pass"):
            self.fail(
                CODE_VALUE,
                f'{table.at("unauthorized")}: expected "drop" or "pass", got {quote(unauthorized)}',
            )
        with self.refusals(table.path):
            control.authorize(
                tenant,
                app_id=app_ids[0],
                app_ids=app_ids[1:],
                default_dpf=default,
                unauthorized=unauthorized,
                metadata=table.boolean("metadata", False),
                privileged=table.boolean("privileged", False),
                recirculate=table.boolean("recirculate", False),
                pipes=pipes,
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

    def app_ids(
        self, scenario: Scenario, table: Table, tenant: int, switch: str
    ) -> tuple[int, ...]:
        """The tokens of a permission entry, primary first: ``app_id = N``, ``app_ids =
        [N, M, ...]`` (one per app the tenant runs: the KVS's cache and update apps), else
        those the switch's linked code granted the tenant, else 0."""
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
        image = scenario.images.get(switch)
        granted = [p for p in image[0].permissions if p.tenant == tenant] if image else []
        return granted[0].app_ids if granted else (0,)

    def destination(self, scenario: Scenario, value: object, path: str, switch: str) -> Destination:
        """A host name, or a table {host, port, ip, mac}. A host on this switch is reached
        through its port, a host elsewhere through the route to its IPv4 address."""
        network = scenario.network
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

    def memory(
        self, control: ControlPlane, table: Table, tenant: int, pipes: list[int] | None
    ) -> None:
        kind = table.string("kind")
        if kind not in MEMORY_KEYS:
            self.fail(
                CODE_VALUE,
                f'{table.at("kind")}: expected "segment", "null_segment" or "direct", '
                f"got {quote(kind)}",
            )
        table.only(*MEMORY_KEYS[kind])
        pipeline = self.pipeline(table)
        eu = table.integer("eu", high=255)
        lane = table.integer("lane", high=255)
        vaddr = table.integer("vaddr", 0)
        if kind == "direct":
            with self.refusals(table.path):
                control.map_direct(
                    tenant,
                    eu,
                    lane,
                    vaddr,
                    value=table.integer("value", 0),
                    pipes=pipes,
                    pipeline=pipeline,
                )
            return
        size = table.integer("size", None if kind == "segment" else 1 << 32, low=1, high=1 << 32)
        if kind == "null_segment":
            with self.refusals(table.path):
                control.map_null_segment(
                    tenant, eu, lane, vaddr, size, pipes=pipes, pipeline=pipeline
                )
            return
        with self.refusals(table.path):
            control.map_segment(tenant, eu, lane, vaddr, size, pipes=pipes, pipeline=pipeline)
        path = table.at("values")
        items = self.fail.array(table.raw("values"), path) if table.has("values") else []
        values = [self.fail.integer(v, f"{path}[{i}]") for i, v in enumerate(items)]
        if len(values) > size:
            self.fail(CODE_VALUE, f"{path}: {len(values)} values do not fit in {size} words")
        with self.refusals(path):
            control.write_memory(tenant, eu, lane, vaddr, values, pipes=pipes, pipeline=pipeline)

    def arrays(
        self, scenario: Scenario, table: Table, tenant: int, switch: str, pipes: list[int] | None
    ) -> None:
        """``arrays = { "kvs.values0" = [w0, w1, ...], "kvs.index" = { 100 = w } }``: words
        of the tenant's arrays the linked code placed (where: the switch's image)."""
        given = table.table("arrays")
        if given is None:
            return
        control = scenario.network.switches[switch].control
        for name, value in given.data.items():
            path = key_path(given.path, name)
            request = self.request(scenario, switch, tenant, name, path)
            if isinstance(value, list):
                cells = [(i, item, f"{path}[{i}]") for i, item in enumerate(value)]
            elif isinstance(value, dict):
                cells = [
                    (
                        self.fail.index_key(k, key_path(path, k), "an array index", 0xFFFF_FFFF),
                        item,
                        key_path(path, k),
                    )
                    for k, item in value.items()
                ]
            else:
                self.fail.wrong_type(path, "an array of words or a table index = word", value)
            targets = [p for p in request.pipes if pipes is None or p in pipes]
            for index, item, where in cells:
                word = self.fail.integer(item, where)
                if index >= request.size:
                    self.fail(
                        CODE_VALUE,
                        f"{where}: index {index} is beyond `{name}` ({request.size} words)",
                    )
                with self.refusals(where):
                    control.write_memory(
                        tenant,
                        request.eu,
                        request.lane,
                        index,
                        [word],
                        pipes=targets,
                        pipeline=request.pipeline,
                    )

    def request(
        self, scenario: Scenario, switch: str, tenant: int, name: str, path: str
    ) -> MemoryRequest:
        """The memory request of tenant ``tenant``'s array ``name`` on ``switch``."""
        image = scenario.images.get(switch)
        found = [
            r for r in (image[0].memory if image else ()) if r.tenant == tenant and r.array == name
        ]
        if not found:
            known = sorted(
                {r.array for r in (image[0].memory if image else ()) if r.tenant == tenant}
            )
            self.fail(
                CODE_UNKNOWN_NAME,
                f"{path}: the code of switch {switch} places no array {quote(name)} for tenant "
                f"{tenant} (it places: {', '.join(known) or 'none'})",
            )
        return found[0]

    def pipeline(self, table: Table, default: str = "ingress") -> str:
        """``pipeline = "ingress" | "egress"``: whose lane memories (default ``default``)."""
        value = table.string("pipeline", default)
        if value not in PIPELINES:
            self.fail(
                CODE_VALUE,
                f'{table.at("pipeline")}: expected "ingress" or "egress", got {quote(value)}',
            )
        return value

    def constants(
        self, control: ControlPlane, table: Table, tenant: int, pipes: list[int] | None
    ) -> None:
        """``constants = [v0, v1, ...]`` or ``constants = { 5 = v5 }``."""
        if not table.has("constants"):
            return
        value = table.raw("constants")
        path = table.at("constants")
        if isinstance(value, list):
            entries = [(i, item, f"{path}[{i}]") for i, item in enumerate(value)]
        elif isinstance(value, dict):
            entries = [
                (
                    self.fail.index_key(k, key_path(path, k), "a constant index"),
                    item,
                    key_path(path, k),
                )
                for k, item in value.items()
            ]
        else:
            self.fail.wrong_type(path, "an array or a table of constants", value)
        for index, item, where in entries:
            word = self.fail.integer(item, where)
            with self.refusals(where):
                control.set_constant(tenant, index, word, pipes=pipes)

    # -- traffic -------------------------------------------------------------------------------
    def packets(self, scenario: Scenario, table: Table, origin: str) -> None:
        network = scenario.network
        if table.has("pcap"):
            table.only("from", "pcap", "repeat")
        else:
            table.only(*PACKET_KEYS)
        sender = self.host_name(network, table.required("from"), table.at("from"))
        repeat = table.integer("repeat", 1, low=1, high=REPEAT_MAX)
        if table.has("pcap"):
            relative = table.string("pcap")
            for _ in range(repeat):
                try:
                    scenario.send_pcap(self.resolve(relative), sender, origin=relative)
                except ScenarioError as exc:
                    self.fail(exc.code, f"{table.at('pcap')}: {exc.message}")
            return
        receiver = self.host_name(network, table.required("to"), table.at("to"))
        tenant = table.integer("tenant", high=TENANT_MAX)
        profile = scenario.profile
        header = SwitchVMHeader(gas=profile.default_gas)
        if table.has("code"):
            header = self.packet_code(scenario, table)
        dpf, egress = header.dpf_ptr, header.egress_ptr
        app_id = header.app_id
        if table.has("dpf"):
            dpf = self.pointer(scenario, table.raw("dpf"), table.at("dpf"))
            named = self.named_dpf(scenario, table.raw("dpf"), table.at("dpf"))
            if named is not None and not table.has("code"):
                app_id = named.app_id  # the token its tenant's permission entry holds
        if table.has("egress"):
            egress = self.pointer(scenario, table.raw("egress"), table.at("egress"), "egress")
        stack_path = table.at("stack")
        items = self.fail.array(table.raw("stack"), stack_path) if table.has("stack") else []
        stack = tuple(self.fail.integer(v, f"{stack_path}[{i}]") for i, v in enumerate(items))
        header = SwitchVMHeader(
            app_id=table.integer("app_id", app_id),
            dpf_ptr=dpf,
            egress_ptr=egress,
            gas=table.integer("gas", header.gas, high=profile.max_gas),
            stack=stack,
            code=header.code,
        )
        payload = table.string("payload", "")
        try:
            options = encode_options(header, profile).data
        except EncodingError as exc:
            self.fail(exc.code, f"{table.path}: the packet cannot be encoded: {exc.message}")
        source, target = network.hosts[sender], network.hosts[receiver]
        frame = build_frame(
            tenant_id=tenant,
            options=options,
            inner=build_inner(payload.encode()),
            eth_src=mac_text(source.mac),
            eth_dst=mac_text(target.mac),
            ip_src=ip_text(source.ip),
            ip_dst=ip_text(target.ip),
        )
        shown = ", ".join(f"{v:#x}" for v in stack)
        summary = f"to {receiver}, tenant {tenant}, dpf {dpf or 'none'}"
        if egress is not None:  # spelt out only when the packet names an egress DPF
            summary += f", egress {egress}"
        summary += f", stack [{shown}]"
        for copy in range(repeat):
            packet = network.send(sender, frame)
            label = origin if repeat == 1 else f"{origin} #{copy + 1}"
            scenario.packets.append(QueuedPacket(packet, sender, label, summary, frame))

    def packet_code(self, scenario: Scenario, table: Table) -> SwitchVMHeader:
        """The in-packet code ``code`` names: an installed in-packet DPF (its code from the
        image, chain targets filled in), or a .dpfasm / one-DPF .dpfo file."""
        text = table.string("code")
        where = table.at("code")
        if Path(text).suffix.lower() in SUFFIXES:
            path = self.resolve(text)
            self.files.check_suffix(path, text, where, (".dpfasm", ".dpfo"))
            obj = self.files.object(path, where)
            if len(obj.dpfs) != 1:
                self.fail(CODE_FILE, f"{where}: {path} holds {len(obj.dpfs)} DPFs, not one")
            program = obj.dpfs[0].program
            if program.relocations:
                # unlinked, its NEXT_PC is a placeholder: never run one silently
                self.fail(
                    CODE_VALUE,
                    f"{where}: {program.name} chains to {program.relocations[0].target}, which "
                    "only linking resolves: give the file in a config block's code and name "
                    f"the DPF ({quote(obj.dpfs[0].symbol)}) here",
                )
            if not program.image().prologs:
                self.fail(
                    CODE_VALUE,
                    f"{where}: {program.name} has no in-packet code (install it in a config "
                    "block and name it with dpf)",
                )
            return program.header()
        _switch, dpf = self.installed(scenario, text, where)
        if dpf.in_packet_options is None:
            self.fail(
                CODE_VALUE,
                f"{where}: {quote(text)} is installed in switch code memory, not carried in "
                "packets (name it with dpf)",
            )
        return decode_options(dpf.in_packet_options, scenario.profile)

    def watch(self, scenario: Scenario, table: Table) -> MemoryWatch:
        table.only(*WATCH_KEYS)
        network = scenario.network
        switch = self.switch_name(network, table.required("switch"), table.at("switch"))
        tenant = table.integer("tenant", high=TENANT_MAX)
        if table.has("array"):
            # an array the switch's linked code placed: its EU and lane come from the image
            for key in ("eu", "lane"):
                if table.has(key):
                    self.fail(
                        CODE_VALUE, f"{table.at(key)}: give the array or eu and lane, not both"
                    )
            request = self.request(
                scenario, switch, tenant, table.string("array"), table.at("array")
            )
            eu, lane = request.eu, request.lane
            if table.has("pipeline"):
                self.fail(
                    CODE_VALUE,
                    f"{table.at('pipeline')}: an array's pipeline comes from the image "
                    f"({request.pipeline}); give the array or eu, lane and pipeline",
                )
            pipeline = request.pipeline
        else:
            eu, lane = table.integer("eu", high=255), table.integer("lane", high=255)
            pipeline = self.pipeline(table)
        watch = MemoryWatch(
            label=table.string("label", ""),
            switch=switch,
            pipe=table.integer("pipe", 0, high=len(network.switches[switch].pipes) - 1),
            tenant=tenant,
            eu=eu,
            lane=lane,
            vaddr=table.integer("vaddr", 0),
            count=table.integer("count", 1, low=1, high=4096),
            pipeline=pipeline,
        )
        # read once now, so an unmapped or foreign address is a load error, not a run error
        with self.refusals(table.path):
            network.switches[switch].control.read_memory(
                watch.tenant,
                watch.eu,
                watch.lane,
                watch.vaddr,
                watch.count,
                pipe=watch.pipe,
                pipeline=watch.pipeline,
            )
        return watch


__all__ = ["MemoryWatch", "QueuedPacket", "Scenario", "ScenarioError", "load_scenario"]
