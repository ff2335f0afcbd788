"""Tenant isolation and robustness of the simulated SwitchVM switch.

* Two tenants with the same virtual addresses, forwarding indices, multicast groups and
  constant indices never see each other's state; code slots with ``owners`` run only for
  their owners.
* Permission bits (LOAD_MD, set_port, recirculate) are enforced: the packet gets the
  tenant's unauthorized action (drop or pass), the refusal is counted and reported.
* Unknown tenants, app-id mismatches (drop or pass) and default DPFs.
* 10,000 random malformed or hostile packets (hypothesis) never raise, never change a
  victim tenant's memory (ingress or egress) or the operator's tables, and each pass and
  each egress run ends with a verdict and a reason.
* An endless recirculation chain is stopped by gas and reported while other tenants'
  packets queued behind it are all processed first (no starvation).
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from dataclasses import replace
from itertools import product
from typing import TypeVar

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dpfc.asm import assemble_text
from dpfc.backends.sim import (
    Destination,
    Network,
    PassResult,
    Switch,
)
from dpfc.encoding import OPTION_CLASS, SwitchVMHeader, encode_options
from dpfc.isa.bundle import (
    EPILOG_STAGE,
    PC,
    PROLOG_STAGE,
    Bundle,
    CodeImage,
    Control,
    EpilogBundle,
    Imm,
    Operand,
    Register,
    Selector,
    Steering,
)
from dpfc.isa.opcodes import AluOp, CtrlOp, MemOp, SelectorKind
from dpfc.packet.build import PacketSpec, build_packet
from dpfc.packet.layers import build_frame, build_inner
from dpfc.packet.wire import parse_packet
from dpfc.target import BUILTIN_PROFILES
from tests import strategies
from tests.conftest import ROOT
from tests.sim_install import Installed, install_program, word

P = BUILTIN_PROFILES["tofino1"]
L = P.lanes
ALICE, BOB, CAROL = 0x0A11CE, 0x000B0B, 0x00CA01  # CAROL: authorized, owns nothing
STRANGER = 0x5EC4E7  # never authorized
OUT = 15  # the default port: where passed packets leave
A = [Register.a(i) for i in range(L)]
B = [Register.b(i) for i in range(L)]
PK0 = PC(True, 0)
VERDICTS = {"pass", "drop", "return_to_sender", "forward", "multicast", "set_port", "recirculate"}
COUNTER = assemble_text((ROOT / "examples/asm/counter.dpfasm").read_text(), "counter.dpfasm", P)


def asm(body: str, app: int = 0) -> str:
    return f".dpf t\n.app {app}\n{body}"


def frame_of(text: str, tenant: int, stack: tuple[int, ...] = (), gas: int = 8) -> bytes:
    program = assemble_text(text, "test.dpfasm", P)
    return build_packet(PacketSpec(tenant, program.header(stack, gas)), P).frame


def invoke(entry: PC, tenant: int, stack: tuple[int, ...] = (), app_id: int = 0) -> bytes:
    """A packet that runs the in-switch DPF at ``entry``."""
    header = SwitchVMHeader(app_id=app_id, dpf_ptr=entry, stack=stack)
    return build_packet(PacketSpec(tenant, header), P).frame


def plain_geneve(tenant: int, options: bytes = b"") -> bytes:
    """A Geneve frame without a SwitchVM option (``options`` of other classes allowed)."""
    return build_frame(tenant_id=tenant, options=options, inner=build_inner(b"payload"))


def stack_of(result: PassResult) -> tuple[int, ...]:
    assert result.outputs, result.reason
    header = parse_packet(result.outputs[0][1], P).header
    assert header is not None
    return header.stack


def reports(sw: Switch, kind: str | None = None) -> list[tuple[int, str]]:
    return [(r.tenant, r.kind) for r in sw.control.pipes[0].reports if kind in (None, r.kind)]


def two_tenants() -> tuple[Switch, Installed]:
    """Alice and Bob with identical virtual layouts; the counter DPF installed once."""
    sw = Switch("s1", P, switch_id=1)
    c = sw.control
    c.set_default_port(OUT)
    counter = install_program(c, COUNTER)
    for tenant, base in ((ALICE, 0xA000), (BOB, 0xB000)):
        c.authorize(tenant)
        c.map_direct(tenant, 0, 0, 5, value=base)  # the counter's id 5
        c.map_segment(tenant, 1, 2, 0x100, 16)
        c.write_memory(tenant, 1, 2, 0x100, [base + i for i in range(16)])
        c.map_null_segment(tenant, 2, 3)
        c.write_memory(tenant, 2, 3, 0, [base])
    c.authorize(CAROL)
    return sw, counter


# -- memory, steering tables, constants, code -------------------------------------------------
def test_same_virtual_address_different_words() -> None:
    sw, counter = two_tenants()
    for _ in range(3):
        assert stack_of(sw.process(invoke(counter.entry, ALICE, (5,)), 0))[0] == 5
    result = sw.process(invoke(counter.entry, BOB, (5,)), 0)
    assert stack_of(result) == (5, 0xB000)  # Bob's own old value
    assert sw.control.read_memory(ALICE, 0, 0, 5) == [0xA003]
    assert sw.control.read_memory(BOB, 0, 0, 5) == [0xB001]
    # Carol has no mapping at 5: her FAADD is unmapped, nobody's word changes
    result = sw.process(invoke(counter.entry, CAROL, (5,)), 0)
    assert stack_of(result) == (5, 0)
    assert sw.control.stats(CAROL).unmapped == 1
    assert sw.control.read_memory(ALICE, 0, 0, 5) == [0xA003]


def test_tenant_zero_is_an_ordinary_tenant() -> None:
    # VNI 0 is a valid tenant id: nothing may treat it as "no tenant" or as a wildcard
    sw, counter = two_tenants()
    sw.control.authorize(0)
    sw.control.map_direct(0, 0, 0, 5, value=0x1000)
    assert stack_of(sw.process(invoke(counter.entry, 0, (5,)), 0)) == (5, 0x1000)
    assert stack_of(sw.process(invoke(counter.entry, CAROL, (5,)), 0)) == (5, 0)  # unmapped
    assert stack_of(sw.process(invoke(counter.entry, ALICE, (5,)), 0)) == (5, 0xA000)
    assert sw.control.read_memory(0, 0, 0, 5) == [0x1001]
    sw.control.deauthorize(0)
    assert sw.control.read_memory(ALICE, 0, 0, 5) == [0xA001]


def test_segments_and_null_segments_are_per_tenant() -> None:
    sw, _ = two_tenants()
    store = asm(
        """
