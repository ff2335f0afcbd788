"""``dpfc verify``: policies decided on every path of objects and packets.

* A rule is decided on the paths inputs take: a forbidden instruction on a path no input
  takes breaks nothing; a port range holds when the code masks the port, and is refuted
  with an input when it does not, whose packet (``--packets``) really steers outside the
  range (the concrete semantics of the same code on that stack).
* Each rule: instruction classes, metadata, steering actions and values, chains, stack
  growth, memory words, code slots; a pcap's in-packet code; the JSON report.
* A malformed policy is DPF8001 with the key, never a traceback.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from dpfc.cli.main import main
from dpfc.isa import AluOp, semantics
from dpfc.packet import parse_packet, read_pcap
from dpfc.target import BUILTIN_PROFILES
from tests.conftest import ROOT

HEAD = ".dpf f\n.target tofino1\n"
DEAD_STORE = HEAD + (
    "prolog p:\n    POP A0\n    JMP e\n"
    "eu0 e:\n    BEQ A0, A0, good, bad\n"  # the EU-entry A0 equals itself: never `bad`
    "eu1 good:\n    HALT out\n"
    "eu1 bad:\n    STORE [A0], B0\n    HALT out\n"
    "epilog out:\n    PUSH A0\n"
)
PORT = HEAD + (
    "prolog p:\n    POP A0\n    JMP e\n"
    "eu0 e:\n    LOAD_IMM B0, {mask}\n    AND A0, B0\n    HALT out\n"
    "epilog out:\n    FWD set_port, A0\n"
)
EVERYTHING = HEAD + (
    "prolog p:\n    POP A0\n    LOAD_MD A1, timestamp\n    JMP e\n"
    "eu0 e:\n    FAADD B0, [A0]\n    HALT out\n"
    "epilog out:\n    PUSH A0, A1, B0\n    NEXT_PC @switch:3\n"
)


def run(tmp_path: Path, source: str, policy: str, *args: str) -> tuple[int, str, str]:
    (tmp_path / "f.dpfasm").write_text(source)
    (tmp_path / "policy.toml").write_text(policy)
    obj = str(tmp_path / "f.dpfo")
    made = CliRunner().invoke(main, ["asm", "--emit", "obj", str(tmp_path / "f.dpfasm"), "-o", obj])
    assert made.exit_code == 0, made.stderr
    done = CliRunner().invoke(
        main, ["verify", obj, "--policy", str(tmp_path / "policy.toml"), *args]
    )
    assert "Traceback" not in done.stderr
    return done.exit_code, done.stdout, done.stderr


def test_an_instruction_on_a_path_no_input_takes_breaks_nothing(tmp_path: Path) -> None:
    code, _, err = run(tmp_path, DEAD_STORE, 'instructions = ["alu"]\n')
    assert code == 0, err
    assert "keeps policy" in err


def test_a_masked_port_keeps_the_range_and_an_unmasked_one_is_refuted(tmp_path: Path) -> None:
    policy = "[steering_values]\nset_port = [[0, 7]]\n"
    assert run(tmp_path, PORT.format(mask=7), policy)[0] == 0
    code, _, err = run(tmp_path, PORT.format(mask=15), policy, "--packets", str(tmp_path / "pk"))
    assert code == 1 and "[DPF8002]" in err and "set_port" in err
    assert "at epilog @packet:0 (out): FWD set_port, A0" in err
    (frame,) = read_pcap(str(tmp_path / "pk" / "f-1.pcap"))
    header = parse_packet(frame, BUILTIN_PROFILES["tofino1"]).header
    assert header is not None
    (word,) = header.stack
    assert semantics.alu(AluOp.AND, word, 15) > 7  # the packet does it


@pytest.mark.parametrize(
    ("policy", "rule"),
    [
        ('instructions = ["alu", "load"]', "instructions: FAADD"),
        ('metadata = ["ingress_port"]', "metadata: LOAD_MD timestamp"),
        ('steering = ["drop"]', "steering: FWD pass"),
        ("chains = false", "chains: NEXT_PC"),
        ("max_stack_growth = 1", "stack: the pass leaves 2 more word(s)"),
    ],
)
def test_each_rule_names_what_breaks_it(tmp_path: Path, policy: str, rule: str) -> None:
    code, _, err = run(tmp_path, EVERYTHING, policy + "\n")
    assert code == 1 and f"f: {rule}" in err, err


def test_static_rules_count_memory_and_code_slots(tmp_path: Path) -> None:
    out = tmp_path / "counter.dpfo"
    made = CliRunner().invoke(
        main, ["compile", str(ROOT / "examples/dpf/counter.dpf"), "-o", str(out)]
    )
    assert made.exit_code == 0, made.stderr
    (tmp_path / "p.toml").write_text("memory_words = 64\ncode_slots = 1\n")
    done = CliRunner().invoke(main, ["verify", str(out), "--policy", str(tmp_path / "p.toml")])
    assert done.exit_code == 1
    assert "memory: EU0 lane 0: 4096 words of memory (the policy allows 64)" in done.stderr


def test_a_pcaps_code_and_the_json_report(tmp_path: Path) -> None:
    policy = "[steering_values]\nset_port = [[0, 7]]\n"
    run(tmp_path, PORT.format(mask=15), policy, "--packets", str(tmp_path / "pk"))
    done = CliRunner().invoke(
        main,
        [
            "verify",
            str(tmp_path / "pk" / "f-1.pcap"),
            "--policy",
            str(tmp_path / "policy.toml"),
            "--json",
        ],
    )
    assert done.exit_code == 1
    (report,) = json.loads(done.stdout)
    assert report["dpf"] == "packet0" and report["paths"] == 1
    (violation,) = report["violations"]
    assert violation["rule"] == "steering_values" and violation["line"] == "FWD set_port, A0"


@pytest.mark.parametrize(
    ("policy", "says"),
    [
        ("steer = 1", "unknown key `steer`"),
        ('instructions = ["float"]', "unknown `float`"),
        ("[steering_values]\nset_port = [[9, 1]]", "each range is 0 <= low <= high"),
        ("chains = 1", "`chains` must be true or false"),
        ("not toml [", "not TOML"),
    ],
)
def test_a_malformed_policy_names_what_is_wrong(tmp_path: Path, policy: str, says: str) -> None:
    code, _, err = run(tmp_path, DEAD_STORE, policy + "\n")
    assert code == 1 and "[DPF8001]" in err and says in err, err


def _link(tmp_path: Path, sources: dict[str, str], argv: list[str]) -> Path:
    for name, source in sources.items():
        (tmp_path / f"{name}.dpfasm").write_text(source)
        made = CliRunner().invoke(
            main,
            [
                "asm",
                "--emit",
                "obj",
                str(tmp_path / f"{name}.dpfasm"),
                "-o",
                str(tmp_path / f"{name}.dpfo"),
            ],
        )
        assert made.exit_code == 0, made.stderr
    image = tmp_path / "switch.dpfimg"
    done = CliRunner().invoke(main, ["link", *argv, "-o", str(image)])
    assert done.exit_code == 0, done.stderr
    return image


CHAINED = HEAD + (
    ".placement switch\nprolog p:\n    POP A0\n    JMP e\neu0 e:\n    HALT out\n"
    "epilog out:\n    PUSH A0\n    FWD recirculate\n    NEXT_PC @switch:{slot}\n"
)


def test_an_images_dpfs_are_verified_and_its_chain_loops_found(tmp_path: Path) -> None:
    """Two DPFs of one tenant whose NEXT_PC names a prolog slot: `a` the slot the linker
    gives `b`, and `b` its own (a local PC): `b` loops on itself, `a` does not."""
    sources = {
        name: CHAINED.format(slot=slot).replace(".dpf f", f".dpf {name}")
        for name, slot in (("a", 1), ("b", 0))
    }
    image = _link(tmp_path, sources, [str(tmp_path / "a.dpfo@5"), str(tmp_path / "b.dpfo@5")])
    (tmp_path / "p.toml").write_text("chain_loops = false\n")
    done = CliRunner().invoke(main, ["verify", str(image), "--policy", str(tmp_path / "p.toml")])
    assert done.exit_code == 1
    assert "5:a: 1 path(s), keeps policy" in done.stderr
    assert "error[DPF8002]: 5:b: chain_loops: the image's chains loop: 5:b -> 5:b" in done.stderr
    (tmp_path / "p.toml").write_text('steering = ["pass"]\n')  # loops allowed, recirculation not
    done = CliRunner().invoke(main, ["verify", str(image), "--policy", str(tmp_path / "p.toml")])
    assert done.exit_code == 1 and done.stderr.count("steering: FWD recirculate") == 2
