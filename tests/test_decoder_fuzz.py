"""Fuzzing the decoders: random and mutated bytes never crash them and never fool them.

Every input is fed to :func:`dpfc.packet.wire.parse_packet` or
:func:`dpfc.encoding.decode_options`; the only exception allowed is :class:`DecodeError`
(with an offset inside the input), and whenever decoding succeeds, re-encoding the result
gives back exactly the SwitchVM option bytes (the decoder accepts only canonical bytes).
Seeds are the example DPFs' packets with stacks of 0, 1 and 16 entries. With the default
hypothesis profile the properties below run > 7,000 examples, plus a deterministic sweep of
20,000 seeded mutations; in-switch code words get the same treatment. The seeds encoded in
format version 2 (a tofino1 copy with ``code_format = 2``) get flips, edits and tags
written over their bytes, and random code options rich in tag bytes.
"""

from __future__ import annotations

import random
import signal
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dpfc.asm import assemble_text
from dpfc.catalog import codes
from dpfc.encoding import (
    OPTION_CLASS,
    DecodeError,
    StageKind,
    decode_options,
    decode_slot,
    encode_options,
    encode_slot,
    slot_bytes,
    split_options,
    unpack_code,
)
from dpfc.packet.build import PacketSpec, build_packet
from dpfc.packet.wire import parse_packet
from dpfc.target import BUILTIN_PROFILES, TargetProfile, load_profile
from tests.conftest import ROOT
from tests.packet_errors.make_corpus import HERE, frame_of, header_data, option

TOFINO1 = BUILTIN_PROFILES["tofino1"]
PROFILES = [TOFINO1, BUILTIN_PROFILES["tofino2"], load_profile(str(HERE / "lanes3.toml"))]
EXAMPLES = ["counter", "cache_get", "lb3_client", "paxos_acceptor"]
STACKS = [(), (0x1234,), tuple(range(0xA0, 0xB0))]


@dataclass(frozen=True)
class Seed:
    name: str
    frame: bytes
    options: bytes


def _seeds() -> list[Seed]:
    out = []
    for name in EXAMPLES:
        text = (ROOT / "examples" / "asm" / f"{name}.dpfasm").read_text(encoding="utf-8")
        program = assemble_text(text, f"{name}.dpfasm")
        for stack in STACKS:
            built = build_packet(PacketSpec(7, program.header(stack), b"fuzz"), program.profile)
            out.append(Seed(f"{name}/{len(stack)}", built.frame, built.options.data))
    return out


SEEDS = _seeds()


def _switchvm_bytes(options: bytes) -> bytes:
    """The SwitchVM options of an options area, concatenated (others dropped)."""
    return b"".join(
        data[offset : offset + 4 + len(payload)]
        for data in [options]
        for offset, opt_class, _, payload in split_options(options)
        if opt_class == OPTION_CLASS
    )


def check_packet(data: bytes, profile: TargetProfile = TOFINO1) -> bool:
    """parse_packet raises only DecodeError; a decoded header re-encodes to its bytes.
    Returns whether the packet was accepted."""
    try:
        parsed = parse_packet(data, profile)
    except DecodeError as exc:
        assert 0 <= exc.offset <= len(data), exc
        assert exc.code.startswith("DPF") and exc.message
        return False
    if parsed.header is not None:
        assert encode_options(parsed.header, profile).data == _switchvm_bytes(parsed.options)
    return True


def check_options(data: bytes, profile: TargetProfile = TOFINO1) -> bool:
    """decode_options raises only DecodeError; success re-encodes to the SwitchVM bytes."""
    try:
        header = decode_options(data, profile)
    except DecodeError as exc:
        assert 0 <= exc.offset <= len(data), exc
        return False
    assert encode_options(header, profile).data == _switchvm_bytes(data)
    return True


def test_seeds_are_valid() -> None:
    assert len(SEEDS) == 12
    for seed in SEEDS:
        assert check_packet(seed.frame), seed.name
        assert check_options(seed.options), seed.name


# -- random bytes ------------------------------------------------------------------------
@given(st.binary(max_size=400))
def test_random_bytes_as_packet(data: bytes) -> None:
    check_packet(data)


@given(st.binary(max_size=260))
def test_random_bytes_as_options(data: bytes) -> None:
    check_options(data)


@given(st.binary(max_size=252).map(lambda b: b[: len(b) - len(b) % 4]), st.binary(max_size=64))
def test_random_options_in_a_valid_frame(options: bytes, inner: bytes) -> None:
    """Random option areas behind valid outer headers reach the option decoder."""
    check_packet(frame_of(options, inner))


