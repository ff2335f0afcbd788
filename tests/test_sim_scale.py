"""Acceptance: 30,000 tenants on one switch, each with private memory, one shared DPF.

The in-switch counter DPF (``examples/asm/counter.dpfasm``) is installed once; every tenant
is authorized, gets its own counter word at the *same* virtual address, sends one packet
and must read back exactly 1 (and see the old value 0 in its reply). Deauthorizing every
tenant must then return the switch's memory, direct table and permission table to empty.

Memory layout: the counter lives in EU0 lane 0. A segment per tenant is not possible at
this scale: the segment TCAM holds ``segments_per_lane`` = 1,500 entries per lane, and even
spread over all 16 (EU, lane) pairs that is 24,000 < 30,000 (and the counter DPF reads
only EU0 lane 0). A direct mapping per tenant fits: EU0 lane 0 has 45,000 direct entries
and 45,000 words.
"""

from __future__ import annotations

from dpfc.asm import assemble_text
from dpfc.backends.sim import Switch
from dpfc.encoding import SwitchVMHeader
from dpfc.packet.build import PacketSpec, build_packet
from dpfc.packet.wire import parse_packet
from dpfc.target import BUILTIN_PROFILES
from tests.conftest import ROOT
from tests.sim_install import install_program

P = BUILTIN_PROFILES["tofino1"]
TENANTS = 30_000
FIRST = 0x10000  # tenant ids FIRST .. FIRST + TENANTS - 1: all three VNI bytes vary
COUNTER_VADDR = 0x2A  # the same virtual address for every tenant
VNI_OFFSET = 14 + 20 + 8 + 4  # Ethernet, IPv4 (no options), UDP, first 4 Geneve bytes
UDP_CHECKSUM = slice(14 + 20 + 6, 14 + 20 + 8)


def test_layout_arithmetic() -> None:
    lanes = P.num_eus * P.lanes
    assert lanes * P.segments_per_lane < TENANTS  # segments cannot give everyone a word
    assert P.direct_entries_per_lane >= TENANTS and P.memory_words_per_lane >= TENANTS
    assert P.permission_entries >= TENANTS


def test_thirty_thousand_tenants_share_one_dpf() -> None:
    sw = Switch("s1", P)
    c = sw.control
    c.set_default_port(1)
    program = assemble_text((ROOT / "examples/asm/counter.dpfasm").read_text(), "counter", P)
    counter = install_program(c, program)
    code_slots = c.usage().code_slots
    assert code_slots == 3  # prolog, EU0, epilog: installed once for everyone

    tenants = range(FIRST, FIRST + TENANTS)
    physical = set()
    for tenant in tenants:
        c.authorize(tenant)
        [word] = c.map_direct(tenant, 0, 0, COUNTER_VADDR)
        physical.add(word)
    assert len(physical) == TENANTS  # every tenant has its own word
    usage = c.usage()
    assert (usage.words, usage.direct_entries, usage.permission_entries) == (TENANTS,) * 3

    # One frame built with scapy; the others differ only in the Geneve VNI. The outer UDP
    # checksum covers the VNI, so it is set to 0 ("no checksum", allowed over IPv4).
    header = SwitchVMHeader(dpf_ptr=counter.entry, stack=(COUNTER_VADDR,))
    template = bytearray(build_packet(PacketSpec(FIRST, header), P).frame)
    template[UDP_CHECKSUM] = b"\0\0"
    assert template[VNI_OFFSET : VNI_OFFSET + 3] == FIRST.to_bytes(3, "big")
    replies = {}
    for tenant in tenants:
        template[VNI_OFFSET : VNI_OFFSET + 3] = tenant.to_bytes(3, "big")
        result = sw.process(bytes(template), 0)
        assert result.verdict == "pass", result.reason
        replies[tenant] = result.outputs[0][1]

    for tenant in (FIRST, FIRST + 1, FIRST + TENANTS // 2, FIRST + TENANTS - 1):
        reply = parse_packet(replies[tenant], P)
        assert reply.tenant_id == tenant
        assert reply.header is not None
        assert reply.header.stack == (COUNTER_VADDR, 0)  # id, then the count before
    for tenant in tenants:
        assert c.read_memory(tenant, 0, 0, COUNTER_VADDR) == [1], tenant
        stats = c.stats(tenant)
        assert (stats.packets, stats.executed, stats.passed, stats.unmapped) == (1, 1, 1, 0)
    assert list(sw.pipes[0].reports) == []

    for tenant in tenants:
        c.deauthorize(tenant)
    usage = c.usage()
    assert (
        usage.words,
        usage.direct_entries,
        usage.segments,
        usage.permission_entries,
        usage.forwarding_entries,
    ) == (0, 0, 0, 0, 0)
    assert usage.code_slots == code_slots  # shared code stays until the operator removes it
    memory = sw.pipes[0].lanes[0][0]
    assert memory.allocator.free_ranges == [(0, P.memory_words_per_lane)]
    assert memory.is_empty()
    # after deauthorization the tenants' packets are refused, not counted
    result = sw.process(bytes(template), 0)
    assert result.verdict == "drop"
    assert sw.pipes[0].stats == {}
