"""The simulator as a :class:`~dpfc.switch.SwitchControl`: what ``dpfc.deploy`` calls to
install an image on a simulated switch.

:class:`SimControl` is :class:`~dpfc.switch.LedgerControl` on the switch's own ledger
(``SimControl(switch.control)``): every request is validated and recorded by the
:class:`~dpfc.switch.RequestLedger` of its :class:`~.control.ControlPlane` — the same
rules the operator's calls and the P4 back ends pass — and changes nothing when it fails.
The ledger's tables are the pipes' states the data path reads, so :class:`SimDataPlane`
has nothing to carry but a new table generation (what the JIT compiled is stale) and the
lane words of reads and writes (which change no table). Memory calls name a ``pipeline`` (ingress by default):
each pipe's egress lane memories are other state than its ingress ones; code words,
permission entries and steering serve both pipelines (the simulator keeps one copy of
those tables).
"""

from __future__ import annotations

from collections.abc import Sequence

from dpfc.switch import Change, LedgerControl, WordsWritten

from .control import ControlPlane
from .memory import LaneMemory


class SimDataPlane:
    """What the simulator's data path needs of an accepted request (module docstring)."""

    def __init__(self, control: ControlPlane) -> None:
        self.control = control

    def apply(self, change: Change) -> None:
        if isinstance(change, WordsWritten):  # words in place: no table changes
            for pipe, addresses in change.physical:
                lane = self.control.pipes[pipe].memories(change.pipeline)[change.eu][change.lane]
                for address, value in zip(addresses, change.values, strict=True):
                    lane.words[address] = value
            return
        # the ledger recorded the change in the tables the data path reads
        self.control.generation += 1

    def read_words(
        self, pipe: int, pipeline: str, eu: int, lane: int, physical: Sequence[int]
    ) -> list[int]:
        words = self.control.pipes[pipe].memories(pipeline)[eu][lane].words
        return [words[address] for address in physical]


class SimControl(LedgerControl[LaneMemory]):
    """The control protocol on one simulated switch (``SimControl(switch.control)``)."""

    def __init__(self, control: ControlPlane) -> None:
        super().__init__(control.ledger, SimDataPlane(control))
        self.control = control


__all__ = ["SimControl", "SimDataPlane"]
