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
* Files a scenario names (assembly, JSON objects, pcaps, TOML profiles) are relative to the
  scenario's directory.
* Order of effects: the network, then every ``config`` block's code (all blocks, in file
  order, so a tenant may name a DPF installed by a later block), then each block's tenants
  (permissions, memory, constants, forwarding, multicast), routes and default port; last,
  the packets are queued in file order (``repeat`` copies one after the other).

One module holds the whole schema, reader and builder: splitting it would scatter the one
table of keys a reader of the format wants to see in one place.
"""

from __future__ import annotations

import difflib
import json
import re
import tomllib
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import NoReturn

from dpfc.asm import assemble
from dpfc.diagnostics import DiagnosticError, Note, SourceFile
from dpfc.encoding import EncodingError, SwitchVMHeader, encode_options
from dpfc.isa.bundle import PC
from dpfc.machine import MachineProgram
from dpfc.objfile import read_object
from dpfc.packet import build_frame, build_inner, read_pcap
from dpfc.target import BUILTIN_PROFILES, TargetError, TargetProfile, load_profile

from .control import ControlPlane, ControlPlaneError
from .install import InstalledDPF, install_program
from .network import Network, TopologyError
from .state import Destination

# Codes of scenario errors (control-plane refusals keep their DPF40xx codes).
CODE_UNREADABLE = "DPF4100"  # the scenario file cannot be read, or has an unknown extension
CODE_SYNTAX = "DPF4101"  # not valid TOML / JSON
CODE_UNKNOWN_KEY = "DPF4102"
CODE_MISSING_KEY = "DPF4103"
CODE_TYPE = "DPF4104"
CODE_VALUE = "DPF4105"  # right type, wrong value (range, address syntax, PC syntax, ...)
CODE_UNKNOWN_NAME = "DPF4106"  # a switch, host or DPF name that the scenario does not define
CODE_TOPOLOGY = "DPF4107"  # duplicate name, port in use or out of range
CODE_FILE = "DPF4108"  # a file the scenario names cannot be read or is malformed

WORD_MAX = 0xFFFF_FFFF
REPEAT_MAX = 1_000_000
INDEX_KEY = re.compile(r"^(0x[0-9a-fA-F]+|[0-9]+)$")
BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")  # keys TOML writes without quotes
MAC_TEXT = re.compile(r"^[0-9a-fA-F]{2}(:[0-9a-fA-F]{2}){5}$")


class ScenarioError(Exception):
    """A scenario is invalid; ``file: error[code]: message`` is how the CLI prints it."""

    def __init__(
        self, file: str, code: str, message: str, *, line: int | None = None, column: int = 1
    ) -> None:
        super().__init__(f"{file}: {message} [{code}]")
        self.file = file
        self.code = code
        self.message = message
        self.line = line  # known for syntax errors only
        self.column = column


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


@dataclass
class Scenario:
    file: str
    directory: Path
    profile: TargetProfile
    network: Network
    packets: list[QueuedPacket] = field(default_factory=list)
    installed: dict[str, tuple[str, InstalledDPF]] = field(default_factory=dict)
    watches: list[MemoryWatch] = field(default_factory=list)

    def send_pcap(self, pcap: str | Path, host: str, *, origin: str | None = None) -> None:
        """Queue every frame of ``pcap`` as sent by ``host`` (path relative to the cwd)."""
        if host not in self.network.hosts:
            raise ScenarioError(
                self.file,
                CODE_UNKNOWN_NAME,
                f"no host named {_quote(host)} (hosts: {_names(self.network.hosts)})",
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


# -- the typed reader --------------------------------------------------------------------------


def _quote(text: str) -> str:
    return json.dumps(text)


def _names(items: Iterable[str]) -> str:
    listed = sorted(items)
    return ", ".join(listed) if listed else "none defined"


def _show(value: object) -> str:
    """How a value is named in an error message."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return _quote(value)
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "a table"
    if value is None:
        return "null"
    return type(value).__name__  # pragma: no cover - TOML/JSON give only the above


def _key_path(path: str, key: str) -> str:
    shown = key if BARE_KEY.match(key) else _quote(key)
    return f"{path}.{shown}" if path else shown


