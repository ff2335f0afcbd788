"""The target model: built-in profiles carry the paper's numbers; TOML profiles load and
every malformed one is a TargetError with a message naming the problem."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from click.testing import CliRunner

from dpfc.cli.main import main
from dpfc.target import (
    BUILTIN_PROFILES,
    BranchOperands,
    DirectMappingLanes,
    MemoryAddress,
    TargetError,
    TargetProfile,
    load_profile,
    profile_from_toml,
)
from dpfc.target.profile import CRC32_FAMILY, HASH_FUNCTIONS, MAX_LANES

TOFINO1 = BUILTIN_PROFILES["tofino1"]
TOFINO2 = BUILTIN_PROFILES["tofino2"]


# -- built-in profiles ---------------------------------------------------------------------
def test_tofino1_has_the_papers_numbers() -> None:
    p = TOFINO1
    assert (p.num_eus, p.lanes) == (4, 4)  # §5: 4 EUs x 4 lanes
    assert p.memory_words_per_lane == 45_000  # "45K words"
    assert p.direct_entries_per_lane == 45_000  # "45K direct entries"
    assert p.segments_per_lane == 1_500  # "~1.5K segments"
    assert p.code_slots_per_stage == 4_096  # "4K code slots per stage"
    assert p.register_bits == 32
    assert p.registers == 8  # A[0..3], B[0..3]
    assert p.max_push == 8  # "up to 2L entries"
    assert p.word_mask == 0xFFFF_FFFF
    assert p.branch_operands is BranchOperands.ENTRY  # documented default
    assert p.memory_address is MemoryAddress.ENTRY
    assert p.problems() == []


def test_tofino2_has_eight_eus_of_four_lanes() -> None:
    assert (TOFINO2.num_eus, TOFINO2.lanes) == (8, 4)
    assert TOFINO2.memory_words_per_lane == TOFINO1.memory_words_per_lane
    assert TOFINO2.code_slots_per_stage == TOFINO1.code_slots_per_stage


def test_builtin_profiles_are_listed_and_loadable_by_name() -> None:
    assert {"tofino1", "tofino2", "bmv2"} <= set(BUILTIN_PROFILES)
    for name, profile in BUILTIN_PROFILES.items():
        assert profile.name == name
        assert load_profile(name) is profile
        assert profile.problems() == []
        assert name in profile.summary()


def test_lookups() -> None:
    p = TOFINO1
    field = p.metadata_by_name("ingress_port")
    assert field is not None and p.metadata_by_index(field.index) == field
    assert p.metadata_by_name("nope") is None
    assert p.metadata_by_index(200) is None
    forward = p.steering_by_name("forward")
    assert forward is not None and forward.takes_value
    assert p.steering_by_code(forward.code) == forward
    assert p.steering_by_name("teleport") is None
    assert p.hash_for_lane(0) is HASH_FUNCTIONS[p.hash_functions[0]]
    assert all(p.lane_has_direct_mapping(lane) for lane in range(p.lanes))
    first = dataclasses.replace(p, direct_mapping_lanes=DirectMappingLanes.FIRST)
    assert first.lane_has_direct_mapping(0) and not first.lane_has_direct_mapping(1)


def test_steering_table_has_the_papers_actions() -> None:
    names = [s.name for s in TOFINO1.steering]
    assert names == [
        "pass",
        "drop",
        "return_to_sender",
        "forward",
        "multicast",
        "set_port",
        "recirculate",
    ]
    privileged = {s.name for s in TOFINO1.steering if s.privileged}
    assert privileged == {"set_port", "recirculate"}


def test_profile_objects_validate_on_construction() -> None:
    with pytest.raises(TargetError, match=r"lanes must be 1\.\.15, got 0"):
        dataclasses.replace(TOFINO1, lanes=0)
    with pytest.raises(TargetError, match=r"num_eus must be 1\.\.30"):
        TargetProfile(name="x", num_eus=31, lanes=4)
    with pytest.raises(TargetError, match="register_bits must be 32"):
        dataclasses.replace(TOFINO1, register_bits=64)


# -- TOML profiles ---------------------------------------------------------------------------
def test_toml_base_and_overrides() -> None:
    p = profile_from_toml(
        """
