"""The stage-structured SwitchVM program (dpfc.backends.p4.staged).

* the stage plan: 2 stages per EU + permissions, prolog, epilog and steering; a profile
  whose pipeline is too short is refused with the count;
* the generated TNA program: deterministic; every table pinned to the stage the plan gives
  its unit; no table with more actions than Tofino gives one container (32); at most four
  RegisterActions per register; the parser's bundle starts for every stage;
* p4c-barefoot (when found; skipped with the reason otherwise) compiles the Tofino-1 fit
  profile with no error into at most 12 stages, and the control plane's entries (the fixed
  ones and a sample of code slots) name only tables, keys, actions and parameters of the
  compiler's BF-RT schema.
* the v1model program: deterministic; the same tables, keys, actions and parameters as the
  TNA one (one control plane for both); its lane memories run the same register-action
  statements as TNA's RegisterActions, between a read and a write; p4c-bm2-ss compiles it
  with no error and simple_switch runs it: a denied packet is dropped even where a route
  matches, a granted one is routed (slow; skipped with the reason without bmv2).
"""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path

import pytest

from dpfc.backends.p4 import Cli, Switch, ToolchainMissing, compile_program, find_toolchain
from dpfc.backends.p4.barefoot import compile_tna, find_barefoot
from dpfc.backends.p4.bfrt_names import check_script, read_bfrt_json
from dpfc.backends.p4.lang import Block, Function, Implementation, Table
from dpfc.backends.p4.staged import ARCHITECTURES, PlanError, StagePlan, generate
from dpfc.backends.p4.staged.bfrt import bfrt_calls
from dpfc.backends.p4.staged.entries import eu_entries, prolog_entries
from dpfc.backends.p4.staged.externs import REGISTER_ACTIONS
from dpfc.backends.p4.staged.frame import fixed_frame_entries
from dpfc.backends.p4.staged.program import architecture, program
from dpfc.isa import PC, AluOp, Bundle, Control, CtrlOp, MemOp, Register, Selector, SelectorKind
from dpfc.packet.layers import build_frame, build_inner
from dpfc.target import BUILTIN_PROFILES, TargetProfile

MAX_ACTIONS = 32
TAKEN, NOT_TAKEN = PC(False, 1), PC(True, 0)
SAMPLE_EU = Bundle(
    (
        Selector(Register.a(0), SelectorKind.HASH),
        Selector(Register.b(0), SelectorKind.LOAD_IMM, value=5),
        Selector(Register.b(1), SelectorKind.MOV, source=Register.a(1)),
    ),
    (AluOp.LSH, AluOp.ADD),
    (MemOp.FAADD, MemOp.STORE),
    Control(CtrlOp.BSGT, TAKEN, Register.b(1), Register.a(0), NOT_TAKEN),
)
SAMPLE_PROLOG = Bundle(
    (
        Selector(Register.a(0), SelectorKind.POP),
        Selector(Register.a(1), SelectorKind.LOAD_MD, value=0),
        Selector(Register.b(0), SelectorKind.RAND),
    ),
    (AluOp.NOP, AluOp.NOP),
    (MemOp.NOP, MemOp.NOP),
    Control(CtrlOp.JMP, TAKEN),
)  # tofino_limits: actions of one table writing one container


def fit(num_eus: int = 4, stages: int = 12) -> TargetProfile:
    """The built-in fit profile of that many EUs (tofino1_fit: 4, tofino2_fit: 8)."""
    profile = BUILTIN_PROFILES["tofino1_fit" if num_eus == 4 else "tofino2_fit"]
    assert (profile.num_eus, profile.hardware_stages) == (num_eus, stages)
    return profile


def ingress(profile: TargetProfile, arch: str = "tna") -> Block:
    name = architecture(arch).ingress_name
    return next(d for d in program(profile, arch).decls if isinstance(d, Block) and d.name == name)


def tables(profile: TargetProfile, arch: str = "tna") -> list[Table]:
    return [d for d in ingress(profile, arch).locals if isinstance(d, Table)]


def stage_of(table: Table) -> int:
    (found,) = [m for a in table.annotations if (m := re.fullmatch(r"@stage\((\d+)\)", a))]
    return int(found.group(1))


