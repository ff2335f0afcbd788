"""Blocks of bundles and their packing into code options (docs/encoding.md §2.2, §3, §9).

Format version 1 (the tables of :mod:`dpfc.encoding.layouts`): each SwitchVM code option's data is a
``CODE_OPTION_HEAD`` (``n_blocks``) then that many *blocks*, then zero padding to a multiple
of 4 bytes. A block is a ``BLOCK_HEAD`` (``stage``, ``count_minus_one``) followed by that
many bundles of the stage (:mod:`.bundle`, :mod:`.epilog`). Blocks appear in ascending stage
order; a stage's bundles may continue in the next block. The in-packet PC ``@packet:i``
names the i-th bundle of a stage across all blocks.

Format version 2 (``profile.code_format``): each option's data is a sequence of bundles, each
opened by its ``BUNDLE_START`` (:mod:`.tagged`), then 0..3 padding bytes ``TAG_PADDING``
(0xFF); no block headers and no count. The last code option ends with 1..4 bytes 0xFF
instead: the code's end byte ``TAG_END``, where a parser stops (without it an inner frame
whose first bytes are 0xFB 0x08 would read as a bundle), then the padding. Stages are in
ascending order across all options. A branch on two immediates is refused (DPF2007).

Either format: code needing more options than the profile's ``max_code_options`` is
refused (DPF2008).

Contract: :func:`pack_code` packs an image greedily into the one canonical list of code
option payloads; :func:`unpack_code` reads payloads back into a :class:`CodeImage`, checking
blocks or bundle starts and padding (DPF3020-DPF3024) and leaving each bundle to its decoder, which rejects
any non-canonical form, so decode∘encode and encode∘decode are identities.

Not responsible for the other SwitchVM options nor their framing (:mod:`dpfc.encoding.header`)
nor for checking what the decoded code does (:mod:`dpfc.isa.check`).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from dpfc.catalog import codes
from dpfc.encoding.code.bundle import decode_bundle, encode_bundle
from dpfc.encoding.code.epilog import decode_epilog, encode_epilog
from dpfc.encoding.code.tagged import branch_problem, decode_tagged, encode_tagged, tag_name
from dpfc.encoding.errors import ByteReader, DecodeError, EncodingError
from dpfc.encoding.layouts import (
    BLOCK_HEAD,
    BUNDLE_START,
    CODE_OPTION_HEAD,
    OPTION_DATA_MAX,
    OPTION_WORD_BYTES,
    TAG_BUNDLE,
    TAG_END,
    TAG_PADDING,
)
from dpfc.isa import (
    EPILOG_STAGE,
    PROLOG_STAGE,
    Bundle,
    CodeImage,
    EpilogBundle,
    StageBundle,
    stage_name,
)
from dpfc.target import TAGGED_FORMAT, TargetProfile

MAX_BLOCK_BUNDLES = BLOCK_HEAD.field("count_minus_one").mask + 1


def encode_stage_bundle(stage: int, bundle: StageBundle, profile: TargetProfile) -> bytes:
    """The bytes of one bundle in the profile's format (in version 2 with its bundle start)."""
    if profile.code_format == TAGGED_FORMAT:
        return encode_tagged(stage, bundle, profile)
    if isinstance(bundle, EpilogBundle):
        return encode_epilog(bundle, profile)
    return encode_bundle(bundle, profile)


@dataclass(frozen=True)
class PackedCode:
    """Code option payloads and where each bundle landed (for size reports)."""

    options: tuple[bytes, ...]
    bundle_sizes: tuple[tuple[int, int, int], ...]  # (stage, index, bytes)


# Encoding and decoding are pure functions of frozen values, and a switch sees the same
# in-packet code over and over: memoising them makes the simulator (and the decoder's
# canonical-form check, which re-encodes) several times faster without changing a result.
CACHE_SIZE = 4096


