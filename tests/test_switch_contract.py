"""The switch contract (dpfc.switch): one rule set for every back end.

* The simulator's control (``SimControl``) and the bmv2 control (``Bmv2Control``, over a
  simple_switch_CLI that accepts every command) accept and refuse the same protocol
  requests with the same codes and messages: both are the contract's ``LedgerControl``.
* The per-tenant counters and RAND's xorshift32 are stated once and derived by the JIT and
  the P4 program.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest

from dpfc.backends.p4.bmv2_control import Bmv2Control
from dpfc.backends.p4.layout import COUNTERS
from dpfc.backends.p4.program import generate
from dpfc.backends.sim import SimControl, Switch
from dpfc.switch import (
    EXECUTION_COUNTERS,
    TENANT_COUNTERS,
    XORSHIFT32_SHIFTS,
    Destination,
    Grant,
    SwitchControl,
    SwitchRefused,
    TenantStats,
    Xorshift32,
    next_state,
    segment_pieces,
)
from dpfc.target import BUILTIN_PROFILES

PROFILE = BUILTIN_PROFILES["tofino1"]
MASK = 0xFFFF_FFFF
PORTS = 512  # bmv2's port ids (bit<9>): the simulated switch gets as many
TENANT = 7


class _Cli:
    """simple_switch_CLI as far as the control needs it: every command succeeds."""

    def __init__(self) -> None:
        self.history: list[str] = []

    def run(self, command: str) -> str:
        self.history.append(command)
        if command.startswith("register_read"):
            return f"{command.split()[1]}[0]= 0\n"
        return f"Entry has been added with handle {len(self.history)}\n"


def _sim() -> SwitchControl:
    return SimControl(Switch("s", PROFILE, ports_per_pipe=PORTS).control)


def _bmv2() -> SwitchControl:
    return Bmv2Control(_Cli(), PROFILE)  # type: ignore[arg-type]


def _granted(make: Callable[[], SwitchControl]) -> SwitchControl:
    control = make()
    control.grant(TENANT, Grant((1, 2)), [0])
    control.map_memory(TENANT, 0, 1, "segment", 6, [0])
    control.map_memory(TENANT, 1, 0, "direct", 3, [0], pipeline="egress")
    return control


REQUESTS: list[tuple[str, Callable[[SwitchControl], object]]] = [
    ("grant_no_app_id", lambda c: c.grant(8, Grant(()), [0])),
    ("grant_bad_tenant", lambda c: c.grant(1 << 24, Grant((1,)), [0])),
    ("grant_bad_token", lambda c: c.grant(8, Grant((1 << 32,)), [0])),
    ("grant_bad_action", lambda c: c.grant(8, Grant((1,), unauthorized="keep"), [0])),
    ("grant_bad_default", lambda c: c.grant(8, Grant((1,), default_dpf=1 << 20), [0])),
    ("grant_no_pipe", lambda c: c.grant(8, Grant((1,)), [1])),
    ("grant_no_pipes", lambda c: c.grant(8, Grant((1,)), [])),
    ("revoke_unknown", lambda c: c.revoke(8, [0])),
    ("map_unknown_tenant", lambda c: c.map_memory(8, 0, 0, "segment", 4, [0])),
    ("map_bad_eu", lambda c: c.map_memory(TENANT, 9, 0, "segment", 4, [0])),
    ("map_bad_lane", lambda c: c.map_memory(TENANT, 0, 9, "segment", 4, [0])),
    ("map_bad_kind", lambda c: c.map_memory(TENANT, 0, 0, "hashed", 4, [0])),
    ("map_bad_pipeline", lambda c: c.map_memory(TENANT, 0, 0, "segment", 4, [0], pipeline="x")),
    ("map_overlap", lambda c: c.map_memory(TENANT, 0, 1, "segment", 2, [0])),
    ("map_too_big", lambda c: c.map_memory(TENANT, 0, 2, "segment", 1 << 20, [0])),
    ("accepted_direct", lambda c: c.map_memory(TENANT, 0, 1, "direct", 2, [0])),
    ("map_direct_twice", lambda c: c.map_memory(TENANT, 1, 0, "direct", 1, [0], pipeline="egress")),
    ("map_direct_none", lambda c: c.map_memory(TENANT, 0, 0, "direct", 0, [0])),
    ("unmap_missing", lambda c: c.unmap_memory(TENANT, 0, 2, "segment", 4, [0])),
    ("unmap_direct_missing", lambda c: c.unmap_memory(TENANT, 0, 0, "direct", 2, [0])),
    ("code_bad_stage", lambda c: c.write_code(7, 0, bytes(8), [0])),
    ("code_bad_slot", lambda c: c.write_code(0, 1 << 20, bytes(8), [0])),
    ("code_bad_word", lambda c: c.write_code(0, 0, b"\x01", [0])),
    ("clear_empty", lambda c: c.clear_code(0, 3, [0])),
    ("forward_bad_index", lambda c: c.set_forwarding(TENANT, 1 << 16, Destination(port=1), [0])),
    ("forward_bad_port", lambda c: c.set_forwarding(TENANT, 0, Destination(port=PORTS), [0])),
    ("forward_nowhere", lambda c: c.set_forwarding(TENANT, 0, Destination(), [0])),
    ("forward_bad_ip", lambda c: c.set_forwarding(TENANT, 0, Destination(ip_dst=b"\x01"), [0])),
    ("multicast_empty", lambda c: c.set_multicast(TENANT, 1, [], [0])),
    ("read_unmapped", lambda c: c.read_memory(TENANT, 0, 1, 6, 2, 0)),
    ("read_bad_count", lambda c: c.read_memory(TENANT, 0, 1, 0, -1, 0)),
    ("write_unmapped", lambda c: c.write_memory(TENANT, 0, 1, 5, [1, 2], [0])),
    ("write_bad_word", lambda c: c.write_memory(TENANT, 0, 1, 0, [1 << 32], [0])),
    ("accepted_write", lambda c: c.write_memory(TENANT, 0, 1, 0, [1, 2, 3], [0])),
    ("accepted_forward", lambda c: c.set_forwarding(TENANT, 3, Destination(port=4), [0])),
    ("accepted_unmap", lambda c: c.unmap_memory(TENANT, 0, 1, "segment", 6, [0])),
    ("accepted_revoke", lambda c: c.revoke(TENANT, [0])),
]


def _outcome(control: SwitchControl, request: Callable[[SwitchControl], object]) -> object:
    try:
        request(control)
    except SwitchRefused as refused:
        return (refused.code, refused.message)
    return "accepted"


@pytest.mark.parametrize("request_", [r for _, r in REQUESTS], ids=[n for n, _ in REQUESTS])
def test_sim_and_bmv2_refuse_alike(request_: Callable[[SwitchControl], object]) -> None:
    sim, bmv2 = _outcome(_granted(_sim), request_), _outcome(_granted(_bmv2), request_)
    assert sim == bmv2


def test_segment_pieces_cover_an_array_largest_first() -> None:
    assert segment_pieces(13) == [(0, 8), (8, 4), (12, 1)]
    assert segment_pieces(0) == []


def test_the_counters_are_listed_once() -> None:
    assert tuple(vars(TenantStats())) == TENANT_COUNTERS
    assert COUNTERS == EXECUTION_COUNTERS == TENANT_COUNTERS[:8]


def test_xorshift32_is_derived_from_its_shifts() -> None:
    state = 0x1234_5678
    unrolled = state ^ (state << 13) & MASK
    unrolled ^= unrolled >> 17
    unrolled ^= (unrolled << 5) & MASK
    assert next_state(state) == unrolled
    assert Xorshift32(0).state != 0
    program = generate(PROFILE, "v1model")
    shifts = re.findall(r"meta\.rng = \(meta\.rng \^ \(meta\.rng (<<|>>) (\w+)\)\);", program)
    assert [(d, int(a, 0)) for d, a in shifts] == list(XORSHIFT32_SHIFTS)