def test_the_plan_gives_each_eu_two_stages_between_the_frame_stages() -> None:
    plan = StagePlan.for_profile(fit())
    assert (plan.permissions, plan.prolog, plan.epilog, plan.steering) == (0, 1, 10, 11)
    assert [(plan.select(k), plan.execute(k)) for k in range(4)] == [
        (2, 3),
        (4, 5),
        (6, 7),
        (8, 9),
    ]
    assert plan.stages == 12
    assert StagePlan.for_profile(fit(8, 20)).stages == 20
    assert plan.registers == ("a0", "a1", "b0", "b1")
    assert [plan.register_code(r) for r in plan.registers] == [0x00, 0x01, 0x10, 0x11]


def test_a_pipeline_too_short_is_refused_with_the_count() -> None:
    with pytest.raises(PlanError, match=r"5 EUs need 14 stages .* the pipeline has 12"):
        StagePlan.for_profile(replace(fit(), num_eus=5))


def test_a_profile_of_other_in_packet_code_is_refused() -> None:
    with pytest.raises(PlanError, match="format version 2"):
        StagePlan.for_profile(BUILTIN_PROFILES["tofino1"])
    with pytest.raises(PlanError, match="one code option"):
        StagePlan.for_profile(replace(fit(), max_code_options=2))
    # more in-packet bundles per stage: v1model only (the Tofino programs parse one)
    two = replace(fit(), packet_bundles_per_stage=2)
    assert StagePlan.for_profile(two).packet_bundles == 2
    assert "eu0_1_head" in generate(two, "v1model")
    with pytest.raises(PlanError, match="one in-packet bundle per stage"):
        generate(two, "tna")


def test_the_program_is_deterministic() -> None:
    assert generate(fit()) == generate(fit())
    assert "#include <t2na.p4>" in generate(fit(8, 20), chip=2)


def test_every_table_sits_in_the_stage_of_its_unit() -> None:
    profile = fit()
    plan = StagePlan.for_profile(profile)
    placed = {t.name: stage_of(t) for t in tables(profile)}
    assert max(placed.values()) == plan.stages - 1
    for k in range(plan.num_eus):
        for r in plan.registers:
            assert placed[plan.selector(k, r)] == plan.select(k)
        for i in range(plan.lanes):
            assert placed[plan.direct(k, i)] == placed[plan.segment(k, i)] == plan.select(k)
            assert placed[plan.memory(k, i)] == placed[plan.alu(k, i)] == plan.execute(k)
        assert placed[plan.compare(k)] == placed[plan.code(k)] == plan.select(k)
        assert placed[plan.branch(k)] == plan.execute(k)
    assert placed["permissions"] == plan.permissions
    assert placed["prolog_code"] == plan.prolog
    assert placed["epilog_code"] == plan.epilog
    assert placed["forwarding"] == plan.steering


def test_no_table_has_more_actions_than_a_container_allows() -> None:
    for table in tables(fit()):
        assert len(table.actions) <= MAX_ACTIONS, table.name


def test_each_lane_memory_has_four_register_actions() -> None:
    per_register: dict[str, int] = {}
    for decl in ingress(fit()).locals:
        if isinstance(decl, Implementation) and decl.type.startswith("RegisterAction"):
            register = decl.args[0].p4()
            per_register[register] = per_register.get(register, 0) + 1
    assert len(per_register) == 4 * 2  # an array per EU and lane
    assert set(per_register.values()) == {4}


def test_the_parser_starts_a_bundle_for_every_stage() -> None:
    text = generate(fit())
    starts = re.findall(r"0xFB([0-9A-F]{2}): parse_(\w+)_head;", text)
    assert starts == [
        ("00", "pro"),
        ("08", "eu0"),
        ("10", "eu1"),
        ("18", "eu2"),
        ("20", "eu3"),
        ("F8", "ep"),
    ]


@pytest.mark.slow
def test_the_tofino1_fit_program_compiles_into_12_stages(tmp_path: Path) -> None:
    try:
        barefoot = find_barefoot()
    except ToolchainMissing as missing:
        pytest.skip(f"p4c-barefoot not run: {missing}")
    source = tmp_path / "switchvm.p4"
    source.write_text(generate(fit()))
    run = compile_tna(barefoot, source, "tofino", tmp_path / "out")
    assert run.errors == ()
    assert run.resources is not None
    assert run.resources.stages <= 12
    # every table, key, action and parameter the control plane writes is the compiler's
    assert run.bfrt_json is not None
    profile = fit()
    plan = StagePlan.for_profile(profile)
    entries = fixed_frame_entries(profile, plan) + eu_entries(profile, plan, 2, 7, SAMPLE_EU)
    entries += prolog_entries(profile, plan, 3, SAMPLE_PROLOG)
    script = "\n".join(bfrt_calls(entries, "switchvm"))
    assert check_script(script, read_bfrt_json(run.bfrt_json), "switchvm") == []


