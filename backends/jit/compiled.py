"""What the JIT compiled for one pipe at one table generation, and the buffers it runs on.

Contract: :class:`CompiledPipe` builds the pipe module (tables, code memory) in its own
:class:`~.llvm.NativeEngine`, with the pass (:mod:`.runtime`, compiled once per profile), owns the state words, undo log, statistics,
dirty list and in-packet code table the native code uses, compiles in-packet code on
demand (:meth:`add_code`, cached by the FNV-1a digest of the code options' bytes) and
moves the counters and the RAND state between the native buffers and the interpreter's
objects (:meth:`sync`). It is stale, and replaced, once the control plane's generation
moves.
"""

from __future__ import annotations

import ctypes
import itertools
from array import array
from typing import Any

from dpfc.backends.sim import PipeState
from dpfc.encoding import DecodeError, decode_options
from dpfc.isa import EPILOG_STAGE, PROLOG_STAGE, CodeImage
from dpfc.switch import Xorshift32
from dpfc.target import TargetProfile

from .bundles import CodeSource, emit_code_function, emit_code_memory
from .layout import (
    C_BYTES,
    C_DIGEST,
    C_FUNCTION,
    C_LENGTH,
    C_PROLOGS,
    CODE_SLOTS,
    CODE_WORDS,
    STAT_FIELDS,
    STAT_SLOTS,
    UNDO_MAX,
    StateLayout,
    fnv1a,
)
from .llvm import NativeEngine
from .runtime import emit_batch
from .tables import TableImage, build_tables

BatchFunction = ctypes.CFUNCTYPE(
    ctypes.c_int32,
    *([ctypes.c_void_p] * 2 + [ctypes.c_int32] * 2 + [ctypes.c_void_p] * 7),
)
_serial = itertools.count()
_ZEROS = array("q", bytes(8 * STAT_SLOTS))
# packets, executed and the verdict counters (runtime's deliver): what a sync moves
_NATIVE_COUNTERS = tuple(
    STAT_FIELDS.index(name)
    for name in (
        "packets",
        "executed",
        "recirculated",
        "dropped",
        "forwarded",
        "returned",
        "multicast",
        "passed",
    )
)


def _address(buffer: array[int]) -> int:
    return buffer.buffer_info()[0]


PREFIX = "pipe"  # one pipe per engine: the symbols the pass calls have fixed names
# The pass (runtime.emit_batch) as object code, per profile: it depends on the profile
# alone, so it is compiled once per process and added to every pipe's engine.
_RUNTIMES: dict[str, bytes] = {}


def _runtime(engine: NativeEngine, profile: TargetProfile) -> bytes:
    key = repr(profile)
    code = _RUNTIMES.get(key)
    if code is None:
        module = engine.new_module("runtime")
        emit_batch(module, PREFIX, profile)
        code = _RUNTIMES[key] = engine.object_code(module)
    return code