class _Table:
    """One table of the file with its key path. :meth:`only` rejects unknown keys before
    anything is built (a typo is an error, not a silent default); typed getters check each
    value."""

    def __init__(self, fail: _Fail, path: str, data: dict[str, object]) -> None:
        self.fail = fail
        self.path = path
        self.data = data

    def only(self, *allowed: str) -> None:
        for key in self.data:
            if key in allowed:
                continue
            close = difflib.get_close_matches(key, allowed, n=1)
            hint = f" (did you mean {_quote(close[0])}?)" if close else ""
            where = self.path or "the top level"
            self.fail(
                CODE_UNKNOWN_KEY,
                f"{where}: unknown key {_quote(key)}{hint}; allowed keys: {', '.join(allowed)}",
            )

    def at(self, key: str) -> str:
        return _key_path(self.path, key)

    def has(self, key: str) -> bool:
        return key in self.data

    def raw(self, key: str) -> object:
        return self.data.get(key)

    def required(self, key: str) -> object:
        if key not in self.data:
            where = self.path or "the top level"
            self.fail(CODE_MISSING_KEY, f"{where}: missing required key {_quote(key)}")
        return self.data[key]

    def integer(
        self, key: str, default: int | None = None, *, low: int = 0, high: int = WORD_MAX
    ) -> int:
        value = self.required(key) if default is None else self.data.get(key, default)
        return self.fail.integer(value, self.at(key), low, high)

    def optional_integer(self, key: str, *, low: int = 0, high: int = WORD_MAX) -> int | None:
        if key not in self.data:
            return None
        return self.integer(key, low=low, high=high)

    def string(self, key: str, default: str | None = None) -> str:
        value = self.required(key) if default is None else self.data.get(key, default)
        return self.fail.string(value, self.at(key))

    def boolean(self, key: str, default: bool) -> bool:
        value = self.data.get(key, default)
        if not isinstance(value, bool):
            self.fail.wrong_type(self.at(key), "a boolean (true or false)", value)
        return value

    def tables(self, key: str) -> list[_Table]:
        """An array of tables (absent: empty)."""
        value = self.data.get(key, [])
        items = self.fail.array(value, self.at(key))
        return [
            self.fail.table(item, f"{self.at(key)}[{index}]") for index, item in enumerate(items)
        ]

    def table(self, key: str) -> _Table | None:
        if key not in self.data:
            return None
        return self.fail.table(self.data[key], self.at(key))


class _Fail:
    """Raises :class:`ScenarioError` for one file; also checks loose values (array items)."""

    def __init__(self, file: str) -> None:
        self.file = file

    def __call__(self, code: str, message: str) -> NoReturn:
        raise ScenarioError(self.file, code, message)

    def wrong_type(self, path: str, expected: str, value: object) -> NoReturn:
        self(CODE_TYPE, f"{path}: expected {expected}, got {_show(value)}")

    def integer(self, value: object, path: str, low: int = 0, high: int = WORD_MAX) -> int:
        if not isinstance(value, int) or isinstance(value, bool):
            self.wrong_type(path, "an integer", value)
        if not low <= value <= high:
            self(CODE_VALUE, f"{path}: {value} is out of range {low}..{high}")
        return value

    def string(self, value: object, path: str) -> str:
        if not isinstance(value, str):
            self.wrong_type(path, "a string", value)
        return value

    def array(self, value: object, path: str) -> list[object]:
        if not isinstance(value, list):
            self.wrong_type(path, "an array", value)
        return value

    def table(self, value: object, path: str) -> _Table:
        if not isinstance(value, dict):
            self.wrong_type(path, "a table", value)
        return _Table(self, path, value)

    def ipv4(self, value: object, path: str) -> bytes:
        text = self.string(value, path)
        parts = text.split(".")
        if len(parts) != 4 or not all(p.isdigit() and int(p) <= 255 for p in parts):
            self(CODE_VALUE, f"{path}: {_quote(text)} is not an IPv4 address (a.b.c.d)")
        return bytes(int(p) for p in parts)

    def mac(self, value: object, path: str) -> bytes:
        text = self.string(value, path)
        if not MAC_TEXT.match(text):
            self(CODE_VALUE, f"{path}: {_quote(text)} is not a MAC address (xx:xx:xx:xx:xx:xx)")
        return bytes.fromhex(text.replace(":", ""))

    def index_key(self, key: str, path: str, what: str, high: int = 0xFFFF) -> int:
        if not INDEX_KEY.match(key):
            self(CODE_VALUE, f"{path}: {what} must be an integer key, got {_quote(key)}")
        value = int(key, 0)
        if value > high:
            self(CODE_VALUE, f"{path}: {what} {value} is out of range 0..{high}")
        return value