# TNA's typedefs (tna.p4) as the widths v1model writes out.
TNA_TYPES = {"PortId_t": "bit<9>", "MulticastGroupId_t": "bit<16>"}


def actions(profile: TargetProfile, arch: str) -> dict[str, Function]:
    return {
        d.name: d
        for d in ingress(profile, arch).locals
        if isinstance(d, Function) and d.ret == "action"
    }


def test_the_v1model_program_is_deterministic_and_v1models() -> None:
    text = generate(fit(), "v1model")
    assert text == generate(fit(), arch="v1model")
    assert "#include <v1model.p4>" in text and "tna.p4" not in text
    assert "ig_intr_md" not in text and "RegisterAction" not in text
    assert ARCHITECTURES == ("tna", "v1model")
    with pytest.raises(ValueError, match="unknown architecture `psa`"):
        generate(fit(), "psa")


@pytest.mark.parametrize("profile", [fit(), fit(8, 20)], ids=["4x2", "8x2"])
def test_both_architectures_have_one_control_plane(profile: TargetProfile) -> None:
    """Tables (names, keys, match kinds, actions, defaults, sizes, stages) are equal; every
    action has the same parameters, of the same widths. The v1model program adds only what
    cuts the in-packet code (HDR_MOD: ``epilog_cut``, which the Tofino parsers cannot
    reach the end of the code for), what its egress pass needs (the translation
    tables' ``eg_phase`` key, LOAD_MD egress_port as a loaded field: ``_md6``), the
    inner frame's fields (``_md7`` .. ``_md13``), the default DPF and unauthorized
    packets that pass (``defaults``, ``unauthorized``) and NEXT_PC from a register."""
    v1_only_md = {f"md{index}" for index in range(6, 14)}
    v1_only_tables = {"epilog_cut", "defaults", "unauthorized"}
    v1_only_tables |= {f"load_{md}_t" for md in v1_only_md}
    v1_only_keys = {"eg_phase"}

    def v1_only_action(name: str) -> bool:
        v1_only = {"epilog_cut_on", "default_dpf", "pass_unauthorized"}
        v1_only |= {"epilog_switch_reg", "epilog_packet_reg"}  # NEXT_PC from a register
        return name in v1_only or name.rsplit("_", 1)[-1] in v1_only_md

    def placed(arch: str) -> list[Table]:  # the stage: TNA's other notes only order tables
        out = []
        for table in tables(profile, arch):
            notes = [a for a in table.annotations if a.startswith("@stage(")]
            kept = [i for i, key in enumerate(table.key_names) if key not in v1_only_keys]
            keys = [table.keys[i] for i in kept]
            names = [table.key_names[i] for i in kept]
            acts = [a for a in table.actions if not v1_only_action(a)]
            out.append(replace(table, annotations=notes, keys=keys, key_names=names, actions=acts))
        return out

    v1_tables = [t for t in placed("v1model") if t.name not in v1_only_tables]
    tna_tables = placed("tna")
    # the prolog's fixed entries for those fields and grants: larger tables on v1model
    sizes = {t.name: t.size for t in tna_tables}
    for i, table in enumerate(v1_tables):
        if table.name.startswith("prolog_") and table.name in sizes:
            assert table.size >= sizes[table.name]
            v1_tables[i] = replace(table, size=sizes[table.name])
    assert v1_tables == tna_tables
    tna, v1 = actions(profile, "tna"), actions(profile, "v1model")
    assert [a for a in v1 if not v1_only_action(a)] == list(tna)
    for name, action in tna.items():
        params = []
        for param in action.params:
            kind, word = param.rsplit(" ", 1)
            params.append(f"{TNA_TYPES.get(kind, kind)} {word}")
        assert list(v1[name].params) == params, name


