"""The fixed entries that run an in-packet prolog and epilog (code format version 2).

Contract: :func:`packet_frame_entries` returns the entries keyed by the in-packet PC
(``0x8000``, @packet:0) of the prolog (``meta.ppc``) and of the epilog (``meta.epc``), which
read the packet's fields (:mod:`.headers`) instead of action data:

* **Prolog selectors.** A selector runs in destination order (A0.., B0..; the simulator's
  ``run_prolog``): POP and PEEK read the stack word numbered by the POPs before it
  (``meta.pop<j>``), the k-th RAND reads ``meta.rnd<k>`` (a third or fourth RAND reads
  ``rnd1``: the program draws two words), LOAD_MD ``i`` reads ``meta.md<i>`` for the
  indices the program loads (:func:`.ends.loaded_sources`; any other reads 0). The
  table of register ``r`` also keys on the validity and kind of each earlier register's
  selector; one entry per set ``S`` of earlier selectors that are POPs (RANDs) requires
  exactly those to be valid POPs and leaves the others unmasked, and the larger set
  matches first (a lower priority), so the entry that matches is the set of all earlier
  POPs. An absent selector's fields are undefined on Tofino (0, MOV, on bmv2): the
  validity bit keeps it from counting.
* **Prolog code.** EU0's PC is the packet's ``pc_taken``; the pop count is the number of
  valid POP selectors, again one entry per set by priority.
* **Epilog.** Push position ``j`` takes the register its byte names; the push count is the
  packet's ``n_push``; the steering action is the packet's, with the DPF pointer from the
  packet's NEXT_PC part if it has one (else it stays); the steering value is the packet's
  immediate (``epilog_packet_value``), or a register's when the packet names one: that is
  the if-chain on ``ep_steer_reg`` of :func:`.ends.epilog_stage`, which needs no entry.

Not run: an epilog NEXT_PC from a register (``next_pc_src`` 2) and ``hdr_mod``: the packet
is dropped (``epilog_refused``), never sent on as if they had run.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from itertools import combinations

from dpfc.isa import SelectorKind

from .ends import PERM_METADATA
from .entries import ANY, RANDOM_WORDS, Entry, Key, Ternary, packet_pc
from .grants import PERM_PASS
from .loads import SWITCH_ID, held_values, loaded_sources, metadata_loaded
from .plan import StagePlan

KIND_MASK = 0x7
POP_OR_PEEK = Ternary(int(SelectorKind.POP), 0x6)  # 10x: POP 100 and PEEK 101
assert int(SelectorKind.PEEK) == int(SelectorKind.POP) | 1
POP = Ternary(int(SelectorKind.POP), KIND_MASK)
RAND = Ternary(int(SelectorKind.RAND), KIND_MASK)
LOAD_MD = Ternary(int(SelectorKind.LOAD_MD), KIND_MASK)
VALID = Ternary(1, 1)
SELECTOR_KEYS = ("valid", "kind", "operand")
REFUSED = "prolog_refused"


def packet_frame_entries(plan: StagePlan) -> list[Entry]:
    """The in-packet prolog's and epilog's entries (module docstring)."""
    out: list[Entry] = []
    for at, register in enumerate(plan.registers):
        out += _prolog_selector(plan, at, register)
    out += _prolog_code(plan)
    out += _epilog(plan)
    return out


def _sets(registers: tuple[str, ...], largest: int) -> list[tuple[str, ...]]:
    """The subsets of ``registers`` of at most ``largest`` members, largest first."""
    sizes = range(min(largest, len(registers)), -1, -1)
    return [chosen for size in sizes for chosen in combinations(registers, size)]


def _earlier(
    before: tuple[str, ...], chosen: tuple[str, ...], kind: Ternary
) -> list[tuple[str, Key]]:
    """Keys of the earlier selectors: those in ``chosen`` valid and of ``kind``, the rest any."""
    out: list[tuple[str, Key]] = []
    for r in before:
        valid, of_kind = (VALID, kind) if r in chosen else (ANY, ANY)
        out += [(f"pro_sel_{r}_valid", valid), (f"pro_sel_{r}_kind", of_kind)]
    return out


def _prolog_selector(plan: StagePlan, at: int, register: str) -> list[Entry]:
    table, head = plan.prolog_selector(register), f"pro_sel_{register}"
    pc = ("ppc", packet_pc(plan))
    before = plan.registers[:at]
    out: list[Entry] = []

    def add(kind: Ternary, operand: Key, chosen: tuple[str, ...], action: str) -> None:
        own = [(f"{head}_valid", VALID), (f"{head}_kind", kind), (f"{head}_operand", operand)]
        keys = (pc, *own, *_earlier(before, chosen, kind if kind != POP_OR_PEEK else POP))
        out.append(Entry(table, keys, f"{table}_{action}", (), len(before) - len(chosen)))

    for chosen in _sets(before, len(before)):
        add(POP_OR_PEEK, ANY, chosen, f"pop{len(chosen)}")
    for chosen in _sets(before, RANDOM_WORDS - 1):
        add(RAND, ANY, chosen, f"rnd{len(chosen)}")
    for index in loaded_sources(plan):
        add(LOAD_MD, Ternary(index, 0xFF), (), f"md{index}")
    for index, value in held_values(plan).items():
        if index != SWITCH_ID:  # the operator's: switch_id_entries
            add(LOAD_MD, Ternary(index, 0xFF), (), "value")
            out[-1] = replace(out[-1], params=(("value", value),))
    return out


def switch_id_entries(plan: StagePlan, switch_id: int) -> list[Entry]:
    """In-packet LOAD_MD switch_id of each register's selector: the operator's value."""
    out: list[Entry] = []
    for at, register in enumerate(plan.registers):
        table, head = plan.prolog_selector(register), f"pro_sel_{register}"
        own = [(f"{head}_valid", VALID), (f"{head}_kind", LOAD_MD)]
        own += [(f"{head}_operand", Ternary(SWITCH_ID, 0xFF))]
        keys = (
            ("ppc", packet_pc(plan)),
            *own,
            *_earlier(plan.registers[:at], (), LOAD_MD),
        )
        out.append(Entry(table, keys, f"{table}_value", (("value", switch_id),), at))
    return out


def _prolog_code(plan: StagePlan) -> list[Entry]:
    """First (priority 0) the refusals: a LOAD_MD selector without the tenant's metadata
    bit (R5), or of a field the program does not load; then the POP sets."""
    registers = plan.registers
    pc = ("ppc", packet_pc(plan))

    def keys(
        perm: Key, selectors: Mapping[str, tuple[Key, Key, Key]]
    ) -> tuple[tuple[str, Key], ...]:
        out: list[tuple[str, Key]] = [pc, ("perm", perm)]
        for r in registers:
            values = selectors.get(r, (ANY, ANY, ANY))
            out += [(f"pro_sel_{r}_{f}", v) for f, v in zip(SELECTOR_KEYS, values, strict=True)]
        return tuple(out)

    out = []
    # a tenant whose unauthorized packets pass (:mod:`.grants`) runs nothing instead
    bits = PERM_METADATA | (PERM_PASS if plan.grants else 0)
    no_metadata = Ternary(0, bits)
    for r in registers:
        load = {r: (VALID, LOAD_MD, ANY)}
        out.append(Entry("prolog_code", keys(no_metadata, load), REFUSED))
        if plan.grants:
            out.append(Entry("prolog_code", keys(Ternary(PERM_PASS, bits), load), "prolog_none"))
        for operand in outside(metadata_loaded(plan), 8):
            selector = {r: (VALID, LOAD_MD, operand)}
            out.append(Entry("prolog_code", keys(ANY, selector), REFUSED))
    for chosen in _sets(registers, len(registers)):
        pops = {r: (VALID, POP, ANY) for r in chosen}
        params = (("npops", len(chosen)),)
        priority = 1 + len(registers) - len(chosen)
        out.append(Entry("prolog_code", keys(ANY, pops), "prolog_packet", params, priority))
    return out


def outside(values: Sequence[int], bits: int) -> list[Ternary]:
    """Ternary keys matching exactly the ``bits``-bit numbers not in ``values``: the
    aligned blocks of the complement, largest first."""
    kept = set(values)
    out: list[Ternary] = []

    def cover(base: int, size: int) -> None:
        inside = [v for v in range(base, base + size) if v in kept]
        if not inside:
            mask = ((1 << bits) - 1) & ~(size - 1)
            out.append(Ternary(base, mask))
        elif size > 1:
            cover(base, size // 2)
            cover(base + size // 2, size // 2)

    cover(0, 1 << bits)
    return out


def _epilog(plan: StagePlan) -> list[Entry]:
    epc: tuple[str, Key] = ("epc", packet_pc(plan))
    out = []
    keys: tuple[tuple[str, Key], ...]
    pushes = 2 * plan.lanes
    for j in range(pushes):
        table, push = f"epilog_push{j}", f"ep_push{j}"
        for r in plan.registers:
            keys = (
                epc,
                (f"{push}_valid", VALID),
                (f"{push}_r", Ternary(plan.register_code(r), 0xFF)),
            )
            out.append(Entry(table, keys, f"{table}_{r}"))
    for count in range(pushes + 1):
        keys = (epc, ("ep_head_n_push", Ternary(count, 0x1F)))
        out.append(Entry("epilog_pushes", keys, f"epilog_pushes{count}"))
    # first (priority 0) what the program does not run: NEXT_PC from a register, and
    # HDR_MOD where the program cannot cut the code (a Tofino program)
    refused = [(VALID, ANY)] if not plan.cut_code else []
    if not plan.next_from_register:
        refused.append((ANY, VALID))
    for hdr_mod, next_reg in refused:
        keys = (epc, ("ep_next_pc_valid", ANY), ("ep_head_hdr_mod", hdr_mod))
        out.append(Entry("epilog_code", (*keys, ("ep_next_reg_valid", next_reg)), "epilog_refused"))
    if plan.next_from_register:  # :mod:`.next_register`
        keys = (epc, ("ep_next_pc_valid", ANY), ("ep_head_hdr_mod", ANY))
        out.append(Entry("epilog_code", (*keys, ("ep_next_reg_valid", VALID)), "epilog_packet_reg"))
    if plan.cut_code:
        out.append(Entry("epilog_cut", (epc, ("ep_head_hdr_mod", VALID)), "epilog_cut_on"))
    for valid, action in ((1, "epilog_packet"), (0, "epilog_packet_stay")):
        keys = (epc, ("ep_next_pc_valid", Ternary(valid, 1)), ("ep_head_hdr_mod", ANY))
        out.append(Entry("epilog_code", (*keys, ("ep_next_reg_valid", ANY)), action, (), 1))
    out.append(Entry("epilog_values", (epc,), "epilog_packet_value"))
    return out


__all__ = ["outside", "packet_frame_entries", "switch_id_entries"]
