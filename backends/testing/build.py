"""One case of a test file as a scenario: the network, its code and configuration, the
case's own tenants and memory, and the frames of its packets.

Contract: :class:`CaseBuilder` is the scenario builder (``dpfc.backends.scenario``) with
the test file's defaults: without ``switches`` one switch named ``sw`` (1 pipe, 16
ports per pipe); the top-level ``code``, ``tenants``, ``routes`` and ``default_port`` are a
first ``config`` block for every pipe of the only switch (``code`` may be a file or a list
of files, each installed for the file's ``tenant``); a ``config`` block without ``switch``
configures the only switch. :meth:`CaseBuilder.case` builds a fresh scenario for one case
(every case starts from the same state), with the case's ``tenants`` after the file's and
its ``memory`` written last, and every pipe's RAND state seeded with the file's ``seed``
(ingress and egress alike, as a device's control seeds it); a case's ``placement`` recompiles the ``.dpf`` source of the
DPF its packets name with that placement. :meth:`CaseBuilder.frame` builds a packet's
frame: ``dpf`` names an installed DPF of any placement (the packet carries in-packet code,
names in-switch code by its slot), the other header keys are the scenario's.

Every error is the scenario reader's :class:`ScenarioError` with the key path in the test
file (:mod:`.locate` finds its line).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from dpfc.backends.scenario import (
    CODE_TOPOLOGY,
    CODE_VALUE,
    CodeEntry,
    CodeFiles,
    Scenario,
    Table,
    mac_text,
    quote,
)
from dpfc.backends.sim import Network
from dpfc.encoding import SwitchVMHeader, decode_options
from dpfc.packet import build_frame

from .inner import read_inner
from .memory import MemoryAccess
from .spec import TENANT_MAX, Case, Packet

TEST_KEYS = (
    "target", "seed", "links", "switches", "hosts", "config",
    "tenant", "code", "tenants", "routes", "default_port", "cases",
)  # fmt: skip
SHORTHAND = ("code", "tenants", "routes", "default_port")
DEFAULT_SWITCH = "sw"
CLIENT_IP, SERVER_IP = b"\x0a\x00\x00\x01", b"\x0a\x00\x00\x02"


@dataclass(frozen=True)
class Injected:
    """A packet ready to send: where it arrives, its bytes and the metadata it asks for."""

    path: str
    switch: str
    port: int
    frame: bytes
    tenant: int
    timestamp: int | None
    queue_depth: int | None


def _ip(address: bytes) -> str:
    return ".".join(str(b) for b in address)


class CaseBuilder(MemoryAccess):
    """Builds the scenario of each case of one test file (module docstring)."""

    def __init__(self, file: str, directory: Path, data: dict[str, object]) -> None:
        super().__init__(file, directory)
        self.top = Table(self.fail, "", data)
        self.top.only(*TEST_KEYS)
        self.default_tenant = self.top.optional_integer("tenant", high=TENANT_MAX)
        self.case_placement: tuple[str, tuple[str, ...]] | None = None
        self.shared: CodeFiles | None = None

    # -- the file's network and configuration -----------------------------------------------
    def base(self) -> Table:
        """The file's scenario part: its own keys, the default switch when it names none."""
        data = {k: v for k, v in self.top.data.items() if k not in (*SHORTHAND, "cases", "tenant")}
        if "switches" not in data:
            data["switches"] = [{"name": DEFAULT_SWITCH}]
        return Table(self.fail, "", data)

    def only_switch(self, network: Network, path: str, what: str) -> str:
        if len(network.switches) != 1:
            self.fail(
                CODE_TOPOLOGY,
                f"{path}: {what} is for a file with one switch; this one has "
                f"{len(network.switches)}: name the switch in a [[config]] block",
            )
        return next(iter(network.switches))

    def configs(self, scenario: Scenario) -> list[Table]:
        """The file's config blocks: the top-level shorthand first, then ``config``."""
        blocks: list[Table] = []
        given = [key for key in SHORTHAND if self.top.has(key)]
        if given:
            switch = self.only_switch(scenario.network, given[0], f"the top-level {given[0]}")
            data: dict[str, object] = {"switch": switch}
            data.update({key: self.top.data[key] for key in given})
            if self.top.has("code"):
                data["code"] = self.code_tables(self.top.raw("code"))
            blocks.append(Table(self.fail, "", data))
        for table in self.top.tables("config"):
            if not table.has("switch"):
                switch = self.only_switch(
                    scenario.network, table.path, "a config block without switch"
                )
                table = Table(self.fail, table.path, {"switch": switch, **table.data})
            blocks.append(table)
        return blocks

    def code_tables(self, value: object) -> list[object]:
        """``code = "f.dpf"``, ``["a.dpf", "b.dpfo"]`` or tables: each item a code table,
        installed for the file's tenant unless it names one."""
        items = value if isinstance(value, list) else [value]
        tables: list[object] = []
        for index, item in enumerate(items):
            if isinstance(item, str):
                item = {"file": item}
            elif not isinstance(item, dict):
                self.fail.wrong_type(f"code[{index}]", "a file name or a table", item)
            if "tenant" not in item and self.default_tenant is not None:
                item = {**item, "tenant": self.default_tenant}
            tables.append(item)
        return tables

    def prepare(self) -> Scenario:
        """The file's network with its code and configuration, no case's: every file it
        names read (and compiled) once, for the cases to share."""
        self.given_files = self.shared
        self.case_placement = None
        scenario = self.network(self.base())
        self.shared = self.files
        self.install(scenario, self.configs(scenario))
        return scenario

    # -- one case -------------------------------------------------------------------------------
    def case(self, case: Case) -> Scenario:
        """A fresh scenario for ``case``: the file's network and configuration, then the
        case's tenants and memory."""
        self.given_files = self.shared
        self.case_placement = None
        if case.placement is not None:
            named = tuple(str(p.table.raw("dpf")) for p in case.packets)
            self.case_placement = (case.placement, named)
        scenario = self.network(self.base())
        self.shared = self.files
        switch = self.case_switch(scenario, case)
        blocks = self.configs(scenario)
        if case.table.has("tenants"):
            data = {"switch": switch, "tenants": case.table.raw("tenants")}
            blocks.append(Table(self.fail, case.path, data))
        self.install(scenario, blocks)
        seed = self.base().integer("seed", 0, high=2**63 - 1)
        for node in scenario.network.switches.values():
            node.seed_random(seed)  # every pipe's RAND, as a device's is seeded
        if case.placement is not None:
            self.check_placement(scenario, case)
        memory = case.table.table("memory")
        if memory is not None:
            self.write_words(scenario, switch, self.case_tenant(case, None), memory)
        return scenario

    def case_switch(self, scenario: Scenario, case: Case) -> str:
        if case.table.has("switch"):
            return self.switch_name(
                scenario.network, case.table.raw("switch"), case.table.at("switch")
            )
        return next(iter(scenario.network.switches))

    def case_tenant(self, case: Case, packet: Packet | None) -> int:
        if packet is not None and packet.table.has("tenant"):
            return packet.table.integer("tenant", high=TENANT_MAX)
        if case.table.has("tenant"):
            return case.table.integer("tenant", high=TENANT_MAX)
        assert self.default_tenant is not None  # read_cases checked that one is given
        return self.default_tenant

    def code(self, table: Table, switch: str, pipes: list[int] | None) -> CodeEntry:
        """A code entry; a ``.dpf`` source holding a DPF the case places otherwise is
        compiled with that placement."""
        entry = super().code(table, switch, pipes)
        if self.case_placement is None or entry.file.suffix.lower() != ".dpf":
            return entry
        placement, named = self.case_placement
        obj = self.files.object(entry.file, f"{entry.path}.file", entry.placements)
        moved = [
            d.program.name
            for d in obj.dpfs
            if (d.symbol in named or d.program.name in named)
            and d.program.placement.value != placement
        ]
        if not moved:
            return entry
        placements = dict(entry.placements)
        placements.update((name, placement) for name in moved)
        return replace(entry, placements=tuple(sorted(placements.items())))

    def check_placement(self, scenario: Scenario, case: Case) -> None:
        assert case.placement is not None
        for packet in case.packets:
            text = str(packet.table.raw("dpf"))
            dpf = self.named_dpf(scenario, text, packet.table.at("dpf"))
            if dpf is not None and dpf.placement != case.placement:
                self.fail(
                    CODE_VALUE,
                    f"{case.table.at('placement')}: {quote(text)} is compiled for "
                    f"{dpf.placement} placement in {dpf.object}; placing it otherwise needs "
                    "its .dpf source in the file's code",
                )

    # -- packets --------------------------------------------------------------------------------
    def frame(self, scenario: Scenario, case: Case, packet: Packet) -> Injected:
        table = packet.table
        network = scenario.network
        switch = self.case_switch(scenario, case)
        header = self.packet_header(scenario, table)
        sender = receiver = None
        if table.has("from"):
            sender = network.hosts[self.host_name(network, table.raw("from"), table.at("from"))]
        if table.has("to"):
            receiver = network.hosts[self.host_name(network, table.raw("to"), table.at("to"))]
        port = 0
        if table.has("port"):
            port = table.integer("port", high=0xFFFF)
        elif sender is not None and sender.switch == switch:
            port = sender.port
        ports = network.switches[switch].ports
        if port >= ports:
            self.fail(CODE_VALUE, f"{table.at('port')}: switch {switch} has ports 0..{ports - 1}")
        tenant = self.case_tenant(case, packet)
        ip_src = sender.ip if sender is not None else CLIENT_IP
        ip_dst = receiver.ip if receiver is not None else SERVER_IP
        options = self.options(scenario, table, header)
        payload = table.string("payload", "").encode()
        inner = read_inner(self.fail, table.table("inner"))

        def build(data: bytes) -> bytes:
            return build_frame(
                tenant_id=tenant,
                options=options,
                inner=inner.frame(data),
                eth_src=mac_text(sender.mac if sender is not None else b"\2\0" + ip_src),
                eth_dst=mac_text(receiver.mac if receiver is not None else b"\2\0" + ip_dst),
                ip_src=_ip(ip_src),
                ip_dst=_ip(ip_dst),
            )

        frame = build(payload)
        if table.has("packet_length"):
            length = table.integer("packet_length", high=0xFFFF)
            if length < len(frame):
                self.fail(
                    CODE_VALUE,
                    f"{table.at('packet_length')}: {length} bytes is shorter than the packet "
                    f"({len(frame)} bytes with its headers)",
                )
            frame = build(payload + bytes(length - len(frame)))
        return Injected(
            packet.path,
            switch,
            port,
            frame,
            tenant,
            table.optional_integer("timestamp", high=2**63 - 1),
            table.optional_integer("queue_depth", high=2**31 - 1),
        )

    def packet_header(self, scenario: Scenario, table: Table) -> SwitchVMHeader:
        """``code`` as in a scenario; ``dpf`` and ``egress`` name an installed DPF of any
        placement (an in-packet one: the packet carries its code, at most one does) or are
        pointers. The app id is the token of the DPF ``code`` or ``dpf`` names, else of the
        egress DPF."""
        header = SwitchVMHeader(gas=scenario.profile.default_gas)
        carried = ""  # the key whose DPF's code the packet carries
        if table.has("code"):
            header, carried = self.packet_code(scenario, table), "code"
        for key in ("dpf", "egress"):
            if not table.has(key):
                continue
            where = table.at(key)
            named = self.named_dpf(scenario, table.raw(key), where)
            if named is not None and named.in_packet_options is not None:
                if carried:
                    self.fail(
                        CODE_VALUE,
                        f"{where}: the packet carries the code {carried} names; a packet "
                        "carries one in-packet DPF",
                    )
                if key == "egress" and named.pipeline != "egress":
                    self.fail(CODE_VALUE, f"{where}: {quote(named.symbol)} is an ingress DPF")
                carried = key
                code = decode_options(named.in_packet_options, scenario.profile)
                header = replace(header, code=code.code, egress_ptr=code.egress_ptr)
                if key == "dpf":
                    header = replace(header, dpf_ptr=code.dpf_ptr)
            elif named is not None and (key == "egress" or named.pipeline == "egress"):
                pointer = self.pointer(scenario, table.raw(key), where, "egress")
                header = replace(header, egress_ptr=pointer)
            else:
                header = replace(header, dpf_ptr=self.pointer(scenario, table.raw(key), where))
            if named is not None and (key == "dpf" or not (table.has("dpf") or table.has("code"))):
                header = replace(header, app_id=named.app_id)
        return self.header_fields(scenario, table, header)


__all__ = ["DEFAULT_SWITCH", "TEST_KEYS", "CaseBuilder", "Injected"]
