"""Shell completion (click's machinery: ``_DPFC_COMPLETE=bash_complete`` with
``COMP_WORDS``/``COMP_CWORD``, as the script ``_DPFC_COMPLETE=bash_source dpfc`` installs
calls it) completes every fixed set of values.

* ``dpfc compile --emit``: each kind, and after a comma the kinds not yet listed, with the
  list typed so far in front (``obj,a`` -> ``obj,asm``, ``obj,ast``);
* ``dpfc asm --emit``, ``disasm --input``, ``p4 --arch``, ``--target``: their choices;
* ``dpfc explain``: every code of the catalogue (``DPF41``, ``dpf41`` or ``41`` -> DPF41xx),
  with its one-line summary as the help zsh and fish show;
* command names and options, as before.
"""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from dpfc.catalog import load_catalog
from dpfc.cli.emitters import EMITTERS
from dpfc.cli.lang import EMITS
from dpfc.cli.main import main


def complete(line: str, shell: str = "bash") -> list[str]:
    """What the shell would be offered for the last word of ``line`` (a trailing blank: an
    empty word). bash gets ``type,value`` lines; zsh ``type``, ``value``, ``help`` lines."""
    words = line.split()
    cword = len(words) if line.endswith(" ") else len(words) - 1
    result = CliRunner().invoke(
        main,
        [],
        prog_name="dpfc",
        env={"_DPFC_COMPLETE": f"{shell}_complete", "COMP_WORDS": line, "COMP_CWORD": str(cword)},
    )
    assert result.exit_code == 0, result.output
    return result.stdout.splitlines()


def values(line: str) -> list[str]:
    return [entry.split(",", 1)[1] for entry in complete(line) if entry]


def test_compile_emit_completes_each_kind() -> None:
    assert values("dpfc compile x.dpf --emit ") == list(EMITS)
    assert values("dpfc compile x.dpf --emit o") == ["obj", "opt-ir"]
    assert set(EMITTERS) <= set(EMITS)


def test_compile_emit_completes_after_a_comma_without_repeats() -> None:
    assert values("dpfc compile x.dpf --emit obj,a") == ["obj,asm", "obj,ast"]
    after = values("dpfc compile x.dpf --emit obj,asm,")
    assert after == [f"obj,asm,{kind}" for kind in EMITS if kind not in ("obj", "asm")]
    assert values("dpfc compile x.dpf --emit obj,zz") == []


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("dpfc asm x.dpfasm --emit p", ["packet", "pcap"]),
        ("dpfc disasm x --input o", ["options", "object"]),
        ("dpfc p4 --arch ", ["v1model", "tna"]),
        (
            "dpfc compile x.dpf --target tofino",
            ["tofino1", "tofino2", "tofino1_fit", "tofino2_fit"],
        ),
        ("dpfc --diagnostics-format ", ["text", "json"]),
    ],
)
def test_other_fixed_sets_complete(line: str, expected: list[str]) -> None:
    assert values(line) == expected


@pytest.mark.parametrize("typed", ["DPF41", "dpf41", "41"])
def test_explain_completes_the_codes_of_the_catalogue(typed: str) -> None:
    codes = [code for code in load_catalog() if code.startswith("DPF41")]
    assert len(codes) >= 10
    assert values(f"dpfc explain {typed}") == codes


def test_explain_completes_every_code_with_its_summary() -> None:
    catalogue = load_catalog()
    assert values("dpfc explain ") == list(catalogue)
    zsh = complete("dpfc explain DPF5101", "zsh")
    assert zsh == ["plain", "DPF5101", catalogue["DPF5101"].summary]


def test_command_names_and_options_still_complete() -> None:
    assert values("dpfc ex") == ["explain"]
    assert "--emit" in values("dpfc compile --e")
