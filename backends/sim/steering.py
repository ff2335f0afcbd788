"""How a DPF's packet leaves the Machine: steering and delivery (§3.5), leaving the egress.

:class:`Steering` is a mixin of :class:`~.machine.Machine` (its methods stay methods of the
machine: no call is added on the per-packet path). ``steer`` checks the tenant's
permission for the epilog's action, spends gas on recirculation and deparses the new
SwitchVM header; ``deliver`` turns the action into a :class:`~.outcome.PassResult`
(forwarding and multicast entries, routes, ports); ``leave`` is the egress epilog's
outcome, where only pass and drop remain. They change only the tenant's counters and
reports; a header that cannot be encoded is a :class:`~.outcome.Fault`.
"""

from __future__ import annotations

from dpfc.encoding import EncodingError, SwitchVMHeader
from dpfc.isa import PC, CodeImage
from dpfc.packet import ParsedPacket
from dpfc.switch import Destination, Permissions, TenantStats
from dpfc.target import TargetProfile

from .deparse import DeparseError, codec_for, rebuild_frame, swap_addresses
from .outcome import (
    Context,
    EgressRun,
    EpilogDecision,
    Fault,
    PassResult,
    kept_pointer,
    route_plain,
    unauthorized_outcome,
)
from .state import PipeState


