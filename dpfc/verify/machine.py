"""Placed machine code run symbolically: what one DPF does, path by path, for every input.

Contract: :func:`symbolic_paths` runs a :class:`~dpfc.machine.MachineProgram` (in-packet or
in-switch code, as placed) on symbolic inputs by the rules of docs/isa.md §3 and returns one
:class:`Path` per way through its bundles: the condition on the inputs that takes it and
what the DPF decided there. The inputs are variables of the :class:`~.bitvec.Words` context:

* the stack the packet carries, ``stack_depth`` words ``stack0`` (the top) ...;
* each LOAD_MD field, ``md<index>``; the j-th RAND draw of the prolog (register order),
  ``rand<j>``; each LOAD_CONST entry of the tenant, ``const<index>``;
* each lane memory (EU, lane) of the DPF's pipeline, the array ``mem<eu>_<lane>``, mapped
  for the words [0, size) of the array bound there (the control protocol maps an array
  from virtual address 0); an access elsewhere is unmapped: a load or fetch-and-op gives
  B 0 and nothing is written (docs/isa.md item 13).

A path ends in the epilog (:class:`Decision`: the stack the packet leaves with, the
steering action and value, the new pointer, HDR_MOD, and the lane memories after the DPF)
or in a fault (``fault``: the reason; the switch drops the packet): a shift by an amount the
ALU lacks (item 4), a PUSH past ``stack_max_depth``, code the program does not hold. Every
memory access is listed (:class:`Access`) with the condition under which it is mapped.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field, replace

from dpfc.isa import (
    EPILOG_STAGE,
    PC,
    PROLOG_STAGE,
    AluOp,
    Bundle,
    CtrlOp,
    EpilogBundle,
    Imm,
    MemOp,
    Operand,
    Register,
    SelectorKind,
)
from dpfc.machine import MachineProgram
from dpfc.target import BranchOperands, MemoryAddress

from .bitvec import Term, Words
from .semantics import alu, branch_taken, hash_word, memory

SHIFTS = (AluOp.LSH, AluOp.RSH)


@dataclass(frozen=True)
class Access:
    """One lane memory access on a path: ``op`` at ``address`` (as translated), mapped when
    ``mapped`` holds; ``data`` is the store or atomic operand."""

    eu: int
    lane: int
    op: MemOp
    address: Term
    mapped: Term
    data: Term


@dataclass(frozen=True)
class Decision:
    """What the epilog decided (docs/isa.md §2, Epilog): ``next_pc`` is a PC (NEXT_PC of a
    label or slot), a term (NEXT_PC of a register: its low 16 bits, 0xFFFF none) or None
    (the packet's pointer is kept)."""

    stack: tuple[Term, ...]
    steering: str
    value: Term
    next_pc: PC | Term | None
    hdr_mod: bool


@dataclass(frozen=True)
class Path:
    """One way through the DPF's bundles (module docstring)."""

    condition: Term
    stages: tuple[tuple[int, PC], ...]
    accesses: tuple[Access, ...]
    memories: dict[tuple[int, int], Term]
    decision: Decision | None = None
    fault: str | None = None


@dataclass
class _State:
    regs: list[Term]
    stack: list[Term]
    conditions: list[Term]
    stages: list[tuple[int, PC]]
    accesses: list[Access] = field(default_factory=list)
    memories: dict[tuple[int, int], Term] = field(default_factory=dict)

    def fork(self, condition: Term) -> _State:
        return _State(
            list(self.regs),
            list(self.stack),
            [*self.conditions, condition],
            list(self.stages),
            list(self.accesses),
            dict(self.memories),
        )


@dataclass
class _Step:
    """A way out of an EU: the next bundle's PC (``halted``: into the epilog), or a fault."""

    state: _State
    fault: str | None
    pc: PC | None = None
    halted: bool = False


class SymbolicRun:
    """The run of one program in one context (see :func:`symbolic_paths`)."""

    def __init__(self, words: Words, program: MachineProgram, stack_depth: int) -> None:
        self.w = words
        self.program = program
        self.profile = program.profile
        self.lanes = program.profile.lanes
        self.stack_depth = stack_depth
        self.code = {(b.stage, b.pc): b.bundle for b in program.bundles}
        self.sizes = {(a.eu, a.lane): a.size for a in program.arrays}

    def index(self, register: Register) -> int:
        return register.cls.value * self.lanes + register.lane

    # -- the whole DPF -------------------------------------------------------------------
    def paths(self) -> Iterator[Path]:
        w = self.w
        stack = [w.var(f"stack{j}") for j in range(self.stack_depth)]
        state = _State([w.const(0)] * (2 * self.lanes), stack, [], [])
        prolog = self.code.get((PROLOG_STAGE, self.program.entry))
        if not isinstance(prolog, Bundle):
            yield self._fault(state, f"no prolog at {self.program.entry}")
            return
        state.stages.append((PROLOG_STAGE, self.program.entry))
        self._prolog(state, prolog)
        yield from self._from(state, 1, prolog.control.taken)

    def _from(self, state: _State, stage: int, pc: PC) -> Iterator[Path]:
        bundle = self.code.get((stage, pc))
        if bundle is None:
            yield self._fault(state, f"stage {stage} {pc}: the program holds no such bundle")
            return
        state.stages.append((stage, pc))
        if isinstance(bundle, EpilogBundle):
            yield self._epilog(state, bundle)
            return
        assert isinstance(bundle, Bundle)
        for step in self._eu(state, stage - 1, bundle):
            if step.fault is not None:
                yield self._fault(step.state, step.fault)
                continue
            assert step.pc is not None
            after = EPILOG_STAGE if step.halted or stage == self.profile.num_eus else stage + 1
            yield from self._from(step.state, after, step.pc)

    def _fault(self, state: _State, reason: str) -> Path:
        return Path(
            self.w.all_of(state.conditions),
            tuple(state.stages),
            tuple(state.accesses),
            dict(state.memories),
            fault=reason,
        )

    # -- the prolog ----------------------------------------------------------------------
    def _prolog(self, state: _State, bundle: Bundle) -> None:
        w, draws = self.w, 0
        for sel in bundle.selectors:  # register order, as the machine runs them
            if sel.kind in (SelectorKind.POP, SelectorKind.PEEK):
                if state.stack:  # an empty stack reads 0 (simulator R13)
                    top = state.stack[0]
                    value = state.stack.pop(0) if sel.kind is SelectorKind.POP else top
                else:
                    value = w.const(0)
            elif sel.kind is SelectorKind.RAND:
                value, draws = w.var(f"rand{draws}"), draws + 1
            else:  # LOAD_MD
                value = w.var(f"md{sel.value}")
            state.regs[self.index(sel.dest)] = value

    # -- one EU --------------------------------------------------------------------------
    def _eu(self, state: _State, eu: int, bundle: Bundle) -> Iterator[_Step]:
        """The ways out of EU ``eu``: to the next bundle, or a fault."""
        w, lanes = self.w, self.lanes
        entry = state.regs
        selected = list(entry)
        for sel in bundle.selectors:  # a parallel copy: every selector reads `entry`
            if sel.kind is SelectorKind.MOV:
                assert sel.source is not None
                value = entry[self.index(sel.source)]
            elif sel.kind is SelectorKind.LOAD_IMM:
                value = w.const(sel.value)
            elif sel.kind is SelectorKind.LOAD_CONST:
                value = w.var(f"const{sel.value}")
            else:  # HASH: the lane's CRC of the EU-entry A register
                function = self.profile.hash_for_lane(sel.dest.lane)
                value = hash_word(w, function, entry[self.index(sel.dest)])
            selected[self.index(sel.dest)] = value
        faults = self._shift_faults(bundle, selected)
        if faults:
            fault = w.any_of(faults)
            yield _Step(state.fork(fault), f"EU{eu}: a shift by an amount the ALU lacks")
            state = state.fork(fault.lnot())
        address = entry if self.profile.memory_address is MemoryAddress.ENTRY else selected
        result = list(selected)
        for lane in range(lanes):
            op = bundle.alu[lane] if lane < len(bundle.alu) else AluOp.NOP
            if op is not AluOp.NOP:
                result[lane] = alu(w, op, selected[lane], selected[lanes + lane])
            mop = bundle.mem[lane] if lane < len(bundle.mem) else MemOp.NOP
            if mop is not MemOp.NOP:
                self._access(state, eu, lane, mop, address[lane], selected[lanes + lane], result)
        control = bundle.control
        if control.op in (CtrlOp.JMP, CtrlOp.HALT):
            state.regs = result
            yield _Step(state, None, control.taken, control.op is CtrlOp.HALT)
            return
        mode = self.profile.branch_operands
        if mode is BranchOperands.ENTRY:
            seen = entry
        elif mode is BranchOperands.SELECTED:
            seen = selected
        else:  # LOADED: after selection plus this EU's memory results, never ALU results
            seen = selected[:lanes] + result[lanes:]
        taken = branch_taken(
            w, control.op, self._operand(control.x, seen), self._operand(control.y, seen)
        )
        assert control.not_taken is not None
        for condition, pc in ((taken, control.taken), (taken.lnot(), control.not_taken)):
            branch = state.fork(condition)
            branch.regs = list(result)
            yield _Step(branch, None, pc)

    def _shift_faults(self, bundle: Bundle, selected: list[Term]) -> list[Term]:
        if not self.profile.shifts_restricted:
            return []
        w, out = self.w, []
        mask = w.const(self.profile.shift_mask)
        for lane, op in enumerate(bundle.alu):
            if op in SHIFTS:
                amount = selected[self.lanes + lane] & w.const(31)
                out.append((mask.lshr(amount) & w.const(1)).eq(w.const(0)))
        return out

    def _access(
        self,
        state: _State,
        eu: int,
        lane: int,
        op: MemOp,
        address: Term,
        data: Term,
        result: list[Term],
    ) -> None:
        w, b_at = self.w, self.lanes + lane
        size = self.sizes.get((eu, lane), 0)
        mapped = address.ult(w.const(size)) if size else w.true().lnot()
        state.accesses.append(Access(eu, lane, op, address, mapped, data))
        array = state.memories.get((eu, lane), w.memory(f"mem{eu}_{lane}"))
        new, to_b = memory(w, op, w.select(array, address), data)
        if op is not MemOp.LOAD:
            state.memories[eu, lane] = w.ite(mapped, w.store(array, address, new), array)
        if to_b is not None:  # LOAD and FA*: the old word, 0 when unmapped
            result[b_at] = w.ite(mapped, to_b, w.const(0))

    def _operand(self, operand: Operand | None, regs: list[Term]) -> Term:
        if isinstance(operand, Imm):
            return self.w.const(operand.value)
        assert isinstance(operand, Register)
        return regs[self.index(operand)]

    # -- the epilog ----------------------------------------------------------------------
    def _epilog(self, state: _State, bundle: EpilogBundle) -> Path:
        w, regs = self.w, state.regs
        stack = [regs[self.index(r)] for r in bundle.push] + state.stack
        if len(stack) > self.profile.stack_max_depth:
            return self._fault(
                state,
                f"PUSH makes the stack {len(stack)} deep (limit {self.profile.stack_max_depth})",
            )
        value = bundle.steering.value
        if value is None:
            steer = w.const(0)
        elif isinstance(value, Imm):
            steer = w.const(value.value)
        else:
            steer = regs[self.index(value)] & w.const(0xFFFF)
        next_pc: PC | Term | None = None
        if isinstance(bundle.next_pc, PC):
            next_pc = bundle.next_pc
        elif isinstance(bundle.next_pc, Register):
            next_pc = regs[self.index(bundle.next_pc)].bits(15, 0)
        decision = Decision(tuple(stack), bundle.steering.action, steer, next_pc, bundle.hdr_mod)
        return replace(self._fault(state, ""), decision=decision, fault=None)


def symbolic_paths(words: Words, program: MachineProgram, stack_depth: int) -> list[Path]:
    """Every path of ``program`` on a packet carrying ``stack_depth`` stack words."""
    return list(SymbolicRun(words, program, stack_depth).paths())


__all__ = ["Access", "Decision", "Path", "SymbolicRun", "symbolic_paths"]
