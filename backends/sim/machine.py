"""The Machine: the registers, stack and code of one DPF execution, and its pipeline.

:class:`Machine` runs one DPF on one packet in the ingress (``run``: prolog, EUs, epilog,
steering) or the egress (``run_egress``: the same, then leaving by the chosen port). Its
stage methods are in :mod:`.stages` and its steering and leaving methods in
:mod:`.steering`, mixed in so that every one stays a method of the machine. It raises
:class:`~.outcome.Fault` when the DPF cannot continue; the callers (:mod:`.execute`) turn
that into a drop.
"""

from __future__ import annotations

from dpfc.isa import EPILOG_STAGE, PC, PROLOG_STAGE, Bundle, CodeImage, EpilogBundle
from dpfc.packet import ParsedPacket
from dpfc.switch import Permissions, RandomSource, TenantStats
from dpfc.target import TargetProfile

from .outcome import Context, EgressRun, PassResult, egress_unauthorized, unauthorized_outcome
from .stages import Stages, bundle_plan
from .state import PipeState
from .steering import Steering
from .trace import PacketTrace


class Machine(Stages, Steering):
    """The registers, stack and code of one DPF execution, in the ingress or the egress
    pipeline (``pipeline``): the egress one uses the pipe's egress lane memories and its
    NEXT_PC sets the egress pointer."""

    def __init__(
        self,
        pipe: PipeState,
        parsed: ParsedPacket,
        entry: Permissions,
        stats: TenantStats,
        ctx: Context,
        rng: RandomSource,
        tracer: PacketTrace | None,
        *,
        pipeline: str = "ingress",
    ) -> None:
        self.pipe = pipe
        self.pipeline = pipeline
        self.memories = pipe.memories(pipeline)
        self.profile: TargetProfile = pipe.profile
        self.parsed = parsed
        self.header = parsed.header
        self.tenant = parsed.tenant_id
        self.entry = entry
        self.stats = stats
        self.ctx = ctx
        self.rng = rng
        self.tracer = tracer
        self.lanes = self.profile.lanes
        self.regs = [0] * (2 * self.lanes)  # zeroed for every packet: A0..A(L-1), B0..B(L-1)
        self.stack = list(self.header.stack) if self.header is not None else []
        self.code: CodeImage = self.header.code if self.header is not None else CodeImage()
        self.executed: list[tuple[int, PC]] = []
        if tracer is not None:
            tracer.lanes = self.lanes
            tracer.code = self.code

    # -- the pipeline --------------------------------------------------------------------------
    def run(self, pointer: PC, frame: bytes) -> PassResult:
        prolog = self.fetch(PROLOG_STAGE, pointer)
        assert isinstance(prolog, Bundle)
        refused = self.refusal(prolog)
        if refused is not None:
            return unauthorized_outcome(
                self.pipe, frame, self.parsed, self.entry, self.stats, refused, tuple(self.executed)
            )
        self.stats.executed += 1
        epilog, pc = self.execute(prolog, pointer)
        effects = self.run_epilog(epilog, pc)
        return self.steer(
            effects.action, effects.value, effects.stack, effects.pointer, effects.code, frame
        )

    def run_egress(self, pointer: PC, frame: bytes) -> EgressRun:
        """The egress DPF at ``pointer`` on a frame leaving by ``ctx.egress_port``."""
        prolog = self.fetch(PROLOG_STAGE, pointer)
        assert isinstance(prolog, Bundle)
        port = self.ctx.egress_port
        assert port is not None
        refused = self.refusal(prolog)
        if refused is not None:
            return egress_unauthorized(
                self.pipe.index,
                port,
                frame,
                self.tenant,
                self.entry,
                self.stats,
                refused,
                tuple(self.executed),
            )
        self.stats.egress += 1
        epilog, pc = self.execute(prolog, pointer)
        return self.leave(self.run_epilog(epilog, pc), frame, port)

    def refusal(self, prolog: Bundle) -> str | None:
        """Why the tenant may not run this prolog (LOAD_MD without the metadata bit, R5),
        counted and reported; None when it may."""
        if self.entry.metadata or not bundle_plan(prolog, self.lanes).reads_metadata:
            return None
        self.stats.refused += 1
        detail = f"tenant {self.tenant} may not read switch metadata (LOAD_MD)"
        self.pipe.report(self.tenant, "refused", detail)
        return detail

    def execute(self, prolog: Bundle, pointer: PC) -> tuple[EpilogBundle, PC]:
        """The prolog and the EUs; the epilog bundle they lead to, and its PC."""
        pc = self.run_prolog(prolog, pointer)
        halted = False
        for eu in range(self.profile.num_eus):
            bundle = self.fetch(eu + 1, pc)
            assert isinstance(bundle, Bundle)
            pc, halted = self.run_eu(eu, bundle, pc)
            if halted:
                break
        epilog = self.fetch(EPILOG_STAGE, pc)
        assert isinstance(epilog, EpilogBundle)
        return epilog, pc
