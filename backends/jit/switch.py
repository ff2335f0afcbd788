"""The JIT's face: a simulator switch whose ingress runs as native code over batches.

Contract: :class:`JitSwitch` wraps a :class:`dpfc.backends.sim.Switch` (its tables, lane
memory, counters and RAND generators stay the switch's: the native code reads and writes
lane memory words in place and moves counters back after every batch). ``run_batch``
processes frames arriving on one port, in order, and gives a :class:`Batch` whose
``result(i)`` equals what ``Switch.process`` would have returned for frame i — outputs,
verdict, reason, the bundles run, the egress pointer — with the same memory, counters,
reports and RAND state after the batch. Packets the native path does not model
(:mod:`.runtime`) are run by the interpreter in their place in the order, with the
native state moved back and forth around them; ``deopts`` counts them. ``process`` is
``Switch.process`` for one frame (a trace is always the interpreter's).
"""

from __future__ import annotations

import ctypes
from array import array
from collections.abc import Collection, Sequence

from dpfc.backends.sim import PassResult, Switch, TopologyError, plain_ipv4_destination
from dpfc.encoding import decode_pc
from dpfc.isa import PC
from dpfc.target import TAGGED_FORMAT

from .compiled import CompiledPipe
from .layout import (
    D_LENGTH,
    D_OFFSET,
    D_QUEUE_DEPTH,
    D_TIMESTAMP,
    DEOPT,
    DESC_WORDS,
    DROP_DPF,
    FORWARD,
    FORWARD_NO_ROUTE,
    MULTICAST,
    NEED_CODE,
    PASS,
    PASS_NO_ROUTE,
    PTR_NONE,
    R_COPIES,
    R_COPY,
    R_EGRESS,
    R_EXEC,
    R_EXEC_COUNT,
    R_GAS,
    R_OUT_LEN,
    R_OUT_OFF,
    R_PORT,
    R_STATUS,
    R_TENANT,
    R_VALUE,
    RECIRCULATE,
    RESULT_WORDS,
    RETURN,
    SET_PORT,
    SET_PORT_NO_SUCH,
)
from .llvm import missing


class JitUnavailable(RuntimeError):
    """llvmlite cannot make native code here (the message says why)."""


OUTPUT_GROWTH = 256  # bytes an output may have over its input (the options grow to 252)


class Packed:
    """Frames held in one buffer, with the buffers their outputs and records go to: made
    once, run many times (each run overwrites the outputs of the last). Each frame has its
    pass's timestamp and queue depth (0 unless given)."""

    def __init__(
        self,
        frames: list[bytes],
        now_ns: Sequence[int] | None = None,
        queue_depths: Sequence[int] | None = None,
    ) -> None:
        self.frames = frames
        self.data = b"".join(frames)
        self.desc = array("i", bytes(4 * DESC_WORDS * len(frames)))
        offset = 0
        for k, frame in enumerate(frames):
            at = DESC_WORDS * k
            self.desc[at + D_OFFSET] = offset
            self.desc[at + D_LENGTH] = len(frame)
            offset += len(frame)
        if now_ns is not None:
            for k, value in enumerate(now_ns):
                self.desc[DESC_WORDS * k + D_TIMESTAMP] = _i32(value & 0xFFFF_FFFF)
        if queue_depths is not None:
            for k, value in enumerate(queue_depths):
                self.desc[DESC_WORDS * k + D_QUEUE_DEPTH] = _i32(value & 0xFFFF_FFFF)
        # room for multicast copies: three frames per packet on average (more: handed over)
        self.out = ctypes.create_string_buffer(3 * (len(self.data) + OUTPUT_GROWTH * len(frames)))
        self.res = array("i", bytes(4 * RESULT_WORDS * len(frames)))

    def hold(self, frame: bytes, now_ns: int, queue_depth: int) -> bool:
        """Hold ``frame`` alone in this one-frame buffer (no allocation), if it fits."""
        if len(frame) + OUTPUT_GROWTH >= len(self.out):
            return False
        self.frames = [frame]
        self.data = frame
        self.desc[D_LENGTH] = len(frame)
        self.desc[D_TIMESTAMP] = _i32(now_ns & 0xFFFF_FFFF)
        self.desc[D_QUEUE_DEPTH] = _i32(queue_depth & 0xFFFF_FFFF)
        return True

    def metadata(self, index: int) -> tuple[int, int]:
        """Frame ``index``'s timestamp and queue depth."""
        at = DESC_WORDS * index
        return self.desc[at + D_TIMESTAMP] & 0xFFFF_FFFF, self.desc[
            at + D_QUEUE_DEPTH
        ] & 0xFFFF_FFFF


def _i32(value: int) -> int:
    return value - (1 << 32) if value >= 1 << 31 else value