class CompiledPipe:
    def __init__(self, pipe: PipeState, generation: int) -> None:
        self.engine = engine = NativeEngine()
        self.pipe = pipe
        self.profile = pipe.profile
        self.layout = StateLayout(pipe.profile)
        self.prefix = PREFIX
        self.code_memory = _memory(pipe)
        module = engine.new_module(f"pipe{pipe.index}_{next(_serial)}")
        emit_code_memory(module, f"{self.prefix}_code", self.prefix, self.profile, self.code_memory)
        engine.add_object(_runtime(engine, self.profile))
        engine.add(module)
        self.batch = BatchFunction(engine.address(f"{self.prefix}_batch"))
        self.tables_global = ctypes.c_int64.from_address(
            engine.global_address(f"{self.prefix}_tables")
        )
        self.state = array("i", bytes(4 * self.layout.words))
        self.undo = array("q", bytes(8 * (1 + 2 * UNDO_MAX)))
        self.generation = -1
        self.refresh(generation)
        self.code_table = array("q", bytes(8 * CODE_WORDS * CODE_SLOTS))
        self.code_bytes: list[ctypes.Array[ctypes.c_char]] = []  # kept alive: C_BYTES
        self.codes = 0

    def same_code(self) -> bool:
        """Whether the pipe's code memory is still what this module compiled."""
        return _memory(self.pipe) == self.code_memory

    def refresh(self, generation: int) -> None:
        """Take the pipe's tables as they are now (data: no compilation)."""
        self.sync_counters()
        self.tables: TableImage = build_tables(self.pipe)
        self.tables_global.value = _address(self.tables.words)
        rows = max(1, len(self.tables.tenants))
        self.stats = array("q", bytes(8 * STAT_SLOTS * rows))
        self.dirty = array("i", bytes(4 * (1 + rows)))
        self.generation = generation

    # -- in-packet code -------------------------------------------------------------------
    def add_code(self, code_options: bytes) -> None:
        """Compile the code the options carry (or mark it for the interpreter when it does
        not decode) and enter it in the code table."""
        if self.codes >= CODE_SLOTS // 2:  # keep probing short: start over
            self.code_table[:] = array("q", bytes(8 * CODE_WORDS * CODE_SLOTS))
            self.code_bytes.clear()
            self.codes = 0
        image = _decode_code(code_options, self.profile)
        function = 0
        if image is not None:
            name = f"{self.prefix}_packet{self.codes}"
            module = self.engine.new_module(name)
            emit_code_function(module, name, self.prefix, self.profile, _image(image))
            self.engine.add(module)
            function = self.engine.address(name)
        digest = fnv1a(code_options)
        kept = ctypes.create_string_buffer(code_options, len(code_options))
        self.code_bytes.append(kept)
        slot = digest & (CODE_SLOTS - 1)
        while self.code_table[slot * CODE_WORDS + C_DIGEST] != 0:
            slot = (slot + 1) & (CODE_SLOTS - 1)
        base = slot * CODE_WORDS
        self.code_table[base + C_DIGEST] = _signed(digest)
        self.code_table[base + C_LENGTH] = len(code_options)
        self.code_table[base + C_BYTES] = ctypes.addressof(kept)
        self.code_table[base + C_FUNCTION] = function
        self.code_table[base + C_PROLOGS] = len(image.prologs) if image is not None else 0
        self.codes += 1

    # -- running ----------------------------------------------------------------------------
    def run(
        self, data: bytes, desc: array[int], start: int, count: int, out: Any, res: array[int]
    ) -> int:
        return int(
            self.batch(
                data,
                _address(desc),
                start,
                count,
                ctypes.addressof(out),
                _address(res),
                _address(self.state),
                _address(self.undo),
                _address(self.stats),
                _address(self.code_table),
                _address(self.dirty),
            )
        )

    def load_random(self, rng: object) -> None:
        lay = self.layout
        native = isinstance(rng, Xorshift32)
        self.state[lay.rng_native] = int(native)
        self.state[lay.rng] = _signed32(rng.state) if isinstance(rng, Xorshift32) else 0

    def sync(self, rng: object) -> None:
        """Move the native counters, packet count and RAND state to the interpreter's."""
        lay = self.layout
        if isinstance(rng, Xorshift32):
            rng.state = self.state[lay.rng] & 0xFFFF_FFFF
        self.pipe.packets_seen += self.state[lay.packets_seen]
        self.state[lay.packets_seen] = 0
        self.sync_counters()

    def sync_counters(self) -> None:
        if not hasattr(self, "dirty"):
            return
        dirty, stats = self.dirty, self.stats
        tenants, stats_for = self.tables.tenants, self.pipe.stats_for
        cleared = _ZEROS
        for entry in dirty[1 : 1 + dirty[0]]:
            base = entry * STAT_SLOTS
            deltas = stats[base : base + STAT_SLOTS]  # a C copy: read once, cleared at once
            stats[base : base + STAT_SLOTS] = cleared
            target = stats_for(tenants[entry])
            for index in _NATIVE_COUNTERS:  # the only counters the native pass changes
                delta = deltas[index]
                if delta:
                    name = STAT_FIELDS[index]
                    setattr(target, name, getattr(target, name) + delta)
        dirty[0] = 0


def _signed(value: int) -> int:
    return value - (1 << 64) if value >= 1 << 63 else value


def _signed32(value: int) -> int:
    return value - (1 << 32) if value >= 1 << 31 else value


def _memory(pipe: PipeState) -> CodeSource:
    return {
        (stage, slot): (entry.bundle, entry.owners)
        for stage, slots in pipe.code.items()
        for slot, entry in slots.items()
    }


def _image(code: CodeImage) -> CodeSource:
    source: dict[tuple[int, int], Any] = {}
    for index, bundle in enumerate(code.prologs):
        source[(PROLOG_STAGE, index)] = (bundle, None)
    for eu, bundles in enumerate(code.eus):
        for index, bundle in enumerate(bundles):
            source[(eu + 1, index)] = (bundle, None)
    for index, epilog in enumerate(code.epilogs):
        source[(EPILOG_STAGE, index)] = (epilog, None)
    return source


def _decode_code(code_options: bytes, profile: Any) -> CodeImage | None:
    """The code of the options (checked and canonical as decode_options requires), or None
    when it does not decode: the interpreter then reports why for every such packet."""
    n_code = 0
    at = 0
    while at + 4 <= len(code_options):
        at += 4 + (code_options[at + 3] & 0x1F) * 4
        n_code += 1
    # no stack: header and code options are in the same order in either format version
    head = bytes([profile.code_format << 4, 0, 0, n_code << 4]) + bytes(4) + b"\xff\xff\xff\xff"
    options = b"\xff\xf0\x01\x03" + head + code_options
    try:
        return decode_options(options, profile).code
    except DecodeError:
        return None
