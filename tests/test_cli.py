"""CLI conventions of ``dpfc``: help, version, ``-o FILE``, ``--target PROFILE``, exit codes.

Exit code 0 on success, 1 on a user error with the message on stderr (never a traceback),
2 on an internal compiler error. Every command runs in-process through click's runner, in
a temporary working directory so that relative ``-o`` paths land there.
"""

from __future__ import annotations

import gc
import re
import warnings
from pathlib import Path
from typing import Protocol

import pytest
from click.testing import CliRunner, Result

from dpfc import __version__
from dpfc.cli.main import main
from tests.conftest import ROOT, dpfc_in

EXAMPLES = ROOT / "examples" / "asm"
CACHE_GET = str(EXAMPLES / "cache_get.dpfasm")
COUNTER = str(EXAMPLES / "counter.dpfasm")
PCAP_MAGICS = (b"\xd4\xc3\xb2\xa1", b"\xa1\xb2\xc3\xd4", b"\x4d\x3c\xb2\xa1", b"\xa1\xb2\x3c\x4d")


class Invoke(Protocol):
    """The ``run`` fixture: ``run("asm", FILE, ...)`` runs ``dpfc asm FILE ...``."""

    def __call__(self, *args: str) -> Result: ...


@pytest.fixture
def run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Invoke:
    """Invoke ``dpfc ARGS...`` in ``tmp_path``; returns click's Result."""
    return dpfc_in(tmp_path, monkeypatch)


def assert_ok(result: Result) -> None:
    assert result.exit_code == 0, f"exit {result.exit_code}\n{result.stderr}\n{result.exception!r}"
    assert "Traceback" not in result.stderr


def assert_user_error(result: Result, *fragments: str) -> None:
    """Exit 1, a message on stderr containing every fragment, no traceback or ICE."""
    assert result.exit_code == 1, f"exit {result.exit_code}\n{result.output}"
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert "Traceback" not in result.stderr
    assert "internal compiler error" not in result.stderr
    assert result.stderr.strip(), "a user error must explain itself on stderr"
    for fragment in fragments:
        assert fragment in result.stderr, f"{fragment!r} not in\n{result.stderr}"


def without_comments(text: str) -> str:
    return "".join(line for line in text.splitlines(keepends=True) if not line.startswith(";"))


def alpha_rename(text: str) -> str:
    """Canonical text with the `.dpf` name dropped and labels renamed L0, L1, ... in order.

    Raw bytes carry no names, so the disassembly of encoded options names bundles after
    their stage; up to that renaming it must equal the canonical text of the source.
    """
    lines = [line for line in text.splitlines() if not line.startswith(".dpf ")]
    labels: dict[str, str] = {}
    for line in lines:
        match = re.match(r"^(?:prolog|epilog|eu\d+) (\w+)", line)
        if match is not None:
            labels.setdefault(match.group(1), f"L{len(labels)}")
    renamed = "\n".join(lines)
    for old, new in labels.items():
        renamed = re.sub(rf"\b{re.escape(old)}\b", new, renamed)
    return renamed


# -- help and version -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("command", "must_mention"),
    [
        ((), ("asm", "disasm", "packet", "target", "--diagnostics-format", "--version")),
        (("asm",), ("-o, --output", "--target", "--emit", "SOURCE")),
        (("disasm",), ("-o, --output", "--target", "--input", "FILE")),
        (("packet",), ("-o, --output", "--target", "--tenant", "--stack", "--dpf")),
        (("target",), ("--list", "NAME")),
    ],
)
@pytest.mark.parametrize("flag", ["--help", "-h"])
def test_help(
    run: Invoke, command: tuple[str, ...], must_mention: tuple[str, ...], flag: str
) -> None:
    result = run(*command, flag)
    assert_ok(result)
    assert result.stdout.startswith("Usage: dpfc")
    for word in must_mention:
        assert word in result.stdout, f"`dpfc {' '.join(command)} {flag}` does not mention {word}"


def test_version(run: Invoke) -> None:
    """dpfc's version, then the versions of the libraries its output depends on."""
    result = run("--version")
    assert_ok(result)
    lines = result.stdout.splitlines()
    assert lines[0] == f"dpfc, version {__version__}"
    for library in ("z3-solver", "lark", "click", "scapy", "networkx"):
        assert any(re.fullmatch(rf"  {library} \d[\w.]*", line) for line in lines), library


def test_unknown_command_and_option_are_usage_errors(run: Invoke) -> None:
    """Usage errors are user errors: exit 1, DPF0003 (click alone would exit 2)."""
    assert_user_error(run("assemble"), "error[DPF0003]", "no such command `assemble`")
    assert_user_error(
        run("asm", "--no-such-option", CACHE_GET), "error[DPF0003]", "`--no-such-option`"
    )