class Batch:
    """The outcome of one batch: native records, and the interpreter's results in between
    (valid until its :class:`Packed` runs again)."""

    def __init__(self, packed: Packed) -> None:
        self.done = len(packed.frames)  # frames run (fewer when it stopped after a loop)
        self.frames = packed.frames
        self.out = packed.out
        self.records = packed.res
        self.interpreted: dict[int, PassResult] = {}

    def __len__(self) -> int:
        return len(self.frames)

    def status(self, index: int) -> int:
        return self.records[index * RESULT_WORDS + R_STATUS]

    def result(self, index: int) -> PassResult:
        """Frame ``index``'s PassResult, as Switch.process gives it."""
        done = self.interpreted.get(index)
        if done is not None:
            return done
        base = index * RESULT_WORDS
        word = self.records
        status = word[base + R_STATUS]
        tenant = word[base + R_TENANT]
        value = word[base + R_VALUE]
        frame = b""
        length = word[base + R_OUT_LEN]
        if length and status != MULTICAST:
            start = word[base + R_OUT_OFF]
            frame = ctypes.string_at(ctypes.addressof(self.out) + start, length)
        executed = tuple(
            (entry >> 16, decode_pc(entry & 0xFFFF))
            for entry in word[base + R_EXEC : base + R_EXEC + word[base + R_EXEC_COUNT]]
        )
        egress_raw = word[base + R_EGRESS]
        egress: PC | None = None if egress_raw == PTR_NONE else decode_pc(egress_raw)
        port = word[base + R_PORT]
        if status == MULTICAST:
            copies = [
                (
                    word[base + R_COPY + 2 * k],
                    ctypes.string_at(
                        ctypes.addressof(self.out) + word[base + R_COPY + 2 * k + 1],
                        word[base + R_OUT_LEN] // (word[base + R_COPIES] + 1),
                    ),
                )
                for k in range(word[base + R_COPIES])
            ]
            result = PassResult(
                tenant,
                "multicast",
                f"multicast to group {value} ({len(copies)} copies)",
                outputs=copies,
            )
            result.executed = executed
            result.egress_ptr = egress
            return result
        if status == PASS_NO_ROUTE:  # pass rewrites no address: the input's destination
            address = plain_ipv4_destination(self.frames[index]) or b"\0\0\0\0"
            frame = address
        result = _result(status, tenant, value, word[base + R_GAS], port, frame)
        result.executed = executed
        result.egress_ptr = egress
        return result


def _result(status: int, tenant: int, value: int, gas: int, port: int, frame: bytes) -> PassResult:
    """The verdict and reason Steering.deliver gives for ``status`` (the native outcome)."""
    if status == DROP_DPF:
        return PassResult(tenant, "drop", "the DPF dropped the packet")
    if status == RECIRCULATE:
        return PassResult(
            tenant, "recirculate", f"recirculated (gas left {gas})", recirculated=frame
        )
    if status == RETURN:
        return PassResult(
            tenant, "return_to_sender", "returned to the sender", outputs=[(port, frame)]
        )
    if status == SET_PORT:
        return PassResult(tenant, "set_port", f"sent out of port {value}", outputs=[(port, frame)])
    if status == SET_PORT_NO_SUCH:
        return PassResult(tenant, "drop", f"set_port {value}: no such port")
    if status == FORWARD:
        return PassResult(
            tenant, "forward", f"forwarded to virtual destination {value}", outputs=[(port, frame)]
        )
    if status == FORWARD_NO_ROUTE:
        return PassResult(tenant, "drop", f"forward {value}: no route")
    if status == PASS:
        return PassResult(tenant, "pass", "passed", outputs=[(port, frame)])
    assert status == PASS_NO_ROUTE, status
    return PassResult(tenant, "drop", f"passed; no route to {'.'.join(str(b) for b in frame)}")


