"""A small network of targets for the app tests: switches, cables between their ports, and
hosts at the other ports, all of one kind (simulated switches, or bmv2 processes).

Contract: :class:`Fabric` makes each switch with its factory, remembers which port leads
where, and :meth:`Fabric.send` carries a frame until it reaches hosts or is dropped: the
frames a switch sends out of a cabled port go into the switch at the other end. The test
is the cable, so the same code wires simulated switches and bmv2 processes. Hosts get
what reached them in ``received[host]``.

bmv2 cannot say "no more frames will come"; :meth:`send` tells it how many frames the first
switch should give (``expect``) and every later hop waits for one, at most ``HOP_WAIT``
seconds (a frame dropped by a later hop costs that wait).
"""

from __future__ import annotations

from collections import defaultdict, deque
from collections.abc import Callable

from dpfc.packet.layers import build_frame, build_inner
from dpfc.target import TargetProfile
from tests.conformance.harness import Target

HOP_WAIT = 1.0


class Fabric:
    def __init__(self, make: Callable[[str], Target], profile: TargetProfile) -> None:
        self.make = make
        self.profile = profile  # every switch's
        self.switches: dict[str, Target] = {}
        self.links: dict[tuple[str, int], tuple[str, int]] = {}
        self.hosts: dict[tuple[str, int], str] = {}
        self.received: dict[str, list[bytes]] = defaultdict(list)

    def switch(self, name: str) -> Target:
        if name not in self.switches:
            self.switches[name] = self.make(name)
        return self.switches[name]

    def cable(self, a: str, port_a: int, b: str, port_b: int) -> None:
        self.links[a, port_a] = (b, port_b)
        self.links[b, port_b] = (a, port_a)

    def host(self, name: str, switch: str, port: int) -> None:
        self.hosts[switch, port] = name

    def send(self, switch: str, port: int, frame: bytes, *, expect: int = 1) -> None:
        pending = deque([(switch, port, frame, expect)])
        while pending:
            name, in_port, data, count = pending.popleft()
            target = self.switches[name]
            if count < 0:  # a later hop: one frame, probably
                outputs = target.send(in_port, data, expect=1, timeout=HOP_WAIT)
            else:
                outputs = target.send(in_port, data, expect=count)
            for out_port, out in outputs:
                if (name, out_port) in self.links:
                    peer, peer_port = self.links[name, out_port]
                    pending.append((peer, peer_port, out, -1))
                elif (name, out_port) in self.hosts:
                    self.received[self.hosts[name, out_port]].append(out)

    def take(self, host: str) -> list[bytes]:
        frames, self.received[host] = self.received[host], []
        return frames


def frame(tenant: int, options: bytes, src_ip: str, dst_ip: str) -> bytes:
    return build_frame(
        tenant_id=tenant, options=options, inner=build_inner(b"app"), ip_src=src_ip, ip_dst=dst_ip
    )