# -- asm outputs and their round trips through disasm --------------------------------------------


def test_asm_without_output_prints_a_size_report(run: Invoke) -> None:
    result = run("asm", CACHE_GET)
    assert_ok(result)
    assert "cache_get: target tofino1, placement packet, 8 bundles" in result.stdout
    assert re.search(r"SwitchVM Geneve options: \d+ bytes", result.stdout)
    assert result.stderr == ""


def test_asm_writes_a_pcap_that_disasm_explains(run: Invoke, tmp_path: Path) -> None:
    result = run("asm", CACHE_GET, "-o", "X.pcap", "--tenant", "5", "--stack", "0x2a")
    assert_ok(result)
    assert "wrote X.pcap (" in result.stderr
    assert (tmp_path / "X.pcap").read_bytes()[:4] in PCAP_MAGICS
    explained = run("disasm", "X.pcap")
    assert_ok(explained)
    text = explained.stdout
    assert "packet 1 of 1" in text
    assert "UDP 50000 -> 6081" in text
    assert "VNI (tenant) 5" in text
    assert "app_id=0x4b5601" in text
    assert "stack (top first): 0x2a" in text
    assert "BSET B0, 0x80000000" in text
    assert "NEXT_PC @switch:1" in text


def test_raw_options_round_trip_to_the_canonical_text(run: Invoke, tmp_path: Path) -> None:
    assert_ok(run("asm", CACHE_GET, "--emit", "asm", "-o", "canonical.dpfasm"))
    canonical = (tmp_path / "canonical.dpfasm").read_text()
    assert_ok(run("asm", CACHE_GET, "-o", "X.bin"))
    options = (tmp_path / "X.bin").read_bytes()
    assert_ok(run("disasm", "X.bin", "-o", "X.dpfasm"))
    disassembled = (tmp_path / "X.dpfasm").read_text()
    # Same program up to names (bytes carry no labels) ...
    assert alpha_rename(without_comments(disassembled)) == alpha_rename(canonical)
    # ... the disassembly is itself canonical text ...
    assert_ok(run("asm", "X.dpfasm", "--emit", "asm", "-o", "again.dpfasm"))
    assert (tmp_path / "again.dpfasm").read_text() == without_comments(disassembled)
    # ... and assembles back to the same bytes.
    assert_ok(run("asm", "X.dpfasm", "-o", "again.bin"))
    assert (tmp_path / "again.bin").read_bytes() == options


def test_object_round_trips_exactly(run: Invoke, tmp_path: Path) -> None:
    assert_ok(run("asm", CACHE_GET, "--emit", "asm", "-o", "canonical.dpfasm"))
    assert_ok(run("asm", CACHE_GET, "-o", "X.dpfo"))
    result = run("disasm", "X.dpfo")
    assert_ok(result)
    assert result.stdout == (tmp_path / "canonical.dpfasm").read_text()


def test_in_switch_program_round_trips_through_an_object(run: Invoke, tmp_path: Path) -> None:
    assert_ok(run("asm", COUNTER, "--emit", "asm", "-o", "canonical.dpfasm"))
    assert_ok(run("asm", COUNTER, "--emit", "obj", "-o", "counter.json"))
    result = run("disasm", "counter.json")
    assert_ok(result)
    assert result.stdout == (tmp_path / "canonical.dpfasm").read_text()
    assert ".placement switch" in result.stdout


def test_emit_needs_an_output_file(run: Invoke) -> None:
    assert_user_error(run("asm", CACHE_GET, "--emit", "pcap"), "needs -o FILE")


# -- targets -------------------------------------------------------------------------------------


def test_target_tofino2(run: Invoke) -> None:
    result = run("asm", COUNTER, "--target", "tofino2")
    assert_ok(result)
    assert "target tofino2" in result.stdout


def test_target_tofino2_checks_stage_successors(run: Invoke) -> None:
    # cache_get's eu3 jumps to the epilog, which is only right with 4 EUs.
    assert_user_error(run("asm", CACHE_GET, "--target", "tofino2"), "error[DPF0121]", "eu4")


def test_unknown_target_is_a_user_error(run: Invoke) -> None:
    assert_user_error(run("asm", CACHE_GET, "--target", "nosuch"), "nosuch", "tofino1")
    assert_user_error(run("target", "nosuch"), "nosuch")
    assert_user_error(run("disasm", "whatever.bin", "--target", "nosuch"))