class Steering:
    """The steering and leaving methods of :class:`~.machine.Machine` (the attributes below
    are the machine's, set by its ``__init__``)."""

    pipe: PipeState
    profile: TargetProfile
    parsed: ParsedPacket
    header: SwitchVMHeader | None
    tenant: int
    entry: Permissions
    stats: TenantStats
    ctx: Context
    executed: list[tuple[int, PC]]

    # -- leaving the egress ----------------------------------------------------------------------
    def leave(self, effects: EpilogDecision, frame: bytes, port: int) -> EgressRun:
        """The egress epilog's outcome: the port is chosen, so only pass and drop remain."""
        executed = tuple(self.executed)
        action = effects.action
        if action not in ("pass", "drop"):
            raise Fault(
                f"steering action {action} in an egress DPF: the output port is already chosen "
                "(an egress DPF may pass or drop)"
            )
        header = self.header
        assert header is not None  # an egress DPF is named by a header's egress pointer
        new_header = SwitchVMHeader(
            app_id=header.app_id,
            dpf_ptr=kept_pointer(header.dpf_ptr, effects.code),
            egress_ptr=effects.pointer,
            gas=header.gas,  # only recirculation spends gas, and the egress cannot
            stack=tuple(effects.stack),
            code=effects.code,
            flags=header.flags,
        )
        out = self.deparse(new_header, frame)
        if action == "drop":
            self.stats.dropped += 1
            return EgressRun(
                port,
                self.pipe.index,
                self.tenant,
                "drop",
                "the egress DPF dropped the packet",
                None,
                executed,
            )
        return EgressRun(
            port, self.pipe.index, self.tenant, "pass", f"left by port {port}", out, executed
        )

    def deparse(self, header: SwitchVMHeader, frame: bytes) -> bytes:
        """``frame`` with ``header``'s options; a Fault when they cannot be encoded."""
        try:
            # a pure function of the header: memoised (a switch sends the same options often)
            options = codec_for(self.profile).encode(header)
            return rebuild_frame(frame, self.parsed, options)
        except EncodingError as exc:
            raise Fault(f"the outgoing SwitchVM options cannot be encoded: {exc.message}") from None
        except DeparseError as exc:
            raise Fault(str(exc)) from None

    # -- steering (§3.5) -----------------------------------------------------------------------
    def steer(
        self,
        action: str,
        value: int,
        stack: list[int],
        new_ptr: PC | None,
        code: CodeImage,
        frame: bytes,
    ) -> PassResult:
        stats, entry, tenant = self.stats, self.entry, self.tenant
        executed = tuple(self.executed)
        gas = self.header.gas if self.header is not None else self.profile.default_gas
        if (action == "set_port" and not entry.privileged) or (
            action == "recirculate" and not entry.recirculate
        ):
            stats.refused += 1
            detail = f"steering action {action} needs a permission tenant {tenant} does not have"
            self.pipe.report(tenant, "refused", detail)
            return unauthorized_outcome(
                self.pipe, frame, self.parsed, entry, stats, detail, executed
            )
        if action == "recirculate":
            if gas == 0:
                stats.gas_exhausted += 1
                stats.dropped += 1
                detail = "recirculation with no gas left"
                self.pipe.report(tenant, "gas", detail)
                return PassResult(tenant, "drop", detail, executed=executed)
            gas -= 1
        changed = self.header is not None or stack or new_ptr is not None or action == "recirculate"
        egress_ptr = None
        if changed:
            egress_ptr = kept_pointer(self.header.egress_ptr if self.header else None, code)
            new_header = SwitchVMHeader(
                app_id=self.header.app_id if self.header is not None else entry.app_id,
                dpf_ptr=new_ptr,
                egress_ptr=egress_ptr,
                gas=gas,
                stack=tuple(stack),
                code=code,
                flags=self.header.flags if self.header is not None else 0,
            )
            out = self.deparse(new_header, frame)
        else:
            out = frame
        result = self.deliver(action, value, out, gas, frame, executed)
        if result.egress_ptr is None:  # a refusal that passes `frame` has set its own
            result.egress_ptr = egress_ptr
        return result

    def deliver(
        self,
        action: str,
        value: int,
        out: bytes,
        gas: int,
        frame: bytes,
        executed: tuple[tuple[int, PC], ...],
    ) -> PassResult:
        """Send ``out`` (the deparsed frame) as the steering ``action`` says."""
        stats, tenant = self.stats, self.tenant
        if action == "drop":
            stats.dropped += 1
            return PassResult(tenant, "drop", "the DPF dropped the packet", executed=executed)
        if action == "recirculate":
            stats.recirculated += 1
            return PassResult(
                tenant,
                "recirculate",
                f"recirculated (gas left {gas})",
                recirculated=out,
                executed=executed,
            )
        if action == "return_to_sender":
            stats.returned += 1
            return PassResult(
                tenant,
                "return_to_sender",
                "returned to the sender",
                outputs=[(self.ctx.ingress_port, swap_addresses(out))],
                executed=executed,
            )
        if action == "set_port":
            if value >= self.ctx.ports:
                stats.dropped += 1
                return PassResult(
                    tenant, "drop", f"set_port {value}: no such port", executed=executed
                )
            stats.forwarded += 1
            return PassResult(
                tenant,
                "set_port",
                f"sent out of port {value}",
                outputs=[(value, out)],
                executed=executed,
            )
        if action == "forward":
            destination = self.pipe.forwarding.get(tenant, {}).get(value)
            if destination is None:
                return self.no_entry(f"forward to virtual destination {value}", frame, executed)
            sent = self.send(destination, out)
            if sent is None:
                stats.dropped += 1
                return PassResult(tenant, "drop", f"forward {value}: no route", executed=executed)
            stats.forwarded += 1
            return PassResult(
                tenant,
                "forward",
                f"forwarded to virtual destination {value}",
                outputs=[sent],
                executed=executed,
            )
        if action == "multicast":
            group = self.pipe.multicast.get(tenant, {}).get(value)
            if group is None:
                return self.no_entry(f"multicast to group {value}", frame, executed)
            copies = [c for c in (self.send(d, out) for d in group) if c is not None]
            stats.multicast += 1
            return PassResult(
                tenant,
                "multicast",
                f"multicast to group {value} ({len(copies)} copies)",
                outputs=copies,
                executed=executed,
            )
        stats.passed += 1  # pass: continue along the route
        routed = route_plain(self.pipe, out, "passed", tenant)
        routed.executed = executed
        if routed.verdict == "drop":
            stats.passed -= 1
            stats.dropped += 1
        return routed

    def no_entry(self, what: str, frame: bytes, executed: tuple[tuple[int, PC], ...]) -> PassResult:
        self.stats.refused += 1
        detail = f"{what}: tenant {self.tenant} has no such steering entry"
        self.pipe.report(self.tenant, "refused", detail)
        return unauthorized_outcome(
            self.pipe, frame, self.parsed, self.entry, self.stats, detail, executed
        )

    def send(self, destination: Destination, frame: bytes) -> tuple[int, bytes] | None:
        out = rebuild_frame(
            frame, None, None, ip_dst=destination.ip_dst, eth_dst=destination.eth_dst
        )
        port = destination.port
        if port is None:
            address = destination.ip_dst
            assert address is not None
            port = self.pipe.routes.get(address, self.pipe.default_port)
            if port is None:
                return None
        return port, out
