"""The architecture seam of the stage-structured program: what TNA and v1model write apart.

Contract: the builders (:mod:`.eu`, :mod:`.ends`, :mod:`.parser`, :mod:`.program`) build
one model of the stages and ask a :class:`StagedArch` for every piece an architecture
decides, in the manner of :class:`dpfc.backends.p4.arch.Architecture` for the old program:

* the frame: includes, the parser's and the ingress's parameters, the parser's first
  statements, metadata only the architecture needs, pragmas before the ingress, the
  statements that close the ingress, and the blocks after it (:meth:`StagedArch.frame`);
* what the switch says (ingress port, timestamp) and the packet's fate (unicast,
  multicast, drop, recirculation), with the types of a port and a group as action data;
* the units: an identity move, the lane's CRC, a random word, a lane memory and the
  access of one of its :data:`.externs.REGISTER_ACTIONS`, and ``min`` / ``max``.

A unit is a :data:`Unit`: the declarations it needs (TNA: a ``Hash``, ``Random`` or
``Register`` with its ``RegisterAction`` s; v1model: a ``register`` or nothing) and the
statements that use it, so that an architecture whose hash, random and register calls are
statements (v1model) and one whose calls are expressions (TNA) fit the same builders.
Names the control plane sees (tables, keys, actions and their parameters) never depend
on the architecture: :class:`StagedTna` (:mod:`.tna`) and :class:`StagedV1Model`
(:mod:`.v1model`) render the same tables.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence

from dpfc.backends.p4.lang import Decl, Expr, Stmt
from dpfc.target import HashFunction

from .plan import StagePlan

# The declarations of a unit and the statements that use it.
Unit = tuple[list[Decl], list[Stmt]]


class StagedArch(ABC):
    """One architecture of the stage-structured program (see the module docstring)."""

    name: str
    ingress_name: str  # the ingress control, which qualifies the control plane's names
    port_type: str  # an egress port as action data (9 bits)
    group_type: str  # a multicast group as action data (16 bits)

    # -- the frame -----------------------------------------------------------------------------
    @abstractmethod
    def includes(self) -> str:
        """The ``#include`` lines."""

    @abstractmethod
    def parser_params(self) -> list[str]: ...

    @abstractmethod
    def parser_start(self) -> list[Stmt]:
        """What the ``start`` state does before the outer headers (intrinsic metadata)."""

    @abstractmethod
    def ingress_params(self) -> list[str]: ...

    def extra_metadata(self) -> list[tuple[str, str]]:
        """Metadata fields only this architecture needs (appended to metadata_t)."""
        return []

    def pragmas(self, plan: StagePlan) -> list[Decl]:
        """Declarations between the parser and the ingress (TNA: PHV pragmas)."""
        del plan
        return []

    def ingress_start(self) -> list[Stmt]:
        """Statements that open the ingress (before the permissions stage)."""
        return []

    def ingress_end(self) -> list[Stmt]:
        """Statements that close the ingress (after steering decided the packet's fate)."""
        return []

    def same_stage(self, tables: Sequence[str]) -> list[str]:
        """Annotations of a table that may share a stage with ``tables`` although both can
        drop the packet (TNA: a write of the same value to ``drop_ctl``)."""
        del tables
        return []

    @abstractmethod
    def frame(self) -> list[Decl]:
        """Everything after the ingress: deparsers, egress, the package."""

    # -- what the switch says, the packet's fate -----------------------------------------------
    @abstractmethod
    def ingress_port(self) -> Expr:
        """The port the packet came in on (9 bits)."""

    @abstractmethod
    def timestamp(self) -> Expr:
        """LOAD_MD timestamp: nanoseconds (the identity move keeps the low 32 bits)."""

    @abstractmethod
    def send_to(self, port: Expr) -> Stmt:
        """Unicast out of ``port``."""

    @abstractmethod
    def multicast(self, group: Expr) -> Stmt:
        """Replicate to multicast group ``group``."""

    @abstractmethod
    def drop(self) -> Stmt:
        """Drop the packet, whatever else the pass decides later."""

    @abstractmethod
    def recirculate(self) -> list[Stmt]:
        """Send the packet, as deparsed, through the ingress again."""

    # -- units ---------------------------------------------------------------------------------
    @abstractmethod
    def identity(self, unit: str, target: Expr, source: Expr, width: int = 32) -> Unit:
        """``target`` (``width`` bits) gets ``source``, its low bits if wider."""

    @abstractmethod
    def crc(self, unit: str, function: HashFunction, target: Expr, source: Expr) -> Unit:
        """``target`` gets ``function`` (a 32-bit CRC) of the word ``source``."""

    @abstractmethod
    def random(self, unit: str, target: Expr) -> Unit:
        """``target`` gets a random 32-bit word."""

    @abstractmethod
    def lane_memory(
        self, unit: str, index_unit: str, size: int, op: Expr, data: Expr
    ) -> list[Decl]:
        """The lane memory ``unit`` of ``size`` words whose accesses write what their opcode
        ``op`` makes of the word and ``data`` (:data:`.externs.REGISTER_ACTIONS`), and what
        its index needs (``index_unit``)."""

    @abstractmethod
    def memory_access(
        self,
        unit: str,
        index_unit: str,
        action: str,
        index: Sequence[tuple[Expr, int]],
        op: Expr,
        data: Expr,
        target: Expr,
    ) -> list[Stmt]:
        """Run ``unit``'s register action ``action`` at the XOR16 of ``index`` (fields with
        their widths: the XOR of their 16-bit words): ``target`` gets the word as it was. ``op`` and ``data`` are the
        ones :meth:`lane_memory` was given."""

    @abstractmethod
    def minimum(self, a: Expr, b: Expr) -> Expr:
        """The unsigned minimum of two words."""

    @abstractmethod
    def maximum(self, a: Expr, b: Expr) -> Expr:
        """The unsigned maximum of two words."""


__all__ = ["StagedArch", "Unit"]
