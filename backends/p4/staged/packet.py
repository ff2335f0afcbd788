"""The fixed entries that run an in-packet prolog and epilog (code format version 2).

Contract: :func:`packet_frame_entries` returns the entries keyed by the in-packet PC
(``0x8000``, @packet:0) of the prolog (``meta.ppc``) and of the epilog (``meta.epc``), which
read the packet's fields (:mod:`.headers`) instead of action data:

* **Prolog selectors.** A selector runs in destination order (A0.., B0..; the simulator's
  ``run_prolog``): POP and PEEK read the stack word numbered by the POPs before it
  (``meta.pop<j>``), the k-th RAND reads ``meta.rnd<k>`` (a third or fourth RAND reads
  ``rnd1``: the program draws two words), LOAD_MD ``i`` reads ``meta.md<i>`` for the
  indices the program loads (:data:`.ends.METADATA_SOURCES`; any other reads 0). The
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

Not run: an epilog NEXT_PC from a register (``next_pc_src`` 2: the pointer stays) and
``hdr_mod``.
"""

from __future__ import annotations

from itertools import combinations

from dpfc.isa import SelectorKind

from .ends import METADATA_SOURCES
from .entries import ANY, IN_PACKET_PC, PC_MASK, RANDOM_WORDS, Entry, Key, Ternary
from .plan import StagePlan

KIND_MASK = 0x7
POP_OR_PEEK = Ternary(int(SelectorKind.POP), 0x6)  # 10x: POP 100 and PEEK 101
assert int(SelectorKind.PEEK) == int(SelectorKind.POP) | 1
POP = Ternary(int(SelectorKind.POP), KIND_MASK)
RAND = Ternary(int(SelectorKind.RAND), KIND_MASK)
LOAD_MD = Ternary(int(SelectorKind.LOAD_MD), KIND_MASK)
VALID = Ternary(1, 1)


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
    pc = ("ppc", Ternary(IN_PACKET_PC, PC_MASK))
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
    for index in METADATA_SOURCES:
        add(LOAD_MD, Ternary(index, 0xFF), (), f"md{index}")
    return out


def _prolog_code(plan: StagePlan) -> list[Entry]:
    registers = plan.registers
    out = []
    for chosen in _sets(registers, len(registers)):
        keys = (("ppc", Ternary(IN_PACKET_PC, PC_MASK)), *_earlier(registers, chosen, POP))
        params = (("npops", len(chosen)),)
        priority = len(registers) - len(chosen)
        out.append(Entry("prolog_code", keys, "prolog_packet", params, priority))
    return out


def _epilog(plan: StagePlan) -> list[Entry]:
    epc: tuple[str, Key] = ("epc", Ternary(IN_PACKET_PC, PC_MASK))
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
    for valid, action in ((1, "epilog_packet"), (0, "epilog_packet_stay")):
        keys = (epc, ("ep_next_pc_valid", Ternary(valid, 1)))
        out.append(Entry("epilog_code", keys, action))
    out.append(Entry("epilog_values", (epc,), "epilog_packet_value"))
    return out


__all__ = ["packet_frame_entries"]
