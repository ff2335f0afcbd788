"""Round-trip properties of the encoders, the disassembler and the object format.

Every property runs >= 1,000 examples under the default "ci" hypothesis profile, over the
built-in profiles tofino1/tofino2 and the custom profiles of :mod:`tests.strategies` (a
2-lane one built with ``dataclasses.replace`` and a 3-lane one loaded from TOML). The
in-packet code format version 2 (docs/encoding.md §9) is held to the same identities on a
copy of each of them with ``code_format = 2``, and to its relation with version 1: the
same header, 2 more bytes per bundle and 1 per tagged part, each version refused by a
profile of the other.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TypeVar

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from dpfc.asm import assemble_text
from dpfc.catalog import codes
from dpfc.encoding import (
    DecodeError,
    StageKind,
    SwitchVMHeader,
    decode_options,
    decode_slot,
    encode_options,
    encode_slot,
    restack,
    slot_bytes,
    stage_kind,
)
from dpfc.isa.bundle import (
    EPILOG_STAGE,
    PROLOG_STAGE,
    Bundle,
    CodeImage,
    EpilogBundle,
    StageBundle,
)
from dpfc.isa.check import check_bundle, check_epilog
from dpfc.isa.opcodes import AluOp, MemOp
from dpfc.isa.placement import check_image
from dpfc.machine import encode_program, format_program, program_from_image
from dpfc.machine.program import MachineProgram
from dpfc.objfile import ObjectFile, read_object, write_object
from dpfc.target.profile import TargetProfile
from tests.conftest import ROOT
from tests.strategies import (
    PROFILES,
    TAGGED_PROFILES,
    GeneratedProgram,
    code_images,
    fits,
    headers,
    programs,
    stage_bundles,
)

EXAMPLES = sorted((ROOT / "examples" / "asm").glob("*.dpfasm"))


T = TypeVar("T")


@st.composite
def profile_and(
    draw: st.DrawFn, make: Callable[[TargetProfile], st.SearchStrategy[T]]
) -> tuple[TargetProfile, T]:
    """A profile and a value drawn from ``make(profile)``."""
    profile = draw(st.sampled_from([PROFILES[name] for name in sorted(PROFILES)]))
    return profile, draw(make(profile))


def program_bytes(program: MachineProgram) -> tuple[bytes, tuple[tuple[int, int, bytes], ...]]:
    """Everything a program encodes to: its in-packet options and its in-switch words."""
    profile = program.profile
    image = program.image()
    options = b"" if image.is_empty() else encode_options(program.header(), profile).data
    words = tuple(
        (stage, slot, encode_slot(stage_kind(stage), bundle, profile))
        for stage, by_slot in sorted(program.switch_slots().items())
        for slot, bundle in sorted(by_slot.items())
    )
    return options, words


def assert_generated_program_is_legal(program: MachineProgram) -> None:
    """The generators produce only code the checker accepts (in-packet and in-switch)."""
    profile = program.profile
    assert check_image(program.image(), profile) == []
    for placed in program.bundles:
        bundle = placed.bundle
        if placed.pc.in_packet:
            continue
        if isinstance(bundle, EpilogBundle):
            assert placed.stage == EPILOG_STAGE
            assert check_epilog(bundle, profile) == []
        else:
            prolog = placed.stage == PROLOG_STAGE
            assert check_bundle(bundle, profile, prolog=prolog, next_stage="next") == []


# -- asm -> bytes -> disasm -> asm -----------------------------------------------------------
@given(profile_and(lambda p: code_images(p, min_prologs=1, max_bundles=6)))
def test_disassembly_of_an_image_reassembles_to_the_same_bytes(
    case: tuple[TargetProfile, CodeImage],
) -> None:
    profile, image = case
    assert check_image(image, profile) == []
    assert not image.eus or image.eus[-1], "trailing EU stages must not be empty"
    original = program_from_image(image, profile)
    assume(fits(original.header(), profile))  # rarely false: images are small
    text1 = format_program(original)
    program = assemble_text(text1, "<disasm>", profile)
    assert program.image() == image
    assert program_bytes(program) == program_bytes(original)
    assert format_program(program) == text1


@given(programs())
def test_disassembly_of_a_program_reassembles_to_the_same_bytes(case: GeneratedProgram) -> None:
    """Mixed in-packet/in-switch and in-switch-only programs, with app ids, names, entries."""
    original = case.program
    assert_generated_program_is_legal(original)
    text1 = format_program(original)
    program = assemble_text(text1, "<disasm>", case.profile)
    assert program_bytes(program) == program_bytes(original)
    assert (program.name, program.app_id, program.entry, program.placement) == (
        original.name,
        original.app_id,
        original.entry,
        original.placement,
    )
    assert format_program(program) == text1


# -- bytes -> decode -> encode -----------------------------------------------------------------
@given(profile_and(headers), st.integers(0, 1000))
def test_header_decode_encode_is_identity(
    case: tuple[TargetProfile, SwitchVMHeader], base: int
) -> None:
    profile, header = case
    assert check_image(header.code, profile) == []
    encoded = encode_options(header, profile)
    assert len(encoded.data) <= 252
    assert len(encoded.data) == encoded.header_bytes + encoded.code_bytes + encoded.stack_bytes
    decoded = decode_options(encoded.data, profile, base)
    assert decoded == header
    assert encode_options(decoded, profile).data == encoded.data


# -- format version 2 -----------------------------------------------------------------------------
def tagged_parts(bundle: StageBundle) -> int:
    """How many parts of ``bundle`` format version 2 tags (docs/encoding.md §9)."""
    if isinstance(bundle, EpilogBundle):
        return (bundle.steering.value is not None) + (bundle.next_pc is not None)
    assert isinstance(bundle, Bundle)
    has_alu = any(op is not AluOp.NOP for op in bundle.alu)
    has_mem = any(op is not MemOp.NOP for op in bundle.mem)
    return has_alu + has_mem + len(bundle.immediates())


def _version_refused(data: bytes, profile: TargetProfile) -> None:
    with pytest.raises(DecodeError) as caught:
        decode_options(data, profile)
    assert caught.value.code == codes.DECODE_FORMAT_VERSION
    assert caught.value.offset == 4  # the version nibble, after the header's option header


@given(profile_and(headers), st.integers(0, 1000))
def test_header_decode_encode_is_identity_in_format_2(
    case: tuple[TargetProfile, SwitchVMHeader], base: int
) -> None:
    v1_profile, header = case
    profile = TAGGED_PROFILES[v1_profile.name]
    assume(fits(header, profile))  # version 2 is larger: a few headers no longer fit
    encoded = encode_options(header, profile)
    assert len(encoded.data) == encoded.header_bytes + encoded.code_bytes + encoded.stack_bytes
    decoded = decode_options(encoded.data, profile, base)
    assert decoded == header
    assert encode_options(decoded, profile).data == encoded.data
    # the stack options follow the header option; the code options come last
    assert encoded.data[encoded.header_bytes :].startswith(
        encode_options(SwitchVMHeader(stack=header.stack), profile).data[encoded.header_bytes :]
    )
    v1 = encode_options(header, v1_profile)
    sizes = {(stage, index): size for stage, index, size in v1.bundle_sizes}
    bundles = {
        (s, i): b for s, stage_list in header.code.stages() for i, b in enumerate(stage_list)
    }
    assert [(s, i) for s, i, _ in encoded.bundle_sizes] == list(sizes)
    for stage, index, size in encoded.bundle_sizes:
        assert size == sizes[(stage, index)] + 2 + tagged_parts(bundles[(stage, index)])
    _version_refused(encoded.data, v1_profile)
    _version_refused(v1.data, profile)
    # the simulator's shortcut for a header whose stack alone changed
    for stack in ((), header.stack[1:], (7, *header.stack)):
        again = replace(header, stack=stack)
        if fits(again, profile):
            assert restack(encoded, stack, profile) == encode_options(again, profile).data


@given(programs())
def test_object_round_trip_in_format_2(case: GeneratedProgram) -> None:
    """An object of a program for a version-2 profile reads back to the same bytes."""
    profile = TAGGED_PROFILES[case.profile.name]
    program = replace(case.program, profile=profile)
    assume(fits(SwitchVMHeader(code=program.image()), profile))
    data = write_object(ObjectFile.of_program(encode_program(program)))
    [dpf] = read_object(data, "prog.dpfo", profile).dpfs
    assert format_program(dpf.program) == format_program(program)
    assert program_bytes(dpf.program) == program_bytes(program)


# -- in-switch words --------------------------------------------------------------------------
WORD_KINDS = {"prolog": StageKind.PROLOG, "eu": StageKind.EU, "epilog": StageKind.EPILOG}


@st.composite
def slot_cases(draw: st.DrawFn) -> tuple[TargetProfile, StageKind, StageBundle]:
    profile = draw(st.sampled_from([PROFILES[name] for name in sorted(PROFILES)]))
    kind = draw(st.sampled_from(sorted(WORD_KINDS)))
    return profile, WORD_KINDS[kind], draw(stage_bundles(kind, profile))


@given(slot_cases())
def test_slot_decode_encode_is_identity(case: tuple[TargetProfile, StageKind, StageBundle]) -> None:
    profile, kind, bundle = case
    word = encode_slot(kind, bundle, profile)
    assert len(word) == slot_bytes(kind, profile)
    assert decode_slot(kind, word, profile) == bundle
    assert encode_slot(kind, decode_slot(kind, word, profile), profile) == word


# -- object files ------------------------------------------------------------------------------
@given(programs())
def test_object_round_trip(case: GeneratedProgram) -> None:
    """dpfc-object v2 of an assembled program reads back to the same program and bytes."""
    program = case.program
    data = write_object(ObjectFile.of_program(encode_program(program)))
    [dpf] = read_object(data, "prog.dpfo", case.profile).dpfs
    assert format_program(dpf.program) == format_program(program)
    assert program_bytes(dpf.program) == program_bytes(program)
    assert write_object(ObjectFile.of_program(dpf.encoded)) == data


# -- the examples --------------------------------------------------------------------------------
@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: Path(p).stem)
def test_example_is_a_fixpoint_of_assemble_and_format(path: Path) -> None:
    program = assemble_text(path.read_text(encoding="utf-8"), path.name)
    text1 = format_program(program)
    again = assemble_text(text1, "<formatted>")
    assert program_bytes(again) == program_bytes(program)
    assert format_program(again) == text1
    third = assemble_text(format_program(again), "<formatted twice>")
    assert format_program(third) == text1


def test_the_examples_are_the_papers_dpfs() -> None:
    assert sorted(p.stem for p in EXAMPLES) == [
        "cache_get",
        "cache_put",
        "cache_update",
        "count_min",
        "counter",
        "empty",
        "lb1",
        "lb2",
        "lb3_client",
        "lb3_server",
        "paxos_acceptor",
        "paxos_leader",
    ]
