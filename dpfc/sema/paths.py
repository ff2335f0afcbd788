"""The per-path rules of a DPF body: what may happen at most once on any path.

A path is one way through the body (a choice at every ``if``; loops unrolled). The body
checker (:mod:`.statements`) walks statements in execution order and tells a :class:`PathState`
what each one does; the state reports:

* the RMT rule — a second access to one array on a path (DPF5201), naming both accesses;
* a second steering action (DPF5202), ``drop_code()`` (DPF5203) or ``chain`` (DPF5204);
* more words pushed on a path than the epilog can push (DPF5210, 2 per lane);
* and warns of statements no path reaches, after ``return`` (DPF5218, a warning: such
  statements are checked for names and types, but their path events are ignored).

The state summarises all paths that reach a point: for each rule, the first statement that
used it on *some* path. That is exact for these rules: a path with two accesses exists iff,
at the second, some path reaching it has made the first (conditions are not evaluated, so
every branch is taken to be feasible). At a join the summaries are merged (union, and the
largest push count); ``return`` kills the paths that reach it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from dpfc.catalog import codes
from dpfc.diagnostics import Note, Span
from dpfc.sema.report import Reporter


def _earlier(a: Span, b: Span) -> Span:
    return a if a.start <= b.start else b


@dataclass
class PathState:
    report: Reporter
    max_push: int
    live: bool = True
    accesses: dict[str, tuple[str, Span]] = field(default_factory=dict)  # key -> (name, span)
    steer: tuple[str, Span] | None = None
    drop_code: Span | None = None
    chain: Span | None = None
    pushed: int = 0
    unreachable_reported: bool = False

    def fork(self) -> PathState:
        return PathState(
            self.report,
            self.max_push,
            self.live,
            dict(self.accesses),
            self.steer,
            self.drop_code,
            self.chain,
            self.pushed,
        )

    def merge(self, other: PathState) -> None:
        """Make this state describe the paths of both (a join after an ``if``)."""
        if not other.live:
            return
        if not self.live:
            self.__dict__.update(other.fork().__dict__)
            return
        for key, (name, span) in other.accesses.items():
            mine = self.accesses.get(key)
            self.accesses[key] = (name, span if mine is None else _earlier(mine[1], span))
        if other.steer is not None and (
            self.steer is None or other.steer[1].start < self.steer[1].start
        ):
            self.steer = other.steer
        for attr in ("drop_code", "chain"):
            theirs: Span | None = getattr(other, attr)
            mine_span: Span | None = getattr(self, attr)
            if theirs is not None:
                setattr(self, attr, theirs if mine_span is None else _earlier(mine_span, theirs))
        self.pushed = max(self.pushed, other.pushed)

    # -- events ---------------------------------------------------------------------------

    def statement(self, span: Span) -> None:
        """A statement starts; warn (once per block) when no path reaches it."""
        if self.live or self.unreachable_reported:
            return
        self.unreachable_reported = True
        self.report.warning(
            codes.UNREACHABLE_STATEMENT,
            "unreachable statement: every path before it ends in `return`",
            span,
        )

    def access(self, key: str, name: str, span: Span) -> None:
        if not self.live:
            return
        first = self.accesses.get(key)
        if first is None:
            self.accesses[key] = (name, span)
            return
        same = first[1].start == span.start and first[1].end == span.end
        self.report.error(
            codes.RMT_RULE,
            f"second access to `{name}` on this path: an array can be accessed at most once "
            "on any path (the RMT rule)",
            span,
            notes=(
                Note(
                    "the same access in an earlier iteration of the loop (loops are unrolled)"
                    if same
                    else "first access here",
                    first[1],
                ),
            ),
            hint="combine them into one access, e.g. `fetch_add(a[i], v)` instead of a load "
            "and a store",
        )

    def steering(self, name: str, span: Span) -> None:
        if not self.live:
            return
        if self.steer is not None:
            self.report.error(
                codes.STEER_TWICE,
                f"second steering action `{name}` on this path (at most one per path)",
                span,
                notes=(Note(f"`{self.steer[0]}` is chosen here first", self.steer[1]),),
            )
            return
        self.steer = (name, span)

    def set_drop_code(self, span: Span) -> None:
        if not self.live:
            return
        if self.drop_code is not None:
            self.report.error(
                codes.DROP_CODE_TWICE,
                "second `drop_code()` on this path (at most one per path)",
                span,
                notes=(Note("first `drop_code()` here", self.drop_code),),
            )
            return
        self.drop_code = span

    def set_chain(self, span: Span) -> None:
        if not self.live:
            return
        if self.chain is not None:
            self.report.error(
                codes.CHAIN_TWICE,
                "second `chain` on this path (a path chains to at most one DPF)",
                span,
                notes=(Note("first `chain` here", self.chain),),
            )
            return
        self.chain = span

    def push(self, count: int, span: Span) -> None:
        if not self.live:
            return
        self.pushed += count
        if self.pushed > self.max_push:
            self.report.error(
                codes.TOO_MANY_PUSHES,
                f"this path pushes {self.pushed} words; the epilog pushes at most "
                f"{self.max_push} (2 per lane of the target)",
                span,
            )
            self.pushed = -(1 << 30)  # reported: do not report every later push again

    def end(self) -> None:
        """``return``: the paths reaching here end."""
        self.live = False