@st.composite
def structured_options(draw: st.DrawFn) -> tuple[bytes, TargetProfile]:
    """A header option with random fields and counts, then random code/stack/other options."""
    profile = draw(st.sampled_from(PROFILES))
    n_code = draw(st.integers(0, 3))
    n_stack = draw(st.integers(0, 2))
    head = header_data(
        depth=draw(st.integers(0, 20)),
        n_code=n_code,
        n_stack=n_stack,
        app_id=draw(st.integers(0, 0xFFFF_FFFF)),
        dpf=draw(st.integers(0, 0xFFFF)),
        gas=draw(st.integers(0, 255)),
    )
    kinds = [2] * n_code + [3] * n_stack
    if draw(st.booleans()):
        kinds = draw(st.permutations(kinds))
    area = option(1, head)
    for kind in kinds:
        area += option(kind, draw(st.binary(max_size=60)))
    if draw(st.booleans()):
        area += option(draw(st.integers(0, 255)), draw(st.binary(max_size=16)), opt_class=0x0102)
    return area[:252], profile


@given(structured_options())
def test_structured_random_options(case: tuple[bytes, TargetProfile]) -> None:
    options, profile = case
    check_options(options, profile)


# -- mutations of valid packets ----------------------------------------------------------
@st.composite
def bit_flips(draw: st.DrawFn) -> bytes:
    seed = draw(st.sampled_from(SEEDS))
    frame = bytearray(seed.frame)
    # most flips land in the SwitchVM options (from byte 50), where the decoder does its work
    end = 50 + len(seed.options)
    for _ in range(draw(st.integers(1, 8))):
        bit = draw(st.integers(50 * 8, end * 8 - 1) | st.integers(0, len(frame) * 8 - 1))
        frame[bit // 8] ^= 1 << (bit % 8)
    return bytes(frame)


@given(bit_flips())
def test_bit_flips_in_valid_packets(frame: bytes) -> None:
    check_packet(frame)


def _edit(data: bytes, draw: st.DrawFn) -> bytes:
    position = draw(st.integers(0, len(data)))
    action = draw(st.sampled_from(["truncate", "insert", "delete", "overwrite", "duplicate"]))
    if action == "truncate":
        return data[:position]
    if action == "insert":
        return data[:position] + draw(st.binary(min_size=1, max_size=8)) + data[position:]
    if action == "delete":
        return data[:position] + data[position + draw(st.integers(1, 8)) :]
    if action == "overwrite":
        chunk = draw(st.binary(min_size=1, max_size=4))
        return data[:position] + chunk + data[position + len(chunk) :]
    start = draw(st.integers(0, len(data)))
    return data[:position] + data[start : start + draw(st.integers(1, 16))] + data[position:]


@st.composite
def edited_frames(draw: st.DrawFn) -> bytes:
    frame = draw(st.sampled_from(SEEDS)).frame
    for _ in range(draw(st.integers(1, 3))):
        frame = _edit(frame, draw)
    return frame


@given(edited_frames())
def test_truncations_and_insertions_in_valid_packets(frame: bytes) -> None:
    check_packet(frame)


@st.composite
def edited_options(draw: st.DrawFn) -> bytes:
    options = draw(st.sampled_from(SEEDS)).options
    for _ in range(draw(st.integers(1, 3))):
        options = _edit(options, draw)
    return options


@given(edited_options())
def test_mutated_option_areas(options: bytes) -> None:
    check_options(options)
    if len(options) % 4 == 0 and len(options) <= 252:
        check_packet(frame_of(options, b""))


@st.composite
def resized_option_areas(draw: st.DrawFn) -> bytes:
    """Mutations that keep the options area well-formed at the Geneve level (4-byte
    aligned, lengths consistent), so that they reach the code and stack decoders."""
    options = split_options(draw(st.sampled_from(SEEDS)).options)
    pieces = [list(p) for p in options]
    target = draw(st.integers(0, len(pieces) - 1))
    payload = bytearray(options[target][3])
    if payload:
        payload[draw(st.integers(0, len(payload) - 1))] = draw(st.integers(0, 255))
    pieces[target][3] = bytes(payload)
    out = b""
    for _, opt_class, opt_type, data in pieces:
        assert isinstance(data, bytes) and isinstance(opt_class, int) and isinstance(opt_type, int)
        if opt_type == 2 and draw(st.booleans()):
            data = data[: draw(st.integers(0, len(data)))] + draw(st.binary(max_size=8))
        out += option(opt_type, data, opt_class=opt_class)
    return out[:252]


@given(resized_option_areas())
def test_resized_code_options(options: bytes) -> None:
    check_options(options)


# -- in-switch code words ----------------------------------------------------------------
@st.composite
def slot_words(draw: st.DrawFn) -> tuple[StageKind, bytes, TargetProfile]:
    profile = draw(st.sampled_from(PROFILES))
    kind = draw(st.sampled_from(list(StageKind)))
    size = slot_bytes(kind, profile)
    # sparse words (mostly zero bits) decode more often than uniformly random ones
    density = draw(st.sampled_from([0x00, 0x01, 0x11, 0xFF]))
    data = bytes(b & density for b in draw(st.binary(min_size=size, max_size=size)))
    return kind, data, profile


@given(slot_words())
def test_decode_slot_raises_only_decode_error(word: tuple[StageKind, bytes, TargetProfile]) -> None:
    kind, data, profile = word
    try:
        decode_slot(kind, data, profile)
    except DecodeError as exc:
        assert 0 <= exc.offset <= len(data)
    with pytest.raises(DecodeError):
        decode_slot(kind, data + b"\0", profile)


def _valid_words() -> list[tuple[StageKind, bytes, TargetProfile]]:
    """Code-memory words of every bundle of the example DPFs (in-switch and in-packet)."""
    out = []
    for name in EXAMPLES:
        text = (ROOT / "examples" / "asm" / f"{name}.dpfasm").read_text(encoding="utf-8")
        program = assemble_text(text, f"{name}.dpfasm")
        for placed in program.bundles:
            kind = (
                StageKind.PROLOG
                if placed.stage == 0
                else StageKind.EPILOG
                if placed.stage == 31
                else StageKind.EU
            )
            out.append((kind, encode_slot(kind, placed.bundle, TOFINO1), TOFINO1))
    return out


VALID_WORDS = _valid_words()


@st.composite
def flipped_words(draw: st.DrawFn) -> tuple[StageKind, bytes, TargetProfile]:
    kind, word, profile = draw(st.sampled_from(VALID_WORDS))
    data = bytearray(word)
    for _ in range(draw(st.integers(0, 3))):
        bit = draw(st.integers(0, len(data) * 8 - 1))
        data[bit // 8] ^= 1 << (bit % 8)
    return kind, bytes(data), profile


@given(slot_words() | flipped_words())
def test_decode_slot_success_reencodes_exactly(
    word: tuple[StageKind, bytes, TargetProfile],
) -> None:
    kind, data, profile = word
    try:
        bundle = decode_slot(kind, data, profile)
    except DecodeError:
        return
    assert encode_slot(kind, bundle, profile) == data


def test_valid_words_decode() -> None:
    assert len(VALID_WORDS) >= 20
    for kind, word, profile in VALID_WORDS:
        assert encode_slot(kind, decode_slot(kind, word, profile), profile) == word


# -- large inputs and a seeded sweep -----------------------------------------------------
class DecoderHang(Exception):
    pass


@contextmanager
def must_return(seconds: float) -> Iterator[None]:
    """Hang guard (not a speed test): fail if the decoder has not returned after ``seconds``,
    far more than any input here needs, instead of blocking the test run."""

    def on_alarm(_signum: int, _frame: object) -> None:
        raise DecoderHang(f"decoder still running after {seconds} s")

    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def test_inputs_up_to_64_kib_return() -> None:
    rng = random.Random(64)
    big = bytes(rng.getrandbits(8) for _ in range(1 << 16))
    seed = SEEDS[4]  # cache_get with a one-entry stack
    inner = big[: 0xFFFF - 20 - 8 - 8 - len(seed.options)]
    with must_return(30):
        check_packet(big)
        check_options(big)
        assert check_packet(frame_of(seed.options, inner))
        assert parse_packet(frame_of(seed.options, inner), TOFINO1).inner == inner
        check_packet(seed.frame + big)  # trailing bytes after the IPv4 packet are ignored
        check_packet(frame_of(big[:252], big[252:40_000]))
        assert len(split_options(bytes(1 << 16))) == 1 << 14  # 16 Ki empty options
        for payload in (big, bytes([255]) + bytes(1 << 16), bytes([255, 0]) + big):
            with pytest.raises(DecodeError):
                unpack_code([(0, payload)], TOFINO1)


def test_seeded_mutation_sweep() -> None:
    """20,000 deterministic random mutations (flips, cuts, splices) of the seed packets."""
    rng = random.Random(20240601)
    accepted = 0
    for _ in range(20_000):
        frame = bytearray(rng.choice(SEEDS).frame)
        for _ in range(rng.randint(1, 4)):
            what = rng.random()
            position = rng.randrange(len(frame))
            if what < 0.6:
                frame[position] ^= 1 << rng.randrange(8)
            elif what < 0.8:
                frame[position] = rng.randrange(256)
            elif what < 0.9:
                del frame[position : position + rng.randint(1, 4)]
            else:
                frame[position:position] = bytes(rng.randrange(256) for _ in range(4))
        accepted += check_packet(bytes(frame))
    # flips in addresses, ports, checksums, app id, stack values... keep some packets valid
    assert 0 < accepted < 20_000


def test_fuzz_helpers_detect_a_lying_decoder(monkeypatch: pytest.MonkeyPatch) -> None:
    """check_packet really compares: a decoder returning another header is caught."""
    import dpfc.packet.wire as wire

    real = decode_options  # what wire calls (wire imports it from dpfc.encoding)

    def lying(data: bytes, profile: TargetProfile, base_offset: int = 0) -> object:
        header = real(data, profile, base_offset)
        return type(header)(**{**header.__dict__, "app_id": header.app_id ^ 1})

    monkeypatch.setattr(wire, "decode_options", lying)
    with pytest.raises(AssertionError):
        check_packet(SEEDS[1].frame)


# -- format version 2 (docs/encoding.md §9) ----------------------------------------------------
TAGGED = replace(TOFINO1, code_format=2)


def _tagged_seeds() -> list[Seed]:
    out = []
    for name in EXAMPLES:
        text = (ROOT / "examples" / "asm" / f"{name}.dpfasm").read_text(encoding="utf-8")
        program = assemble_text(text, f"{name}.dpfasm", TAGGED)
        for stack in STACKS:
            built = build_packet(PacketSpec(7, program.header(stack), b"fuzz"), TAGGED)
            out.append(Seed(f"{name}/{len(stack)}", built.frame, built.options.data))
    return out


TAGGED_SEEDS = _tagged_seeds()
# the bytes format version 2 gives a meaning to, drawn often
TAG_BYTES = st.sampled_from([0xF4, 0xF5, 0xF6, 0xF7, 0xF8, 0xF9, 0xFA, 0xFB, 0xFC, 0xFD, 0xFF])


def test_tagged_seeds_are_valid_and_refused_by_the_other_version() -> None:
    for seed in TAGGED_SEEDS:
        assert check_packet(seed.frame, TAGGED), seed.name
        assert check_options(seed.options, TAGGED), seed.name
        with pytest.raises(DecodeError) as caught:
            decode_options(seed.options, TOFINO1)
        assert caught.value.code == codes.DECODE_FORMAT_VERSION


@st.composite
def tagged_mutants(draw: st.DrawFn) -> bytes:
    """A version-2 seed packet with flips, edits, or a byte overwritten with a tag."""
    seed = draw(st.sampled_from(TAGGED_SEEDS))
    frame = bytearray(seed.frame)
    end = 50 + len(seed.options)
    for _ in range(draw(st.integers(1, 4))):
        if not frame:
            break
        position = draw(st.integers(50, end - 1)) % len(frame)
        what = draw(st.sampled_from(["flip", "tag", "edit"]))
        if what == "flip":
            frame[position] ^= 1 << draw(st.integers(0, 7))
        elif what == "tag":
            frame[position] = draw(TAG_BYTES)
        else:
            frame = bytearray(_edit(bytes(frame), draw))
    return bytes(frame)


@given(tagged_mutants())
def test_mutations_of_format_2_packets(frame: bytes) -> None:
    check_packet(frame, TAGGED)


@given(st.lists(TAG_BYTES | st.integers(0, 255), max_size=124), st.integers(0, 3))
def test_random_format_2_code(code: list[int], depth: int) -> None:
    """A version-2 header, a stack, then a code option of random bytes rich in tags."""
    data = bytes(code) + bytes([0xFF]) * (-len(code) % 4)
    area = option(1, header_data(depth=depth, n_code=1, n_stack=1 if depth else 0, version=2))
    area += option(3, bytes(4 * depth)) if depth else b""
    check_options(area + option(2, data[:124]), TAGGED)
