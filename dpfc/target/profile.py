"""The :class:`TargetProfile` dataclass, what it is made of, and the built-in profiles.

Numbers come from the SwitchVM paper (NSDI'24) §3.6, §5 and Table 4; each default names its
source in ``docs/targets.md``. Encoding limits (how many lanes or EUs a field can address)
are checked here so that a profile that loads is one every phase can handle. Loading a
profile by name or from a TOML file is :mod:`.load`'s.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import asdict, dataclass, replace
from enum import Enum
from functools import cached_property

from dpfc.target.parts import CRC32_FAMILY as CRC32_FAMILY
from dpfc.target.parts import DEFAULT_METADATA as DEFAULT_METADATA
from dpfc.target.parts import DEFAULT_STEERING as DEFAULT_STEERING
from dpfc.target.parts import HASH_FUNCTIONS as HASH_FUNCTIONS
from dpfc.target.parts import HEADER_FIELD_NAMES as HEADER_FIELD_NAMES
from dpfc.target.parts import HEADER_METADATA as HEADER_METADATA
from dpfc.target.parts import SWITCH_METADATA as SWITCH_METADATA
from dpfc.target.parts import HashFunction as HashFunction
from dpfc.target.parts import MetadataField as MetadataField
from dpfc.target.parts import SteeringAction as SteeringAction


class TargetError(Exception):
    """A profile name or profile file is invalid (a user error)."""


class BranchOperands(Enum):
    """Which register values an EU's branch unit compares (paper §5 vs §4.2 contradict).

    ``entry``: the values the EU started with (comparison runs in the EU's first hardware
    stage, in parallel with selection; the default). ``selected``: the values after this
    EU's selectors. ``loaded``: after selection and this EU's memory results (the LB3
    description, "EU1 LOAD-s ... and performs a conditional branch using BGT").
    """

    ENTRY = "entry"
    SELECTED = "selected"
    LOADED = "loaded"


class MemoryAddress(Enum):
    """Which value of A[i] a lane's memory unit translates (translation is in stage 1).

    ``entry`` (default): the EU-entry value. ``selected``: the value after selection.
    """

    ENTRY = "entry"
    SELECTED = "selected"


class DirectMappingLanes(Enum):
    """Which lanes hold a direct-mapping table (§3.6.1 "per lane" vs §5 "first lane")."""

    ALL = "all"
    FIRST = "first"


# Encoding limits (docs/encoding.md): register bytes hold a 4-bit lane, the bundle header a
# 5-bit selector count (<= 2L), block headers a 5-bit stage id (0 prolog, 31 epilog).
MAX_LANES = 15
MAX_EUS = 30
MAX_IMMEDIATES = 3
MAX_PACKET_BUNDLES_PER_STAGE = 8
# 252 bytes of options - 16 (header option) = 236 = 128 (31 entries) + 108 (26 entries).
MAX_STACK_DEPTH = 57
PC_INDEX_LIMIT = 0x7FFF
# The in-packet code formats (docs/encoding.md): 1 counts and flags up front, blocks with a
# count; 2 the same bytes with a one-byte tag before each bundle and part. A tag is 0xF8..0xFF
# (top five bits 0x1F), which a selector's first byte (dest:5) must never be: the highest
# register code, B(L-1), stays below 0x1F only for L <= 15; the immediates have three tags.
CODE_FORMATS = (1, 2)
TAGGED_FORMAT = 2
TAGGED_MAX_LANES = 15
TAGGED_MAX_IMMEDIATES = 3
# The header counts code options in 4 bits: `max_code_options` is 1..15, and 15 (the default)
# limits nothing beyond what fits the 252 bytes of Geneve options.
MAX_CODE_OPTIONS = 15
# A profile name is printed in `.target NAME` of disassembly, so it must be an assembler NAME.
PROFILE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# Every amount LSH/RSH can name (``B & 31``) besides 0: an ALU that shifts by any of them.
ALL_SHIFT_AMOUNTS: tuple[int, ...] = tuple(range(1, 32))


@dataclass(frozen=True)
class TargetProfile:
    """One SwitchVM configuration. Field docs give the unit; sources are in docs/targets.md."""

    name: str
    num_eus: int
    lanes: int
    register_bits: int = 32
    memory_words_per_lane: int = 45_000
    direct_entries_per_lane: int = 45_000
    direct_mapping_lanes: DirectMappingLanes = DirectMappingLanes.ALL
    segments_per_lane: int = 1_500
    code_slots_per_stage: int = 4_096
    packet_bundles_per_stage: int = 4
    immediates_per_bundle: int = 2
    const_table_entries: int = 256
    stack_max_depth: int = 16
    permission_entries: int = 32_768
    forwarding_entries: int = 32_768
    max_gas: int = 255
    default_gas: int = 8
    metadata: tuple[MetadataField, ...] = DEFAULT_METADATA
    steering: tuple[SteeringAction, ...] = DEFAULT_STEERING
    hash_functions: tuple[str, ...] = ("crc32", "crc32c", "crc32d", "crc32q")
    branch_operands: BranchOperands = BranchOperands.ENTRY
    memory_address: MemoryAddress = MemoryAddress.ENTRY
    hardware_stages: int = 12
    # The amounts (B & 31) the ALU's LSH/RSH implement besides 0; any other faults the packet.
    shift_amounts: tuple[int, ...] = ALL_SHIFT_AMOUNTS
    # The format of the in-packet code this target reads and writes (docs/encoding.md): 1 or 2.
    code_format: int = 1
    # The most code options a packet's in-packet code may take (docs/encoding.md §3, §9).
    max_code_options: int = MAX_CODE_OPTIONS
    description: str = ""

    def __post_init__(self) -> None:
        problems = self.problems()
        if problems:
            raise TargetError(f"invalid target profile `{self.name}`: " + "; ".join(problems))

    # -- derived quantities -------------------------------------------------------------
    @property
    def registers(self) -> int:
        """Number of 32-bit registers (A[0..L-1] and B[0..L-1])."""
        return 2 * self.lanes

    @property
    def max_push(self) -> int:
        """§3.5: the epilog pushes "up to 2L entries"."""
        return 2 * self.lanes

    @property
    def word_mask(self) -> int:
        return (1 << self.register_bits) - 1

    def metadata_by_name(self, name: str) -> MetadataField | None:
        return next((m for m in self.metadata if m.name == name), None)

    def metadata_by_index(self, index: int) -> MetadataField | None:
        return next((m for m in self.metadata if m.index == index), None)

    def steering_by_name(self, name: str) -> SteeringAction | None:
        return next((s for s in self.steering if s.name == name), None)

    def steering_by_code(self, code: int) -> SteeringAction | None:
        return next((s for s in self.steering if s.code == code), None)

    def hash_for_lane(self, lane: int) -> HashFunction:
        return HASH_FUNCTIONS[self.hash_functions[lane]]

    def lane_has_direct_mapping(self, lane: int) -> bool:
        return self.direct_mapping_lanes is DirectMappingLanes.ALL or lane == 0

    @property
    def shifts_restricted(self) -> bool:
        """Whether the ALU lacks some shift amount (``shift_amounts`` is not all of 1..31)."""
        return self.shift_amounts != ALL_SHIFT_AMOUNTS

    @cached_property
    def shift_mask(self) -> int:
        """Bit k set when LSH/RSH by k runs: bit 0 and each of ``shift_amounts``."""
        return sum(1 << a for a in {0, *self.shift_amounts})

    def shifts_by(self, amount: int) -> bool:
        """Whether LSH/RSH with ``B = amount`` runs (its ``amount & 31`` is 0 or implemented)."""
        return (self.shift_mask >> (amount & 31)) & 1 == 1

    def problems(self) -> list[str]:
        """Every reason this profile cannot be used (empty when valid)."""
        out: list[str] = []
        if not PROFILE_NAME.fullmatch(self.name):
            out.append(
                f"name `{self.name}` must be a letter or `_` followed by letters, digits or `_`"
            )
        if not 1 <= self.lanes <= MAX_LANES:
            out.append(f"lanes must be 1..{MAX_LANES}, got {self.lanes}")
        if not 1 <= self.num_eus <= MAX_EUS:
            out.append(f"num_eus must be 1..{MAX_EUS}, got {self.num_eus}")
        if self.register_bits != 32:
            out.append("register_bits must be 32 (SwitchVM ALUs are 32-bit)")
        if not 0 <= self.immediates_per_bundle <= MAX_IMMEDIATES:
            out.append(f"immediates_per_bundle must be 0..{MAX_IMMEDIATES}")
        if not 1 <= self.packet_bundles_per_stage <= MAX_PACKET_BUNDLES_PER_STAGE:
            out.append(f"packet_bundles_per_stage must be 1..{MAX_PACKET_BUNDLES_PER_STAGE}")
        if not 1 <= self.code_slots_per_stage <= PC_INDEX_LIMIT:
            out.append(f"code_slots_per_stage must be 1..{PC_INDEX_LIMIT}")
        if not 0 <= self.const_table_entries <= 256:
            out.append("const_table_entries must be 0..256 (8-bit operand)")
        if not 0 <= self.stack_max_depth <= MAX_STACK_DEPTH:
            out.append(
                f"stack_max_depth must be 0..{MAX_STACK_DEPTH} (the most 32-bit entries that fit "
                "the 252 bytes of Geneve options beside the 16-byte header option)"
            )
        if not 1 <= self.default_gas <= self.max_gas <= 255:
            out.append("need 1 <= default_gas <= max_gas <= 255")
        for name in (
            "memory_words_per_lane",
            "direct_entries_per_lane",
            "segments_per_lane",
            "permission_entries",
            "forwarding_entries",
        ):
            if getattr(self, name) < 0:
                out.append(f"{name} must be >= 0")
        if len(self.hash_functions) < self.lanes:
            out.append(f"hash_functions needs one entry per lane ({self.lanes})")
        for hname in self.hash_functions:
            if hname not in HASH_FUNCTIONS:
                out.append(f"unknown hash function `{hname}` (known: {', '.join(HASH_FUNCTIONS)})")
        indices = [m.index for m in self.metadata]
        if len(set(indices)) != len(indices) or any(not 0 <= i <= 255 for i in indices):
            out.append("metadata indices must be unique and 0..255")
        # Disassembly prints `LOAD_MD R, name` and `FWD name`: names must read back.
        md_names = [m.name for m in self.metadata]
        if len(set(md_names)) != len(md_names) or not all(map(PROFILE_NAME.fullmatch, md_names)):
            out.append("metadata names must be unique assembler names (letters, digits, `_`)")
        codes = [s.code for s in self.steering]
        if len(set(codes)) != len(codes) or any(not 0 <= c <= 7 for c in codes):
            out.append("steering codes must be unique and 0..7")
        steering_names = [s.name for s in self.steering]
        if len(set(steering_names)) != len(steering_names) or not all(
            map(PROFILE_NAME.fullmatch, steering_names)
        ):
            out.append("steering action names must be unique assembler names")
        amounts = self.shift_amounts
        outside = [a for a in amounts if not 1 <= a <= 31]
        if outside:
            out.append(f"shift_amounts must be 1..31 (0 always shifts), got {outside[0]}")
        if list(amounts) != sorted(set(amounts)):
            out.append("shift_amounts must be sorted, without duplicates")
        if not 1 <= self.max_code_options <= MAX_CODE_OPTIONS:
            out.append(
                f"max_code_options must be 1..{MAX_CODE_OPTIONS}, got {self.max_code_options}"
            )
        if self.code_format not in CODE_FORMATS:
            allowed = " or ".join(map(str, CODE_FORMATS))
            out.append(f"code_format must be {allowed}, got {self.code_format}")
        elif self.code_format == TAGGED_FORMAT:
            if self.lanes > TAGGED_MAX_LANES:
                out.append(
                    f"code_format 2 needs lanes <= {TAGGED_MAX_LANES} (register B15's code "
                    "0x1F would make a selector's first byte look like a part tag), "
                    f"got {self.lanes}"
                )
            if self.immediates_per_bundle > TAGGED_MAX_IMMEDIATES:
                out.append(
                    f"code_format 2 needs immediates_per_bundle <= {TAGGED_MAX_IMMEDIATES} "
                    f"(it has three immediate tags), got {self.immediates_per_bundle}"
                )
        return out

    @cached_property
    def _fingerprint(self) -> str:
        values = {k: v for k, v in asdict(self).items() if k != "description"}
        if not self.shifts_restricted:
            # every shift, as before the field existed: objects keep their fingerprints
            del values["shift_amounts"]
        if self.code_format == 1:
            # the first format, as before the field existed: objects keep their fingerprints
            del values["code_format"]
        if self.max_code_options == MAX_CODE_OPTIONS:  # likewise: no limit of its own
            del values["max_code_options"]
        text = json.dumps(values, sort_keys=True, default=_json_value)
        return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]

    def fingerprint(self) -> str:
        """A digest of every field but the description: objects and install bundles record
        it, so code built for one configuration is never loaded into another that merely
        shares its name (two TOML profiles called ``lab``). Computed once per profile."""
        return self._fingerprint

    def shift_text(self) -> str:
        """The shift amounts for people: ``1..31 (all)`` or the list."""
        if not self.shifts_restricted:
            return "1..31 (all)"
        return ", ".join(map(str, self.shift_amounts)) or "none (only 0)"

    def summary(self) -> str:
        return (
            f"{self.name}: {self.num_eus} EUs x {self.lanes} lanes, "
            f"{self.memory_words_per_lane} words/lane, {self.segments_per_lane} segments/lane, "
            f"{self.direct_entries_per_lane} direct/lane ({self.direct_mapping_lanes.value}), "
            f"{self.code_slots_per_stage} code slots/stage, stack {self.stack_max_depth}"
        )


TOFINO1 = TargetProfile(
    name="tofino1",
    num_eus=4,
    lanes=4,
    hardware_stages=12,
    description="Intel Tofino-1 prototype of the SwitchVM paper: 4 EUs x 4 lanes, 12 stages",
)
TOFINO2 = replace(
    TOFINO1,
    name="tofino2",
    num_eus=8,
    hardware_stages=20,
    description="Intel Tofino-2: 8 EUs x 4 lanes (paper §5: 'we can place ... 8 EUs')",
)
BMV2 = replace(
    TOFINO1,
    name="bmv2",
    description="bmv2 software switch, configured like tofino1",
)
# The largest SwitchVM the Tofino compiler (p4c-barefoot 9.13.4) fits, measured on a prototype
# of a stage-structured data plane; every value's reason is in docs/targets.md ("The fit
# profiles"). Paper-facing names: tofino1-fit, tofino2-fit (a profile name is an identifier).
TOFINO1_FIT = replace(
    TOFINO1,
    name="tofino1_fit",
    lanes=2,
    hash_functions=TOFINO1.hash_functions[:2],  # one CRC per lane
    code_slots_per_stage=504,
    segments_per_lane=1_024,
    const_table_entries=0,
    packet_bundles_per_stage=1,
    shift_amounts=(1, 2, 4, 8, 16),
    code_format=2,  # the stage-structured P4 program's parser reads version 2
    max_code_options=1,  # an option boundary costs the parser headers (POV bits) per bundle slot
    description="Tofino-1 as the Tofino compiler fits it: 4 EUs x 2 lanes, 12 stages",
)
TOFINO2_FIT = replace(
    TOFINO1_FIT,
    name="tofino2_fit",
    num_eus=8,
    hardware_stages=20,
    description="Tofino-2 as the Tofino compiler fits it: 8 EUs x 2 lanes, 20 stages",
)


def _json_value(value: object) -> object:
    if isinstance(value, Enum):
        return value.value
    raise TypeError(f"cannot serialise {value!r}")


BUILTIN_PROFILES: dict[str, TargetProfile] = {
    p.name: p for p in (TOFINO1, TOFINO2, BMV2, TOFINO1_FIT, TOFINO2_FIT)
}
# The profile used where nothing names one: a program without --target and @target, the
# assembler, the interpreters, a scenario or profile file without a target or base.
DEFAULT_PROFILE = TOFINO1