def test_target_command(run: Invoke) -> None:
    listed = run("target", "--list")
    assert_ok(listed)
    names = [line.split()[0] for line in listed.stdout.splitlines()]
    assert names == ["tofino1", "tofino2", "bmv2", "tofino1_fit", "tofino2_fit"]
    # the descriptions start in one column
    lines = listed.stdout.splitlines()
    assert len({len(line) - len(line.split(maxsplit=1)[1]) for line in lines}) == 1
    shown = run("target", "tofino1")
    assert_ok(shown)
    assert "4 EUs x 4 lanes" in shown.stdout


def test_toml_profile(run: Invoke, tmp_path: Path) -> None:
    (tmp_path / "two_lanes.toml").write_text('base = "tofino1"\nlanes = 2\n')
    shown = run("target", "two_lanes.toml")
    assert_ok(shown)
    assert "x 2 lanes" in shown.stdout
    # counter uses lane 0 only: fine with 2 lanes.
    result = run("asm", COUNTER, "--target", "two_lanes.toml")
    assert_ok(result)
    assert "counter: target" in result.stdout
    # cache_get uses lanes 2 and 3.
    failed = run("asm", CACHE_GET, "--target", "two_lanes.toml")
    assert_user_error(failed, "error[DPF1001]", "register A3 does not exist", "2 lanes")
    assert f"{CACHE_GET}:27:9: error[DPF1001]" in failed.stderr


def test_broken_toml_profile_is_a_user_error(run: Invoke, tmp_path: Path) -> None:
    (tmp_path / "bad.toml").write_text('base = "tofino1"\nlanes = 99\n')
    assert_user_error(run("asm", COUNTER, "--target", "bad.toml"), "lanes")
    (tmp_path / "garbage.toml").write_text("lanes = = 2\n")
    assert_user_error(run("asm", COUNTER, "--target", "garbage.toml"))


# -- input files ---------------------------------------------------------------------------------


def test_missing_input_file(run: Invoke) -> None:
    assert_user_error(run("asm", "nothere.dpfasm"), "cannot read nothere.dpfasm")
    assert_user_error(run("disasm", "nothere.pcap"), "cannot read nothere.pcap")
    assert_user_error(run("packet", "--tenant", "1", "--code", "nothere.dpfasm"), "nothere.dpfasm")


def test_input_that_is_not_utf8(run: Invoke, tmp_path: Path) -> None:
    (tmp_path / "binary.dpfasm").write_bytes(b"\xff\xfe\x00prolog")
    assert_user_error(
        run("asm", "binary.dpfasm"), "binary.dpfasm:1:1: error[DPF0002]: not UTF-8 text"
    )


def test_unwritable_output(run: Invoke, tmp_path: Path) -> None:
    assert_user_error(run("asm", CACHE_GET, "-o", "no/such/dir/X.bin"), "cannot write")


# -- packet --------------------------------------------------------------------------------------


def test_packet_command_and_disasm(run: Invoke, tmp_path: Path) -> None:
    result = run("packet", "--tenant", "7", "--dpf", "@switch:3", "--stack", "1,2", "-o", "p.pcap")
    assert_ok(result)
    assert "wrote p.pcap (" in result.stderr
    assert (tmp_path / "p.pcap").read_bytes()[:4] in PCAP_MAGICS
    explained = run("disasm", "p.pcap")
    assert_ok(explained)
    assert "VNI (tenant) 7" in explained.stdout
    assert "dpf_ptr=@switch:3" in explained.stdout
    assert "stack (top first): 0x1, 0x2" in explained.stdout


def test_packet_with_in_packet_code(run: Invoke) -> None:
    assert_ok(run("packet", "--tenant", "9", "--code", CACHE_GET, "--stack", "42", "-o", "c.pcap"))
    explained = run("disasm", "c.pcap")
    assert_ok(explained)
    assert "VNI (tenant) 9" in explained.stdout
    assert "stack (top first): 0x2a" in explained.stdout
    assert "FAADD B0, [A0]" in explained.stdout


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (("--tenant", "7", "--stack", "1,x"), "`x`"),
        (("--tenant", "7", "--stack", "0x1_0000_0000"), "32 bits"),
        (("--tenant", "7", "--stack", "-1"), "32 bits"),
        (("--tenant", "abc"), "tenant id must be a number"),
        (("--tenant", "0x1000000"), "tenant id 0x1000000 out of range"),
        (("--tenant", "-1"), "out of range"),
        (("--tenant", "7", "--dpf", "@flash:1"), "@switch:N, @packet:N or none"),
        (("--tenant", "7", "--app", "0x1_0000_0000"), "app id"),
    ],
)
def test_packet_bad_values_are_user_errors(
    run: Invoke, args: tuple[str, ...], fragment: str
) -> None:
    assert_user_error(run("packet", *args), fragment)


