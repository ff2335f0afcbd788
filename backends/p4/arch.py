"""The architecture a SwitchVM program is written for: everything v1model and TNA do differently.

Contract: the generators build one architecture-neutral model of the SwitchVM data plane
(:class:`Model`: headers, metadata, parser states, the ingress tables and the pass, the
egress rewrite of multicast copies, what the deparser emits) and ask an
:class:`Architecture` for every piece the architecture decides:

* the program's frame (:meth:`Architecture.assemble`): includes, the signatures of the
  parsers and controls, intrinsic metadata, checksums, deparsers and the package;
* the packet's fate (:meth:`~Architecture.send_to`, :meth:`~Architecture.drop`,
  :meth:`~Architecture.multicast`, :meth:`~Architecture.recirculate`) and what the
  switch tells the program (ingress port, timestamp, packet length, parser errors);
* state: how a register array is declared, read and updated (v1model's ``register.read`` /
  ``write``; TNA's ``Register`` with one ``RegisterAction`` per update), counters, the
  RAND generator and the per-lane HASH.

An architecture keeps every name the control plane uses (tables, actions, registers:
:mod:`.layout`), so one control's logic serves both. :data:`MEMORY_OPS` is the one
definition of what each memory opcode writes back; both architectures build from it.
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from dpfc.backends.p4.lang import Decl, Expr, Program, State, Stmt, mux
from dpfc.backends.p4.layout import Layout
from dpfc.isa import MemOp

PASS_COMMENT = "The SwitchVM pipeline of one pass (docs/simulator.md §1.1)."

# What a memory access writes back, from the word it read (``old``) and the lane's data;
# LOAD writes nothing back (the word stays).
MEMORY_OPS: tuple[tuple[MemOp, Callable[[Expr, Expr], Expr]], ...] = (
    (MemOp.STORE, lambda old, data: data),
    (MemOp.FAADD, lambda old, data: old + data),
    (MemOp.FAAND, lambda old, data: old & data),
    (MemOp.FAOR, lambda old, data: old | data),
    (MemOp.FAMAX, lambda old, data: mux(old.gt(data), old, data)),
    (MemOp.FAMIN, lambda old, data: mux(old.lt(data), old, data)),
)


@dataclass(frozen=True)
class Model:
    """The SwitchVM program without its architecture (built by :mod:`.program`)."""

    layout: Layout
    title: str  # comment lines that open the program
    headers: Sequence[Decl]
    metadata: Sequence[tuple[str, str]]  # (name, type) of metadata_t
    helpers: Sequence[Decl]  # functions shared by the controls
    parser: Sequence[State]  # the ingress parser's states, "start" first
    ingress_locals: Sequence[Decl]
    ingress: Sequence[Stmt]  # one pass (docs/simulator.md §1.1)
    egress_locals: Sequence[Decl]  # the rewrite of multicast copies
    egress: Sequence[Stmt]
    checksum_fields: Expr  # the IPv4 header fields the header checksum covers
    emits: Sequence[Expr]  # what the deparser emits, in order


class Architecture(ABC):
    """One P4 architecture (see the module docstring)."""

    name: str

    # -- the frame -----------------------------------------------------------------------------
    @abstractmethod
    def includes(self) -> str:
        """The ``#include`` lines."""

    @abstractmethod
    def preserved(self, type_: str) -> str:
        """The declared type of a metadata field kept across a recirculation."""

    def defines(self) -> dict[str, int]:
        """Preprocessor macros a front end must be given for the includes (p4test)."""
        return {}

    def extra_metadata(self, layout: Layout) -> list[tuple[str, str]]:
        """Metadata fields only this architecture needs (appended to metadata_t)."""
        del layout
        return []

    def egress_pass(self, runs: Expr) -> list[Stmt]:
        """Egress statements that send a frame for which ``runs`` holds back to the ingress
        once, with meta.eg_phase = 1 and meta.eg_port = its port, to run its egress DPF
        (docs/p4.md, "Egress DPFs"). The default: this architecture runs none."""
        del runs
        return []

    def ingress_start(self) -> list[Stmt]:
        """Statements that open the ingress pass (before anything reads the packet)."""
        return []

    def ingress_end(self, layout: Layout) -> list[Stmt]:
        """Statements that close the ingress pass (after the packet's fate is decided)."""
        del layout
        return []

    @abstractmethod
    def assemble(self, model: Model) -> Program:
        """The whole program: the model inside this architecture's frame."""

    # -- what the switch says about the packet -------------------------------------------------
    @abstractmethod
    def parser_failed(self) -> Expr:
        """True when the parser stopped on an error."""

    @abstractmethod
    def ingress_port(self) -> Expr:
        """The port the packet came in on (9 bits)."""

    @abstractmethod
    def timestamp_ns(self) -> Expr:
        """LOAD_MD timestamp: nanoseconds, the low 32 bits."""

    @abstractmethod
    def queue_depth(self) -> Expr:
        """LOAD_MD queue_depth as ingress can know it (32 bits)."""

    @abstractmethod
    def packet_length(self) -> Expr:
        """LOAD_MD packet_length: the bytes of the packet as it came (32 bits)."""

    @abstractmethod
    def replication_id(self) -> Expr:
        """In egress: which copy of a multicast packet this is (0: not a copy)."""

    # -- the packet's fate ---------------------------------------------------------------------
    @abstractmethod
    def send_to(self, port: Expr) -> Stmt:
        """Unicast out of ``port``."""

    @abstractmethod
    def drop(self) -> Stmt: ...

    @abstractmethod
    def multicast(self, group: Expr) -> Stmt:
        """Replicate to multicast group ``group`` (16 bits)."""

    @abstractmethod
    def recirculate(self) -> list[Stmt]:
        """Run the packet, as deparsed, through the pipeline again."""

    # -- state ---------------------------------------------------------------------------------
    @abstractmethod
    def constants(self, size: int, address: Expr) -> list[Decl]:
        """The ``constants`` array of ``size`` words and the action ``read_constant(in
        bit<8> index)`` that sets meta.old to the word at ``address`` (which reads index)."""

    @abstractmethod
    def random(self) -> list[Decl]:
        """The RAND generator and the action ``draw_random()`` that sets meta.rng."""

    @abstractmethod
    def counter(self, name: str, size: int, index: Expr) -> list[Decl]:
        """The array ``counter_<name>`` and the action ``count_<name>()`` that adds one to
        its word at ``index``."""

    @abstractmethod
    def hash_actions(self, layout: Layout) -> list[Decl]:
        """Every HASH unit and the actions that run them (see :meth:`hash_action`)."""

    @abstractmethod
    def hash_action(self, eu: int, lane: int) -> str:
        """The action that replaces meta.hash_in_<lane> by its hash, in EU ``eu``."""

    @abstractmethod
    def lane_memory(self, name: str, size: int, data: Expr, comment: str) -> list[Decl]:
        """A lane memory of ``size`` words whose updates write ``data`` (per MEMORY_OPS)."""

    @abstractmethod
    def memory_access(
        self, name: str, op: Expr, address: Expr, data: Expr, old: Expr
    ) -> list[Stmt]:
        """Access the memory at ``address`` with opcode ``op``: ``old`` gets the word as it
        was, the memory the word MEMORY_OPS makes of it and ``data`` (LOAD: no change).
        ``data`` is the one :meth:`lane_memory` was given."""


def key_name(key: Expr) -> str:
    """The control plane's name of a table key: its last member (``meta.pc[14:0]`` is
    ``pc``), as BF-RT names fields; :mod:`.bfrt` finds keys by these names."""
    text = key.p4().split("[", 1)[0]
    return text.rsplit(".", 1)[-1]


def parameter_names(params: Sequence[str]) -> list[str]:
    """The control plane's names of an action's parameters: ``"in bit<8> index"`` is
    ``index``, ``'@name("pass_") bit<1> pass'`` is ``pass_``."""
    named = re.compile(r'@name\("([^"]+)"\)')
    out = []
    for param in params:
        found = named.match(param)
        out.append(found.group(1) if found is not None else param.rsplit(" ", 1)[-1])
    return out
