"""The policy corpus (tests/verify_corpus/): ``dpfc verify`` on crafted code, with golden output.

Each case is ``<name>.dpfasm`` (in-packet code unless it says otherwise) and the policy
``<name>.toml``; ``<name>.stderr`` holds the exit code and what ``dpfc verify`` printed
(``DPFC_BLESS=1`` rewrites it). The cases break each rule, break one only on some paths or
for some input range, keep a rule on paths no input takes, and give malformed policies.
Every packet a violation writes (``--packets``) is replayed in the simulator, which really
does the forbidden thing: its trace shows the forbidden instruction run, or the epilog
steering with the forbidden action or a value outside the policy's ranges.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest
from click.testing import CliRunner

from dpfc.backends.sim import Network
from dpfc.cli.main import main
from dpfc.objfile import read_object
from dpfc.packet import read_pcap
from tests.conftest import assert_golden

HERE = Path(__file__).resolve().parent / "verify_corpus"
CASES = sorted(p.stem for p in HERE.glob("*.dpfasm"))
TENANT, IN_PORT = 1, 3  # the VNI dpfc verify writes, and a port to send from
FWD_VALUE = re.compile(r"^FWD (\w+)(?:, (?:\S+ -> )?(\d+))?")


def test_the_corpus_is_large() -> None:
    assert len(CASES) >= 40


def _verify(name: str, tmp_path: Path) -> tuple[int, str, Path]:
    obj = tmp_path / f"{name}.dpfo"
    made = CliRunner().invoke(
        main, ["asm", "--emit", "obj", str(HERE / f"{name}.dpfasm"), "-o", str(obj)]
    )
    assert made.exit_code == 0, made.stderr
    packets = tmp_path / "packets"
    argv = ["verify", str(obj), "--policy", str(HERE / f"{name}.toml"), "--packets", str(packets)]
    done = CliRunner().invoke(main, argv)
    assert "Traceback" not in done.stderr
    shown = done.stderr.replace(str(tmp_path) + "/", "").replace(str(HERE) + "/", "")
    return done.exit_code, shown, obj


@pytest.mark.parametrize("name", CASES)
def test_case(name: str, tmp_path: Path) -> None:
    code, shown, obj = _verify(name, tmp_path)
    assert_golden(HERE / f"{name}.stderr", f"exit {code}\n{shown}")
    for pcap in sorted((tmp_path / "packets").glob("*.pcap")):
        _replay(obj, pcap, shown, name)


def _replay(obj: Path, pcap: Path, shown: str, name: str) -> None:
    """The packet, sent to a simulated switch that grants the tenant everything, runs the
    forbidden instruction or steers as the policy forbids."""
    (dpf,) = read_object(obj.read_bytes(), str(obj)).dpfs
    net = Network(dpf.program.profile)
    switch = net.add_switch("s", ports_per_pipe=16)
    switch.control.authorize(
        TENANT, app_id=dpf.program.app_id, metadata=True, privileged=True, recirculate=True
    )
    (frame,) = read_pcap(str(pcap))
    result = switch.process(frame, IN_PORT, trace=True)
    assert result.trace is not None
    events = [e.text for stage in result.trace.stages for e in stage.events]
    index = int(pcap.stem.rsplit("-", 1)[1])
    violation = shown.split("error[DPF8002]: ")[index].split("\n", 1)[0]
    rule, what = violation.split(": ")[1:3]
    policy = tomllib.loads((HERE / f"{name}.toml").read_text())
    if rule in ("instructions", "metadata"):
        mnemonic = what.split()[0].rstrip(":")
        assert any(mnemonic in text for text in events), (violation, events)
    elif rule in ("steering", "steering_values"):
        fwd = [FWD_VALUE.match(text) for text in events]
        (steered,) = [m for m in fwd if m is not None]
        action, value = steered.group(1), steered.group(2)
        if rule == "steering":
            assert action not in policy["steering"], events
        else:
            ranges = policy["steering_values"][action]
            assert value is not None and not any(lo <= int(value) <= hi for lo, hi in ranges)
    elif rule == "chains":
        assert any(text.startswith("NEXT_PC") for text in events), events
    elif rule == "stack":
        assert any(text.startswith("PUSH") for text in events), events