def test_asm_bad_stack_and_tenant_are_user_errors(run: Invoke) -> None:
    assert_user_error(run("asm", CACHE_GET, "--stack", "1,,2"), "stack values")
    assert_user_error(run("asm", CACHE_GET, "--tenant", "nope"), "tenant id")


# -- disasm of malformed input --------------------------------------------------------------------


def _frame_bytes(run: Invoke, tmp_path: Path) -> bytes:
    assert_ok(run("packet", "--tenant", "7", "--dpf", "@switch:3", "--stack", "1,2", "-o", "p.bin"))
    return (tmp_path / "p.bin").read_bytes()


@pytest.mark.parametrize(
    "content",
    [
        pytest.param(b"", id="empty"),
        pytest.param(bytes(range(256)) * 3, id="counting-bytes"),
        pytest.param(b"\x9f\x1d" * 50, id="repeated-garbage"),
        pytest.param(b"{not json", id="broken-json"),
        pytest.param(b'{"format": "dpfc-object", "version": 999}', id="wrong-json-object"),
        pytest.param(b"\xff\xff\x01", id="options-class-truncated"),
    ],
)
def test_disasm_malformed_bytes(run: Invoke, tmp_path: Path, content: bytes) -> None:
    (tmp_path / "bad.bin").write_bytes(content)
    result = run("disasm", "bad.bin")
    assert_user_error(result)
    assert re.search(r"error\[DPF\d{4}\]", result.stderr), result.stderr


def test_disasm_random_bytes(run: Invoke, tmp_path: Path) -> None:
    import random

    rng = random.Random(2024)
    for size in (1, 13, 60, 200):
        (tmp_path / "random.bin").write_bytes(bytes(rng.randrange(256) for _ in range(size)))
        assert_user_error(run("disasm", "random.bin"))


def test_disasm_truncated_frame(run: Invoke, tmp_path: Path) -> None:
    frame = _frame_bytes(run, tmp_path)
    for cut in (1, 14, 30, 44, len(frame) - 50):
        (tmp_path / "cut.bin").write_bytes(frame[:cut])
        result = run("disasm", "--input", "packet", "cut.bin")
        assert_user_error(result, "malformed input at byte")


def test_disasm_truncated_pcap(run: Invoke, tmp_path: Path) -> None:
    assert_ok(
        run("packet", "--tenant", "7", "--dpf", "@switch:3", "--stack", "1,2", "-o", "p.pcap")
    )
    whole = (tmp_path / "p.pcap").read_bytes()
    # Cut inside the pcap file header, and inside the packet record.
    for cut in (10, 60):
        (tmp_path / "t.pcap").write_bytes(whole[:cut])
        result = run("disasm", "t.pcap")
        assert_user_error(result, "t.pcap")


def test_disasm_wrong_explicit_input_kind(run: Invoke, tmp_path: Path) -> None:
    assert_ok(run("asm", CACHE_GET, "-o", "X.bin"))
    assert_user_error(run("disasm", "--input", "object", "X.bin"))
    assert_user_error(run("disasm", "--input", "pcap", "X.bin"))


def test_disasm_bad_pcap_closes_its_file(run: Invoke, tmp_path: Path) -> None:
    (tmp_path / "t.pcap").write_bytes(b"\x00" * 10)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ResourceWarning)
        result = run("disasm", "t.pcap")
        exit_code, stderr = result.exit_code, result.stderr
        del result  # its exception's context chain would keep a leaked file alive
        gc.collect()
    assert exit_code == 1
    assert "not a readable pcap file" in stderr
    assert not [w for w in caught if issubclass(w.category, ResourceWarning)]


def test_internal_error_names_the_input_and_exits_2(monkeypatch: pytest.MonkeyPatch) -> None:
    """A bug in the compiler is an internal compiler error: exit 2, the input file and the
    compiler's own location on stderr, no traceback (unless DPFC_TRACEBACK is set)."""

    def crash(*_args: object, **_kwargs: object) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr("dpfc.cli.lang.check_source", crash)
    monkeypatch.delenv("DPFC_TRACEBACK", raising=False)
    monkeypatch.chdir(ROOT)
    result = CliRunner().invoke(main, ["check", "examples/dpf/counter.dpf"], prog_name="dpfc")
    assert result.exit_code == 2
    assert "dpfc: internal compiler error: RuntimeError: boom" in result.stderr
    assert "while processing examples/dpf/counter.dpf" in result.stderr
    assert "Traceback" not in result.stderr