prolog p:
    POP A2
    POP A3
    POP B2
    POP B3
    JMP e0
eu0 e0:
    JMP e1
eu1 e1:
    STORE [A2], B2
    JMP e2
eu2 e2:
    STORE [A3], B3
    HALT x
epilog x:
"""
    )
    # Alice writes into her segment (0x105) and her null segment (any miss, 0xDEAD)
    result = sw.process(frame_of(store, ALICE, (0x105, 0xDEAD, 0x5555, 0x6666)), 0)
    assert result.verdict == "pass"
    assert sw.control.read_memory(ALICE, 1, 2, 0x105) == [0x5555]
    assert sw.control.read_memory(ALICE, 2, 3, 0x1234) == [0x6666]
    assert sw.control.read_memory(BOB, 1, 2, 0x100, 16) == [0xB000 + i for i in range(16)]
    assert sw.control.read_memory(BOB, 2, 3, 0xDEAD) == [0xB000]
    # Carol's same accesses are unmapped and change nothing
    result = sw.process(frame_of(store, CAROL, (0x105, 0xDEAD, 1, 1)), 0)
    assert sw.control.stats(CAROL).unmapped == 2
    assert sw.control.read_memory(ALICE, 1, 2, 0x105) == [0x5555]


def test_forwarding_entries_are_per_tenant() -> None:
    sw, _ = two_tenants()
    sw.control.set_forwarding(ALICE, 1, Destination(port=4))
    sw.control.set_forwarding(BOB, 1, Destination(port=6, ip_dst=bytes([10, 6, 6, 6])))
    text = asm("prolog p:\n JMP e\neu0 e:\n HALT x\nepilog x:\n FWD forward, 1\n")
    alice = sw.process(frame_of(text, ALICE), 0)
    bob = sw.process(frame_of(text, BOB), 0)
    assert [p for p, _ in alice.outputs] == [4]
    assert [p for p, _ in bob.outputs] == [6]
    assert parse_packet(alice.outputs[0][1], P).ip_dst == bytes([10, 0, 0, 2])
    assert parse_packet(bob.outputs[0][1], P).ip_dst == bytes([10, 6, 6, 6])
    # Carol has no entry 1: refused -> her unauthorized action (drop), counted, reported
    carol = sw.process(frame_of(text, CAROL), 0)
    assert (carol.verdict, carol.outputs) == ("drop", [])
    assert sw.control.stats(CAROL).refused == 1
    assert reports(sw, "refused") == [(CAROL, "refused")]


def test_multicast_groups_are_per_tenant() -> None:
    sw, _ = two_tenants()
    sw.control.set_multicast_group(ALICE, 1, [Destination(port=4), Destination(port=5)])
    sw.control.set_multicast_group(BOB, 1, [Destination(port=6)])
    sw.control.update_permissions(CAROL, unauthorized="pass")
    text = asm("prolog p:\n JMP e\neu0 e:\n HALT x\nepilog x:\n FWD multicast, 1\n")
    assert [p for p, _ in sw.process(frame_of(text, ALICE), 0).outputs] == [4, 5]
    assert [p for p, _ in sw.process(frame_of(text, BOB), 0).outputs] == [6]
    frame = frame_of(text, CAROL)
    carol = sw.process(frame, 0)
    assert (carol.verdict, carol.outputs) == ("pass", [(OUT, frame)])  # unchanged
    assert sw.control.stats(CAROL).refused == 1


def test_constants_are_per_tenant() -> None:
    sw, _ = two_tenants()
    sw.control.set_constant(ALICE, 9, 0xA1)
    sw.control.set_constant(BOB, 9, 0xB1)
    text = asm("prolog p:\n JMP e\neu0 e:\n LOAD_CONST B0, 9\n HALT x\nepilog x:\n PUSH B0\n")
    assert stack_of(sw.process(frame_of(text, ALICE), 0)) == (0xA1,)
    assert stack_of(sw.process(frame_of(text, BOB), 0)) == (0xB1,)
    assert stack_of(sw.process(frame_of(text, CAROL), 0)) == (0,)


def test_code_slots_with_owners_run_only_for_their_owners() -> None:
    sw, counter = two_tenants()
    private = install_program(sw.control, COUNTER, owners=[ALICE])
    assert private.entry != counter.entry
    assert stack_of(sw.process(invoke(private.entry, ALICE, (5,)), 0)) == (5, 0xA000)
    result = sw.process(invoke(private.entry, BOB, (5,)), 0)
    assert result.verdict == "drop"
    assert "other tenants" in result.reason
    assert sw.control.stats(BOB).faults == 1
    assert reports(sw, "fault") == [(BOB, "fault")]
    assert sw.control.read_memory(BOB, 0, 0, 5) == [0xB000]
    # an owned EU slot reached from Bob's own in-packet prolog is refused too
    eu_slot = next(slot for stage, slot in private.slots if stage == 1)
    text = asm(f"prolog p:\n POP A0\n JMP @switch:{eu_slot}\nepilog x:\n")
    result = sw.process(frame_of(text, BOB, (5,)), 0)
    assert result.verdict == "drop"
    assert sw.control.stats(BOB).faults == 2
    assert sw.control.read_memory(BOB, 0, 0, 5) == [0xB000]
    # the shared counter stays usable by everyone
    assert stack_of(sw.process(invoke(counter.entry, BOB, (5,)), 0)) == (5, 0xB000)


def test_missing_code_is_a_fault() -> None:
    sw, _ = two_tenants()
    result = sw.process(invoke(PC(False, 4000), ALICE, (5,)), 0)
    assert result.verdict == "drop"
    assert "empty" in result.reason
    assert sw.control.stats(ALICE).faults == 1


# -- permission bits ----------------------------------------------------------------------------
LOAD_MD_DPF = asm(
    """