def _mac_text(mac: bytes) -> str:
    return ":".join(f"{b:02x}" for b in mac)


def _ip_text(ip: bytes) -> str:
    return ".".join(str(b) for b in ip)


# -- loading -----------------------------------------------------------------------------------


def _parse_file(path: Path, file: str) -> dict[str, object]:
    suffix = path.suffix.lower()
    if suffix not in (".toml", ".json"):
        raise ScenarioError(
            file,
            CODE_UNREADABLE,
            f"a scenario is a .toml or .json file, got {_quote(path.suffix or path.name)}",
        )
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ScenarioError(file, CODE_UNREADABLE, f"cannot read: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise ScenarioError(file, CODE_UNREADABLE, "cannot read: not UTF-8 text") from None
    if suffix == ".json":
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ScenarioError(
                file, CODE_SYNTAX, f"invalid JSON: {exc.msg}", line=exc.lineno, column=exc.colno
            ) from None
        if not isinstance(data, dict):
            raise ScenarioError(
                file, CODE_TYPE, f"the top level must be a JSON object, got {_show(data)}"
            )
        return data
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        message = str(exc)
        match = re.search(r" \(at line (\d+), column (\d+)\)$", message)
        if match is None:
            raise ScenarioError(file, CODE_SYNTAX, f"invalid TOML: {message}") from None
        raise ScenarioError(
            file,
            CODE_SYNTAX,
            f"invalid TOML: {message[: match.start()]}",
            line=int(match.group(1)),
            column=int(match.group(2)),
        ) from None


def load_scenario(path: str | Path) -> Scenario:
    """Read, check and build the scenario at ``path`` (errors name it as given)."""
    file = str(path)
    data = _parse_file(Path(path), file)
    return _Builder(file, Path(path).parent).build(data)


TOP_KEYS = ("target", "seed", "switches", "hosts", "links", "config", "packets", "watch")
TENANT_KEYS = (
    "id",
    "app_id",
    "default_dpf",
    "unauthorized",
    "metadata",
    "privileged",
    "recirculate",
    "memory",
    "constants",
    "forwarding",
    "multicast",
)
MEMORY_KEYS = {
    "segment": ("kind", "eu", "lane", "vaddr", "size", "values"),
    "null_segment": ("kind", "eu", "lane", "vaddr", "size"),
    "direct": ("kind", "eu", "lane", "vaddr", "value"),
}
PACKET_KEYS = ("from", "to", "tenant", "code", "dpf", "stack", "app_id", "gas", "payload", "repeat")
TENANT_MAX = (1 << 24) - 1


class _Builder:
    """Builds one scenario; every check names the key path of the value it rejects."""

    def __init__(self, file: str, directory: Path) -> None:
        self.file = file
        self.directory = directory
        self.fail = _Fail(file)
        self.programs: dict[Path, MachineProgram] = {}

    @contextmanager
    def refusals(self, path: str) -> Iterator[None]:
        """Report a refused control-plane call with its own code, at ``path``."""
        try:
            yield
        except ControlPlaneError as exc:
            self.fail(exc.code, f"{path}: {exc.message}")

    def resolve(self, relative: str) -> Path:
        return self.directory / relative

    def program(self, table: _Table, key: str, profile: TargetProfile) -> MachineProgram:
        """The program of a ``.dpfasm`` file or of a one-DPF object (``.dpfo``)."""
        relative = table.string(key)
        path = self.resolve(relative)
        cached = self.programs.get(path)
        if cached is not None:
            return cached
        where = table.at(key)
        suffix = path.suffix.lower()
        if suffix not in (".dpfasm", ".dpfo"):
            self.fail(
                CODE_FILE,
                f"{where}: {_quote(relative)} is neither assembly (.dpfasm) nor an object (.dpfo)",
            )
        try:
            data = path.read_bytes()
        except OSError as exc:
            self.fail(CODE_FILE, f"{where}: cannot read {path}: {exc.strerror}")
        if suffix == ".dpfo":
            try:
                obj = read_object(data, str(path), profile)
            except DiagnosticError as exc:
                self.fail(CODE_FILE, f"{where}: {exc.diagnostics[0].message}")
            if len(obj.dpfs) != 1:
                self.fail(CODE_FILE, f"{where}: {path} holds {len(obj.dpfs)} DPFs, not one")
            program = obj.dpfs[0].program
        else:
            try:
                text = data.decode("utf-8")
            except UnicodeDecodeError:
                self.fail(CODE_FILE, f"{where}: cannot read {path}: not UTF-8 text")
            try:
                program = assemble(SourceFile(str(path), text), profile)
            except DiagnosticError as exc:
                note = Note(f"assembled for {where} of {self.file}")
                raise DiagnosticError(
                    [replace(d, notes=(*d.notes, note)) for d in exc.diagnostics]
                ) from None
        self.programs[path] = program
        return program

    # -- the whole file ------------------------------------------------------------------------
    def build(self, data: dict[str, object]) -> Scenario:
        top = _Table(self.fail, "", data)
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
        for table, (name, pipes) in zip(configs, targets, strict=True):
            for code in table.tables("code"):
                self.code(scenario, code, name, pipes)
        for table, (name, pipes) in zip(configs, targets, strict=True):
            self.configure(scenario, table, name, pipes)
        for index, table in enumerate(top.tables("packets")):
            self.packets(scenario, table, f"packets[{index}]")
        scenario.watches = [self.watch(scenario, table) for table in top.tables("watch")]
        return scenario

    def target(self, top: _Table) -> TargetProfile:
        name = top.string("target", "tofino1")
        if name in BUILTIN_PROFILES:
            return BUILTIN_PROFILES[name]
        if not name.endswith(".toml"):
            self.fail(
                CODE_VALUE,
                f"target: unknown target {_quote(name)} (built-in: {', '.join(BUILTIN_PROFILES)};"
                " or a .toml profile file)",
            )
        try:
            return load_profile(str(self.resolve(name)))
        except TargetError as exc:
            self.fail(CODE_FILE, f"target: {exc}")

    # -- topology ------------------------------------------------------------------------------
    def switch(self, network: Network, table: _Table) -> None:
        table.only("name", "pipes", "ports_per_pipe", "switch_id")
        name = table.string("name")
        pipes = table.integer("pipes", 1, low=1, high=64)
        ports = table.integer("ports_per_pipe", 16, low=1, high=1024)
        switch_id = table.optional_integer("switch_id")
        if name in network.switches or name in network.hosts:
            self.fail(CODE_TOPOLOGY, f"{table.at('name')}: the name {_quote(name)} is already used")
        try:
            network.add_switch(name, pipes=pipes, ports_per_pipe=ports, switch_id=switch_id)
        except TopologyError as exc:
            self.fail(CODE_TOPOLOGY, f"{table.at('name')}: {exc}")

    def switch_name(self, network: Network, value: object, path: str) -> str:
        name = self.fail.string(value, path)
        if name not in network.switches:
            self.fail(
                CODE_UNKNOWN_NAME,
                f"{path}: no switch named {_quote(name)} (switches: {_names(network.switches)})",
            )
        return name

    def host_name(self, network: Network, value: object, path: str) -> str:
        name = self.fail.string(value, path)
        if name not in network.hosts:
            self.fail(
                CODE_UNKNOWN_NAME,
                f"{path}: no host named {_quote(name)} (hosts: {_names(network.hosts)})",
            )
        return name

    def host(self, network: Network, table: _Table) -> None:
        table.only("name", "ip", "mac", "switch", "port")
        name = table.string("name")
        if name in network.switches or name in network.hosts:
            self.fail(CODE_TOPOLOGY, f"{table.at('name')}: the name {_quote(name)} is already used")
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
            self.fail(CODE_VALUE, f'{path}: a link end is "switch:port", got {_quote(text)}')
        return self.switch_name(network, name, path), int(number)

    def links(self, network: Network, top: _Table) -> None:
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
    def config_target(self, network: Network, table: _Table) -> tuple[str, list[int] | None]:
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

    def code(self, scenario: Scenario, table: _Table, switch: str, pipes: list[int] | None) -> None:
        table.only("file", "name", "prolog_slot", "relocate", "owners")
        program = self.program(table, "file", scenario.profile)
        name = table.string("name", program.name)
        last_slot = scenario.profile.code_slots_per_stage - 1
        prolog_slot = table.optional_integer("prolog_slot", high=last_slot)
        relocate = table.boolean("relocate", True)
        owners = None
        if table.has("owners"):
            path = table.at("owners")
            items = self.fail.array(table.raw("owners"), path)
            owners = [
                self.fail.integer(v, f"{path}[{i}]", 0, TENANT_MAX) for i, v in enumerate(items)
            ]
        if name in scenario.installed:
            self.fail(
                CODE_TOPOLOGY,
                f"{table.at('name')}: a DPF named {_quote(name)} is already installed "
                "(give this one another name)",
            )
        control = scenario.network.switches[switch].control
        # An explicit prolog slot is overwritten by install_program (that is how a DPF is
        # replaced in place); in a scenario, two DPFs at one slot are a mistake.
        for pipe in range(len(control.pipes)) if pipes is None else pipes:
            if prolog_slot is not None and control.code_at(0, prolog_slot, pipe=pipe):
                self.fail(
                    CODE_VALUE,
                    f"{table.at('prolog_slot')}: prolog slot {prolog_slot} of pipe {pipe} is "
                    "already used by an earlier DPF",
                )
        with self.refusals(table.path):
            installed = install_program(
                control,
                program,
                prolog_slot=prolog_slot,
                relocate=relocate,
                owners=owners,
                pipes=pipes,
            )
        scenario.installed[name] = (switch, installed)

    def pointer(self, scenario: Scenario, value: object, path: str) -> PC | None:
        """``@switch:N``, ``@packet:N``, ``none`` or the name of an installed DPF."""
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
                    f"installed DPF, got {_quote(text)}",
                )
        found = scenario.installed.get(text)
        if found is None:
            self.fail(
                CODE_UNKNOWN_NAME,
                f"{path}: no installed DPF named {_quote(text)} (installed: "
                f"{_names(scenario.installed)})",
            )
        return found[1].entry

    def configure(
        self, scenario: Scenario, table: _Table, switch: str, pipes: list[int] | None
    ) -> None:
        network = scenario.network
        control = network.switches[switch].control
        for tenant in table.tables("tenants"):
            self.tenant(scenario, tenant, switch, pipes)
        routes = table.table("routes")
        for key, value in routes.data.items() if routes is not None else ():
            path = _key_path(table.at("routes"), key)
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
        self, scenario: Scenario, table: _Table, switch: str, pipes: list[int] | None
    ) -> None:
        table.only(*TENANT_KEYS)
        control = scenario.network.switches[switch].control
        tenant = table.integer("id", high=TENANT_MAX)
        app_id = table.integer("app_id", 0)
        default = None
        if table.has("default_dpf"):
            default = self.pointer(scenario, table.raw("default_dpf"), table.at("default_dpf"))
        unauthorized = table.string("unauthorized", "drop")
        if unauthorized not in ("drop", "pass"):
            self.fail(
                CODE_VALUE,
                f'{table.at("unauthorized")}: expected "drop" or "pass", got {_quote(unauthorized)}',
            )
        with self.refusals(table.path):
            control.authorize(
                tenant,
                app_id=app_id,
                default_dpf=default,
                unauthorized=unauthorized,
                metadata=table.boolean("metadata", False),
                privileged=table.boolean("privileged", False),
                recirculate=table.boolean("recirculate", False),
                pipes=pipes,
            )
        for memory in table.tables("memory"):
            self.memory(control, memory, tenant, pipes)
        self.constants(control, table, tenant, pipes)
        forwarding = table.table("forwarding")
        for key, value in forwarding.data.items() if forwarding is not None else ():
            path = _key_path(table.at("forwarding"), key)
            index = self.fail.index_key(key, path, "a forwarding index")
            destination = self.destination(scenario, value, path, switch)
            with self.refusals(path):
                control.set_forwarding(tenant, index, destination, pipes=pipes)
        multicast = table.table("multicast")
        for key, value in multicast.data.items() if multicast is not None else ():
            path = _key_path(table.at("multicast"), key)
            group = self.fail.index_key(key, path, "a multicast group")
            items = self.fail.array(value, path)
            destinations = [
                self.destination(scenario, item, f"{path}[{i}]", switch)
                for i, item in enumerate(items)
            ]
            with self.refusals(path):
                control.set_multicast_group(tenant, group, destinations, pipes=pipes)

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
        self, control: ControlPlane, table: _Table, tenant: int, pipes: list[int] | None
    ) -> None:
        kind = table.string("kind")
        if kind not in MEMORY_KEYS:
            self.fail(
                CODE_VALUE,
                f'{table.at("kind")}: expected "segment", "null_segment" or "direct", '
                f"got {_quote(kind)}",
            )
        table.only(*MEMORY_KEYS[kind])
        eu = table.integer("eu", high=255)
        lane = table.integer("lane", high=255)
        vaddr = table.integer("vaddr", 0)
        if kind == "direct":
            with self.refusals(table.path):
                control.map_direct(
                    tenant, eu, lane, vaddr, value=table.integer("value", 0), pipes=pipes
                )
            return
        size = table.integer("size", None if kind == "segment" else 1 << 32, low=1, high=1 << 32)
        if kind == "null_segment":
            with self.refusals(table.path):
                control.map_null_segment(tenant, eu, lane, vaddr, size, pipes=pipes)
            return
        with self.refusals(table.path):
            control.map_segment(tenant, eu, lane, vaddr, size, pipes=pipes)
        path = table.at("values")
        items = self.fail.array(table.raw("values"), path) if table.has("values") else []
        values = [self.fail.integer(v, f"{path}[{i}]") for i, v in enumerate(items)]
        if len(values) > size:
            self.fail(CODE_VALUE, f"{path}: {len(values)} values do not fit in {size} words")
        with self.refusals(path):
            control.write_memory(tenant, eu, lane, vaddr, values, pipes=pipes)

    def constants(
        self, control: ControlPlane, table: _Table, tenant: int, pipes: list[int] | None
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
                    self.fail.index_key(k, _key_path(path, k), "a constant index"),
                    item,
                    _key_path(path, k),
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
    def packets(self, scenario: Scenario, table: _Table, origin: str) -> None:
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
            program = self.program(table, "code", profile)
            if not program.image().prologs:
                self.fail(
                    CODE_VALUE,
                    f"{table.at('code')}: {program.name} has no in-packet code (install it in a "
                    "config block and name it with dpf)",
                )
            header = program.header()
        dpf = header.dpf_ptr
        if table.has("dpf"):
            dpf = self.pointer(scenario, table.raw("dpf"), table.at("dpf"))
        stack_path = table.at("stack")
        items = self.fail.array(table.raw("stack"), stack_path) if table.has("stack") else []
        stack = tuple(self.fail.integer(v, f"{stack_path}[{i}]") for i, v in enumerate(items))
        header = SwitchVMHeader(
            app_id=table.integer("app_id", header.app_id),
            dpf_ptr=dpf,
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
            eth_src=_mac_text(source.mac),
            eth_dst=_mac_text(target.mac),
            ip_src=_ip_text(source.ip),
            ip_dst=_ip_text(target.ip),
        )
        shown = ", ".join(f"{v:#x}" for v in stack)
        summary = f"to {receiver}, tenant {tenant}, dpf {dpf or 'none'}, stack [{shown}]"
        for copy in range(repeat):
            packet = network.send(sender, frame)
            label = origin if repeat == 1 else f"{origin} #{copy + 1}"
            scenario.packets.append(QueuedPacket(packet, sender, label, summary, frame))

    def watch(self, scenario: Scenario, table: _Table) -> MemoryWatch:
        table.only("label", "switch", "pipe", "tenant", "eu", "lane", "vaddr", "count")
        network = scenario.network
        switch = self.switch_name(network, table.required("switch"), table.at("switch"))
        watch = MemoryWatch(
            label=table.string("label", ""),
            switch=switch,
            pipe=table.integer("pipe", 0, high=len(network.switches[switch].pipes) - 1),
            tenant=table.integer("tenant", high=TENANT_MAX),
            eu=table.integer("eu", high=255),
            lane=table.integer("lane", high=255),
            vaddr=table.integer("vaddr", 0),
            count=table.integer("count", 1, low=1, high=4096),
        )
        # read once now, so an unmapped or foreign address is a load error, not a run error
        with self.refusals(table.path):
            network.switches[switch].control.read_memory(
                watch.tenant, watch.eu, watch.lane, watch.vaddr, watch.count, pipe=watch.pipe
            )
        return watch


__all__ = ["MemoryWatch", "QueuedPacket", "Scenario", "ScenarioError", "load_scenario"]
