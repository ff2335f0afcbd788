"""Code memory of one image: slot allocation with sharing, and placing a DPF's bundles.

Contract of :class:`CodeMemory`: a word goes to a slot of its stage that is free on every
pipe asked for (first fit), unless a slot of that stage already holds the same word and
can take the extra pipes, in which case the slot is shared (one more user). Slots of the
base image never move. Demand beyond ``code_slots_per_stage`` is counted, not refused on
the spot, so the error can say by how much each stage overflows (:meth:`overflows`).

:func:`place_program` relocates a DPF's in-switch bundles bundle by bundle from the epilog
back to the prolog (the install order): a bundle's successors are placed before it, so its
word — with the successors' final slots — is known when it is placed, and identical
bundles with identical successors share one slot whatever DPF, module or tenant they
come from.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace

from dpfc.encoding import encode_slot, stage_kind
from dpfc.isa import PC, PROLOG_STAGE, EpilogBundle, StageBundle
from dpfc.link.image import CodeSlot, install_rank
from dpfc.machine import MachineProgram, move_pcs, pc_fields
from dpfc.target import TargetProfile


@dataclass
class _Slot:
    word: bytes | None  # None: reserved, its word comes later
    pipes: set[int]
    users: list[str]
    base: bool = False  # in the base image (a new user may share it, nothing may move it)
    private: bool = False  # its code is one instance's alone


@dataclass
class SlotConflict(Exception):
    """A pinned slot holds other code."""

    stage: int
    slot: int
    users: tuple[str, ...]


@dataclass
class CodeMemory:
    profile: TargetProfile
    pipes: int
    stages: dict[int, dict[int, _Slot]] = field(default_factory=dict)
    by_word: dict[tuple[int, bytes], list[int]] = field(default_factory=dict)
    hints: dict[tuple[int, frozenset[int]], int] = field(default_factory=dict)
    overflow: dict[tuple[int, int], int] = field(default_factory=dict)  # (stage, pipe) -> n

    def load(self, base: Iterable[CodeSlot]) -> None:
        for slot in base:
            self.stages.setdefault(slot.stage, {})[slot.slot] = _Slot(
                slot.word, set(slot.pipes), list(slot.users), base=True
            )
            self.by_word.setdefault((slot.stage, slot.word), []).append(slot.slot)

    def _free(self, stage: int, index: int, pipes: frozenset[int]) -> bool:
        # A slot holds one word (one _Slot) on all of its pipes: a slot taken on other pipes
        # is not free for another word, or that word would be merged into the slot there.
        return index not in self.stages.get(stage, {})

    def place(
        self,
        stage: int,
        word: bytes,
        pipes: frozenset[int],
        user: str,
        at: int | None = None,
        replacing: str | None = None,
        private: bool = False,
    ) -> int:
        """The slot ``word`` occupies for ``user`` on ``pipes`` (see the module docstring);
        ``at`` pins the slot (SlotConflict when it holds another word, unless ``replacing``
        is its only user: an in-place replacement overwrites it)."""
        table = self.stages.setdefault(stage, {})
        if at is not None:
            taken = table.get(at)
            if taken is not None and taken.word is None and user in taken.users:
                taken.word = word  # the reservation is filled
                self.by_word.setdefault((stage, word), []).append(at)
                return at
            if taken is not None and replacing is not None and set(taken.users) == {replacing}:
                if taken.word is not None and not taken.private:
                    self.by_word[(stage, taken.word)].remove(at)
                table[at] = _Slot(word, set(pipes), [user])
                self.by_word.setdefault((stage, word), []).append(at)
                return at
            if taken is not None and taken.word != word and taken.pipes & pipes:
                raise SlotConflict(stage, at, tuple(taken.users))
            return self._take(stage, at, word, pipes, user)
        shared = None if private else self._shared(stage, word, pipes)
        if shared is not None:
            return self._take(stage, shared, word, pipes, user)
        index = self._first_free(stage, pipes)
        if index is not None:
            return self._take(stage, index, word, pipes, user, private)
        for pipe in pipes:
            self.overflow[(stage, pipe)] = self.overflow.get((stage, pipe), 0) + 1
        # Counted, not placed: a slot beyond the memory keeps the relocation going so that
        # every overflow is counted; the image is refused before it is written.
        return min(self.profile.code_slots_per_stage + self.overflow[(stage, min(pipes))], 0x7FFF)

    def reserve(self, stage: int, pipes: frozenset[int], user: str) -> int:
        """A free slot held for ``user``, whose word :meth:`place` gives later (``at``)."""
        index = self._first_free(stage, pipes)
        if index is None:
            return self.place(stage, b"", pipes, user)  # counted as an overflow
        self.stages.setdefault(stage, {})[index] = _Slot(None, set(pipes), [user])
        return index

    def _shared(self, stage: int, word: bytes, pipes: frozenset[int]) -> int | None:
        """A slot that holds ``word`` on ``pipes``, or that can extend to the missing ones
        (the slot is free there)."""
        table = self.stages.get(stage, {})
        for index in self.by_word.get((stage, word), ()):
            extra = frozenset(pipes - table[index].pipes)
            if not extra or self._free(stage, index, extra):
                return index
        return None

    def _first_free(self, stage: int, pipes: frozenset[int]) -> int | None:
        # Slots only become free when a user is dropped (which clears the hints), so the
        # first free slot for a set of pipes only moves forward: resume where the last
        # search ended.
        hint_key = (stage, pipes)
        index = self.hints.get(hint_key, 0)
        while index < self.profile.code_slots_per_stage and not self._free(stage, index, pipes):
            index += 1
        self.hints[hint_key] = index
        return index if index < self.profile.code_slots_per_stage else None

    def _take(
        self,
        stage: int,
        index: int,
        word: bytes,
        pipes: frozenset[int],
        user: str,
        private: bool = False,
    ) -> int:
        table = self.stages[stage]
        here = table.get(index)
        if here is None:
            table[index] = _Slot(word, set(pipes), [user], private=private)
            if not private:
                self.by_word.setdefault((stage, word), []).append(index)
        else:
            here.pipes |= pipes
            if user not in here.users:
                here.users.append(user)
        return index

    def rename_user(self, old: str, new: str) -> None:
        for table in self.stages.values():
            for here in table.values():
                here.users = [new if u == old else u for u in here.users]

    def drop_user(self, user: str) -> None:
        """``user`` no longer uses any slot; slots nobody uses are freed."""
        for stage, table in self.stages.items():
            for index in [i for i, here in table.items() if user in here.users]:
                here = table[index]
                here.users.remove(user)
                if not here.users:
                    del table[index]
                    if here.word is not None and not here.private:
                        self.by_word[(stage, here.word)].remove(index)
                    self.hints.clear()  # a slot became free

    def slots(self) -> tuple[CodeSlot, ...]:
        """Every slot, by stage (install order) and slot number."""
        num_eus = self.profile.num_eus
        assert all(h.word is not None for t in self.stages.values() for h in t.values())
        return tuple(
            CodeSlot(
                stage, index, here.word or b"", tuple(sorted(here.pipes)), tuple(sorted(here.users))
            )
            for stage in sorted(self.stages, key=lambda s: install_rank(s, num_eus))
            for index, here in sorted(self.stages[stage].items())
        )

    def used(self, stage: int, pipe: int) -> int:
        return sum(1 for here in self.stages.get(stage, {}).values() if pipe in here.pipes)


@dataclass(frozen=True)
class Placement:
    """Where ``place_program`` put a DPF: local (stage, index) -> slot, and the program
    with every local in-switch PC moved to its slot (in-packet bundles keep their index)."""

    slots: Mapping[tuple[int, int], int]
    program: MachineProgram


def place_program(
    memory: CodeMemory,
    program: MachineProgram,
    pipes: frozenset[int],
    user: str,
    chains: Mapping[str, PC],
    *,
    entry_at: int | None = None,
    replacing: str | None = None,
    private: bool = False,
) -> Placement:
    """Place the in-switch bundles of ``program`` (local slots) and relocate the whole
    program: local switch PCs to their slots, the NEXT_PC of each relocation's epilog to
    ``chains[label]``; other PCs (absolute addresses of hand-written code) are kept.
    ``entry_at`` pins the prolog; with ``replacing``, a pinned slot whose only user is that
    one is overwritten (an in-place replacement)."""
    profile = program.profile
    num_eus = profile.num_eus
    local = {(b.stage, b.pc.index) for b in program.bundles if not b.pc.in_packet}
    assigned: dict[tuple[int, int], int] = {}
    # Prologs that the DPF's own epilogs chain to (hand-written loops) and a pinned entry
    # get their slots first: they are named before they are placed.
    # (a relocation's placeholder NEXT_PC names the chained DPF, not this one's prolog)
    chained = {r.label for r in program.relocations}
    early = {
        pc.index
        for b in program.bundles
        if isinstance(b.bundle, EpilogBundle) and b.label not in chained
        for stage, pc in pc_fields(b.bundle, b.stage, num_eus)
        if stage == PROLOG_STAGE and not pc.in_packet and (stage, pc.index) in local
    }
    if entry_at is not None and not program.entry.in_packet:
        assigned[(PROLOG_STAGE, program.entry.index)] = entry_at
    for index in sorted(early):
        if (PROLOG_STAGE, index) not in assigned:
            assigned[(PROLOG_STAGE, index)] = memory.reserve(PROLOG_STAGE, pipes, user)

    def move(pc: PC, stage: int) -> PC:
        if pc.in_packet or (stage, pc.index) not in local:
            return pc
        return PC(False, assigned[(stage, pc.index)])

    relocated = {b.label: chains[b.label] for b in program.bundles if b.label in chains}
    bundles = []
    order = sorted(program.bundles, key=lambda b: (install_rank(b.stage, num_eus), b.pc.index))
    for placed in order:
        bundle = _relocate(placed.bundle, placed.stage, num_eus, move, relocated.get(placed.label))
        pc = placed.pc
        if not pc.in_packet:
            word = encode_slot(stage_kind(placed.stage), bundle, profile)
            key = (placed.stage, pc.index)
            assigned[key] = memory.place(
                placed.stage,
                word,
                pipes,
                user,
                at=assigned.get(key),
                replacing=replacing,
                private=private,
            )
            pc = PC(False, assigned[key])
        bundles.append(replace(placed, pc=pc, bundle=bundle))
    entry = move(program.entry, PROLOG_STAGE)
    moved = replace(program, entry=entry, bundles=tuple(bundles), relocations=())
    return Placement(assigned, moved)


def _relocate(
    bundle: StageBundle,
    stage: int,
    num_eus: int,
    move: Callable[[PC, int], PC],
    chain: PC | None,
) -> StageBundle:
    if chain is not None:
        # the placeholder is no PC of this DPF: never move it, write the chain's target
        assert isinstance(bundle, EpilogBundle)
        return replace(bundle, next_pc=chain)
    return move_pcs(bundle, stage, num_eus, move)


__all__ = ["CodeMemory", "Placement", "SlotConflict", "place_program"]