base = "tofino2"
name = "wide"
lanes = 6
memory_words_per_lane = 1000
branch_operands = "loaded"
memory_address = "selected"
direct_mapping_lanes = "first"
description = "six lanes"
""",
        "wide.toml",
    )
    assert (p.name, p.num_eus, p.lanes, p.memory_words_per_lane) == ("wide", 8, 6, 1000)
    assert p.branch_operands is BranchOperands.LOADED
    assert p.memory_address is MemoryAddress.SELECTED
    assert p.direct_mapping_lanes is DirectMappingLanes.FIRST
    assert p.description == "six lanes"
    assert len(p.hash_functions) == 6  # one hash per lane is chosen when lanes change
    assert p.hardware_stages == TOFINO2.hardware_stages  # untouched keys come from the base


def test_toml_defaults_to_tofino1_and_the_file_stem() -> None:
    p = profile_from_toml("lanes = 2\n", "configs/two_lanes.toml")
    assert p.name == "two_lanes"
    assert dataclasses.replace(
        p, name="tofino1", lanes=4, hash_functions=TOFINO1.hash_functions
    ) == (TOFINO1)
    assert p.hash_functions == ("crc32", "crc32c")
    assert profile_from_toml("").name == "custom"


def test_toml_stem_becomes_a_valid_assembler_name() -> None:
    """The name is printed in `.target NAME`, so `my-target.toml` is named `my_target`."""
    assert profile_from_toml("", "dir/my-target.toml").name == "my_target"
    assert profile_from_toml("", "9lanes.toml").name == "_9lanes"


def test_toml_profile_table_form() -> None:
    p = profile_from_toml('[profile]\nbase = "tofino2"\nname = "t"\nnum_eus = 6\n')
    assert (p.name, p.num_eus, p.lanes) == ("t", 6, 4)


def test_toml_many_lanes_get_a_hash_each() -> None:
    p = profile_from_toml(f"lanes = {MAX_LANES}\n")
    assert len(p.hash_functions) == MAX_LANES
    assert all(name in HASH_FUNCTIONS for name in p.hash_functions)
    assert p.hash_functions[: len(CRC32_FAMILY)] == tuple(h.name for h in CRC32_FAMILY)


def test_toml_metadata_tables() -> None:
    p = profile_from_toml(
        """
