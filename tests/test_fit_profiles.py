"""The built-in profiles tofino1_fit and tofino2_fit (docs/targets.md, "The fit profiles").

Their values against the Tofino limits measured in ``dpfc.backends.p4.tofino_limits``, the
fingerprints of the other built-ins (unchanged by them), and what every example does on
them, measured and written down here as tables: each ``examples/dpf`` module compiles (the
EUs of each DPF) or is refused (the codes; per DPF where the module checks), each
``examples/asm`` program assembles or is refused, and each test file of ``examples/tests``
run on the simulator with the profile as its target passes, is refused, or has the cases
listed fail. Each compile, assembly and run happens once per profile.
"""

from __future__ import annotations

import json
import tomllib
from dataclasses import fields, replace
from functools import cache
from pathlib import Path

import pytest

from dpfc.asm import assemble_module
from dpfc.backends.p4.staged import PlanError, StagePlan
from dpfc.backends.p4.tofino_limits import LIMITS
from dpfc.backends.testing import CaseResult, Target, load_test_file, run_case
from dpfc.catalog import codes
from dpfc.diagnostics import DiagnosticError, SourceFile
from dpfc.driver import CompileOptions, check_source, compile_source
from dpfc.target import BUILTIN_PROFILES, TargetProfile
from tests.conftest import ROOT

TOFINO1 = BUILTIN_PROFILES["tofino1"]
FIT = ("tofino1_fit", "tofino2_fit")
EXAMPLES = ROOT / "examples"

# -- the values ------------------------------------------------------------------------------

# field: (tofino1_fit, tofino2_fit); every field not listed is tofino1's
VALUES: dict[str, tuple[object, object]] = {
    "num_eus": (4, 8),
    "lanes": (2, 2),
    "hardware_stages": (12, 20),
    "hash_functions": (("crc32", "crc32c"), ("crc32", "crc32c")),
    "code_slots_per_stage": (504, 504),
    "segments_per_lane": (1_024, 1_024),
    "memory_words_per_lane": (45_000, 45_000),
    "direct_entries_per_lane": (45_000, 45_000),
    "shift_amounts": ((1, 2, 4, 8, 16), (1, 2, 4, 8, 16)),
    "const_table_entries": (0, 0),
    "packet_bundles_per_stage": (1, 1),
    # the stage-structured program's parser reads format version 2, in one code option
    "code_format": (2, 2),
    "max_code_options": (1, 1),
}
LIMIT = {limit.name: limit.value for limit in LIMITS}
# the EU's operations besides the shifts that write a lane's register in one ALU table
ALU_OTHER_ACTIONS = 8
# containers in the registers' MAU group besides the 2L registers and their 2L selected
# copies: the comparison's three words and the bundle's two in-packet immediates
GROUP_OTHER_WORDS = 3 + 2


@pytest.mark.parametrize("index", [0, 1], ids=FIT)
def test_the_values(index: int) -> None:
    profile = BUILTIN_PROFILES[FIT[index]]
    assert profile.problems() == []
    for field in fields(TargetProfile):
        if field.name in ("name", "description"):
            continue
        expected = (
            VALUES[field.name][index] if field.name in VALUES else getattr(TOFINO1, field.name)
        )
        assert getattr(profile, field.name) == expected, field.name
    assert profile.hash_functions == TOFINO1.hash_functions[: profile.lanes]


def test_the_values_fit_the_measured_limits() -> None:
    group = LIMIT["mau_group_containers"]
    actions = LIMIT["actions_per_table"]
    for name in FIT:
        lanes = BUILTIN_PROFILES[name].lanes
        # 2L registers + 2L selected copies + the rest share one group: L = 2 fits, 3 does not
        assert 4 * lanes + GROUP_OTHER_WORDS <= group < 4 * (lanes + 1) + GROUP_OTHER_WORDS
        shifts = BUILTIN_PROFILES[name].shift_amounts
        assert ALU_OTHER_ACTIONS + 2 * len(shifts) <= actions  # LSH and RSH by each amount
        # every amount 1..31 is a sum of them: the compiler writes any constant shift
        assert {sum(a for a in shifts if k & a) for k in range(32)} == set(range(32))
    assert actions < ALU_OTHER_ACTIONS + 2 * 31  # why not every amount