def test_a_v1model_lane_memory_runs_the_register_actions_between_read_and_write() -> None:
    """What TNA's RegisterAction does to the word, v1model's action does between the
    register's read and its write; the lane's B register gets the word read (STORE: the
    word written, its selected copy), on both the same way."""
    tna = {
        d.name: d.methods[0].body
        for d in ingress(fit()).locals
        if isinstance(d, Implementation) and d.args[0].p4() == "eu1_lane0"
    }
    v1 = actions(fit(), "v1model")
    for action, _ops in REGISTER_ACTIONS:
        body = list(v1[f"eu1_memory0_{action}"].body)
        text = [line.strip() for stmt in body for line in stmt.lines("")]

        def by_pass(call: str) -> list[str]:  # the egress pass's register, else the ingress's
            return [
                "if ((meta.eg_phase == 1w1)) {",
                f"eu1_lane0_egress.{call};",
                "} else {",
                f"eu1_lane0.{call};",
                "}",
            ]

        assert [line.strip() for line in body[2].lines("")] == by_pass("read(value, index)")
        assert [line.strip() for line in body[-1].lines("")] == by_pass("write(index, value)")
        assert text[0] == (
            "bit<32> index = ((bit<32>)((((meta.r_a0[31:16] ^ meta.r_a0[15:0]) ^ "
            "meta.daddr0) ^ meta.saddr0)));"
        )
        register_action = list(tna[f"eu1_lane0_{action}"])
        if action == "store":  # B gets the word after the update
            assert body[-2].lines("") == ["meta.r_b0 = value;"]
            assert register_action[-1].lines("") == ["result = value;"]
            updates, tna_updates = body[3:-2], register_action[:-1]
        else:
            assert body[3].lines("") == ["meta.r_b0 = value;"]
            assert register_action[0].lines("") == ["result = value;"]
            updates, tna_updates = body[4:-1], register_action[1:]
        if action == "order":  # TNA's max/min externs are conditionals on v1model
            (update,) = updates
            assert "((value > hdr.push[2].w) ? value : hdr.push[2].w)" in update.lines("")[0]
        else:
            assert updates == tna_updates


@pytest.mark.slow
def test_bmv2_compiles_and_runs_the_v1model_program(tmp_path: Path) -> None:
    """p4c-bm2-ss compiles the fit profile's v1model program with no error; simple_switch
    loads it; with no permission a packet is dropped although a route matches (a drop holds,
    as TNA's drop_ctl); granted, the same packet is routed."""
    try:
        toolchain = find_toolchain()
    except ToolchainMissing as missing:
        pytest.skip(f"bmv2 not run: {missing}")
    source = tmp_path / "switchvm.p4"
    source.write_text(generate(fit(), "v1model"))
    compiled = compile_program(toolchain, source, tmp_path / "switchvm.json")
    assert not [w for w in compiled.warnings if "error" in w]
    # HASH: one crc32_custom calculation per EU and lane, each in its selector's hash
    # action, for the control plane to set to the lane's CRC (set_crc32_parameters)
    program_json = json.loads(compiled.json.read_text())
    algorithms = {c["name"]: c["algo"] for c in program_json["calculations"]}
    uses = sorted(
        (action["name"], parameter["value"])
        for action in program_json["actions"]
        for primitive in action["primitives"]
        for parameter in primitive.get("parameters", [])
        if parameter.get("type") == "calculation"
    )
    plan = StagePlan.for_profile(fit())
    ingress = architecture("v1model").ingress_name
    hashes = [f"{ingress}.{plan.selector(k, f'a{i}')}_hash" for k in range(4) for i in range(2)]
    assert [name for name, _calc in uses] == sorted(hashes)
    assert {algorithms[calc] for _name, calc in uses} == {"crc32_custom"}
    assert len({calc for _name, calc in uses}) == len(hashes)
    switch = Switch(toolchain, compiled.json)
    try:
        cli = Cli(toolchain, switch.thrift_port)
        try:
            _route_and_grant(cli, switch)
        finally:
            cli.close()
    finally:
        switch.stop()


def _route_and_grant(cli: Cli, switch: Switch) -> None:
    """A frame that is no tenant's is dropped; a tenant's frame without a SwitchVM header
    takes its route (R4, no default DPF); one that names a DPF needs a grant."""
    ingress = architecture("v1model").ingress_name
    cli.run(f"table_add {ingress}.routes {ingress}.route 10.0.0.2/32 => 3 0x0a0b0c0d0e0f")
    eth = bytes.fromhex("0200000000020200000000010800")
    ipv4 = bytes([0x45, 0, 0, 46, 0, 0, 0, 0, 64, 17, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2])
    switch.send(1, eth + ipv4 + bytes(26))  # a UDP packet outside Geneve
    assert switch.receive(1, timeout=1.0) == []
    plain = build_frame(tenant_id=7, options=b"", inner=build_inner(b"x"))
    switch.send(1, plain)
    assert switch.receive(1) == [(3, bytes.fromhex("0a0b0c0d0e0f") + plain[6:])]
