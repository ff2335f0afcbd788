"""Format version 2's rules for the stage-structured P4 parser (docs/encoding.md §9).

* The end byte: the last code option ends with 1..4 bytes 0xFF (4 when the bundles end on
  a multiple of 4), the others with 0..3; the last bundle opens a new option when the
  current one has no room for it and the end byte. The decoder refuses a missing or wrong
  end byte (DPF3025).
* A conditional branch's immediate is immediate slot 0; a LOAD_IMM of the same value shares
  it; version 1 keeps its first-use order.
* A branch on two immediates is refused by the encoder (DPF2007, naming the JMP to write)
  and by the decoder (DPF3026).
* ``max_code_options``: code needing more options is refused (DPF2008, with the sizes); a
  header announcing more is refused (DPF3027).
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from dpfc.catalog import codes
from dpfc.encoding import (
    DecodeError,
    EncodingError,
    SwitchVMHeader,
    decode_options,
    encode_options,
    encode_stage_bundle,
    pack_code,
    unpack_code,
)
from dpfc.isa import (
    PC,
    AluOp,
    Bundle,
    CodeImage,
    Control,
    CtrlOp,
    EpilogBundle,
    Imm,
    MemOp,
    Register,
    Selector,
    SelectorKind,
)
from dpfc.target import BUILTIN_PROFILES

TOFINO1 = BUILTIN_PROFILES["tofino1"]
V2 = replace(TOFINO1, name="v2", code_format=2)
LANES = TOFINO1.lanes
B0, B1 = Register.b(0), Register.b(1)


def _bundle(selectors: tuple[Selector, ...], control: Control) -> Bundle:
    return Bundle(selectors, (AluOp.NOP,) * LANES, (MemOp.NOP,) * LANES, control)


def _load(dest: Register, value: int) -> Selector:
    return Selector(dest, SelectorKind.LOAD_IMM, None, value)


def _branch(x: Register | Imm, y: Register | Imm) -> Control:
    return Control(CtrlOp.BEQ, PC(True, 0), x, y, PC(True, 1))


def _image(eu0: tuple[Bundle, ...], epilog: EpilogBundle | None = None) -> CodeImage:
    prolog = Bundle.empty(LANES, PC(True, 0))
    halt = _bundle((), Control(CtrlOp.HALT, PC(True, 0)))
    return CodeImage((prolog,), (eu0, (halt, halt)), (epilog or EpilogBundle(),))


def _header(image: CodeImage) -> SwitchVMHeader:
    return SwitchVMHeader(app_id=1, dpf_ptr=PC(True, 0), code=image)


# -- a branch's immediate is slot 0 ---------------------------------------------------------------
def test_a_branch_immediate_is_slot_0_and_a_load_imm_of_it_shares_it() -> None:
    bundle = _bundle((_load(B0, 7), _load(B1, 9)), _branch(B0, Imm(9)))
    v1 = encode_stage_bundle(1, bundle, TOFINO1)
    v2 = encode_stage_bundle(1, bundle, V2)
    # version 1: first use (B0's 7, then B1's 9 = the branch's): y names slot 1
    assert v1[5] == 0x81 and v1[-8:] == bytes.fromhex("00000007 00000009")
    # version 2: the branch's 9 is slot 0 (y = 0x80), B1 loads slot 0 too, B0 loads slot 1
    assert v2[2 + 5] == 0x80
    assert v2[-10:] == bytes.fromhex("fa 00000009 fc 00000007".replace(" ", ""))
    selectors = v2[2 + 8 : 2 + 12]
    assert selectors == bytes.fromhex("8201 8a00".replace(" ", ""))
    header = _header(_image((bundle, bundle)))
    assert decode_options(encode_options(header, V2).data, V2) == header
    assert decode_options(encode_options(header, TOFINO1).data, TOFINO1) == header


def test_version_2_refuses_the_first_use_order() -> None:
    """The version-1 order of the immediates in a version-2 packet is not canonical."""
    bundle = _bundle((_load(B0, 7),), _branch(B0, Imm(9)))
    data = encode_options(_header(_image((bundle,))), V2).data
    v2 = encode_stage_bundle(1, bundle, V2)
    first_use = bytearray(v2)
    first_use[7], first_use[11] = 0x81, 0x00  # y names slot 1, the LOAD_IMM slot 0
    first_use[-9:-5], first_use[-4:] = v2[-4:], v2[-9:-5]
    with pytest.raises(DecodeError) as info:
        decode_options(data.replace(v2, bytes(first_use)), V2)
    assert info.value.code == codes.DECODE_NON_CANONICAL
    assert "branch's immediate first" in info.value.message


# -- no branch on two immediates --------------------------------------------------------------------
def test_the_encoder_refuses_a_branch_on_two_immediates_and_names_the_jmp() -> None:
    bundle = _bundle((), _branch(Imm(5), Imm(5)))
    header = _header(_image((bundle,)))
    encode_options(header, TOFINO1)  # version 1 carries it
    with pytest.raises(EncodingError) as info:
        encode_options(header, V2)
    assert info.value.code == codes.ENCODE_BRANCH_TWO_IMMEDIATES
    assert info.value.bundle == (1, 0)
    assert "always taken, write `JMP @packet:0`" in info.value.message
    never = _header(_image((_bundle((), _branch(Imm(5), Imm(6))),)))
    with pytest.raises(EncodingError, match="always not taken, write `JMP @packet:1`"):
        encode_options(never, V2)


def test_the_decoder_refuses_a_branch_on_two_immediates() -> None:
    bundle = _bundle((_load(B0, 9),), _branch(B0, Imm(9)))
    data = bytearray(encode_options(_header(_image((bundle,))), V2).data)
    x = data.index(encode_stage_bundle(1, bundle, V2)) + 6  # bundle start, 4 header bytes
    assert data[x : x + 2] == bytes([B0.code, 0x80])  # x = B0, y = immediate 0
    data[x] = 0x80
    with pytest.raises(DecodeError) as info:
        decode_options(bytes(data), V2)
    assert (info.value.code, info.value.offset) == (codes.DECODE_BRANCH_TWO_IMMEDIATES, x + 1)


# -- the end byte ----------------------------------------------------------------------------------
@pytest.mark.parametrize("pushes", range(0, 4))
def test_the_last_code_option_ends_with_1_to_4_bytes_ff(pushes: int) -> None:
    epilog = EpilogBundle(push=tuple(Register.a(k) for k in range(pushes)))
    image = _image((_bundle((), Control(CtrlOp.JMP, PC(True, 0))),), epilog)
    sizes = sum(len(encode_stage_bundle(s, b, V2)) for s, bs in image.stages() for b in bs)
    (data,) = pack_code(image, V2).options
    end = len(data) - sizes
    assert 1 <= end <= 4 and len(data) % 4 == 0
    assert data[sizes:] == b"\xff" * end
    assert end == 4 - sizes % 4  # 4 bytes when the bundles end on a multiple of 4
    header = _header(image)
    encoded = encode_options(header, V2).data
    assert decode_options(encoded, V2) == header
    head = bytearray(encoded[: len(encoded) - len(data)])
    head[-1] = sizes // 4  # the code option's length, without the 4 bytes
    missing = bytes(head) + data[:sizes]
    if end == 4:  # without the end byte the option is well-formed but for the rule
        with pytest.raises(DecodeError) as info:
            decode_options(missing, V2)
        assert info.value.code == codes.DECODE_END_BYTE


def test_the_last_bundle_opens_an_option_when_the_end_byte_does_not_fit() -> None:
    """Greedy packing fills options up to 124 data bytes; the last bundle needs one more, the
    end byte. Sizes: the prolog 6 bytes, a LOAD_IMM bundle 13, a HALT bundle 6, the epilog 4."""
    loads = tuple(_bundle((_load(B0, k),), Control(CtrlOp.JMP, PC(True, 0))) for k in range(6))
    halt = _bundle((), Control(CtrlOp.HALT, PC(True, 0)))
    prolog = (Bundle.empty(LANES, PC(True, 0)),)
    for halts, shape in ((5, [(118, 2)]), (6, [(120, 0), (4, 4)])):
        image = CodeImage(prolog, (loads + (halt,) * halts,), (EpilogBundle(),))
        sizes = [size for _, _, size in pack_code(image, V2).bundle_sizes]
        assert sizes == [6, *[13] * 6, *[6] * halts, 4]
        options = pack_code(image, V2).options
        assert [(len(o.rstrip(b"\xff")), len(o) - len(o.rstrip(b"\xff"))) for o in options] == [
            (size, tail) for size, tail in shape
        ]
        assert unpack_code([(0, o) for o in options], V2) == image
    # the 124 bytes in one option, without the end byte: refused
    image = CodeImage(prolog, (loads + (halt,) * 6,), (EpilogBundle(),))
    first, second = pack_code(image, V2).options
    with pytest.raises(DecodeError) as info:
        unpack_code([(0, first + second[:4])], V2)
    assert (info.value.code, info.value.offset) == (codes.DECODE_END_BYTE, 124)


def test_max_code_options_refuses_code_needing_more_with_the_sizes() -> None:
    wide = replace(TOFINO1, name="wide", num_eus=8)
    image = CodeImage(
        (Bundle.empty(LANES, PC(True, 0)),),
        tuple(
            (
                _bundle(
                    tuple(_load(Register.b(k), 0x1111 * (eu + 1) + k % 2) for k in range(4)),
                    Control(CtrlOp.JMP if eu < 7 else CtrlOp.HALT, PC(True, 0)),
                ),
            )
            for eu in range(8)
        ),
        (EpilogBundle(),),
    )
    for fmt in (1, 2):
        many = replace(wide, code_format=fmt)
        assert len(pack_code(image, many).options) == 2
        single = replace(many, max_code_options=1)
        with pytest.raises(EncodingError) as info:
            pack_code(image, single)
        assert info.value.code == codes.ENCODE_TOO_MANY_CODE_OPTIONS
        assert "takes 2 code options" in info.value.message
        assert "allows 1 (max_code_options)" in info.value.message
        room = 123 if fmt == 2 else 124
        assert f"at most {room} bytes" in info.value.message
        data = encode_options(_header(image), many).data
        with pytest.raises(DecodeError) as decoded:
            decode_options(data, single)
        assert decoded.value.code == codes.DECODE_TOO_MANY_CODE_OPTIONS