@lru_cache(maxsize=CACHE_SIZE)
def pack_code(image: CodeImage, profile: TargetProfile) -> PackedCode:
    """Greedy canonical packing of an image's bundles into code-option payloads; refuses
    code needing more than the profile's ``max_code_options``."""
    packed = (
        _pack_tagged(image, profile)
        if profile.code_format == TAGGED_FORMAT
        else _pack(image, profile)
    )
    if len(packed.options) > profile.max_code_options:
        tagged = profile.code_format == TAGGED_FORMAT
        bundles = sum(size for _, _, size in packed.bundle_sizes)
        room = profile.max_code_options * OPTION_DATA_MAX - (1 if tagged else 0)
        raise EncodingError(
            f"the in-packet code takes {len(packed.options)} code options "
            f"({'+'.join(str(len(o)) for o in packed.options)} data bytes; its bundles "
            f"{bundles} bytes) but {profile.name} allows {profile.max_code_options} "
            f"(max_code_options), at most {room} bytes of "
            + ("bundles and block headers" if not tagged else "bundles and the end byte"),
            codes.ENCODE_TOO_MANY_CODE_OPTIONS,
        )
    return packed


def _pack(image: CodeImage, profile: TargetProfile) -> PackedCode:
    """:func:`pack_code` in format version 1."""
    options: list[bytes] = []
    sizes: list[tuple[int, int, int]] = []
    empty = CODE_OPTION_HEAD.pack(n_blocks=0)
    current = bytearray(empty)
    n_blocks = 0
    block_stage = -1
    block_count = 0
    block_header_pos = 0

    def close() -> None:
        nonlocal current, n_blocks, block_stage
        if n_blocks:
            current = bytearray(CODE_OPTION_HEAD.replace(bytes(current), n_blocks=n_blocks))
            padded = bytes(current) + bytes(-len(current) % OPTION_WORD_BYTES)
            options.append(padded)
        current = bytearray(empty)
        n_blocks = 0
        block_stage = -1

    for stage, bundles in image.stages():
        for index, bundle in enumerate(bundles):
            body = encode_stage_bundle(stage, bundle, profile)
            sizes.append((stage, index, len(body)))
            continue_block = block_stage == stage and block_count < MAX_BLOCK_BUNDLES
            needed = len(body) + (0 if continue_block else BLOCK_HEAD.size)
            if len(current) + needed > OPTION_DATA_MAX:
                close()
                continue_block = False
                needed = len(body) + BLOCK_HEAD.size
                if CODE_OPTION_HEAD.size + needed > OPTION_DATA_MAX:
                    bundle_max = OPTION_DATA_MAX - CODE_OPTION_HEAD.size - BLOCK_HEAD.size
                    raise EncodingError(
                        f"{stage_name(stage)} bundle {index} is {len(body)} bytes, too large for "
                        f"one Geneve option ({bundle_max} bytes at most)"
                    )
            if continue_block:
                block_count += 1
                current[block_header_pos : block_header_pos + BLOCK_HEAD.size] = BLOCK_HEAD.pack(
                    stage=stage, count_minus_one=block_count - 1
                )
            else:
                block_stage, block_count = stage, 1
                block_header_pos = len(current)
                current += BLOCK_HEAD.pack(stage=stage, count_minus_one=0)
                n_blocks += 1
            current += body
    close()
    return PackedCode(tuple(options), tuple(sizes))


def _pack_tagged(image: CodeImage, profile: TargetProfile) -> PackedCode:
    """:func:`pack_code` in format version 2: no blocks, padding 0xFF, the end byte after the
    last bundle (which goes into a new option when the current one has no room for both)."""
    options: list[bytes] = []
    sizes: list[tuple[int, int, int]] = []
    current = bytearray()
    placed = [
        (stage, index, bundle)
        for stage, bundles in image.stages()
        for index, bundle in enumerate(bundles)
    ]
    for number, (stage, index, bundle) in enumerate(placed):
        problem = branch_problem(bundle)
        if problem is not None:
            raise EncodingError(
                f"{stage_name(stage)} bundle {index}: {problem}",
                codes.ENCODE_BRANCH_TWO_IMMEDIATES,
                (stage, index),
            )
        body = encode_tagged(stage, bundle, profile)
        sizes.append((stage, index, len(body)))
        room = OPTION_DATA_MAX - (1 if number == len(placed) - 1 else 0)  # the end byte
        if len(current) + len(body) > room:
            if len(body) > room:
                raise EncodingError(
                    f"{stage_name(stage)} bundle {index} is {len(body)} bytes, too large for "
                    f"one Geneve option ({room} bytes at most)",
                    bundle=(stage, index),
                )
            options.append(bytes(current) + bytes([TAG_PADDING]) * (-len(current) % 4))
            current.clear()
        current += body
    if current:  # the end byte, then the padding: 1..4 bytes 0xFF
        end = OPTION_WORD_BYTES - len(current) % OPTION_WORD_BYTES
        options.append(bytes(current) + bytes([TAG_END]) + bytes([TAG_PADDING]) * (end - 1))
    return PackedCode(tuple(options), tuple(sizes))


