"""The memory the native code and Python share: the state words, result records, the
statistics array and the in-packet code table, and the status codes of a native pass.

Contract: every index here is used by both sides (:mod:`.runtime`, :mod:`.bundles` write
IR that reads and writes these words; :mod:`.switch` reads them back), so they are defined
once. All state words are 32-bit; memory undo entries are 64-bit (address, old word).
"""

from __future__ import annotations

from dpfc.switch import TENANT_COUNTERS
from dpfc.target import HEADER_FIELD_NAMES, TargetProfile

# -- status of one stage function (prolog, EU or epilog) -----------------------------------
STAGE_OK = 0
STAGE_HALT = 1  # an EU executed HALT: the epilog comes next
STAGE_DEOPT = 2  # the interpreter must run this packet (a report, a fault, a refusal)

# -- the outcome of one packet, the first word of its result record -----------------------------
DEOPT = 0  # not run natively: nothing changed, the interpreter runs the packet
NEED_CODE = 1  # in-packet code the engine has not compiled yet (nothing changed)
DROP_DPF = 2  # the DPF dropped the packet
RECIRCULATE = 3
RETURN = 4
SET_PORT = 5
SET_PORT_NO_SUCH = 6  # set_port to a port the switch does not have: dropped
FORWARD = 7
FORWARD_NO_ROUTE = 8
PASS = 9
PASS_NO_ROUTE = 10
MULTICAST = 11

# -- a packet's descriptor (i32 words per packet) ------------------------------------------
D_OFFSET = 0  # where the frame starts in the input buffer
D_LENGTH = 1
D_TIMESTAMP = 2  # the pass's timestamp (LOAD_MD timestamp)
D_QUEUE_DEPTH = 3  # the pass's queue depth (LOAD_MD queue_depth)
DESC_WORDS = 4

# -- a result record (i32 words per packet) -------------------------------------------------
R_STATUS = 0
R_TENANT = 1
R_PORT = 2  # the output port (-1: none)
R_OUT_OFF = 3  # the output frame in the output buffer
R_OUT_LEN = 4
R_VALUE = 5  # the steering value
R_GAS = 6  # the gas of the outgoing header
R_EGRESS = 7  # the outgoing egress pointer (0xFFFF: none)
R_EXEC_COUNT = 8
R_EXEC = 9  # (stage << 16 | raw PC) of every bundle run
R_EXEC_MAX = 2 + 16  # prolog, up to 16 EUs, epilog
R_COPIES = R_EXEC + R_EXEC_MAX  # multicast: the copies that left
R_COPY = R_COPIES + 1  # (port, output offset) of each copy
MAX_COPIES = 8  # a larger group is the interpreter's
RESULT_WORDS = R_COPY + 2 * MAX_COPIES

# -- statistics (i64 per counter, STAT_SLOTS per permission entry) ----------------------------
STAT_FIELDS = TENANT_COUNTERS  # in this order
STAT_INDEX = {name: index for index, name in enumerate(STAT_FIELDS)}
STAT_DIRTY = len(STAT_FIELDS)  # 1 once the entry's counters changed since the last sync
STAT_SLOTS = 16

# -- the in-packet code table (i64 words per slot) ------------------------------------------------
CODE_SLOTS = 1024  # a power of two; probed linearly from digest & (CODE_SLOTS - 1)
C_DIGEST = 0  # FNV-1a 64 of the code options' bytes, never 0 (0: an empty slot)
C_LENGTH = 1
C_BYTES = 2  # address of a copy of the bytes (compared after the digest matches)
C_FUNCTION = 3  # address of the code function; 0: code the interpreter must run
C_PROLOGS = 4  # in-packet prolog bundles (a pointer beyond them is invalid)
CODE_WORDS = 5

FNV_OFFSET = 0xCBF2_9CE4_8422_2325
FNV_PRIME = 0x0000_0100_0000_01B3


def fnv1a(data: bytes) -> int:
    """The digest of in-packet code the native parser computes (never 0)."""
    value = FNV_OFFSET
    for byte in data:
        value = ((value ^ byte) * FNV_PRIME) & 0xFFFF_FFFF_FFFF_FFFF
    return value or 1


class StateLayout:
    """Word indices of the state array of one pipe, for a profile's lanes."""

    STACK_WORDS = 64  # the stack lives in [STACK + top, STACK + top + depth), top first
    STACK_START = 32  # the top of an incoming stack: room for pushes above it

    def __init__(self, profile: TargetProfile) -> None:
        lanes = profile.lanes
        self.lanes = lanes
        self.regs = 0  # A0..A(L-1), B0..B(L-1)
        at = 2 * lanes
        names = [
            "top",
            "depth",
            "pc",
            "tenant",
            "flags",
            "ingress_port",
            "switch_id",
            "pipe_id",
            "timestamp",
            "queue_depth",
            "packet_length",
            *HEADER_FIELD_NAMES,  # the inner frame's header fields (docs/isa.md §4)
            "ports",
            "rng",
            "rng_saved",
            "rng_native",
            "hdr_dptr",
            "hdr_eptr",
            "action",
            "value",
            "new_ptr",
            "hdr_mod",
            "out_off",
            "out_cap",
            "loop_ports_low",
            "loop_ports_high",
            "loop_ports_beyond",
            "loop_recirculate",
            "stopped",
            "packets_seen",
        ]
        for name in names:
            setattr(self, name, at)
            at += 1
        self.stack = at
        self.words = at + self.STACK_WORDS

    top: int
    depth: int
    pc: int
    tenant: int
    flags: int
    ingress_port: int
    switch_id: int
    pipe_id: int
    timestamp: int
    queue_depth: int
    packet_length: int
    ipv4_src: int
    ipv4_dst: int
    ip_proto: int
    dscp: int
    ttl: int
    l4_src: int
    l4_dst: int
    ports: int
    rng: int
    rng_saved: int
    rng_native: int
    hdr_dptr: int
    hdr_eptr: int
    action: int
    value: int
    new_ptr: int
    hdr_mod: int
    out_off: int
    out_cap: int
    loop_ports_low: int  # ports 0..31 whose frames come back to this pipe (a bit each)
    loop_ports_high: int  # ports 32..63
    loop_ports_beyond: int  # 1: any port from 64 on may come back
    loop_recirculate: int  # 1: a recirculated frame comes back before the next packet
    stopped: int  # set when the batch stopped after a packet that comes back
    packets_seen: int


# permission flags (the state's ``flags`` word and the permission table's)
F_METADATA = 1
F_PRIVILEGED = 2
F_RECIRCULATE = 4

# steering actions (the state's ``action`` word)
ACTIONS = ("pass", "drop", "return_to_sender", "forward", "multicast", "set_port", "recirculate")
ACTION_CODE = {name: index for index, name in enumerate(ACTIONS)}
PTR_NONE = 0xFFFF
UNDO_MAX = 2 * 16 * 16  # memory writes of one packet at most (EUs x lanes), with room
