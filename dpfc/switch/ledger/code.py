"""The ledger's code memory: code-memory words, written and cleared.

:class:`CodeLedger` is a part of :class:`~.requests.RequestLedger`. Code arrives as
code-memory words, decoded by :func:`dpfc.encoding.decode_slot` (every ISA rule of the
stage), into a slot of a stage, optionally limited to some tenants. Each request checks
every argument on every targeted pipe before it changes anything.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Generic

from dpfc.catalog import codes
from dpfc.encoding import DecodeError, decode_slot, stage_kind
from dpfc.isa import EPILOG_STAGE, PROLOG_STAGE, StageBundle, stage_name
from dpfc.switch.control import SwitchRefused
from dpfc.switch.tables import CodeEntry, LaneT

from .checks import Pipes, RequestChecks


class CodeLedger(Generic[LaneT]):
    """The code-memory requests of :class:`~.requests.RequestLedger`."""

    def __init__(self, checks: RequestChecks[LaneT]) -> None:
        self.checks = checks

    def install_code(
        self,
        stage: int,
        slot: int,
        word: bytes,
        *,
        owners: Iterable[int] | None = None,
        pipes: Pipes = None,
    ) -> CodeEntry:
        """Write one code-memory slot of ``stage`` (0 prolog, 1..n EUs, 31 epilog) with a
        code-memory word, replacing what was there. ``owners`` limits the slot to some
        tenants (None: any tenant may run it; code memory is shared, §3.6.2)."""
        targets = self.checks.targets(pipes)
        self.stage_slot(stage, slot)
        bundle = self.decode(stage, slot, word)
        owner_set = None
        if owners is not None:
            owner_set = frozenset(owners)
            for tenant in owner_set:
                self.checks.tenant(tenant)
        entry = CodeEntry(bundle, owner_set)
        for pipe in targets:
            pipe.code.setdefault(stage, {})[slot] = entry
        return entry

    def remove_code(self, stage: int, slot: int, *, pipes: Pipes = None) -> None:
        targets = self.checks.targets(pipes)
        self.stage_slot(stage, slot)
        for pipe in targets:
            if slot not in pipe.code.get(stage, {}):
                raise SwitchRefused(
                    codes.SWITCH_EMPTY_SLOT,
                    f"slot {slot} of {stage_name(stage)} is empty on pipe {pipe.index}",
                )
        for pipe in targets:
            del pipe.code[stage][slot]

    def code_at(self, stage: int, slot: int, *, pipe: int = 0) -> CodeEntry | None:
        self.stage_slot(stage, slot)
        return self.checks.targets(pipe)[0].code.get(stage, {}).get(slot)

    def stage_slot(self, stage: int, slot: int) -> None:
        """Refuse a stage or a slot of it the profile does not have (DPF4012)."""
        profile = self.checks.profile
        valid = [PROLOG_STAGE, *range(1, profile.num_eus + 1), EPILOG_STAGE]
        if stage not in valid:
            raise SwitchRefused(
                codes.SWITCH_NO_SUCH_SLOT,
                f"no stage {stage!r}: stages are 0 (prolog), 1..{profile.num_eus} (EUs), 31 (epilog)",
            )
        if not isinstance(slot, int) or not 0 <= slot < profile.code_slots_per_stage:
            raise SwitchRefused(
                codes.SWITCH_NO_SUCH_SLOT,
                f"slot {slot!r} is not in 0..{profile.code_slots_per_stage - 1}",
            )

    def decode(self, stage: int, slot: int, word: bytes) -> StageBundle:
        """The bundle a code-memory word holds, every ISA rule of its stage checked."""
        if not isinstance(word, bytes):
            raise SwitchRefused(
                codes.SWITCH_NO_SUCH_SLOT,
                f"slot {slot} of {stage_name(stage)} takes a code-memory word (bytes)",
            )
        try:
            return decode_slot(stage_kind(stage), word, self.checks.profile)
        except DecodeError as exc:
            raise SwitchRefused(
                exc.code, f"word for slot {slot} of {stage_name(stage)} is invalid: {exc.message}"
            ) from None


__all__ = ["CodeLedger"]
