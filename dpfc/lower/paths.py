"""The state of the lowering along a group of paths: locals, epilog, pending branch edge.

Contract: :class:`State` is one group of paths through the DPF being lowered: the block its
code goes to (or the :class:`PendingEdge` that block will hang off), the scopes of locals
(:data:`Binding`: an SSA value, or a loop variable's value) and the :class:`Epilog` written
so far. :meth:`Epilog.shape` says which paths may share a join block;
:func:`common_actions` gives a joined epilog its action statements. :func:`loop_values` and
:func:`local_names` show a state's scopes to the constant evaluator.

Not responsible for creating blocks or instructions (:mod:`dpfc.lower.builder`), nor for
joining states into a block with phis (:mod:`dpfc.lower.lower`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from dpfc import ir
from dpfc.diagnostics import Span
from dpfc.ir import Instr

Binding = Instr | int  # an SSA value, or a loop variable's value


def common_actions(spans: list[ir.ActionSpans], branch: Span | None) -> ir.ActionSpans:
    """Each action's statement where all ``spans`` agree on it, else ``branch``: the ``if``
    whose arms wrote it in different statements."""

    def common(values: list[Span | None]) -> Span | None:
        return values[0] if all(v == values[0] for v in values) else branch

    return ir.ActionSpans(
        push=common([s.push for s in spans]),
        steer=common([s.steer for s in spans]),
        chain=common([s.chain for s in spans]),
        drop_code=common([s.drop_code for s in spans]),
    )


@dataclass
class Epilog:
    """The epilog statements of a path so far: what its :class:`~dpfc.ir.core.Exit` carries."""

    push: list[Instr] = field(default_factory=list)
    steer: str | None = None
    steer_value: Instr | None = None
    chain: str | None = None
    drop_code: bool = False
    # The statements of the actions. Where joining paths wrote an action in different
    # statements (`forward(j)` / `forward(i)` in the arms of an `if`), the joined epilog
    # names the `if` for it: the statement that caused it, never the wrong arm.
    actions: ir.ActionSpans = field(default_factory=ir.ActionSpans)

    def copy(self) -> Epilog:
        return Epilog(
            list(self.push),
            self.steer,
            self.steer_value,
            self.chain,
            self.drop_code,
            self.actions,
        )

    def shape(self) -> tuple[int, str | None, bool, str | None, bool]:
        """What must agree for two paths to share a block (values may differ: phis)."""
        return (len(self.push), self.steer, self.steer_value is None, self.chain, self.drop_code)


@dataclass
class PendingEdge:
    """A branch edge with no block yet (``if`` without ``else``): patched when needed."""

    br: ir.Br
    then_side: bool
    source: str  # the label of the block ending in ``br``
    label: str  # the label to give a block created for this edge alone


@dataclass
class State:
    """One group of paths being lowered: where code goes, the locals, the epilog so far."""

    block: ir.Block | None
    env: list[dict[str, Binding]]
    epilog: Epilog
    edge: PendingEdge | None = None

    def fork(self, block: ir.Block | None, edge: PendingEdge | None = None) -> State:
        return State(block, [dict(s) for s in self.env], self.epilog.copy(), edge)

    def lookup(self, name: str) -> Binding | None:
        for scope in reversed(self.env):
            if name in scope:
                return scope[name]
        return None

    def rebind(self, name: str, value: Binding) -> None:
        for scope in reversed(self.env):
            if name in scope:
                scope[name] = value
                return
        raise AssertionError(f"assignment to unbound `{name}`")  # the checker prevents it


def loop_values(state: State) -> dict[str, int]:
    """The loop variables visible in ``state`` (a local of the same name hides one)."""
    values: dict[str, int] = {}
    for scope in state.env:
        for name, value in scope.items():
            if isinstance(value, int):
                values[name] = value
            else:
                values.pop(name, None)
    return values


def local_names(state: State) -> Callable[[str], bool]:
    """Whether a name is an SSA local of ``state`` (not a loop variable, not unbound)."""

    def is_local(name: str) -> bool:
        found = state.lookup(name)
        return found is not None and not isinstance(found, int)

    return is_local
