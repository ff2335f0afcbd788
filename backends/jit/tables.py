"""One pipe's tables as data the native pass searches: permissions, lane-memory
translation, constants, forwarding entries and routes.

Contract: :func:`build_tables` turns the ingress tables of ``pipe`` as they are now into one
``array('q')`` (:class:`TableImage`); a table change makes a new image, never new code.
Its first words are a directory: for each sorted map (:data:`PERM`, :data:`FWD`,
:data:`ROUTE`, :data:`CONST`, :data:`MCAST`, and per lane ``lane_map(eu, lane, kind)``) the offset of its
keys and its length (its values follow its keys); then the rows other maps index
(:data:`PERM_ROWS`: app id, default DPF, flags; :data:`DEST_ROWS`: port, address flags and
words, forwarding entries' and then multicast members'; :data:`GROUP_ROWS`: a group's first
member row and size; per lane the null-segment rows and the lane's word address and segment sizes).
:mod:`.lookup` writes the functions that search it (binary search), matching
:meth:`dpfc.switch.LaneMap.translate` and the dictionaries of
:class:`~dpfc.backends.sim.PipeState`.
"""

from __future__ import annotations

from array import array
from dataclasses import dataclass

from dpfc.backends.sim import LaneMemory, PipeState
from dpfc.encoding import encode_pc
from dpfc.switch import Destination
from dpfc.target import TargetProfile

from .layout import F_METADATA, F_PRIVILEGED, F_RECIRCULATE, PTR_NONE

# the sorted maps of the directory
PERM = 0  # tenant -> permission row
FWD = 1  # tenant << 32 | value -> destination row
ROUTE = 2  # IPv4 destination -> port
CONST = 3  # tenant << 32 | index -> word
MCAST = 4  # tenant << 32 | group -> group row
GLOBAL_MAPS = 5
LANE_DIRECT = 0  # tenant << 32 | vaddr -> physical word
LANE_SEGMENT = 1  # tenant << 40 | log2 size << 32 | base -> physical base
LANE_NULL = 2  # tenant -> null-segment row
LANE_MAPS = 3
# rows and scalars after the maps' directory entries
PERM_ROWS = 0  # 3 words: app id, default DPF (raw), flags
DEST_ROWS = 1  # 6 words, DEST_*
ROUTE_DEFAULT = 2  # the default port, -1 for none
GROUP_ROWS = 3  # 2 words: the group's first destination row, its size
GLOBAL_ROWS = 4
LANE_NULL_ROWS = 0  # 3 words: mask, base, physical
LANE_WORDS = 1  # the address of physical word 0
LANE_SIZES = 2  # bit k set: the lane has segments of 2**k words
LANE_ROWS = 3
PERM_WORDS = 3
DEST_WORDS = 6
NULL_WORDS = 3
DEST_PORT, DEST_HAS_IP, DEST_IP, DEST_HAS_ETH, DEST_ETH_HI, DEST_ETH_LO = range(6)


def map_slot(profile: TargetProfile, eu: int, lane: int, kind: int) -> int:
    """The directory index of a lane's map."""
    return GLOBAL_MAPS + (eu * profile.lanes + lane) * LANE_MAPS + kind


def row_slot(
    profile: TargetProfile, which: int, eu: int = 0, lane: int = 0, lanes: bool = False
) -> int:
    """The directory word of a row table or scalar (after the maps' pairs)."""
    maps = GLOBAL_MAPS + profile.num_eus * profile.lanes * LANE_MAPS
    if not lanes:
        return 2 * maps + which
    return 2 * maps + GLOBAL_ROWS + (eu * profile.lanes + lane) * LANE_ROWS + which


def directory_words(profile: TargetProfile) -> int:
    return row_slot(profile, 0, profile.num_eus - 1, profile.lanes - 1, lanes=True) + LANE_ROWS


@dataclass
class TableImage:
    words: array[int]
    tenants: list[int]  # permission row -> tenant (for reading the counters back)


class _Builder:
    def __init__(self, profile: TargetProfile) -> None:
        self.profile = profile
        self.words = array("q", bytes(8 * directory_words(profile)))

    def add_map(self, slot: int, pairs: dict[int, int]) -> None:
        keys = sorted(pairs)
        self.words[2 * slot] = len(self.words)
        self.words[2 * slot + 1] = len(keys)
        self.words.extend(_signed(k) for k in keys)
        self.words.extend(_signed(pairs[k]) for k in keys)

    def add_rows(self, slot: int, rows: list[list[int]]) -> None:
        self.words[slot] = len(self.words)
        for row in rows:
            self.words.extend(_signed(v) for v in row)


