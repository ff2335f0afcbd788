"""The traffic of a scenario (``[[packets]]``): SwitchVM packets built from their keys, or
the frames of a pcap file, queued in the network in file order.

Contract: a packet's header is its in-packet ``code`` (an installed in-packet DPF, or a
``.dpfasm`` / one-DPF ``.dpfo`` file, never one that only linking completes), its DPF and
egress pointers (a pointer or an installed DPF's name, whose token becomes the packet's
``app_id`` unless ``code`` gives one), ``stack``, ``app_id`` and ``gas``; a header the
encoder refuses keeps its DPF2xxx code. ``repeat`` queues copies one after the other, each
with its origin (``packets[2] #3``) and a summary the run report prints.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from dpfc.encoding import EncodingError, SwitchVMHeader, decode_options, encode_options
from dpfc.packet import build_frame, build_inner

from .code import SUFFIXES
from .lookups import TENANT_MAX, BuilderBase
from .model import QueuedPacket, Scenario
from .reader import (
    CODE_FILE,
    CODE_VALUE,
    REPEAT_MAX,
    ScenarioError,
    Table,
    ip_text,
    mac_text,
    quote,
)

PACKET_KEYS = (
    "from", "to", "tenant", "code", "dpf", "egress", "stack", "app_id", "gas", "payload", "repeat"
)  # fmt: skip


class PacketBuilder(BuilderBase):
    """Queues the packets of a scenario."""

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
        header = SwitchVMHeader(gas=scenario.profile.default_gas)
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
        header = self.header_fields(
            scenario, table, replace(header, app_id=app_id, dpf_ptr=dpf, egress_ptr=egress)
        )
        payload = table.string("payload", "")
        options = self.options(scenario, table, header)
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
        shown = ", ".join(f"{v:#x}" for v in header.stack)
        summary = f"to {receiver}, tenant {tenant}, dpf {header.dpf_ptr or 'none'}"
        if header.egress_ptr is not None:  # spelt out only when the packet names an egress DPF
            summary += f", egress {header.egress_ptr}"
        summary += f", stack [{shown}]"
        for copy in range(repeat):
            packet = network.send(sender, frame)
            label = origin if repeat == 1 else f"{origin} #{copy + 1}"
            scenario.packets.append(QueuedPacket(packet, sender, label, summary, frame))

    def header_fields(
        self, scenario: Scenario, table: Table, header: SwitchVMHeader
    ) -> SwitchVMHeader:
        """``header``'s pointers and code with the ``stack``, ``app_id`` and ``gas`` the
        table gives (the header's own app id and gas are the defaults)."""
        stack_path = table.at("stack")
        items = self.fail.array(table.raw("stack"), stack_path) if table.has("stack") else []
        stack = tuple(self.fail.integer(v, f"{stack_path}[{i}]") for i, v in enumerate(items))
        return SwitchVMHeader(
            app_id=table.integer("app_id", header.app_id),
            dpf_ptr=header.dpf_ptr,
            egress_ptr=header.egress_ptr,
            gas=table.integer("gas", header.gas, high=scenario.profile.max_gas),
            stack=stack,
            code=header.code,
        )

    def options(self, scenario: Scenario, table: Table, header: SwitchVMHeader) -> bytes:
        """The SwitchVM options of ``header``; a header the encoder refuses keeps its code."""
        try:
            return encode_options(header, scenario.profile).data
        except EncodingError as exc:
            self.fail(exc.code, f"{table.path}: the packet cannot be encoded: {exc.message}")

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