name = "md"
[[metadata]]
name = "port"
index = 0
description = "ingress port"
[[metadata]]
name = "flow_hash"
index = 200
"""
    )
    assert [(m.name, m.index, m.description) for m in p.metadata] == [
        ("port", 0, "ingress port"),
        ("flow_hash", 200, ""),
    ]
    assert p.metadata_by_name("timestamp") is None  # the list is replaced, not extended


def test_toml_hash_functions() -> None:
    p = profile_from_toml('lanes = 2\nhash_functions = ["crc32_xfer", "crc32q"]\n')
    assert p.hash_for_lane(0).name == "crc32_xfer"
    assert p.hash_for_lane(1).polynomial == 0x814141AB


BAD_TOML = [
    # (toml text, a fragment the message must contain)
    ("lanes = = 2", "invalid TOML"),
    ("[profile\nlanes = 2", "invalid TOML"),
    ("lanez = 2", "unknown profile key `lanez`"),
    ("[extra]\nx = 1", "unknown profile key `extra`"),
    ("steering = []", "unknown profile key `steering`"),
    ('base = "tofino9"', "unknown base profile `tofino9`"),
    ("base = [1]", "unknown base profile"),
    ('lanes = "4"', "`lanes` must be int, got str"),
    ("lanes = 4.0", "`lanes` must be int, got float"),
    ("lanes = true", "`lanes` must be int, got bool"),
    ("num_eus = [4]", "`num_eus` must be int, got list"),
    ("name = 7", "`name` must be str, got int"),
    ("lanes = 0", "lanes must be 1..15, got 0"),
    ("lanes = 16", "lanes must be 1..15, got 16"),
    ("lanes = -1", "lanes must be 1..15, got -1"),
    ("num_eus = 0", "num_eus must be 1..30"),
    ("num_eus = 31", "num_eus must be 1..30"),
    ("immediates_per_bundle = 4", "immediates_per_bundle must be 0..3"),
    ("packet_bundles_per_stage = 9", "packet_bundles_per_stage must be 1..8"),
    ("packet_bundles_per_stage = 0", "packet_bundles_per_stage must be 1..8"),
    ("code_slots_per_stage = 32768", "code_slots_per_stage must be 1..32767"),
    ("code_slots_per_stage = 0", "code_slots_per_stage must be 1..32767"),
    ("const_table_entries = 257", "const_table_entries must be 0..256"),
    ("stack_max_depth = 58", "stack_max_depth must be 0..57"),
    ("default_gas = 0", "need 1 <= default_gas <= max_gas <= 255"),
    ("max_gas = 256", "need 1 <= default_gas <= max_gas <= 255"),
    ("default_gas = 9\nmax_gas = 8", "need 1 <= default_gas <= max_gas <= 255"),
    ("memory_words_per_lane = -1", "memory_words_per_lane must be >= 0"),
    ("segments_per_lane = -5", "segments_per_lane must be >= 0"),
    ("register_bits = 16", "register_bits must be 32"),
    ('hash_functions = ["crc32", "md5", "crc32c", "crc32d"]', "unknown hash function `md5`"),
    ('hash_functions = ["crc32"]', "hash_functions needs one entry per lane (4)"),
    ("hash_functions = [1, 2, 3, 4]", "`hash_functions` must be a list of names"),
    ('hash_functions = "crc32"', "`hash_functions` must be a list of names"),
    ('branch_operands = "late"', "`branch_operands` must be one of entry, selected, loaded"),
    ("branch_operands = 1", "`branch_operands` must be one of entry, selected, loaded"),
    ('memory_address = "loaded"', "`memory_address` must be one of entry, selected"),
    ('direct_mapping_lanes = "some"', "`direct_mapping_lanes` must be one of all, first"),
    ("metadata = 3", "`metadata` must be an array of tables"),
    ("metadata = [1]", "each metadata entry needs `name` and `index`"),
    ('[[metadata]]\nname = "x"', "each metadata entry needs `name` and `index`"),
    ('[[metadata]]\nname = "x"\nindex = "abc"', "metadata `x` needs an integer `index`, got str"),
    ('[[metadata]]\nname = "x"\nindex = 1.5', "metadata `x` needs an integer `index`, got float"),
    ('[[metadata]]\nname = "x"\nindex = true', "metadata `x` needs an integer `index`, got bool"),
    ("[[metadata]]\nname = 1\nindex = 1", "metadata `name` and `description` must be strings"),
    ('[[metadata]]\nname = "x"\nindex = 1\nwidth = 8', "unknown metadata key `width` in `x`"),
    ('[[metadata]]\nname = "x"\nindex = 256', "metadata indices must be unique and 0..255"),
    (
        '[[metadata]]\nname = "x"\nindex = 1\n[[metadata]]\nname = "y"\nindex = 1',
        "metadata indices must be unique",
    ),
    (
        '[[metadata]]\nname = "x"\nindex = 1\n[[metadata]]\nname = "x"\nindex = 2',
        "metadata names must be unique assembler names",
    ),
    ('[[metadata]]\nname = "queue-depth"\nindex = 1', "metadata names must be unique"),
    ('name = "my-target"', "name `my-target` must be a letter or `_`"),
    ("code_format = 3", "code_format must be 1 or 2, got 3"),
    ("code_format = 0", "code_format must be 1 or 2, got 0"),
    ('code_format = "2"', "`code_format` must be int, got str"),
    ("code_format = 2\nlanes = 16", "code_format 2 needs lanes <= 15"),
    (
        "code_format = 2\nimmediates_per_bundle = 4",
        "code_format 2 needs immediates_per_bundle <= 3",
    ),
    ('name = ""', "name `` must be a letter"),
    ("max_code_options = 0", "max_code_options must be 1..15, got 0"),
    ("max_code_options = 16", "max_code_options must be 1..15, got 16"),
    ('max_code_options = "1"', "`max_code_options` must be int, got str"),
]


@pytest.mark.parametrize(("text", "fragment"), BAD_TOML, ids=[t for t, _ in BAD_TOML])
def test_bad_toml_is_a_target_error(text: str, fragment: str) -> None:
    with pytest.raises(TargetError) as info:
        profile_from_toml(text, "bad.toml")
    message = str(info.value)
    assert message.startswith("bad.toml: "), message
    assert fragment in message, message


def test_a_toml_error_lists_every_problem() -> None:
    with pytest.raises(TargetError) as info:
        profile_from_toml("lanes = 0\nnum_eus = 99\n", "two.toml")
    assert "lanes must be 1..15" in str(info.value)
    assert "num_eus must be 1..30" in str(info.value)


# -- the in-packet code format (docs/encoding.md §9) ---------------------------------------------
def test_code_format_loads_and_leaves_version_1_fingerprints_alone() -> None:
    first = {name: p for name, p in BUILTIN_PROFILES.items() if not name.endswith("_fit")}
    assert {p.code_format for p in first.values()} == {1}
    # the fit profiles are the stage-structured P4 program's: version 2, one code option
    fit = [BUILTIN_PROFILES[name] for name in ("tofino1_fit", "tofino2_fit")]
    assert [(p.code_format, p.max_code_options) for p in fit] == [(2, 1), (2, 1)]
    # the digests the built-in profiles had before the fields existed (objects record them)
    assert {name: p.fingerprint() for name, p in first.items()} == {
        "tofino1": "652ccc66c3fe2d5b",
        "tofino2": "dd4bdb1d7cd6f200",
        "bmv2": "f3e2d28ef6f0809b",
    }
    tagged = profile_from_toml('base = "tofino2"\nname = "t2"\ncode_format = 2\n')
    assert tagged == dataclasses.replace(TOFINO2, name="t2", code_format=2)
    assert dataclasses.replace(tagged, name="tofino2").fingerprint() != TOFINO2.fingerprint()
    assert profile_from_toml('base = "tofino2"\nname = "t2"\ncode_format = 1\n').fingerprint() == (
        dataclasses.replace(TOFINO2, name="t2").fingerprint()
    )


def test_max_code_options_loads_and_leaves_fingerprints_alone() -> None:
    """15, the header's 4-bit count, limits nothing: profiles that leave it keep their
    fingerprints; any other value is part of the profile."""
    assert {p.max_code_options for n, p in BUILTIN_PROFILES.items() if "_fit" not in n} == {15}
    single = profile_from_toml('base = "tofino2"\nname = "t2"\nmax_code_options = 1\n')
    assert single == dataclasses.replace(TOFINO2, name="t2", max_code_options=1)
    assert dataclasses.replace(single, name="tofino2").fingerprint() != TOFINO2.fingerprint()
    same = profile_from_toml('base = "tofino2"\nname = "tofino2"\nmax_code_options = 15\n')
    assert same.fingerprint() == TOFINO2.fingerprint()


def test_dpfc_target_names_format_2(tmp_path: Path) -> None:
    path = tmp_path / "v2.toml"
    path.write_text("code_format = 2\n", encoding="utf-8")
    shown = CliRunner().invoke(main, ["target", str(path)])
    assert shown.exit_code == 0
    assert "in-packet code format: version 2" in shown.output
    assert "code format" not in CliRunner().invoke(main, ["target", "tofino1"]).output


def test_format_2_limits_are_the_tags() -> None:
    """A selector's first byte must never be a tag: register codes stay below 0x1F, and
    there are three immediate tags. Both limits hold for every profile that loads today
    (at most 15 lanes, 3 immediates), and format version 2 states its own."""
    with pytest.raises(TargetError, match="0x1F would make a selector's first byte look like"):
        dataclasses.replace(TOFINO1, code_format=2, lanes=MAX_LANES + 1)
    with pytest.raises(TargetError, match="three immediate tags"):
        dataclasses.replace(TOFINO1, code_format=2, immediates_per_bundle=4)
    widest = dataclasses.replace(
        TOFINO1, code_format=2, lanes=MAX_LANES, hash_functions=("crc32",) * MAX_LANES
    )
    assert widest.problems() == []


# -- load_profile ----------------------------------------------------------------------------
def test_load_profile_from_a_toml_file(tmp_path: Path) -> None:
    path = tmp_path / "lab.toml"
    path.write_text('base = "tofino1"\nnum_eus = 2\nbranch_operands = "selected"\n')
    p = load_profile(str(path))
    assert (p.name, p.num_eus, p.branch_operands) == ("lab", 2, BranchOperands.SELECTED)


def test_load_profile_reports_the_path_of_a_bad_file(tmp_path: Path) -> None:
    path = tmp_path / "broken.toml"
    path.write_text("lanes = 99\n")
    with pytest.raises(TargetError, match=r"broken\.toml: .*lanes must be 1\.\.15"):
        load_profile(str(path))


def test_load_profile_missing_file(tmp_path: Path) -> None:
    missing = tmp_path / "absent.toml"
    with pytest.raises(TargetError) as info:
        load_profile(str(missing))
    assert str(info.value) == f"cannot read target profile {missing}: No such file or directory"


def test_load_profile_unknown_name() -> None:
    with pytest.raises(TargetError) as info:
        load_profile("tofino3")
    message = str(info.value)
    assert "unknown target `tofino3`" in message
    assert "tofino1" in message and "tofino2" in message and ".toml" in message


def test_load_profile_directory_with_toml_suffix(tmp_path: Path) -> None:
    folder = tmp_path / "dir.toml"
    folder.mkdir()
    with pytest.raises(TargetError, match="cannot read target profile"):
        load_profile(str(folder))
