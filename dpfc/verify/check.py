"""A DPF's placed code against a policy, decided on every path: ``dpfc verify``'s engine.

Contract: :func:`verify_program` runs the program symbolically (:mod:`.machine`) and checks
each path the inputs can take (its condition satisfiable: a path no input takes breaks no
rule) against the :class:`~.policy.Policy`; it returns a :class:`Report` with every
:class:`Violation` (a rule, where: stage, PC, bundle label and assembly line, the path's
condition, and inputs that take the path and break the rule: the stack the packet
carries, metadata, RAND words). Decided per path, not by syntax:

* instruction classes and LOAD_MD fields: those of the bundles the path runs;
* steering: the action its epilog takes, and whether its value lies in the allowed ranges
  for every input that takes the path (a refutation is the example);
* chains: an epilog that sets the pointer; stack growth: the words the epilog leaves
  beyond those the prolog read (the packet carries exactly those: ``stack_depth``).

Static rules: lane memory words per (EU, lane) (the arrays bound there) and code-memory
slots (the in-switch bundles a packet can reach from the DPF's prolog). A path that faults drops the packet and breaks no steering rule.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from dpfc.isa import PC, PROLOG_STAGE, AluOp, Bundle, MemOp, SelectorKind
from dpfc.machine import MachineProgram, program_lines

from .bitvec import Term, Words
from .machine import Path, symbolic_paths
from .policy import Policy

ATOMICS = (MemOp.FAADD, MemOp.FAAND, MemOp.FAOR, MemOp.FAMAX, MemOp.FAMIN)
SELECTOR_CLASSES = {
    SelectorKind.HASH: ("hash", "HASH"),
    SelectorKind.LOAD_CONST: ("const", "LOAD_CONST"),
    SelectorKind.RAND: ("rand", "RAND"),
    SelectorKind.LOAD_MD: ("metadata", "LOAD_MD"),
}


@dataclass(frozen=True)
class Violation:
    """One rule the DPF breaks (module docstring); ``inputs`` is empty for a static rule."""

    dpf: str
    rule: str
    message: str
    stage: int | None = None
    pc: PC | None = None
    label: str = ""
    line: str = ""
    condition: str = ""
    inputs: dict[str, int] = field(default_factory=dict)

    def stack(self, depth: int) -> tuple[int, ...]:
        """The stack of a packet that takes the path (top first; 0 where any word does)."""
        return tuple(self.inputs.get(f"stack{j}", 0) for j in range(depth))


@dataclass(frozen=True)
class Report:
    dpf: str
    paths: int  # the paths some input takes
    stack_depth: int  # the words the prolog reads (the packet of an example carries them)
    violations: tuple[Violation, ...]
    unknown: tuple[str, ...] = ()  # questions the solver left open, with the reason


def _classes(bundle: Bundle) -> list[tuple[str, str]]:
    """(class, mnemonic) of every instruction of ``bundle``."""
    out = [SELECTOR_CLASSES[s.kind] for s in bundle.selectors if s.kind in SELECTOR_CLASSES]
    out += [("alu", op.name) for op in bundle.alu if op is not AluOp.NOP]
    for op in bundle.mem:
        if op is MemOp.LOAD:
            out.append(("load", op.name))
        elif op is MemOp.STORE:
            out.append(("store", op.name))
        elif op in ATOMICS:
            out.append(("atomic", op.name))
    return out


def stack_depth_read(program: MachineProgram) -> int:
    """The words the entry prolog reads (POPs and PEEKs): the stack a packet needs."""
    prolog = next(
        b.bundle for b in program.bundles if b.stage == PROLOG_STAGE and b.pc == program.entry
    )
    assert isinstance(prolog, Bundle)
    return sum(s.kind in (SelectorKind.POP, SelectorKind.PEEK) for s in prolog.selectors)


class _Checker:
    def __init__(self, program: MachineProgram, policy: Policy) -> None:
        self.program, self.policy = program, policy
        self.words = Words()
        self.labels = {(b.stage, b.pc): b.label for b in program.bundles}
        self.bundles = {(b.stage, b.pc): b.bundle for b in program.bundles}
        self.lines = program_lines(program)
        self.found: dict[tuple[str, int | None, PC | None, str], Violation] = {}
        self.unknown: list[str] = []

    def add(self, violation: Violation) -> None:
        key = (violation.rule, violation.stage, violation.pc, violation.message)
        self.found.setdefault(key, violation)

    def at(self, stage: int, pc: PC, mnemonic: str) -> tuple[str, str]:
        label = self.labels.get((stage, pc), "")
        line = next((x for x in self.lines.get(label, []) if x.startswith(mnemonic)), "")
        return label, line

    def violation(
        self,
        path: Path,
        rule: str,
        message: str,
        inputs: dict[str, int],
        where: tuple[int, PC],
        mnemonic: str = "",
    ) -> Violation:
        stage, pc = where
        label, line = self.at(stage, pc, mnemonic)
        condition = str(path.condition.ast)
        return Violation(
            self.program.name, rule, message, stage, pc, label, line, condition, inputs
        )

    def check_path(self, path: Path) -> bool:
        """Check one path; False when no input takes it."""
        w, policy = self.words, self.policy
        example = w.example(path.condition)
        if example.verdict == "none":
            return False
        if example.verdict == "unknown":
            self.unknown.append(f"path {path.stages}: {example.reason}")
            return True
        inputs = dict(example.counterexample)
        for stage, pc in path.stages:
            bundle = self.bundles.get((stage, pc))
            if not isinstance(bundle, Bundle):
                continue
            for kind, mnemonic in _classes(bundle):
                if policy.instructions is not None and kind not in policy.instructions:
                    message = f"{mnemonic}: the policy allows no `{kind}` instructions"
                    self.add(
                        self.violation(path, "instructions", message, inputs, (stage, pc), mnemonic)
                    )
            if stage == PROLOG_STAGE and policy.metadata is not None:
                for sel in bundle.selectors:
                    if sel.kind is not SelectorKind.LOAD_MD:
                        continue
                    field_ = self.program.profile.metadata_by_index(sel.value)
                    name = field_.name if field_ is not None else str(sel.value)
                    if name not in policy.metadata:
                        message = (
                            f"LOAD_MD {name}: the policy allows reading {_listed(policy.metadata)}"
                        )
                        self.add(
                            self.violation(
                                path, "metadata", message, inputs, (stage, pc), "LOAD_MD"
                            )
                        )
        decision = path.decision
        if decision is None:
            return True
        epilog = path.stages[-1]
        action = decision.steering
        if policy.steering is not None and action not in policy.steering:
            message = f"FWD {action}: the policy allows {_listed(policy.steering)}"
            self.add(self.violation(path, "steering", message, inputs, epilog, "FWD"))
        ranges = policy.steering_values.get(action)
        if ranges is not None:
            self.check_value(path, action, decision.value, ranges, epilog)
        if not policy.chains and decision.next_pc is not None:
            message = "NEXT_PC: the policy allows no chains"
            self.add(self.violation(path, "chains", message, inputs, epilog, "NEXT_PC"))
        growth = len(decision.stack) - stack_depth_read(self.program)
        if policy.max_stack_growth is not None and growth > policy.max_stack_growth:
            message = f"the pass leaves {growth} more word(s) on the stack (the policy allows {policy.max_stack_growth})"
            self.add(self.violation(path, "stack", message, inputs, epilog, "PUSH"))
        return True

    def check_value(
        self,
        path: Path,
        action: str,
        value: Term,
        ranges: tuple[tuple[int, int], ...],
        where: tuple[int, PC],
    ) -> None:
        w = self.words
        inside = w.any_of(
            [w.const(low).ule(value).land(value.ule(w.const(high))) for low, high in ranges]
        )
        answer = w.prove(path.condition.implies(inside))
        if answer.verdict == "refuted":
            shown = ", ".join(f"{low}..{high}" for low, high in ranges)
            message = f"FWD {action}: its value may lie outside {shown}"
            self.add(
                self.violation(
                    path, "steering_values", message, dict(answer.counterexample), where, "FWD"
                )
            )
        elif answer.verdict == "unknown":
            self.unknown.append(f"FWD {action} value at {where}: {answer.reason}")

    def static(self, paths: list[Path]) -> None:
        policy, program = self.policy, self.program
        if policy.memory_words is not None:
            used: dict[tuple[int, int], int] = {}
            for array in program.arrays:
                used[array.eu, array.lane] = used.get((array.eu, array.lane), 0) + array.size
            for (eu, lane), words in sorted(used.items()):
                if words > policy.memory_words:
                    message = f"EU{eu} lane {lane}: {words} words of memory (the policy allows {policy.memory_words})"
                    self.add(Violation(program.name, "memory", message))
        if policy.code_slots is not None:  # the in-switch bundles a packet can reach
            slots = len({(st, pc) for p in paths for st, pc in p.stages if not pc.in_packet})
            if slots > policy.code_slots:
                message = f"{slots} code-memory slots (the policy allows {policy.code_slots})"
                self.add(Violation(program.name, "code_slots", message))


def _listed(names: frozenset[str]) -> str:
    return ", ".join(sorted(names)) if names else "none"


def verify_program(program: MachineProgram, policy: Policy) -> Report:
    """Every violation of ``policy`` by ``program`` (module docstring)."""
    checker = _Checker(program, policy)
    depth = stack_depth_read(program)
    every = symbolic_paths(checker.words, program, depth)
    paths = sum(checker.check_path(p) for p in every)
    checker.static(every)
    return Report(program.name, paths, depth, tuple(checker.found.values()), tuple(checker.unknown))


__all__ = ["Report", "Violation", "stack_depth_read", "verify_program"]