class JitSwitch:
    """Native ingress passes for a simulator switch (one engine per pipe and table
    generation); raises :class:`JitUnavailable` where llvmlite cannot run."""

    def __init__(self, switch: Switch) -> None:
        self.switch = switch
        missing_reason = missing()
        if missing_reason is not None:
            raise JitUnavailable(missing_reason)
        self.compiled: dict[int, CompiledPipe] = {}
        self._single: Packed | None = None  # the buffer of process(), reused
        self.deopts = 0
        self.native = 0
        self.compilations = 0

    def pipe(self, index: int) -> CompiledPipe:
        generation = self.switch.control.generation
        compiled = self.compiled.get(index)
        if compiled is not None and compiled.generation != generation:
            if compiled.same_code():
                compiled.refresh(generation)  # tables are data: nothing to compile
            else:
                compiled.sync_counters()
                compiled = None
        if compiled is None:
            compiled = CompiledPipe(self.switch.pipes[index], generation)
            self.compiled[index] = compiled
            self.compilations += 1
        return compiled

    def process(
        self, frame: bytes, port: int, *, now_ns: int = 0, queue_depth: int = 0, trace: bool = False
    ) -> PassResult:
        if trace:
            return self.switch.process(
                frame, port, now_ns=now_ns, queue_depth=queue_depth, trace=True
            )
        single = self._single
        if single is None or not single.hold(frame, now_ns, queue_depth):
            single = self._single = Packed([frame + bytes(2 * OUTPUT_GROWTH)])
            single.hold(frame, now_ns, queue_depth)
        return self.run_packed(single, port).result(0)

    def run_batch(
        self, frames: list[bytes], port: int, *, now_ns: int = 0, queue_depth: int = 0
    ) -> Batch:
        """``frames`` arriving on ``port`` one after the other, all with the same metadata."""
        count = len(frames)
        return self.run_packed(Packed(frames, [now_ns] * count, [queue_depth] * count), port)

    def run_frames(
        self,
        frames: list[bytes],
        port: int,
        now_ns: Sequence[int],
        queue_depths: Sequence[int],
        *,
        loop_ports: Collection[int] = (),
        loop_recirculate: bool = False,
    ) -> list[PassResult]:
        """The passes of ``frames`` arriving on ``port`` in turn, each with its timestamp and
        queue depth, up to and including the first whose frame comes back to this pipe (a
        recirculation when ``loop_recirculate``, an output on one of ``loop_ports``): the
        queue depths of the packets after it are not known yet (the Network's batches)."""
        packed = Packed(frames, now_ns, queue_depths)
        batch = self.run_packed(
            packed, port, loop_ports=loop_ports, loop_recirculate=loop_recirculate
        )
        return [batch.result(k) for k in range(batch.done)]

    def run_packed(
        self,
        packed: Packed,
        port: int,
        *,
        loop_ports: Collection[int] = (),
        loop_recirculate: bool = False,
    ) -> Batch:
        """The frames of ``packed`` arriving on ``port`` one after the other (see
        :meth:`run_frames` for the loops)."""
        switch = self.switch
        frames = packed.frames
        if not 0 <= port < switch.ports:
            raise TopologyError(f"switch {switch.name} has no port {port}")
        index = switch.pipe_of(port)
        compiled = self.pipe(index)
        lay = compiled.layout
        state = compiled.state
        for field, value in (
            (lay.ingress_port, port),
            (lay.switch_id, switch.switch_id),
            (lay.pipe_id, index),
            (lay.ports, switch.ports),
            (lay.out_off, 0),
            (lay.out_cap, len(packed.out)),
            (lay.loop_ports_low, sum(1 << p for p in loop_ports if p < 32)),
            (lay.loop_ports_high, sum(1 << (p - 32) for p in loop_ports if 32 <= p < 64)),
            (lay.loop_ports_beyond, int(any(p >= 64 for p in loop_ports))),
            (lay.loop_recirculate, int(loop_recirculate)),
            (lay.stopped, 0),
        ):
            state[field] = value - (1 << 32) if value >= 1 << 31 else value
        data, desc, out, res = packed.data, packed.desc, packed.out, packed.res
        batch = Batch(packed)
        rng = switch.rngs[index]
        compiled.load_random(rng)
        start, count = 0, len(frames)
        while start < count:
            stop = compiled.run(data, desc, start, count, out, res)
            self.native += stop - start
            if state[lay.stopped]:  # after a frame that comes back to this pipe
                state[lay.stopped] = 0
                batch.done = stop
                break
            if stop >= count:
                break
            status = res[stop * RESULT_WORDS + R_STATUS]
            if status == NEED_CODE:
                compiled.add_code(_code_options(frames[stop], switch.profile.code_format))
                start = stop
                continue
            assert status == DEOPT, status
            compiled.sync(rng)
            now_ns, queue_depth = packed.metadata(stop)
            result = switch.process(frames[stop], port, now_ns=now_ns, queue_depth=queue_depth)
            batch.interpreted[stop] = result
            self.deopts += 1
            if _comes_back(result, loop_ports, loop_recirculate):
                batch.done = stop + 1
                break
            if switch.control.generation != compiled.generation:  # cannot happen: no calls
                compiled = self.pipe(index)
            compiled.load_random(rng)
            start = stop + 1
        compiled.sync(rng)
        return batch


def _comes_back(result: PassResult, loop_ports: Collection[int], recirculate: bool) -> bool:
    if recirculate and result.recirculated is not None:
        return True
    return any(port in loop_ports for port, _ in result.outputs)


def _code_options(frame: bytes, code_format: int) -> bytes:
    """The code options of a frame the native parser accepted (it checked the layout)."""
    l3 = 18 if frame[12:14] == b"\x81\x00" else 14
    ihl = (frame[l3] & 0xF) * 4
    at = l3 + ihl + 8 + 8 + 16  # UDP, Geneve, the header option
    counts = frame[at - 16 + 4 + 3]
    n_code = counts >> 4
    if code_format == TAGGED_FORMAT:  # format version 2: the stack options come first
        for _ in range(counts & 0xF):
            at += 4 + (frame[at + 3] & 0x1F) * 4
    start = at
    for _ in range(n_code):
        at += 4 + (frame[at + 3] & 0x1F) * 4
    return bytes(frame[start:at])