@pytest.mark.parametrize("name", FIT)
def test_the_stage_structured_plan_fills_the_pipeline(name: str) -> None:
    # 2 stages per EU and 4 around them: 12 on Tofino-1, 20 on Tofino-2; one EU more is refused
    profile = BUILTIN_PROFILES[name]
    assert StagePlan.for_profile(profile).stages == profile.hardware_stages
    with pytest.raises(PlanError):
        StagePlan.for_profile(replace(profile, num_eus=profile.num_eus + 1))


def test_the_other_built_ins_keep_their_fingerprints() -> None:
    # objects and install images record these: the fit profiles change none of them
    assert {
        name: BUILTIN_PROFILES[name].fingerprint() for name in ("tofino1", "tofino2", "bmv2")
    } == {
        "tofino1": "652ccc66c3fe2d5b",
        "tofino2": "dd4bdb1d7cd6f200",
        "bmv2": "f3e2d28ef6f0809b",
    }
    fit = {BUILTIN_PROFILES[name].fingerprint() for name in FIT}
    assert len(fit) == 2 and not fit & {
        p.fingerprint() for p in BUILTIN_PROFILES.values() if p.name not in FIT
    }


# -- examples/dpf ----------------------------------------------------------------------------

# A module that compiles: {DPF: EUs}. One the scheduler refuses: {DPF: EUs, or the code of
# its refusal when compiled alone (--dpf)}. One whose check refuses it: the codes.
Outcome = dict[str, int | str] | tuple[str, ...]
LANES_REFUSED = (codes.HASH_LANE, codes.PIN_RANGE)  # hash<2>, hash<3>, @pin(lane = 2)
# the acceptor's two paths need two epilogs in the packet
PAXOS: Outcome = {"leader": 1, "acceptor": codes.SCHEDULE_TOO_MANY_PATHS}
# the prolog loads 6 words (2 parameters, 4 metadata fields) into 4 registers
TELEMETRY: Outcome = {"max_hop_latency": codes.SCHEDULE_PROLOG_REGISTERS}
DPF_EXAMPLES: dict[str, tuple[Outcome, Outcome]] = {
    # example: (tofino1_fit, tofino2_fit)
    "count_min": (LANES_REFUSED, LANES_REFUSED),
    "counter": ({"counter": 1}, {"counter": 1}),
    "flow_guard": ({"flow_guard": codes.SCHEDULE_DOES_NOT_FIT}, {"flow_guard": 5}),
    "flow_guard_chain": ({"flow_guard": 4}, {"flow_guard": 5}),
    "flow_lb": ((codes.HASH_LANE,), (codes.HASH_LANE,)),
    "kvs": (LANES_REFUSED, LANES_REFUSED),  # it imports count_min
    # and cache_update takes 5 parameters, 4 registers
    "kvs_update": ((*LANES_REFUSED, codes.PROLOG_REGISTERS),) * 2,
    "lb1": ({"lb1": 1}, {"lb1": 1}),
    "lb2": ({"lb2": 4}, {"lb2": 4}),  # >> 10 is >> 8 >> 2: one EU more than on tofino1
    "lb3": (
        {"lb3_client": codes.SCHEDULE_TOO_MANY_PATHS, "lb3_server": 2},
        {"lb3_client": 8, "lb3_server": 2},  # its one-path form (ALU words)
    ),
    "paxos": (PAXOS, PAXOS),
    "tally": ({"tally": 1}, {"tally": 1}),
    "telemetry": (TELEMETRY, TELEMETRY),
}


def _codes(error: DiagnosticError) -> tuple[str, ...]:
    return tuple(sorted({d.code for d in error.diagnostics}))


@cache
def _compiled(example: str, profile_name: str) -> Outcome:
    path = EXAMPLES / "dpf" / f"{example}.dpf"
    profile = BUILTIN_PROFILES[profile_name]
    try:
        module = compile_source(path, CompileOptions(target=profile))
        return {unit.name: unit.result.schedule.eus_used for unit in module.units}
    except DiagnosticError:
        pass
    try:
        checked = check_source(path, profile)
    except DiagnosticError as error:
        return _codes(error)
    outcome: dict[str, int | str] = {}
    for dpf in checked.dpfs:
        try:
            alone = compile_source(path, CompileOptions(target=profile, only=dpf.name))
        except DiagnosticError as error:
            (outcome[dpf.name],) = _codes(error)
        else:
            outcome[dpf.name] = alone.unit(dpf.name).result.schedule.eus_used
    return outcome


