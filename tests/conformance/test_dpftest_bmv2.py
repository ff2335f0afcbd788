"""``dpfc test --switch bmv2://HOST:PORT --packet-in ADDRESS``: the example test files on a
running simple_switch, through the bmv2 control ``dpfc deploy`` uses.

The switch is started as the other conformance tests start theirs (the program compiled
once per run); its packet socket is left to ``dpfc test`` (a PAIR socket serves one peer). Every case a device can hold
must give on bmv2 what it gives on the simulated device (``--switch sim://``): the same
status per case, no failure. Without p4c and bmv2 the test is skipped with the reason
(``p4_build``).
"""

from __future__ import annotations

import json
from typing import Any

from click.testing import CliRunner

from dpfc.backends.p4.bmv2 import Switch
from dpfc.cli.main import main
from tests.conformance.conftest import P4Build
from tests.conftest import ROOT

EXAMPLES = str(ROOT / "examples" / "tests")


def statuses(output: str) -> dict[tuple[str, str], str]:
    data: dict[str, Any] = json.loads(output)
    return {(f["file"], c["case"]): c["status"] for f in data["files"] for c in f["cases"]}


def test_the_example_tests_on_bmv2(p4_build: P4Build) -> None:
    runner = CliRunner()
    simulated = runner.invoke(main, ["test", EXAMPLES, "--switch", "sim://", "--json"])
    assert simulated.exit_code == 0, simulated.output
    switch = Switch(p4_build.toolchain, p4_build.json, packets=False)  # dpfc test's
    try:
        url = f"bmv2://127.0.0.1:{switch.thrift_port}"
        args = ["test", EXAMPLES, "--switch", url, "--packet-in", switch.address, "--json"]
        done = runner.invoke(main, args)
        assert done.exit_code == 0, done.output
        assert statuses(done.stdout) == statuses(simulated.stdout)
        assert "pass" in statuses(done.stdout).values()
        data = json.loads(done.stdout)
        assert data["target"] == url and data["summary"]["fail"] == 0
    finally:
        switch.stop()
