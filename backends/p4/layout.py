"""The SwitchVM data plane's shape on one target profile, and the names its controls use.

Contract: :class:`Layout` derives from a :class:`~dpfc.target.profile.TargetProfile`
everything the P4 generators and the switch controls share: the registers, the stages, the widths
of the in-packet code and stack fields, and the name of every table, register and action
the control plane writes (:meth:`Layout.name_map`). The generated program and the bmv2
and BF-RT controls both read these names from here, so they cannot disagree.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from dpfc.encoding import (
    HEADER_OPTION_BYTES,
    OPTION_DATA_WORDS,
    OPTIONS_MAX,
    STACK_ENTRIES_PER_OPTION,
    StageKind,
    op_group,
    slot_layout,
)
from dpfc.switch import EXECUTION_COUNTERS
from dpfc.target import TargetProfile

INGRESS = "SwitchVMIngress"
EGRESS = "SwitchVMEgress"
# The in-packet code of one packet: every option byte but the header option's (encoding.md
# §4: 252 - 16 = 236 bytes), in at most two code options (124 data bytes each).
CODE_BYTES = OPTIONS_MAX - HEADER_OPTION_BYTES
CODE_OPTION_WORDS = OPTION_DATA_WORDS  # 31: the 4-byte words of one code option's data
STACK_OPTION_WORDS = STACK_ENTRIES_PER_OPTION  # 31
FOREIGN_OPTIONS = 4  # Geneve options of other classes kept before / after SwitchVM's
MAX_TENANT_SLOTS = 4096  # tenants with a constant table or counters (a switch control allocates)
COUNTERS = EXECUTION_COUNTERS  # per tenant slot: packets, DPF runs, violations


class LayoutError(ValueError):
    """The profile cannot be generated as a P4 program (a limit of this back end)."""


@dataclass(frozen=True)
class Layout:
    profile: TargetProfile

    def __post_init__(self) -> None:
        if self.profile.stack_max_depth > STACK_OPTION_WORDS:
            raise LayoutError(
                f"stack_max_depth {self.profile.stack_max_depth} needs two stack options; the "
                f"P4 back end supports one ({STACK_OPTION_WORDS} words)"
            )
        if self.profile.register_bits != 32:
            raise LayoutError("the P4 back end supports 32-bit registers only")
        if self.profile.code_format != 1:
            raise LayoutError(
                f"{self.profile.name} has code_format {self.profile.code_format}; the P4 back "
                "end's parser reads in-packet code format version 1 only (docs/encoding.md §9)"
            )

    # -- machine -------------------------------------------------------------------------------
    @property
    def lanes(self) -> int:
        return self.profile.lanes

    @property
    def eus(self) -> int:
        return self.profile.num_eus

    @cached_property
    def registers(self) -> tuple[str, ...]:
        """Register names in code order: A0..A(L-1), B0..B(L-1)."""
        return tuple(f"A{i}" for i in range(self.lanes)) + tuple(f"B{i}" for i in range(self.lanes))

    def register_code(self, index: int) -> int:
        """The 5-bit register code (class bit 4, lane) of register ``index``."""
        return index if index < self.lanes else 0x10 | (index - self.lanes)

    @property
    def stages(self) -> tuple[int, ...]:
        """Stage ids: 0 prolog, 1..n EUs, 31 epilog."""
        return (0, *range(1, self.eus + 1), 31)

    @property
    def code_bits(self) -> int:
        return CODE_BYTES * 8

    @property
    def stack_bits(self) -> int:
        return self.profile.stack_max_depth * 32

    @property
    def max_bundles(self) -> int:
        """In-packet bundles one packet can carry (every stage full)."""
        return len(self.stages) * self.profile.packet_bundles_per_stage

    @property
    def half_lanes(self) -> int:
        """Bytes of an in-packet ALU or memory opcode group (a nibble per lane)."""
        return op_group(self.lanes).size

    def word_fields(self, kind: StageKind) -> list[tuple[str, int]]:
        """(name, width) of a code-memory word: the action data of the code tables."""
        return [(f.name, f.width) for f in slot_layout(kind, self.profile)]

    # -- names (the name map) --------------------------------------------------------------------
    @staticmethod
    def code_table(stage: int) -> str:
        if stage == 0:
            return "code_prolog"
        if stage == 31:
            return "code_epilog"
        return f"code_eu{stage - 1}"

    @staticmethod
    def code_action(stage: int) -> str:
        """The action of a code table: one per kind of stage (every EU shares one)."""
        return {0: "load_prolog", 31: "load_epilog"}.get(stage, "load_eu")

    @staticmethod
    def memory(eu: int, lane: int) -> str:
        return f"mem_e{eu}_l{lane}"

    @staticmethod
    def direct_table(eu: int, lane: int) -> str:
        return f"direct_e{eu}_l{lane}"

    @staticmethod
    def segment_table(eu: int, lane: int) -> str:
        return f"segment_e{eu}_l{lane}"

    def name_map(self) -> dict[str, object]:
        """Every control-plane object of the program, qualified as bmv2's CLI names them."""

        def q(name: str) -> str:
            return f"{INGRESS}.{name}"

        return {
            "permissions": q("permissions"),
            "app_tokens": q("app_tokens"),
            "code": {stage: q(self.code_table(stage)) for stage in self.stages},
            "code_actions": {stage: q(self.code_action(stage)) for stage in self.stages},
            "direct": {
                f"{k},{i}": q(self.direct_table(k, i))
                for k in range(self.eus)
                for i in range(self.lanes)
            },
            "segment": {
                f"{k},{i}": q(self.segment_table(k, i))
                for k in range(self.eus)
                for i in range(self.lanes)
            },
            "memory": {
                f"{k},{i}": q(self.memory(k, i)) for k in range(self.eus) for i in range(self.lanes)
            },
            "constants": q("constants"),
            "forwarding": q("forwarding"),
            "multicast": q("multicast"),
            "routes": q("routes"),
            "default_port": q("default_port"),
            "copy_rewrite": f"{EGRESS}.copy_rewrite",
            "switch": q("switch_config"),
            "counters": {c: q(f"counter_{c}") for c in COUNTERS},
            "hash_inputs": {i: f"meta.hash_in_{i}" for i in range(self.lanes)},
        }