def test_the_table_lists_every_dpf_example() -> None:
    assert sorted(DPF_EXAMPLES) == sorted(p.stem for p in (EXAMPLES / "dpf").glob("*.dpf"))


@pytest.mark.parametrize("profile", FIT)
@pytest.mark.parametrize("example", sorted(DPF_EXAMPLES))
def test_dpf_example(example: str, profile: str) -> None:
    expected = DPF_EXAMPLES[example][FIT.index(profile)]
    if isinstance(expected, tuple):
        expected = tuple(sorted(expected))
    assert _compiled(example, profile) == expected


@pytest.mark.parametrize(
    ("profile", "named"),
    [
        ("tofino1_fit", "(--target tofino2 or --target tofino2_fit)"),
        ("tofino1", "(--target tofino2)"),
    ],
)
def test_the_hint_names_profiles_with_enough_lanes(profile: str, named: str) -> None:
    # five hashes in a chain need 5 EUs; the 2-lane tofino2_fit is no hint for a 4-lane DPF
    path = ROOT / "tests" / "schedule_errors" / "002_chain_of_hashes.dpf"
    with pytest.raises(DiagnosticError) as raised:
        compile_source(path, CompileOptions(target=BUILTIN_PROFILES[profile]))
    (diagnostic,) = raised.value.diagnostics
    assert diagnostic.code == codes.SCHEDULE_DEPENDENCE_CHAIN
    assert diagnostic.hint is not None and named in diagnostic.hint


# -- examples/asm ----------------------------------------------------------------------------

REGISTERS = (codes.ISA_NO_SUCH_REGISTER,)  # A2, A3, B2, B3 of a 4-lane program
# eu3's or the epilog's bundle 1: one in-packet bundle per stage
BUNDLES = (codes.ISA_SLOT_OUT_OF_RANGE,)
# a 4-EU program's last EU jumps to the epilog; on 8 EUs it must name an eu4 bundle
LAST_EU = (codes.ASM_LABEL_WRONG_STAGE,)
ASM_EXAMPLES: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    # program: (tofino1_fit, tofino2_fit) codes; () assembles
    "cache_get": (REGISTERS + BUNDLES, REGISTERS + BUNDLES + LAST_EU),
    "cache_put": ((), ()),
    "cache_update": (REGISTERS, REGISTERS),
    "count_min": (REGISTERS, REGISTERS),
    "counter": ((), ()),
    "empty": ((), ()),
    "lb1": ((), ()),
    "lb2": ((), ()),  # but RSH by 10 faults at run time (below)
    "lb3_client": (BUNDLES, BUNDLES + LAST_EU),
    "lb3_server": ((), ()),
    "paxos_acceptor": (BUNDLES, BUNDLES),
    "paxos_leader": ((), ()),
}


def test_the_table_lists_every_asm_example() -> None:
    assert sorted(ASM_EXAMPLES) == sorted(p.stem for p in (EXAMPLES / "asm").glob("*.dpfasm"))


@pytest.mark.parametrize("profile", FIT)
@pytest.mark.parametrize("program", sorted(ASM_EXAMPLES))
def test_asm_example(program: str, profile: str) -> None:
    path = EXAMPLES / "asm" / f"{program}.dpfasm"
    source = SourceFile(str(path), path.read_text(encoding="utf-8"))
    try:
        assemble_module(source, BUILTIN_PROFILES[profile])
        found: tuple[str, ...] = ()
    except DiagnosticError as error:
        found = _codes(error)
    assert found == tuple(sorted(ASM_EXAMPLES[program][FIT.index(profile)]))


# -- examples/tests on the simulator ---------------------------------------------------------

