"""SwitchVM target profiles: the one place that states a configuration's limits.

Every other part of dpfc reads EU/lane counts, memory and table capacities, stack depth,
metadata indices, steering actions, hash functions and the intra-EU timing rules from a
:class:`TargetProfile`. Built-in profiles are ``tofino1``, ``tofino2``, ``bmv2``, and
``tofino1_fit`` and ``tofino2_fit`` (the largest the Tofino compiler fits); user profiles
come from TOML files (see ``docs/targets.md``). :mod:`.profile` defines the profile and the
built-ins, :mod:`.parts` what it is made of (metadata, steering, hash functions),
:mod:`.load` finds one by name or reads one from a TOML file.
"""

from dpfc.target.load import load_profile, profile_from_toml
from dpfc.target.profile import (
    BUILTIN_PROFILES,
    CODE_FORMATS,
    DEFAULT_METADATA,
    DEFAULT_PROFILE,
    DEFAULT_STEERING,
    HASH_FUNCTIONS,
    HEADER_FIELD_NAMES,
    HEADER_METADATA,
    MAX_CODE_OPTIONS,
    TAGGED_FORMAT,
    BranchOperands,
    DirectMappingLanes,
    HashFunction,
    MemoryAddress,
    MetadataField,
    SteeringAction,
    TargetError,
    TargetProfile,
)

__all__ = [
    "BUILTIN_PROFILES",
    "CODE_FORMATS",
    "DEFAULT_METADATA",
    "DEFAULT_PROFILE",
    "DEFAULT_STEERING",
    "HASH_FUNCTIONS",
    "HEADER_FIELD_NAMES",
    "HEADER_METADATA",
    "MAX_CODE_OPTIONS",
    "TAGGED_FORMAT",
    "BranchOperands",
    "DirectMappingLanes",
    "HashFunction",
    "MemoryAddress",
    "MetadataField",
    "SteeringAction",
    "TargetError",
    "TargetProfile",
    "load_profile",
    "profile_from_toml",
]
