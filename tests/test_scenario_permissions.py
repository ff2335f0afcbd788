"""A ``[[config.tenants]]`` table merges with the permission entry of the linked code.

* A table that only adds what the tenant owns (forwarding, memory) keeps the code's tokens,
  capability bits and default DPF: the tenant's packets still run (before, the table
  replaced the entry and the switch refused them).
* A key the table states wins: extra tokens, ``unauthorized``, a capability granted, another
  default DPF.
* A stated value that takes away what the code needs (a token, a capability bit) is
  DPF4110 naming the key (the corpus: ``tests/run_errors/059_*``, ``060_*``).
* On pipes the image's entry does not cover, the table alone makes the entry.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from dpfc.backends.scenario import ScenarioError, load_scenario
from dpfc.catalog import codes
from dpfc.cli.main import main
from dpfc.isa import PC
from dpfc.packet import parse_packet

STAMP = """\
; stamps the switch id under the packet's word: its code reads metadata (LOAD_MD)
.dpf stamp
.placement switch
.app 0x77

prolog entry:
    POP A0
    LOAD_MD B1, switch_id
    JMP done

eu0 done:
    HALT out

epilog out:
    PUSH A0, B1
"""

NETWORK = """\
[[switches]]
name = "s1"
pipes = {pipes}

[[hosts]]
name = "a"
ip = "10.0.0.1"
switch = "s1"
port = 0

[[hosts]]
name = "b"
ip = "10.0.0.2"
switch = "s1"
port = 1

[[config]]
switch = "s1"
routes = {{ a = 0, b = 1 }}

[[config.code]]
file = "{code}"
tenant = 7

"""

PACKET = """
[[packets]]
from = "a"
to = "b"
tenant = 7
dpf = "{dpf}"
stack = [1]
{app_id}
"""


def scenario(
    tmp_path: Path,
    tenants: str,
    *,
    dpf: str = "stamp",
    app_id: int | None = None,
    code: str = "stamp.dpfasm",
    pipes: int = 1,
) -> Path:
    (tmp_path / "stamp.dpfasm").write_text(STAMP)
    text = NETWORK.format(pipes=pipes, code=code) + tenants
    text += PACKET.format(dpf=dpf, app_id="" if app_id is None else f"app_id = {app_id}")
    path = tmp_path / "s.toml"
    path.write_text(text)
    return path


def outcome(path: Path) -> tuple[str, tuple[int, ...]]:
    """The first pass's verdict and the stack of the frame it sent (empty: none)."""
    loaded = load_scenario(path)
    loaded.network.run()
    record = loaded.network.records[0]
    result = record.result
    stack: tuple[int, ...] = ()
    if result.outputs:
        header = parse_packet(result.outputs[0][1], loaded.profile).header
        assert header is not None
        stack = tuple(header.stack)
    return result.verdict, stack


SWITCH_ID = 1  # the first switch of a scenario


def test_a_table_that_adds_forwarding_keeps_the_code_entry(tmp_path: Path) -> None:
    alone = outcome(scenario(tmp_path, ""))
    assert alone == ("pass", (1, SWITCH_ID))
    # The trap this guards against: the table replaced the entry (no token, no metadata bit),
    # and every packet of the tenant was refused.
    merged = scenario(tmp_path, '[[config.tenants]]\nid = 7\nforwarding = { 0 = "b" }\n')
    assert outcome(merged) == alone
    permissions = load_scenario(merged).network.switches["s1"].control.permissions(7)
    assert permissions is not None
    assert (permissions.app_id, permissions.metadata) == (0x77, True)


def test_stated_keys_win(tmp_path: Path) -> None:
    table = '[[config.tenants]]\nid = 7\napp_ids = [5, 0x77]\nunauthorized = "pass"\n'
    path = scenario(tmp_path, table, app_id=5)
    assert outcome(path) == ("pass", (1, SWITCH_ID))  # the new primary token runs the code
    permissions = load_scenario(path).network.switches["s1"].control.permissions(7)
    assert permissions is not None
    assert (permissions.app_id, permissions.metadata) == (5, True)
    assert permissions.app_ids == frozenset({0x77})
    assert permissions.unauthorized.value == "pass"
    granted = scenario(tmp_path, "[[config.tenants]]\nid = 7\nprivileged = true\n")
    permissions = load_scenario(granted).network.switches["s1"].control.permissions(7)
    assert permissions is not None and permissions.privileged and permissions.metadata


@pytest.mark.parametrize(
    ("table", "key", "fragment"),
    [
        ("app_id = 5", "app_id", "leaves out the token 0x77"),
        ("app_ids = [5, 6]", "app_ids", "app_ids = [0x5, 0x6, 0x77]"),
        ("metadata = false", "metadata", "reads switch metadata (LOAD_MD), which needs it"),
    ],
)
def test_taking_away_what_the_code_needs_is_dpf4110(
    tmp_path: Path, table: str, key: str, fragment: str
) -> None:
    path = scenario(tmp_path, f"[[config.tenants]]\nid = 7\n{table}\n")
    with pytest.raises(ScenarioError) as error:
        load_scenario(path)
    assert error.value.code == codes.SCENARIO_PERMISSION_CONFLICT
    assert error.value.message.startswith(f"config[0].tenants[0].{key}: ")
    assert fragment in error.value.message
    assert "tenant 7's linked code on switch s1" in error.value.message


def test_the_image_default_dpf_is_kept_unless_stated(tmp_path: Path) -> None:
    (tmp_path / "stamp.dpfasm").write_text(STAMP)
    runner = CliRunner()
    for args in (
        ["asm", str(tmp_path / "stamp.dpfasm"), "-o", str(tmp_path / "stamp.dpfo")],
        [
            "link",
            str(tmp_path / "stamp.dpfo"),
            "--tenant",
            "7",
            "--default-dpf",
            "stamp@7",
            "-o",
            str(tmp_path / "stamp.dpfimg"),
        ],
    ):
        result = runner.invoke(main, args)
        assert result.exit_code == 0, result.output
    table = '[[config.tenants]]\nid = 7\nforwarding = { 0 = "b" }\n'
    path = scenario(tmp_path, table, dpf="none", app_id=0x77, code="stamp.dpfimg")
    assert outcome(path) == ("pass", (1, SWITCH_ID))  # the default DPF ran
    permissions = load_scenario(path).network.switches["s1"].control.permissions(7)
    assert permissions is not None and permissions.default_dpf == PC(False, 0)
    stated = scenario(
        tmp_path,
        '[[config.tenants]]\nid = 7\ndefault_dpf = "none"\n',
        dpf="none",
        app_id=0x77,
        code="stamp.dpfimg",
    )
    assert outcome(stated) == ("pass", (1,))  # no DPF: passed unchanged


def test_pipes_without_the_code_get_the_table_alone(tmp_path: Path) -> None:
    path = scenario(tmp_path, '[[config]]\nswitch = "s1"\n[[config.tenants]]\nid = 7\n', pipes=2)
    # the code entry is in a block for pipe 0 only
    text = path.read_text().replace(
        "routes = { a = 0, b = 1 }\n", "pipes = [0]\nroutes = { a = 0, b = 1 }\n", 1
    )
    path.write_text(text)
    control = load_scenario(path).network.switches["s1"].control
    on_code, elsewhere = control.permissions(7, pipe=0), control.permissions(7, pipe=1)
    assert on_code is not None and elsewhere is not None
    assert (on_code.app_id, on_code.metadata) == (0x77, True)
    assert (elsewhere.app_id, elsewhere.metadata) == (0x77, False)  # the code's token only
