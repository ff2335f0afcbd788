"""``dpfc deploy --switch bmv2://...`` needs only simple_switch_CLI's Python modules.

A fake bmv2 install — ``lib/python3.X/site-packages`` under ``$DPFC_P4_PREFIX`` holding a
``runtime_CLI`` and an ``sswitch_CLI`` that answer as the real ones do and log every command
— and no p4c, no ``simple_switch`` on the host: the deployment runs to its end, sends the
commands its ``--script`` records, and the toolchain finder the tests and benchmarks use
(which wants p4c) would have refused that host. Without the modules, the message says what
is missing and that p4c is not needed. (The real switch: tests/conformance/test_deploy.py,
which skips without bmv2.)
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from dpfc.backends.p4 import ToolchainMissing, find_cli_modules, find_toolchain
from dpfc.backends.p4.simple_switch_cli import CLI_MODULES
from tests.conftest import ROOT

RUNTIME_CLI = '''\
"""A stand-in for bmv2's runtime_CLI: the names dpfc's Cli uses, nothing else."""
import os


class PreType:
    SimplePreLAG = "SimplePreLAG"


class RuntimeAPI:
    @staticmethod
    def get_thrift_services(pre):
        return [("standard", pre)]


class Standard:
    def bm_get_config(self):
        return '{"actions": []}'


def thrift_connect(host, port, services):
    with open(os.environ["FAKE_BMV2_LOG"], "a") as log:
        log.write(f"# connect {host}:{port}\\n")
    return Standard(), object(), object()


def load_json_str(text):
    pass
'''

SSWITCH_CLI = '''\
"""A stand-in for bmv2's sswitch_CLI: prints what simple_switch_CLI prints."""
import os


class SimpleSwitchAPI:
    handles = 0

    @staticmethod
    def get_thrift_services():
        return [("simple_switch", None)]

    def __init__(self, pre, standard, mc, sswitch):
        pass

    def onecmd(self, line):
        with open(os.environ["FAKE_BMV2_LOG"], "a") as log:
            log.write(line + "\\n")
        verb, *words = line.split()
        if verb in ("table_add", "mc_node_create"):
            SimpleSwitchAPI.handles += 1
            print(f"Entry has been added with handle {SimpleSwitchAPI.handles}")
        elif verb == "register_read":
            name = words[0]
            if len(words) > 1:
                print(f"{name}[{words[1]}]= 0")
            else:
                print(f"{name}= " + ", ".join(["0"] * 65536))
'''


def _forget_cli_modules(monkeypatch: pytest.MonkeyPatch) -> None:
    """This process as one that never imported simple_switch_CLI's modules: a bmv2 test
    run before in the same worker (``Cli``) leaves them importable from bmv2's install."""
    for name in CLI_MODULES:
        monkeypatch.delitem(sys.modules, name, raising=False)
    kept = [p for p in sys.path if not any((Path(p) / f"{m}.py").exists() for m in CLI_MODULES)]
    monkeypatch.setattr(sys, "path", kept)


@pytest.fixture
def fake_bmv2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """The environment of a host with simple_switch_CLI's modules, without p4c."""
    _forget_cli_modules(monkeypatch)
    prefix = tmp_path / "bmv2"
    site = prefix / "lib" / f"python3.{sys.version_info.minor}" / "site-packages"
    site.mkdir(parents=True)
    (site / "runtime_CLI.py").write_text(RUNTIME_CLI)
    (site / "sswitch_CLI.py").write_text(SSWITCH_CLI)
    env = dict(
        os.environ,
        DPFC_P4_PREFIX=str(prefix),
        PATH=os.pathsep.join([str(Path(sys.executable).parent), "/usr/bin", "/bin"]),
        FAKE_BMV2_LOG=str(tmp_path / "commands.log"),
    )
    for key in ("DPFC_P4_PREFIX", "PATH"):
        monkeypatch.setenv(key, env[key])
    return env


def _image(tmp_path: Path) -> Path:
    for args in (
        ["compile", str(ROOT / "examples/dpf/counter.dpf"), "-o", "c.dpfo", "--no-report"],
        ["link", "c.dpfo@7", "-o", "c.dpfimg", "-q"],
    ):
        subprocess.run(
            [sys.executable, "-m", "dpfc", *args], cwd=tmp_path, check=True, capture_output=True
        )
    return tmp_path / "c.dpfimg"


def test_deploy_needs_no_p4c(tmp_path: Path, fake_bmv2: dict[str, str]) -> None:
    with pytest.raises(ToolchainMissing, match="p4c-bm2-ss"):
        find_toolchain()  # this host has no p4c (nor simple_switch)
    assert find_cli_modules().site_packages is not None  # but the CLI's modules
    image = _image(tmp_path)
    deploy = ["deploy", str(image), "--switch", "bmv2://127.0.0.1:9090", "--default-port", "15"]
    done = subprocess.run(
        [sys.executable, "-m", "dpfc", *deploy, "--script", "sent.txt"],
        cwd=tmp_path,
        env=fake_bmv2,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "deployed image " in done.stdout and "to bmv2://127.0.0.1:9090" in done.stdout
    logged = (tmp_path / "commands.log").read_text().splitlines()
    assert logged[0] == "# connect 127.0.0.1:9090"
    sent = (tmp_path / "sent.txt").read_text().splitlines()
    assert sent == logged[1:]  # the script is what the switch was sent
    assert any(line.startswith("table_add SwitchVMIngress.permissions") for line in sent)


def test_without_the_modules_the_message_says_what_is_missing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _forget_cli_modules(monkeypatch)
    monkeypatch.setenv("DPFC_P4_PREFIX", str(tmp_path / "nothing"))
    monkeypatch.setenv("PATH", str(Path(sys.executable).parent))
    with pytest.raises(ToolchainMissing) as missing:
        find_cli_modules()
    assert "runtime_CLI, sswitch_CLI" in str(missing.value)
    assert "p4c is not needed to deploy" in str(missing.value)
    image = _image(tmp_path)
    done = subprocess.run(
        [sys.executable, "-m", "dpfc", "deploy", str(image), "--switch", "bmv2://127.0.0.1:9"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert "error[DPF0002]: simple_switch_CLI's Python modules" in done.stderr