# A file whose code is refused: the codes. Else the cases that do not pass: {name: the code
# of a case's error, or "fail"}; {} when every case passes.
FileOutcome = dict[str, str] | tuple[str, ...]
LB2_FAULTS = {
    "batches of 1,024 packets per server": "fail",
    "after server 7 comes server 0": "fail",
}
TEST_FILES: dict[str, tuple[FileOutcome, FileOutcome]] = {
    # file: (tofino1_fit, tofino2_fit)
    "asm/cache_get": (REGISTERS + BUNDLES, REGISTERS + BUNDLES + LAST_EU),
    "asm/cache_put": ({}, {}),
    "asm/cache_update": (REGISTERS, REGISTERS),
    "asm/count_min": (REGISTERS, REGISTERS),
    "asm/counter": ({}, {}),
    "asm/empty": ({}, {}),
    "asm/lb1": ({}, {}),
    "asm/lb2": (LB2_FAULTS, LB2_FAULTS),
    "asm/lb3_client": (BUNDLES, BUNDLES + LAST_EU),
    "asm/lb3_server": ({}, {}),
    "asm/miss_counter": ({}, {}),
    "asm/paxos_acceptor": (BUNDLES, BUNDLES),
    "asm/paxos_leader": ({}, {}),
    "count_min": (LANES_REFUSED, LANES_REFUSED),
    "counter": ({}, {}),
    "egress_path": ({}, {}),
    "flow_guard": (
        (codes.SCHEDULE_DOES_NOT_FIT,),
        {"in-packet placement guards the same way": codes.SCHEDULE_TOO_MANY_PATHS},
    ),
    "flow_guard_chain": ({}, {}),
    "flow_lb": ((codes.HASH_LANE,), (codes.HASH_LANE,)),
    "kvs": (LANES_REFUSED, LANES_REFUSED),
    "kvs_update": (LANES_REFUSED, LANES_REFUSED),
    "lb1": ({}, {}),
    "lb2": ({}, {}),
    "lb3": ((codes.SCHEDULE_TOO_MANY_PATHS,), {}),
    "paxos": ((codes.SCHEDULE_TOO_MANY_PATHS,),) * 2,
    "tally": ({}, {}),
    "telemetry": ((codes.SCHEDULE_PROLOG_REGISTERS,),) * 2,
}


@pytest.fixture(scope="module")
def mirror(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder like examples/ whose test files are written there, with a target each:
    the code folders are links to the examples', so relative paths read the same files."""
    root = tmp_path_factory.mktemp("examples")
    (root / "tests" / "asm").mkdir(parents=True)
    for folder in ("dpf", "asm", "scenarios"):
        (root / folder).symlink_to(EXAMPLES / folder, target_is_directory=True)
    return root


@cache
def _ran(mirror: Path, name: str, profile: str) -> tuple[FileOutcome, list[CaseResult]]:
    data = tomllib.loads((EXAMPLES / "tests" / f"{name}.toml").read_text(encoding="utf-8"))
    data["target"] = profile
    path = mirror / "tests" / f"{name}.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    try:
        test = load_test_file(path)
    except DiagnosticError as error:
        return _codes(error), []
    results = [run_case(test, case, Target()) for case in test.cases]
    assert results
    outcome = {}
    for result in results:
        if result.status == "error":
            assert isinstance(result.error, DiagnosticError), result.error
            outcome[result.name] = "+".join(_codes(result.error))
        elif result.status != "pass":
            outcome[result.name] = result.status
    return outcome, results


def test_the_table_lists_every_test_file() -> None:
    found = (EXAMPLES / "tests").rglob("*.toml")
    assert sorted(TEST_FILES) == sorted(
        p.relative_to(EXAMPLES / "tests").with_suffix("").as_posix() for p in found
    )


@pytest.mark.parametrize("profile", FIT)
@pytest.mark.parametrize("name", sorted(TEST_FILES))
def test_example_test_file(mirror: Path, name: str, profile: str) -> None:
    expected = TEST_FILES[name][FIT.index(profile)]
    if isinstance(expected, tuple):
        expected = tuple(sorted(expected))
    assert _ran(mirror, name, profile)[0] == expected


@pytest.mark.parametrize("profile", FIT)
def test_hand_written_lb2_faults_on_its_shift(mirror: Path, profile: str) -> None:
    # lb2.dpfasm shifts by 10 with RSH; the DPF-language lb2 passes (its >> 10 is >> 8 >> 2)
    first = _ran(mirror, "asm/lb2", profile)[1][0]
    (verdict,) = [m for m in first.packets[0].mismatches if m.what == "verdict"]
    assert "RSH by 10" in verdict.got_text
    assert "the ALU shifts only by 1, 2, 4, 8, 16" in verdict.got_text
