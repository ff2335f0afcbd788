"""Memory words a test names: initial words a case writes, words an expectation reads.

Contract: a key is an array the switch's linked code placed for the tenant (its symbol,
``counter.counters``, or its name when the tenant has one array of that name) or a lane,
``euE.laneL`` (``egress.euE.laneL``: the egress pipeline's), optionally ``@P`` for pipe P.
Array cells are indices (below the array's size), lane cells virtual addresses. Written
words go to every pipe the array is placed on (a lane: every pipe of the switch) unless
``@P`` names one; an expectation reads one pipe, so on a switch where the array (or lane)
is on several pipes it must name it. Unknown arrays are DPF4106, other bad keys DPF4105,
writes the switch refuses keep their DPF40xx code.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from dpfc.backends.scenario import (
    CODE_UNKNOWN_NAME,
    CODE_VALUE,
    Scenario,
    ScenarioBuilder,
    Table,
    quote,
)
from dpfc.link import MemoryRequest

from .spec import Words, memory_words

LANE = re.compile(r"^(?:(?P<egress>egress)\.)?eu(?P<eu>\d+)\.lane(?P<lane>\d+)$")


@dataclass(frozen=True)
class Cell:
    """One word an expectation reads: where, and what it must hold."""

    label: str  # "counter.counters[5]", "eu0.lane0[0x10]@1"
    path: str
    pipe: int
    eu: int
    lane: int
    pipeline: str
    vaddr: int
    expected: int


@dataclass(frozen=True)
class Place:
    pipes: tuple[int, ...]
    eu: int
    lane: int
    pipeline: str
    size: int | None  # an array's words (None: a lane, addressed by virtual address)


class MemoryAccess(ScenarioBuilder):
    """Resolves memory keys against a built scenario, writes initial words."""

    def place(self, scenario: Scenario, switch: str, tenant: int, key: str, path: str) -> Place:
        name, at, pipe_text = key.rpartition("@") if "@" in key else (key, "", "")
        pipe_count = len(scenario.network.switches[switch].pipes)
        pipe = None
        if at:
            if not pipe_text.isdigit() or int(pipe_text) >= pipe_count:
                self.fail(
                    CODE_VALUE,
                    f"{path}: after @ comes a pipe of switch {switch} (0..{pipe_count - 1})",
                )
            pipe = int(pipe_text)
        lane = LANE.match(name)
        if lane is not None:
            eu, number = int(lane.group("eu")), int(lane.group("lane"))
            profile = scenario.profile
            if eu >= profile.num_eus or number >= profile.lanes:
                self.fail(
                    CODE_VALUE,
                    f"{path}: {profile.name} has EUs 0..{profile.num_eus - 1} and lanes "
                    f"0..{profile.lanes - 1}",
                )
            pipeline = "egress" if lane.group("egress") else "ingress"
            pipes = tuple(range(pipe_count)) if pipe is None else (pipe,)
            return Place(pipes, eu, number, pipeline, None)
        request = self.array_request(scenario, switch, tenant, name, path)
        if pipe is not None and pipe not in request.pipes:
            self.fail(
                CODE_VALUE,
                f"{path}: `{request.array}` is on pipe(s) {', '.join(map(str, request.pipes))} "
                f"of switch {switch}, not {pipe}",
            )
        pipes = request.pipes if pipe is None else (pipe,)
        return Place(pipes, request.eu, request.lane, request.pipeline, request.size)

    def array_request(
        self, scenario: Scenario, switch: str, tenant: int, name: str, path: str
    ) -> MemoryRequest:
        """The tenant's array ``name`` (a symbol, or a name no other array of the tenant has)."""
        image = scenario.images.get(switch)
        mine = [r for r in (image[0].memory if image else ()) if r.tenant == tenant]
        short = [r for r in mine if r.array.rpartition(".")[2] == name]
        if not any(r.array == name for r in mine) and len({r.array for r in short}) == 1:
            name = short[0].array
        if not any(r.array == name for r in mine) and len({r.array for r in short}) > 1:
            listed = ", ".join(sorted({r.array for r in short}))
            self.fail(
                CODE_UNKNOWN_NAME, f"{path}: {quote(name)} is ambiguous: name one of {listed}"
            )
        return self.request(scenario, switch, tenant, name, path)

    def write_words(self, scenario: Scenario, switch: str, tenant: int, table: Table) -> None:
        """A case's initial ``memory``, written through the switch's control plane."""
        control = scenario.network.switches[switch].control
        for words in memory_words(self.fail, table):
            place = self.place(scenario, switch, tenant, words.key, words.path)
            for index, word in words.cells:
                self.check_index(place, words, index)
                with self.refusals(words.path):
                    control.write_memory(
                        tenant,
                        place.eu,
                        place.lane,
                        index,
                        [word],
                        pipes=list(place.pipes),
                        pipeline=place.pipeline,
                    )

    def check_index(self, place: Place, words: Words, index: int) -> None:
        if place.size is not None and index >= place.size:
            self.fail(
                CODE_VALUE,
                f"{words.path}: index {index} is beyond `{words.key}` ({place.size} words)",
            )

    def cells(self, scenario: Scenario, switch: str, tenant: int, words: Words) -> list[Cell]:
        """What an expectation of ``words`` reads: one pipe's words."""
        place = self.place(scenario, switch, tenant, words.key, words.path)
        if len(place.pipes) != 1:
            self.fail(
                CODE_VALUE,
                f"{words.path}: {quote(words.key)} is on pipes "
                f"{', '.join(map(str, place.pipes))}: name the one to read "
                f"({quote(words.key + '@' + str(place.pipes[0]))})",
            )
        out = []
        for index, word in words.cells:
            self.check_index(place, words, index)
            shown = f"{index}" if place.size is not None else f"{index:#x}"
            out.append(
                Cell(
                    f"{words.key.partition('@')[0]}[{shown}]",
                    words.path,
                    place.pipes[0],
                    place.eu,
                    place.lane,
                    place.pipeline,
                    index,
                    word,
                )
            )
        return out


__all__ = ["LANE", "Cell", "MemoryAccess", "Place"]