prolog p:
    POP A0
    LOAD_MD B1, switch_id
    JMP e
eu0 e:
    LOAD_IMM B0, 1
    FAADD B0, [A0]
    HALT x
epilog x:
    PUSH B1
"""
)


@pytest.mark.parametrize("action", ["drop", "pass"])
def test_load_md_needs_the_metadata_bit(action: str) -> None:
    sw, _ = two_tenants()
    sw.control.update_permissions(ALICE, unauthorized=action)
    frame = frame_of(LOAD_MD_DPF, ALICE, (5,))
    result = sw.process(frame, 0)
    assert result.verdict == action
    assert result.outputs == ([] if action == "drop" else [(OUT, frame)])
    assert result.executed == ((PROLOG_STAGE, PK0),)  # nothing ran past the prolog fetch
    assert sw.control.read_memory(ALICE, 0, 0, 5) == [0xA000]
    stats = sw.control.stats(ALICE)
    assert (stats.refused, stats.executed) == (1, 0)
    assert (stats.dropped, stats.passed) == ((1, 0) if action == "drop" else (0, 1))
    assert reports(sw) == [(ALICE, "refused")]
    # with the bit the same packet runs
    sw.control.update_permissions(ALICE, metadata=True)
    assert stack_of(sw.process(frame, 0)) == (1,)
    assert sw.control.read_memory(ALICE, 0, 0, 5) == [0xA001]


@pytest.mark.parametrize("action", ["drop", "pass"])
@pytest.mark.parametrize(
    ("steering", "grant"),
    [
        ("set_port, 2", {"privileged": True}),
        ("recirculate", {"recirculate": True}),
    ],
)
def test_privileged_steering_needs_its_bit(
    steering: str, grant: dict[str, bool], action: str
) -> None:
    sw, _ = two_tenants()
    sw.control.update_permissions(ALICE, unauthorized=action)
    # privileged without recirculate may not recirculate; recirculate alone may not set_port
    other = {"privileged": True} if "recirculate" in grant else {"recirculate": True}
    sw.control.update_permissions(ALICE, **other)
    text = asm(
        "prolog p:\n POP A0\n JMP e\neu0 e:\n LOAD_IMM B0, 1\n FAADD B0, [A0]\n HALT x\n"
        f"epilog x:\n FWD {steering}\n"
    )
    frame = frame_of(text, ALICE, (5,))
    result = sw.process(frame, 0)
    assert result.verdict == action
    assert result.recirculated is None
    assert result.outputs == ([] if action == "drop" else [(OUT, frame)])  # unchanged
    # the EU ran before the epilog was refused: its memory update stays (docs/isa.md §6.12)
    assert sw.control.read_memory(ALICE, 0, 0, 5) == [0xA001]
    assert sw.control.stats(ALICE).refused == 1
    assert reports(sw) == [(ALICE, "refused")]
    sw.control.update_permissions(ALICE, **grant)
    granted = sw.process(frame, 0)
    assert granted.verdict == steering.split(",")[0]


# -- unknown tenants, app ids, default DPFs -----------------------------------------------------
def test_unknown_tenant_with_a_dpf_is_dropped_and_reported() -> None:
    sw, counter = two_tenants()
    result = sw.process(invoke(counter.entry, STRANGER, (5,)), 0)
    assert (result.verdict, result.tenant, result.executed) == ("drop", STRANGER, ())
    assert result.reason
    assert reports(sw) == [(STRANGER, "unauthorized")]
    assert sw.control.stats(STRANGER).packets == 0  # no counters for strangers
    assert STRANGER not in sw.control.pipes[0].stats


def test_unknown_tenant_without_a_dpf_is_routed_unchanged() -> None:
    sw, _ = two_tenants()
    sw.control.set_route(bytes([10, 0, 0, 2]), 3)
    frame = plain_geneve(STRANGER)
    assert sw.process(frame, 0).outputs == [(3, frame)]
    udp = build_inner(b"not geneve")[14:]  # an IPv4/UDP packet to port 9000
    ordinary = bytes.fromhex("020000000002020000000001") + b"\x08\x00" + udp
    result = sw.process(ordinary, 0)
    assert (result.verdict, result.outputs) == ("pass", [(OUT, ordinary)])
    assert reports(sw) == []


@pytest.mark.parametrize("action", ["drop", "pass"])
def test_app_id_mismatch(action: str) -> None:
    sw, counter = two_tenants()
    sw.control.update_permissions(ALICE, app_id=0xA, app_ids=[0xAA], unauthorized=action)
    wrong = invoke(counter.entry, ALICE, (5,), app_id=0xB)
    result = sw.process(wrong, 0)
    assert result.verdict == action
    assert result.outputs == ([] if action == "drop" else [(OUT, wrong)])
    assert result.executed == ()
    assert sw.control.read_memory(ALICE, 0, 0, 5) == [0xA000]
    stats = sw.control.stats(ALICE)
    assert (stats.unauthorized, stats.executed) == (1, 0)
    assert reports(sw) == [(ALICE, "unauthorized")]
    for token in (0xA, 0xAA):  # the token and an extra accepted token run the DPF
        assert sw.process(invoke(counter.entry, ALICE, (5,), app_id=token), 0).verdict == "pass"
    assert sw.control.read_memory(ALICE, 0, 0, 5) == [0xA002]


def test_passing_without_a_route_counts_as_dropped() -> None:
    # "pass" routes by the outer destination; with no route the packet is dropped, and the
    # counters say so whichever path passed it (no DPF, unauthorized action pass, FWD pass)
    sw, counter = two_tenants()
    sw.control.set_default_port(None)
    sw.control.update_permissions(BOB, app_id=1, unauthorized="pass")
    frames = [
        plain_geneve(ALICE),
        invoke(counter.entry, BOB, (5,)),
        invoke(counter.entry, ALICE, (5,)),
    ]
    results = [sw.process(frame, 0) for frame in frames]
    assert [r.verdict for r in results] == ["drop"] * 3
    assert all("no route" in r.reason for r in results)
    alice, bob = sw.control.stats(ALICE), sw.control.stats(BOB)
    assert (alice.passed, alice.dropped, bob.passed, bob.dropped) == (0, 2, 0, 1)


def test_default_dpf_runs_on_packets_without_a_switchvm_option() -> None:
    sw, _ = two_tenants()
    default = install_program(
        sw.control,
        assemble_text(
            ".placement switch\nprolog p:\n JMP e\n"
            "eu0 e:\n LOAD_IMM B0, 1\n FAADD B0, [A0]\n HALT x\nepilog x:\n",
            "default",
            P,
        ),
    )
    sw.control.map_direct(ALICE, 0, 0, 0, value=0)  # A0 is 0: registers start at zero
    sw.control.set_default_dpf(ALICE, default.entry)
    foreign_option = bytes.fromhex("0102 03 01") + b"\xde\xad\xbe\xef"  # another class
    for frame in (plain_geneve(ALICE), plain_geneve(ALICE, foreign_option)):
        result = sw.process(frame, 0)
        assert result.executed[0] == (PROLOG_STAGE, default.entry)
        assert result.outputs == [(OUT, frame)]  # nothing pushed: leaves unchanged
    # a SwitchVM header whose pointer is none runs the default DPF too
    header = SwitchVMHeader(dpf_ptr=None)
    result = sw.process(build_packet(PacketSpec(ALICE, header), P).frame, 0)
    assert result.executed[0] == (PROLOG_STAGE, default.entry)
    assert sw.control.read_memory(ALICE, 0, 0, 0) == [3]
    # without a default DPF the packet passes unchanged; Bob's default is not Alice's
    frame = plain_geneve(BOB)
    result = sw.process(frame, 0)
    assert (result.verdict, result.outputs, result.executed) == ("pass", [(OUT, frame)], ())
    assert sw.control.stats(BOB).passed == 1


# -- hostile traffic (hypothesis) ----------------------------------------------------------------
ATTACKERS = {1: 0, 2: 0x1234, 3: 0}  # tenant -> app id token; 3 may recirculate
SENDERS = (*ATTACKERS, 4, 0xFFFFFF)  # 4 and 0xFFFFFF are unknown
# Victims never send. A mutated packet may still carry a victim's VNI (bit flips turn 1
# into 0): such a packet is the victim's own traffic, and its example re-reads the baseline.
VICTIMS = (0, 0x5A5A5A, 0xA5A5A5)
SHARED_VADDRS = (0x0, 0x7, 0x100, 0x10F, 0x8000_0000, 0xFFFF_FFFF)
PACKETS_PER_EXAMPLE = 10
SRC_MAC, DST_MAC = bytes.fromhex("020000000001"), bytes.fromhex("020000000002")
SRC_IP, DST_IP = bytes([10, 0, 0, 1]), bytes([10, 0, 0, 2])
INNER = build_inner(b"fuzz")
T = TypeVar("T")


def ip_checksum(header: bytes) -> bytes:
    total = sum(struct.unpack(f"!{len(header) // 2}H", header))
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return struct.pack("!H", ~total & 0xFFFF)


def raw_frame(tenant: int, options: bytes, inner: bytes = INNER) -> bytes:
    """Ethernet/IPv4/UDP/Geneve around ``options`` without scapy (fast enough for 10,000)."""
    geneve = bytes([len(options) // 4, 0, 0x65, 0x58]) + tenant.to_bytes(3, "big") + b"\0"
    udp_length = 8 + len(geneve) + len(options) + len(inner)
    ip = bytearray(
        struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + udp_length, 1, 0, 64, 17, 0, SRC_IP, DST_IP)
    )
    ip[10:12] = ip_checksum(bytes(ip))
    udp = struct.pack("!HHHH", 50000, 6081, udp_length, 0)
    return DST_MAC + SRC_MAC + b"\x08\x00" + bytes(ip) + udp + geneve + options + inner


def test_raw_frame_matches_the_scapy_builder() -> None:
    options = encode_options(SwitchVMHeader(dpf_ptr=PC(False, 3), stack=(1, 2)), P).data
    expected = bytearray(build_frame(tenant_id=0x123456, options=options, inner=INNER))
    expected[40:42] = b"\0\0"  # scapy fills in the optional UDP checksum
    assert raw_frame(0x123456, options) == bytes(expected)


def hostile_code(
    ops: list[MemOp],
    push: tuple[Register, ...],
    steering: Steering,
    next_pc: PC | None,
    hdr_mod: bool,
) -> CodeImage:
    """POP every register (addresses into A, data into B), then memory ops in all four EUs."""
    pop_all = Bundle(
        tuple(Selector(r, SelectorKind.POP) for r in (*A, *B)),
        (AluOp.NOP,) * L,
        (MemOp.NOP,) * L,
        Control(CtrlOp.JMP, PK0),
    )
    eus = tuple(
        (Bundle((), (AluOp.NOP,) * L, tuple(ops[eu * L : eu * L + L]), Control(CtrlOp.JMP, PK0)),)
        for eu in range(P.num_eus)
    )
    return CodeImage((pop_all,), eus, (EpilogBundle(push, steering, next_pc, hdr_mod),))


class Entropy:
    """Choices decoded from one drawn byte string.

    Hypothesis spends tens of microseconds per draw, so a packet built from dozens of draws
    would make 10,000 packets take minutes; one blob per packet keeps shrinking useful (the
    all-zero blob decodes to the first choice everywhere) at a fraction of the cost.
    """

    def __init__(self, blob: bytes) -> None:
        self.number = int.from_bytes(blob, "little")

    def below(self, n: int) -> int:
        self.number, value = divmod(self.number, n)
        return value

    def choice(self, items: Sequence[T]) -> T:
        return items[self.below(len(items))]

    def flag(self) -> bool:
        return self.below(2) == 1

    def word(self) -> int:
        # boundary values often, like tests/strategies.words()
        return self.choice(strategies.BOUNDARY_WORDS) if self.flag() else self.below(1 << 32)

    def address(self) -> int:
        return self.choice(SHARED_VADDRS) if self.below(4) else self.word()

    def blob(self, size: int) -> bytes:
        return bytes(self.below(256) for _ in range(size))


def sender(e: Entropy) -> tuple[int, int]:
    """A sending tenant and the app id its packet carries (usually its own token)."""
    tenant = e.choice(SENDERS)
    return tenant, ATTACKERS.get(tenant, 0) if e.below(8) else e.word()


def hostile_packet(e: Entropy) -> bytes:
    """Every lane of every EU reads or writes the shared virtual addresses."""
    tenant, app_id = sender(e)
    ops = [e.choice(list(MemOp)) for _ in range(P.num_eus * L)]
    push = tuple(e.choice([*A, *B]) for _ in range(e.below(2 * L + 1)))
    action = e.choice(P.steering)
    value: Operand | None = None
    if action.takes_value:
        value = Imm(e.below(4)) if e.flag() else e.choice([*A, *B])
    next_pc = PC(False, e.below(6)) if e.flag() else None
    code = hostile_code(ops, push, Steering(action.name, value), next_pc, e.flag())
    stack = [e.address() for _ in range(L)] + [e.word() for _ in range(L)]
    stack += [e.word() for _ in range(e.below(P.stack_max_depth - 2 * L + 1))]
    header = SwitchVMHeader(
        app_id=app_id,
        dpf_ptr=PK0,
        gas=e.below(71),  # beyond 63 the network's hop limit stops a loop
        stack=tuple(stack),
        code=code,
    )
    return raw_frame(tenant, encode_options(header, P).data)


def pointer_packet(e: Entropy) -> bytes:
    """In-switch pointers anywhere in code memory (most slots empty), or none; any stack."""
    tenant, app_id = sender(e)
    header = SwitchVMHeader(
        app_id=app_id,
        dpf_ptr=PC(False, e.choice([0, 1, 4, 5, 7, 8, e.below(4096)])) if e.below(8) else None,
        gas=e.below(4),
        stack=tuple(e.address() for _ in range(e.below(P.stack_max_depth + 1))),
    )
    return raw_frame(tenant, encode_options(header, P).data)


def deep_stack_packet(e: Entropy) -> bytes:
    """A full stack and a PUSH that overflows it."""
    tenant, app_id = sender(e)
    nop = Bundle((), (AluOp.NOP,) * L, (MemOp.NOP,) * L, Control(CtrlOp.JMP, PK0))
    code = CodeImage(
        (nop,),
        ((replace(nop, control=Control(CtrlOp.HALT, PK0)),),),
        (EpilogBundle(push=tuple(e.choice(A) for _ in range(1 + e.below(2 * L)))),),
    )
    stack = tuple(e.address() for _ in range(P.stack_max_depth))
    header = SwitchVMHeader(app_id=app_id, dpf_ptr=PK0, stack=stack, code=code)
    return raw_frame(tenant, encode_options(header, P).data)


def random_option_packet(e: Entropy) -> bytes:
    """Random option bytes (any class, any length fields) in a well-formed Geneve frame."""
    tenant, _ = sender(e)
    options = e.blob(4 * e.below(64))
    if options and e.flag():  # often the SwitchVM class, so that the decoder is reached
        options = OPTION_CLASS.to_bytes(2, "big") + options[2:]
    return raw_frame(tenant, options)


def mutated_packet(e: Entropy) -> bytes:
    """A valid packet with bit flips, then a truncation, an overwritten run or junk."""
    frame = bytearray(hostile_packet(e) if e.flag() else pointer_packet(e))
    for _ in range(e.below(9)):
        position = e.below(len(frame) * 8)
        frame[position // 8] ^= 1 << (position % 8)
    mutation = e.below(4)
    if mutation == 1:
        del frame[e.below(len(frame)) :]
    elif mutation == 2:
        start = e.below(len(frame))
        junk = e.blob(1 + e.below(16))
        frame[start : start + len(junk)] = junk
    elif mutation == 3:
        frame += e.blob(1 + e.below(32))
    return bytes(frame)


@st.composite
def random_code_packets(draw: st.DrawFn) -> bytes:
    """Any code that decodes: random images, pointers (often to empty slots), stacks."""
    header = draw(strategies.headers(P))
    tenant = draw(st.sampled_from(SENDERS))
    if draw(st.booleans()):
        header = replace(header, app_id=ATTACKERS.get(tenant, 0))
    return raw_frame(tenant, encode_options(header, P).data)


CHEAP_KINDS = (hostile_packet, pointer_packet, deep_stack_packet, random_option_packet)
BLOB_BYTES = 160


@st.composite
def hostile_frames(draw: st.DrawFn) -> tuple[bytes, int]:
    """(frame, ingress port): a mutated packet in 4 of 10, random decodable code in 1 of 10,
    the other kinds in the rest."""
    kind = draw(st.integers(0, 9))
    port = draw(st.integers(0, 15))
    if kind == 0:
        return draw(random_code_packets()), port
    entropy = Entropy(draw(st.binary(min_size=BLOB_BYTES, max_size=BLOB_BYTES)))
    if kind <= 4:
        return mutated_packet(entropy), port
    return CHEAP_KINDS[kind % len(CHEAP_KINDS)](entropy), port


def test_every_packet_kind_builds() -> None:
    for kind in (*CHEAP_KINDS, mutated_packet):
        for blob in (bytes(BLOB_BYTES), bytes(range(BLOB_BYTES)), b"\xff" * BLOB_BYTES):
            assert kind(Entropy(blob))


class World:
    """Victims and attackers with the same virtual layout on every (EU, lane); shared and
    owned code in some slots of every stage."""

    def __init__(self) -> None:
        self.net = Network(P, seed=3)
        self.switch = self.net.add_switch("s1")
        c = self.switch.control
        c.set_default_port(OUT)
        for tenant in VICTIMS:
            c.authorize(tenant, metadata=True, privileged=True, recirculate=True)
        c.authorize(1)
        c.authorize(2, app_id=ATTACKERS[2], unauthorized="pass", metadata=True)
        c.authorize(3, metadata=True, privileged=True, recirculate=True)
        # the same layout in both pipelines' lane memories: hostile egress DPFs (headers
        # with an egress pointer) reach the egress set
        for tenant, pipeline in product((*VICTIMS, *ATTACKERS), ("ingress", "egress")):
            for eu in range(P.num_eus):
                for lane in range(L):
                    for vaddr in (0x0, 0x7, 0x8000_0000, 0xFFFF_FFFF):
                        c.map_direct(
                            tenant, eu, lane, vaddr, value=tenant & 0xFFFF, pipeline=pipeline
                        )
                    c.map_segment(tenant, eu, lane, 0x100, 16, pipeline=pipeline)
                    words = [tenant ^ i for i in range(16)]
                    c.write_memory(tenant, eu, lane, 0x100, words, pipeline=pipeline)
                    if tenant != 2:
                        c.map_null_segment(tenant, eu, lane, pipeline=pipeline)
        for tenant in (*VICTIMS, *ATTACKERS):
            for index in range(3):
                c.set_forwarding(tenant, index, Destination(port=index + 1))
                c.set_constant(tenant, index, tenant + index)
            c.set_multicast_group(tenant, 0, [Destination(port=4), Destination(port=5)])
        # the counter for everyone, a copy owned by a victim, and a few hostile slots
        install_program(c, COUNTER)
        install_program(c, COUNTER, owners=[VICTIMS[0]])
        for slot in range(4, 8):
            hostile = hostile_code([MemOp.NOP] * 16, (), Steering("pass"), None, False)
            c.install_code(PROLOG_STAGE, slot, word(PROLOG_STAGE, hostile.prologs[0], P))
            for stage in range(1, P.num_eus + 1):
                ops = [MemOp.STORE, MemOp.FAADD, MemOp.FAMAX, MemOp.FAOR] * 4
                jump = Control(CtrlOp.JMP, PC(False, slot))
                c.install_code(
                    stage, slot, word(stage, Bundle((), (AluOp.ADD,) * L, tuple(ops[:L]), jump), P)
                )
            recirculate = EpilogBundle(steering=Steering("recirculate"))
            c.install_code(EPILOG_STAGE, slot, word(EPILOG_STAGE, recirculate, P))
        self.victim_words = self.read_victims()
        pipe = self.switch.pipes[0]
        self.tables = self.read_tables()
        self.victim_stats = self.read_victim_stats()
        self.passes = 0
        self.victim_passes = 0
        self.verdicts: dict[str, int] = {}
        assert all(v for v in self.victim_words.values())
        assert pipe.stats == {}

    def read_victims(self) -> dict[tuple[str, int, int, int], list[int]]:
        out = {}
        pipe = self.switch.pipes[0]
        for pipeline in ("ingress", "egress"):
            for eu, lanes in enumerate(pipe.memories(pipeline)):
                for lane, memory in enumerate(lanes):
                    for tenant in VICTIMS:
                        physical = [
                            memory.direct[(tenant, v)] for v in memory.tenant_directs(tenant)
                        ]
                        for segment in memory.segments[tenant].all():
                            physical += range(segment.pbase, segment.pbase + segment.words)
                        out[(pipeline, tenant, eu, lane)] = [memory.words[p] for p in physical]
        return out

    def read_victim_stats(self) -> list[object]:
        return [replace(self.switch.control.stats(t)) for t in VICTIMS]

    def read_tables(self) -> tuple[object, ...]:
        pipe = self.switch.pipes[0]
        return (
            dict(pipe.permissions),
            {stage: dict(slots) for stage, slots in pipe.code.items()},
            {t: dict(e) for t, e in pipe.forwarding.items()},
            {t: dict(g) for t, g in pipe.multicast.items()},
            {t: list(v) for t, v in pipe.constants.items()},
            dict(pipe.routes),
            pipe.default_port,
        )

    def check(self, result: PassResult) -> None:
        self.passes += 1
        self.verdicts[result.verdict] = self.verdicts.get(result.verdict, 0) + 1
        assert result.verdict in VERDICTS
        assert isinstance(result.reason, str) and result.reason.strip()
        if result.verdict == "recirculate":
            assert result.recirculated is not None and not result.outputs
        else:
            assert result.recirculated is None
        if result.verdict == "drop":
            assert result.outputs == [] and result.egress == []
        elif result.verdict in ("pass", "forward", "set_port", "return_to_sender"):
            # one frame left the ingress; its egress DPF (if any) may have dropped it
            dropped = [run for run in result.egress if run.frame is None]
            assert len(result.outputs) + len(dropped) == 1
        for run in result.egress:
            assert run.verdict in ("pass", "drop") and run.reason.strip()
            assert (run.frame is None) == (run.verdict == "drop")
        for port, frame in result.outputs:
            assert 0 <= port < self.switch.ports
            assert isinstance(frame, bytes) and frame

    def run(self, frames: list[tuple[bytes, int]]) -> None:
        from_victim = False
        for frame, port in frames:
            self.net.inject("s1", port, frame)
            while (record := self.net.step(keep=False)) is not None:
                self.check(record.result)
                from_victim = from_victim or record.result.tenant in VICTIMS
        self.net.transmissions.clear()
        assert self.read_tables() == self.tables
        if from_victim:  # a victim's own packet may change its memory: new baseline
            self.victim_passes += 1
            self.victim_words = self.read_victims()
            self.victim_stats = self.read_victim_stats()
            return
        assert self.read_victims() == self.victim_words
        assert self.read_victim_stats() == self.victim_stats


@pytest.mark.slow  # about 12 s for 10,000 packets (most of it hypothesis generating them)
def test_hostile_traffic_never_breaks_isolation() -> None:
    world = World()
    examples = max(10, 10 * settings.default.max_examples // PACKETS_PER_EXAMPLE)

    @settings(max_examples=examples, deadline=None, suppress_health_check=list(HealthCheck))
    @given(st.lists(hostile_frames(), min_size=PACKETS_PER_EXAMPLE, max_size=PACKETS_PER_EXAMPLE))
    def run(frames: list[tuple[bytes, int]]) -> None:
        world.run(frames)

    run()
    # the traffic really exercised the switch: code ran, memory was hit, refusals happened
    stats = [world.switch.control.stats(t) for t in ATTACKERS]
    assert world.passes >= examples * PACKETS_PER_EXAMPLE
    assert world.victim_passes <= examples // 20  # the victim check ran on most examples
    assert sum(s.executed for s in stats) > 0
    assert sum(s.unmapped + s.faults + s.refused + s.unauthorized for s in stats) > 0
    assert {"pass", "drop"} <= world.verdicts.keys()
    kinds = {r.kind for r in world.switch.pipes[0].reports}
    assert {"malformed", "unauthorized"} <= kinds


# -- endless recirculation --------------------------------------------------------------------
LOOP = asm(".placement switch\nprolog p:\n JMP e\neu0 e:\n HALT x\nepilog x:\n FWD recirculate\n")
LOOPER, WORKER = 0x100, 0x200


def loop_network() -> tuple[Network, Installed, Installed]:
    net = Network(P)
    sw = net.add_switch("s1")
    sw.control.set_default_port(OUT)
    loop = install_program(sw.control, assemble_text(LOOP, "loop.dpfasm", P))
    counter = install_program(sw.control, COUNTER)
    sw.control.authorize(LOOPER, privileged=True, recirculate=True)
    sw.control.authorize(WORKER)
    sw.control.map_direct(WORKER, 0, 0, 1)
    return net, loop, counter


def test_endless_recirculation_is_stopped_by_gas_without_starving_others() -> None:
    net, loop, counter = loop_network()
    gas = 30  # below the network's hop limit: gas is what stops it
    looping = net.inject(
        "s1",
        0,
        build_packet(PacketSpec(LOOPER, SwitchVMHeader(dpf_ptr=loop.entry, gas=gas)), P).frame,
    )
    work = invoke(counter.entry, WORKER, (1,))
    early = [net.inject("s1", 1, work) for _ in range(10)]
    net.run(max_passes=15)  # the loop is still going; more work arrives meanwhile
    late = [net.inject("s1", 2, work) for _ in range(5)]
    net.run()
    loop_records = [r for r in net.records if r.packet == looping]
    assert len(loop_records) == gas + 1
    assert [r.result.verdict for r in loop_records] == ["recirculate"] * gas + ["drop"]
    assert "gas" in loop_records[-1].result.reason
    end = loop_records[-1].sequence
    worker_records = [r for r in net.records if r.packet in early + late]
    assert len(worker_records) == 15
    assert all(r.result.verdict == "pass" for r in worker_records)
    assert all(r.sequence < end for r in worker_records)  # all done before the loop ends
    # round robin: the early packets all ran before the loop's second pass
    assert max(r.sequence for r in worker_records if r.packet in early) < loop_records[1].sequence
    c = net.switches["s1"].control
    assert c.read_memory(WORKER, 0, 0, 1) == [15]
    stats = c.stats(LOOPER)
    assert (stats.recirculated, stats.gas_exhausted, stats.dropped) == (gas, 1, 1)
    assert [(r.tenant, r.kind) for r in c.pipes[0].reports] == [(LOOPER, "gas")]
    assert net.hop_limited == []


def test_recirculation_with_the_default_gas() -> None:
    net, loop, _ = loop_network()
    net.inject(
        "s1", 0, build_packet(PacketSpec(LOOPER, SwitchVMHeader(dpf_ptr=loop.entry)), P).frame
    )
    net.run()
    assert len(net.records) == P.default_gas + 1
    assert net.switches["s1"].control.stats(LOOPER).gas_exhausted == 1


def test_recirculation_beyond_the_hop_limit_is_cut_by_the_network() -> None:
    net, loop, _ = loop_network()
    header = SwitchVMHeader(dpf_ptr=loop.entry, gas=P.max_gas)
    packet = net.inject("s1", 0, build_packet(PacketSpec(LOOPER, header), P).frame)
    passes = net.run()
    assert passes < P.max_gas
    assert net.hop_limited == [packet]
