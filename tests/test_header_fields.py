"""Header fields: LOAD_MD of the tenant's (inner) packet's headers (docs/isa.md §4).

* ``dpfc.packet.header_fields`` gives, for every case of ``tests/inner_frames.py``, the
  values stated there; on any bytes at all it returns the seven fields within their widths
  and never raises (hypothesis).
* The built-in profiles expose the fields at indices 7..13, after the switch metadata.
* The simulator and its JIT (which parses the inner frame natively) push the same fields
  for any inner frame — the cases, cut short anywhere, with any byte changed, or random
  bytes (hypothesis) — and they are ``header_fields``'s. bmv2 is held to the same outputs by
  the conformance vectors ``header_fields_*`` (tests/conformance/header_vectors.py).
* Bad input gets the metadata diagnostics: an unknown field (DPF5118 with a suggestion,
  DPF1017 in assembly), a profile that does not list a header field (DPF5118), a test file
  that refuses the metadata bit to code reading a header field (DPF4110).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from dpfc.backends.jit import JitSwitch, missing
from dpfc.cli.main import main
from dpfc.packet import header_fields, parse_packet
from dpfc.target import BUILTIN_PROFILES, HEADER_FIELD_NAMES, HEADER_METADATA
from tests.conformance.harness import IN_PORT, Packet, frame_of, image_of, set_up
from tests.conformance.header_vectors import header_vectors
from tests.conformance.targets import SimTarget
from tests.inner_frames import CASES

PROFILE = BUILTIN_PROFILES["tofino1"]
WIDTHS = {
    "ipv4_src": 32,
    "ipv4_dst": 32,
    "ip_proto": 8,
    "dscp": 6,
    "ttl": 8,
    "l4_src": 16,
    "l4_dst": 16,
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_each_case_gives_its_fields(name: str) -> None:
    frame, expected = CASES[name]
    assert header_fields(frame) == expected


@given(st.binary(max_size=120))
def test_any_bytes_give_seven_fields_within_their_widths(data: bytes) -> None:
    values = header_fields(data)
    assert tuple(values) == HEADER_FIELD_NAMES
    assert all(0 <= values[k] < 1 << WIDTHS[k] for k in values)


def test_the_built_in_profiles_expose_the_fields_after_the_switch_metadata() -> None:
    assert [(m.name, m.index) for m in HEADER_METADATA] == [
        (name, 7 + k) for k, name in enumerate(WIDTHS)
    ]
    for profile in BUILTIN_PROFILES.values():
        assert profile.metadata[:7] == PROFILE.metadata[:7]
        assert profile.metadata[7:] == HEADER_METADATA
        assert profile.metadata_by_name("egress_port") is not None


# -- the simulator and the JIT -------------------------------------------------------------------

VECTOR = header_vectors()[1]  # the seven fields pushed by in-switch code


def _inner_frames() -> st.SearchStrategy[bytes]:
    case = st.sampled_from([frame for frame, _ in CASES.values()])
    cut = st.tuples(case, st.integers(0, 80)).map(lambda t: t[0][: t[1]])
    changed = st.tuples(case, st.integers(0, 70), st.integers(0, 255)).map(
        lambda t: t[0][: t[1]] + bytes([t[2]]) + t[0][t[1] + 1 :] if t[1] < len(t[0]) else t[0]
    )
    return st.one_of(case, cut, changed, st.binary(max_size=64))


@pytest.fixture(scope="module")
def engines() -> tuple[SimTarget, JitSwitch]:
    """The simulator and the JIT on a twin switch, both with the DPF installed (the JIT
    compiled once: its tables do not change between packets)."""
    sim, twin = SimTarget(PROFILE), SimTarget(PROFILE)
    set_up(sim, VECTOR)
    set_up(twin, VECTOR)
    return sim, JitSwitch(twin.switch)


@pytest.mark.skipif(missing() is not None, reason=f"no JIT here: {missing()}")
@given(_inner_frames())
def test_the_jit_and_the_simulator_push_header_fields(
    engines: tuple[SimTarget, JitSwitch], inner: bytes
) -> None:
    sim, jit = engines
    image, dpf = image_of(VECTOR, PROFILE)
    frame = frame_of(Packet(inner=inner), dpf, image, PROFILE)
    mine = sim.switch.process(frame, IN_PORT)
    deopts = jit.deopts
    native = jit.process(frame, IN_PORT)
    assert (native.verdict, native.outputs) == (mine.verdict, mine.outputs)
    assert jit.deopts == deopts  # the native parse ran: a comparison with itself proves nothing
    [(_, out)] = mine.outputs
    header = parse_packet(out, PROFILE).header
    assert header is not None
    assert header.stack == tuple(header_fields(inner).values())


# -- bad input --------------------------------------------------------------------------------


def _dpfc(tmp_path: Path, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args), prog_name="dpfc")
    assert "Traceback" not in result.output and "internal compiler error" not in result.stderr
    return result.exit_code, result.stderr


def test_an_unknown_field_is_dpf5118_with_a_suggestion(tmp_path: Path) -> None:
    source = tmp_path / "f.dpf"
    source.write_text("dpf f() { push(meta.ipv4_sorc); }\n")
    code, err = _dpfc(tmp_path, "check", str(source))
    assert code == 1 and "error[DPF5118]" in err and "meta.ipv4_src" in err


def test_an_unknown_field_in_assembly_is_dpf1017(tmp_path: Path) -> None:
    source = tmp_path / "f.dpfasm"
    source.write_text(
        ".target tofino1\nprolog p:\n    LOAD_MD A0, l4_port\n    JMP e\n"
        "eu0 e:\n    HALT out\nepilog out:\n    PUSH A0\n"
    )
    code, err = _dpfc(tmp_path, "asm", str(source))
    assert code == 1 and "error[DPF1017]" in err and "l4_src" in err


def test_a_profile_without_header_fields_does_not_expose_them(tmp_path: Path) -> None:
    profile = tmp_path / "switch_only.toml"
    profile.write_text('base = "tofino1"\n[[metadata]]\nname = "ingress_port"\nindex = 0\n')
    source = tmp_path / "f.dpf"
    source.write_text("dpf f() { push(meta.ttl); }\n")
    code, err = _dpfc(tmp_path, "check", "--target", str(profile), str(source))
    assert code == 1 and "error[DPF5118]" in err and "`meta.ttl`" in err
    code, _ = _dpfc(tmp_path, "check", str(source))
    assert code == 0


def test_a_tenant_refused_the_metadata_bit_is_dpf4110(tmp_path: Path) -> None:
    test_file = tmp_path / "t.toml"
    test_file.write_text(
        "tenant = 5\n"
        f'code = "{Path(__file__).resolve().parent.parent / "examples/dpf/flow_lb.dpf"}"\n'
        "tenants = [{ id = 5, metadata = false }]\n"
        '[[cases]]\ndpf = "flow_lb"\n'
    )
    code, err = _dpfc(tmp_path, "test", str(test_file))
    assert code == 1 and "error[DPF4110]" in err and "metadata" in err
