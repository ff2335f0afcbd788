"""BF-RT scripts checked against the schema the Tofino compiler writes (dpfc.backends.p4.bfrt_names).

``tests/golden/p4/barefoot/names.p4`` is a small TNA program (an exact and a ternary key, two
actions with parameters, a register); ``bfrt.json`` beside it is its schema as p4c-barefoot
9.13.4 wrote it, with the program's own tables only. A script in the form ``dpfc p4 bfrt``
writes is checked against it: every call the switch would accept passes, and each wrong
name, missing key or parameter is reported with its line. When p4c-barefoot is found, the
program is compiled again and the same script checked against the schema it writes now.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from dpfc.backends.p4 import ToolchainMissing, compile_tna, find_barefoot
from dpfc.backends.p4.bfrt_names import check_script, read_bfrt_json

GOLDEN = Path(__file__).parent / "golden" / "p4" / "barefoot"
TABLE = "bfrt.names.pipe.SwitchVMIngress"
GOOD = f"""\
# a comment line and a replication-engine call are not the program's
bfrt.pre.mgid.add(MGID=1, MULTICAST_NODE_ID=[])
{TABLE}.forward.add_with_set_port(port=3, dst=0x1, dst_mask=0xffff, MATCH_PRIORITY=1, port_out=5)
{TABLE}.forward.mod_with_count(port=3, dst=0x1, dst_mask=0xffff, MATCH_PRIORITY=1, slot=2)
{TABLE}.forward.set_default_with_set_port(port_out=7)
{TABLE}.forward.delete(port=3, dst=0x1, dst_mask=0xffff, MATCH_PRIORITY=1)
{TABLE}.counts.mod(REGISTER_INDEX=4, f1=9)
"""


def test_the_schema_names_keys_actions_and_register_fields() -> None:
    tables = read_bfrt_json(GOLDEN / "bfrt.json")
    forward = tables["pipe.SwitchVMIngress.forward"]
    assert forward.keys == {"port": "Exact", "dst": "Ternary", "$MATCH_PRIORITY": "Exact"}
    assert forward.actions == {"set_port": ("port_out",), "count": ("slot",), "NoAction": ()}
    assert tables["pipe.SwitchVMIngress.counts"].data == ("f1",)


def test_a_script_the_program_accepts_passes() -> None:
    assert check_script(GOOD, read_bfrt_json(GOLDEN / "bfrt.json"), "names") == []


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        (
            f"{TABLE}.fwd.add_with_set_port(port=3, port_out=5)",
            "no table `pipe.SwitchVMIngress.fwd`",
        ),
        (
            f"{TABLE}.forward.add_with_drop(port=3, dst=1, dst_mask=1, MATCH_PRIORITY=1)",
            "no action `drop` (has NoAction, count, set_port)",
        ),
        (
            f"{TABLE}.forward.add_with_set_port(port=3, dst=1, MATCH_PRIORITY=1, port_out=5, "
            "vlan=2)",
            "unknown `vlan`",
        ),
        (
            f"{TABLE}.forward.add_with_set_port(port=3, dst=1, dst_mask=1, MATCH_PRIORITY=1)",
            "missing `port_out`",
        ),
        (f"{TABLE}.forward.set_default_with_count(slot=1, port=2)", "unknown `port`"),
        (f"{TABLE}.counts.mod(REGISTER_INDEX=4, value=9)", "do not match"),
        (f"{TABLE}.forward.add_with_count", "not a table call"),
    ],
)
def test_each_wrong_name_is_reported_with_its_line(line: str, problem: str) -> None:
    found = check_script(GOOD + line + "\n", read_bfrt_json(GOLDEN / "bfrt.json"), "names")
    assert len(found) == 1 and found[0].startswith(f"line {len(GOOD.splitlines()) + 1}:")
    assert problem in found[0]


@pytest.mark.slow
def test_the_compiler_writes_the_schema_the_script_is_checked_against(tmp_path: Path) -> None:
    try:
        barefoot = find_barefoot()
    except ToolchainMissing as missing:
        pytest.skip(f"p4c-barefoot not run: {missing}")
    run = compile_tna(barefoot, GOLDEN / "names.p4", "tofino", tmp_path / "out")
    assert run.errors == () and run.bfrt_json is not None
    tables = read_bfrt_json(run.bfrt_json)
    assert tables == read_bfrt_json(GOLDEN / "bfrt.json") | {
        name: table for name, table in tables.items() if not name.startswith("pipe.SwitchVMIngress")
    }
    assert check_script(GOOD, tables, "names") == []