def _signed(value: int) -> int:
    value &= 0xFFFF_FFFF_FFFF_FFFF
    return value - (1 << 64) if value >= 1 << 63 else value


def build_tables(pipe: PipeState) -> TableImage:
    profile = pipe.profile
    out = _Builder(profile)
    tenants = sorted(pipe.permissions)
    out.add_map(PERM, {t: i for i, t in enumerate(tenants)})
    perm_rows = []
    for tenant in tenants:
        entry = pipe.permissions[tenant]
        flags = (
            (F_METADATA if entry.metadata else 0)
            | (F_PRIVILEGED if entry.privileged else 0)
            | (F_RECIRCULATE if entry.recirculate else 0)
        )
        default = PTR_NONE if entry.default_dpf is None else encode_pc(entry.default_dpf)
        perm_rows.append([entry.app_id, default, flags])
    out.add_rows(row_slot(profile, PERM_ROWS), perm_rows)
    forwarding: dict[int, int] = {}
    dest_rows: list[list[int]] = []
    for owner, entries in pipe.forwarding.items():
        for virtual, destination in entries.items():
            forwarding[owner << 32 | virtual] = len(dest_rows)
            dest_rows.append(_destination_row(destination))
    out.add_map(FWD, forwarding)
    groups: dict[int, int] = {}
    group_rows: list[list[int]] = []
    for owner, by_group in pipe.multicast.items():
        for group, members in by_group.items():
            groups[owner << 32 | group] = len(group_rows)
            group_rows.append([len(dest_rows), len(members)])
            dest_rows.extend(_destination_row(d) for d in members)
    out.add_map(MCAST, groups)
    out.add_rows(row_slot(profile, GROUP_ROWS), group_rows)
    out.add_rows(row_slot(profile, DEST_ROWS), dest_rows)
    out.add_map(ROUTE, {int.from_bytes(a, "big"): port for a, port in pipe.routes.items()})
    out.words[row_slot(profile, ROUTE_DEFAULT)] = (
        -1 if pipe.default_port is None else pipe.default_port
    )
    out.add_map(
        CONST,
        {o << 32 | i: v for o, table in pipe.constants.items() for i, v in enumerate(table)},
    )
    for eu, lanes in enumerate(pipe.lanes):
        for lane, memory in enumerate(lanes):
            _lane(out, profile, eu, lane, memory)
    return TableImage(out.words, tenants)


def _lane(out: _Builder, profile: TargetProfile, eu: int, lane: int, memory: LaneMemory) -> None:
    used = bool(memory.direct or memory.segments)
    out.words[row_slot(profile, LANE_WORDS, eu, lane, True)] = memory.word_address() if used else 0
    out.add_map(
        map_slot(profile, eu, lane, LANE_DIRECT),
        {owner << 32 | virtual: p for (owner, virtual), p in memory.direct.items()},
    )
    segments: dict[int, int] = {}
    nulls: dict[int, int] = {}
    null_rows: list[list[int]] = []
    sizes = 0
    for owner, table in memory.segments.items():
        for size, by_base in table.by_size.items():
            log2 = size.bit_length() - 1
            sizes |= 1 << log2
            for vbase, segment in by_base.items():
                segments[owner << 40 | log2 << 32 | vbase] = segment.pbase
        if table.null is not None:
            nulls[owner] = len(null_rows)
            null_rows.append([table.null.mask, table.null.vbase, table.null.pbase])
    out.add_map(map_slot(profile, eu, lane, LANE_SEGMENT), segments)
    out.add_map(map_slot(profile, eu, lane, LANE_NULL), nulls)
    out.add_rows(row_slot(profile, LANE_NULL_ROWS, eu, lane, True), null_rows)
    out.words[row_slot(profile, LANE_SIZES, eu, lane, True)] = _signed(sizes)


def _destination_row(destination: Destination) -> list[int]:
    ip = destination.ip_dst
    eth = destination.eth_dst
    return [
        -1 if destination.port is None else destination.port,
        int(ip is not None),
        int.from_bytes(ip, "big") if ip is not None else 0,
        int(eth is not None),
        int.from_bytes(eth[:4], "big") if eth is not None else 0,
        int.from_bytes(eth[4:6], "big") if eth is not None else 0,
    ]