def unpack_code(
    options: list[tuple[int, bytes]],
    profile: TargetProfile,
    positions: dict[tuple[int, int], int] | None = None,
) -> CodeImage:
    """Decode code-option payloads (with their byte offsets) into a :class:`CodeImage`.

    If ``positions`` is given, it receives the byte offset of every bundle, keyed by
    (stage, index in the stage), so that later checks can point at the offending bundle.
    """
    if profile.code_format == TAGGED_FORMAT:
        image, where = _unpack_tagged(tuple(options), profile)
    else:
        image, where = _unpack_code(tuple(options), profile)
    if positions is not None:
        positions.update(where)
    return image


@lru_cache(maxsize=CACHE_SIZE)
def _unpack_code(
    options: tuple[tuple[int, bytes], ...], profile: TargetProfile
) -> tuple[CodeImage, tuple[tuple[tuple[int, int], int], ...]]:
    prologs: list[Bundle] = []
    eus: list[list[Bundle]] = [[] for _ in range(profile.num_eus)]
    epilogs: list[EpilogBundle] = []
    where: dict[tuple[int, int], int] = {}
    last_stage = -1
    for base, data in options:
        reader = ByteReader(data, base)
        n_blocks = CODE_OPTION_HEAD.read(reader)["n_blocks"]
        if n_blocks == 0:
            raise DecodeError("code option holds no blocks", base, codes.DECODE_EMPTY_CODE_OPTION)
        for _ in range(n_blocks):
            offset = reader.offset
            block = BLOCK_HEAD.read(reader)
            stage, count = block["stage"], block["count_minus_one"] + 1
            if stage < last_stage:
                raise DecodeError(
                    f"{stage_name(stage)} block after {stage_name(last_stage)}: blocks must be in stage order",
                    offset,
                    codes.DECODE_BLOCK_ORDER,
                )
            _check_stage(stage, last_stage, offset, profile)
            last_stage = stage
            for _ in range(count):
                if stage == PROLOG_STAGE:
                    where[(stage, len(prologs))] = reader.offset
                    prologs.append(decode_bundle(reader, profile))
                elif stage == EPILOG_STAGE:
                    where[(stage, len(epilogs))] = reader.offset
                    epilogs.append(decode_epilog(reader, profile))
                else:
                    where[(stage, len(eus[stage - 1]))] = reader.offset
                    eus[stage - 1].append(decode_bundle(reader, profile))
        _check_padding(reader)
    return _image(prologs, eus, epilogs), tuple(where.items())


def _image(
    prologs: list[Bundle], eus: list[list[Bundle]], epilogs: list[EpilogBundle]
) -> CodeImage:
    while eus and not eus[-1]:
        eus.pop()
    return CodeImage(tuple(prologs), tuple(tuple(s) for s in eus), tuple(epilogs))


def _check_stage(stage: int, last_stage: int, offset: int, profile: TargetProfile) -> None:
    """Code comes in stage order, of stages the profile has."""
    if stage < last_stage:
        raise DecodeError(
            f"{stage_name(stage)} bundle after {stage_name(last_stage)}: bundles must be in stage order",
            offset,
            codes.DECODE_BLOCK_ORDER,
        )
    if stage != EPILOG_STAGE and stage > profile.num_eus:
        raise DecodeError(
            f"code for EU{stage - 1} but {profile.name} has {profile.num_eus} EUs",
            offset,
            codes.DECODE_NO_SUCH_EU,
        )


