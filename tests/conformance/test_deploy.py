"""``dpfc deploy``: a linked image installed on bmv2 and on the simulator by the command.

The counter example is compiled, linked for tenant 7 and deployed with ``dpfc deploy``; a
packet then runs it on the switch (bmv2: the same switch process; sim: a dry run that
checks every step). A second deploy without ``--reset`` is refused and rolled back with a
hint; with ``--reset`` it succeeds.
"""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from dpfc.backends.p4.bmv2 import Switch
from dpfc.cli.main import main
from dpfc.encoding import SwitchVMHeader, encode_options
from dpfc.isa.bundle import PC
from dpfc.packet.layers import build_frame, build_inner
from dpfc.packet.wire import parse_packet
from tests.conformance.conftest import PROFILE, P4Build
from tests.conftest import ROOT


def image(tmp_path: Path) -> Path:
    runner = CliRunner()
    obj, img = tmp_path / "counter.dpfo", tmp_path / "counter.dpfimg"
    done = runner.invoke(main, ["compile", str(ROOT / "examples/dpf/counter.dpf"), "-o", str(obj)])
    assert done.exit_code == 0, done.output
    done = runner.invoke(main, ["link", f"{obj}@7", "-o", str(img)])
    assert done.exit_code == 0, done.output
    return img


def test_deploy_to_the_simulator_is_a_checked_dry_run(tmp_path: Path) -> None:
    done = CliRunner().invoke(main, ["deploy", str(image(tmp_path)), "--switch", "sim://"])
    assert done.exit_code == 0, done.output
    lines = done.output.splitlines()
    assert lines[0] == "permit tenant 7 on pipes 0"
    assert lines[-2] == "write prolog slot 0 on pipes 0"  # prologs last
    assert lines[-1].startswith("deployed image ") and lines[-1].endswith(": 5 steps")


def test_deploy_to_bmv2_then_a_packet_counts(tmp_path: Path, p4_build: P4Build) -> None:
    img = image(tmp_path)
    switch = Switch(p4_build.toolchain, p4_build.json)
    try:
        url = f"bmv2://127.0.0.1:{switch.thrift_port}"
        script = tmp_path / "deploy.txt"
        runner = CliRunner()
        done = runner.invoke(
            main,
            ["deploy", str(img), "--switch", url, "--script", str(script), "--default-port", "15"],
        )
        assert done.exit_code == 0, done.output
        assert "table_add SwitchVMIngress.permissions" in script.read_text()
        header = SwitchVMHeader(app_id=0, dpf_ptr=PC(False, 0), stack=(5,))
        options = encode_options(header, PROFILE).data
        frame = build_frame(tenant_id=7, options=options, inner=build_inner(b"x"))
        for count in (0, 1):  # the counter's old value comes back under the id
            switch.send(3, frame)
            [(port, out)] = switch.receive(1)
            assert port == 15
            parsed = parse_packet(out, PROFILE).header
            assert parsed is not None and parsed.stack == (5, count)
        again = runner.invoke(main, ["deploy", str(img), "--switch", url, "-q"])
        assert again.exit_code == 1 and "deploy with --reset?" in again.output
        fresh = runner.invoke(main, ["deploy", str(img), "--switch", url, "-q", "--reset"])
        assert fresh.exit_code == 0, fresh.output
    finally:
        switch.stop()
