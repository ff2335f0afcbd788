"""TNA (Tofino Native Architecture): the SwitchVM program for Tofino-1 (tna.p4) and Tofino-2
(t2na.p4), from the same model as v1model's.

Contract: :class:`Tna` (:mod:`.architecture`) implements
:class:`~dpfc.backends.p4.arch.Architecture` in TNA's idiom; the program passes p4c's front
and mid end (``p4test``) with TNA's includes (docs/p4.md gives the command). Where v1model's form has no TNA equivalent:

* a register is read and written by one ``RegisterAction`` (its stateful ALU runs once
  per packet): a lane memory has one action per memory opcode, chosen by the opcode;
  LOAD_CONST reads through one; RAND is TNA's ``Random`` extern (xorshift needs shifts a
  stateful ALU does not have), so RAND's values are not the simulator's;
* counters are tallied in metadata during the pass and added to their registers once,
  at its end (a counter may count several events of one packet: stack underflows);
* HASH has a ``Hash`` unit per EU and lane, with the lane's CRC (``CRCPolynomial`` from
  the profile's parameters: TNA bakes them in, nothing is set at run time);
* recirculation sends the packet to the recirculation port of its pipe (nothing of the
  metadata survives it: the packet's SwitchVM options carry the state); ``packet_length``
  is computed from the IPv4 header (TNA ingress is not told the length);
* the checksum is computed by the deparsers' ``Checksum`` externs, the egress one for
  the rewritten multicast copies (egress parses only Ethernet, VLAN and IPv4).

Control-plane names (tables, keys, actions, registers) are
:mod:`dpfc.backends.p4.layout`'s; every key carries an ``@name``
(:func:`~dpfc.backends.p4.arch.key_name`, :func:`.blocks.named_for_bfrt`) so BF-RT names
it plainly. The blocks TNA's pipeline has around the model (its deparsers with their
``Checksum``, the egress parser) are :mod:`.blocks`'. What the Tofino back end would
still refuse (one pass through too few stages, wide fields shifted by run-time amounts,
more than four RegisterActions on a register) is listed in docs/p4.md: p4test checks the
language and TNA's extern signatures, not the chip.
"""

from .architecture import Tna

__all__ = ["Tna"]