@lru_cache(maxsize=CACHE_SIZE)
def _unpack_tagged(
    options: tuple[tuple[int, bytes], ...], profile: TargetProfile
) -> tuple[CodeImage, tuple[tuple[tuple[int, int], int], ...]]:
    """:func:`_unpack_code` in format version 2; a bundle's position is its bundle start."""
    prologs: list[Bundle] = []
    eus: list[list[Bundle]] = [[] for _ in range(profile.num_eus)]
    epilogs: list[EpilogBundle] = []
    where: dict[tuple[int, int], int] = {}
    last_stage = -1
    for number, (base, data) in enumerate(options):
        reader = ByteReader(data, base)
        bundles = 0
        last = number == len(options) - 1  # ends with the end byte
        ended = False
        while reader.remaining():
            offset = reader.offset
            first = data[reader.pos]
            if bundles and (
                first == TAG_PADDING
                or (first != TAG_BUNDLE and reader.remaining() < OPTION_WORD_BYTES + last)
            ):  # no bundle is shorter than 4 bytes: what follows is the end byte or padding
                _check_tagged_padding(reader, last)
                ended = True
                break
            if first != TAG_BUNDLE:
                if not bundles and first == TAG_PADDING:
                    break  # the option holds no bundle
                raise DecodeError(
                    f"found {tag_name(first)} where a bundle start ({TAG_BUNDLE:#04x}) or the "
                    f"padding ({TAG_PADDING:#04x}) must follow"
                    + (" the previous bundle" if bundles else ""),
                    offset,
                    codes.DECODE_PART_TAG,
                )
            start = BUNDLE_START.read(reader)
            stage = start["stage"]
            if start["reserved"]:
                raise DecodeError(
                    "reserved bits of the bundle start's stage byte are set",
                    offset + BUNDLE_START.field("reserved").byte,
                    codes.DECODE_RESERVED_BITS,
                )
            _check_stage(stage, last_stage, offset + BUNDLE_START.field("stage").byte, profile)
            last_stage = stage
            bundle = decode_tagged(reader, stage, profile)
            bundles += 1
            if isinstance(bundle, EpilogBundle):
                where[(stage, len(epilogs))] = offset
                epilogs.append(bundle)
            elif stage == PROLOG_STAGE:
                where[(stage, len(prologs))] = offset
                prologs.append(bundle)
            else:
                where[(stage, len(eus[stage - 1]))] = offset
                eus[stage - 1].append(bundle)
        if not bundles:
            raise DecodeError("code option holds no bundle", base, codes.DECODE_EMPTY_CODE_OPTION)
        if last and not ended:
            raise DecodeError(
                f"the last code option ends without the code's end byte ({TAG_END:#04x}): "
                "its last bundle must be followed by 1..4 bytes 0xff (a parser stops at the "
                "end byte; without it the bytes after the code would read as more code)",
                reader.offset,
                codes.DECODE_END_BYTE,
            )
    return _image(prologs, eus, epilogs), tuple(where.items())


def _check_tagged_padding(reader: ByteReader, last: bool) -> None:
    """After its bundles, a version-2 code option holds only 0xFF padding to 4 bytes; the
    last one the end byte, then that padding (1..4 bytes)."""
    start = reader.offset
    padding = reader.take(reader.remaining(), "padding")
    if len(padding) >= OPTION_WORD_BYTES + last:
        allowed = "the end byte and padding" if last else "padding"
        most = OPTION_WORD_BYTES if last else OPTION_WORD_BYTES - 1
        raise DecodeError(
            f"code option has {len(padding)} bytes after its bundles; only {allowed} to "
            f"the next {OPTION_WORD_BYTES}-byte boundary (at most {most} bytes) may follow",
            start,
            codes.DECODE_TRAILING_BYTES,
        )
    for index, byte in enumerate(padding):
        if byte != TAG_PADDING:
            end = last and not index
            raise DecodeError(
                f"{'the end byte' if end else 'padding byte'} after the bundles of "
                f"{'the last' if last else 'a'} code option is {byte:#04x}, not "
                f"{TAG_PADDING:#04x}",
                start + index,
                codes.DECODE_END_BYTE if end else codes.DECODE_TRAILING_BYTES,
            )


def _check_padding(reader: ByteReader) -> None:
    """After its blocks, a code option holds only the zero padding to a 4-byte boundary."""
    start = reader.offset
    padding = reader.take(reader.remaining(), "padding")
    if len(padding) >= OPTION_WORD_BYTES:
        raise DecodeError(
            f"code option has {len(padding)} bytes after its blocks; only zero padding to "
            f"the next {OPTION_WORD_BYTES}-byte boundary (at most {OPTION_WORD_BYTES - 1} "
            "bytes) may follow",
            start,
            codes.DECODE_TRAILING_BYTES,
        )
    for index, byte in enumerate(padding):
        if byte:
            raise DecodeError(
                f"padding byte after the blocks of a code option is {byte:#04x}, not zero",
                start + index,
                codes.DECODE_TRAILING_BYTES,
            )
