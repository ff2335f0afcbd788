"""``dpfc deploy --switch bmv2://...`` onto a simple_switch running the stage-structured
program, as a user builds and deploys it, against the simulator.

``dpfc p4 --target tofino1_fit -o DIR`` and p4c-bm2-ss (the session's ``staged_build``,
tests/staged_build.py); simple_switch runs it; ``dpfc compile examples/dpf/counter.dpf
--target tofino1_fit``, ``dpfc link`` for tenant 7 and ``dpfc deploy`` (the profile, of code
format 2, picks the stage-structured program's control: its entries are in the script).
The packets of examples/tests/counter.toml's in-switch cases (and one of a tenant without
a permission entry) then leave bmv2 as they leave a simulated switch holding the same
image: the same ports and bytes (but the outer IPv4 and UDP checksums, which the program
does not recompute), the counts the test file expects. A second deploy
without ``--reset`` is refused with the hint; with it, it succeeds. ``dpfc test --switch
bmv2://...`` reaches the switch through the same choice of control: counter's test file, for
tofino1_fit, gives on the switch what it gives on the simulated device (``sim://``). Without
p4c and bmv2 the tests are skipped with the reason.
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from dpfc.backends.p4 import Switch
from dpfc.backends.sim import SimControl, passes_until_done
from dpfc.backends.sim import Switch as SimSwitch
from dpfc.cli.main import main
from dpfc.deploy import Deployment
from dpfc.encoding import SwitchVMHeader, encode_options
from dpfc.isa.bundle import PC
from dpfc.link import read_image
from dpfc.packet.layers import build_frame, build_inner
from dpfc.packet.wire import parse_packet
from dpfc.target import TargetProfile
from tests.conftest import ROOT
from tests.staged_build import TARGET, StagedBuild

pytestmark = pytest.mark.slow
TENANT, DEFAULT_PORT, IN_PORT = 7, 1, 3  # examples/tests/counter.toml: tenant, default_port
# (tenant, id) of each packet -> the stack that comes back (id, count before it), None: dropped
ETHERNET = 14  # the outer IPv4 header's offset (no VLAN tag)
PACKETS = [(7, 5, (5, 0)), (7, 3, (3, 0)), (7, 3, (3, 1)), (7, 4, (4, 0)), (9, 5, None)]


def _dpfc(*args: str) -> str:
    done = CliRunner().invoke(main, list(args))
    assert done.exit_code == 0, done.output
    return done.output


def _unchecked(frames: list[tuple[int, bytes]]) -> list[tuple[int, bytes]]:
    """The frames without the outer IPv4 and UDP checksums: the program recomputes neither
    (backends/p4/staged/v1model.py), the simulator both (the UDP one as 0)."""
    out = []
    for port, frame in frames:
        udp = ETHERNET + (frame[ETHERNET] & 0xF) * 4
        ip_sum, udp_sum = ETHERNET + 10, udp + 6
        cleared = frame[:ip_sum] + bytes(2) + frame[ip_sum + 2 : udp_sum] + bytes(2)
        out.append((port, cleared + frame[udp_sum + 2 :]))
    return out


def _frame(profile: TargetProfile, tenant: int, word: int) -> bytes:
    header = SwitchVMHeader(app_id=0, dpf_ptr=PC(False, 0), stack=(word,))
    options = encode_options(header, profile).data
    return build_frame(tenant_id=tenant, options=options, inner=build_inner(b"x"))


def test_dpfc_deploy_runs_the_counter_on_the_staged_program_as_the_simulator_does(
    staged_build: StagedBuild, tmp_path: Path
) -> None:
    profile = staged_build.profile
    obj, img = tmp_path / "counter.dpfo", tmp_path / "counter.dpfimg"
    source = str(ROOT / "examples/dpf/counter.dpf")
    _dpfc("compile", source, "--target", TARGET, "-o", str(obj))
    _dpfc("link", f"{obj}@{TENANT}", "-o", str(img))
    simulated = SimSwitch("sim", profile)
    Deployment(SimControl(simulated.control)).apply(read_image(img.read_bytes(), str(img)))
    simulated.control.set_default_port(DEFAULT_PORT)
    switch = Switch(staged_build.toolchain, staged_build.program_json)
    try:
        url = f"bmv2://127.0.0.1:{switch.thrift_port}"
        script = tmp_path / "deploy.txt"
        port = str(DEFAULT_PORT)
        out = _dpfc(
            "deploy", str(img), "--switch", url, "--script", str(script), "--default-port", port
        )
        assert out.splitlines()[-1].startswith("deployed image ")
        sent = script.read_text()
        assert "table_add SwitchVMIngress.permissions SwitchVMIngress.grant 0x7 " in sent
        assert "SwitchVMIngress.eu0_" in sent  # the staged program's tables, not the old ones
        for tenant, word, stack in PACKETS:
            frame = _frame(profile, tenant, word)
            expected = passes_until_done(simulated.process, frame, IN_PORT)
            switch.send(IN_PORT, frame)
            got = switch.receive(len(expected), grace=0.05 if expected else 0.3)
            assert _unchecked(got) == _unchecked(expected), (tenant, word)
            if stack is None:
                assert got == []
                continue
            [(out_port, out_frame)] = got
            parsed = parse_packet(out_frame, profile).header
            assert out_port == DEFAULT_PORT and parsed is not None and parsed.stack == stack
        again = CliRunner().invoke(main, ["deploy", str(img), "--switch", url, "-q"])
        assert again.exit_code == 1 and "deploy with --reset?" in again.output
        _dpfc("deploy", str(img), "--switch", url, "-q", "--reset")
    finally:
        switch.stop()


def _statuses(output: str) -> dict[tuple[str, str], str]:
    data: dict[str, Any] = json.loads(output)
    return {(f["file"], c["case"]): c["status"] for f in data["files"] for c in f["cases"]}


def test_dpfc_test_runs_the_counter_tests_on_the_staged_program_as_on_the_simulator(
    staged_build: StagedBuild, tmp_path: Path
) -> None:
    data = tomllib.loads((ROOT / "examples/tests/counter.toml").read_text(encoding="utf-8"))
    data["target"], data["code"] = TARGET, str(ROOT / "examples/dpf/counter.dpf")
    test_file = tmp_path / "counter.json"
    test_file.write_text(json.dumps(data), encoding="utf-8")
    simulated = _dpfc("test", str(test_file), "--switch", "sim://", "--json")
    switch = Switch(staged_build.toolchain, staged_build.program_json, packets=False)
    try:
        url = f"bmv2://127.0.0.1:{switch.thrift_port}"
        done = _dpfc(
            "test", str(test_file), "--switch", url, "--packet-in", switch.address, "--json"
        )
    finally:
        switch.stop()
    assert _statuses(done) == _statuses(simulated)
    assert "pass" in _statuses(done).values() and json.loads(done)["summary"]["fail"] == 0
