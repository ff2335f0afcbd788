"""Constants computed by the ALU: cheaper addresses, fewer immediates.

Contract: :func:`materialise_constants` returns the problem with extra, optional ALU (and
HASH) operations that each compute a constant's word, recorded in :attr:`Problem.same_word`
(operation -> CONST). No operation names them as an operand; where the scheduler runs one,
the register it writes holds that constant (the Z3 model, the bounds and the checker track
the CONST as the register's value), and the greedy scheduler never uses them. So they
only add schedules, never remove one.

A constant reaches a register only by ``LOAD_IMM`` into a B register (at most
``immediates_per_bundle`` distinct ones per bundle). Three cases are worth an operation:

* **Addresses.** A memory access reads its address from the lane's A register at the EU's
  entry (``memory_address = entry``), so ``tally[1] += x`` waited for a LOAD_IMM in EU0 and
  a MOV in EU1, and ran in EU2 at the earliest. ``ADD 0, c`` in EU0 (0 in an A register
  the prolog leaves alone, ``c`` LOAD_IMM'd into B) puts ``c`` in A at EU1's entry: the
  access runs one EU earlier for the same two instructions. One per constant address and
  tree node that accesses memory there, owned by that node (so it may run there or,
  speculatively, in an ancestor).
* **Immediates.** When a constant is an ALU function of two other constants the DPF needs
  in registers anyway (``5 = 2 + 3``), computing it saves a LOAD_IMM where the immediates
  of a bundle are the limit (the constant folder had turned ``2 + 3`` into a fifth
  constant). At most one per constant, owned by the root. Likewise 0 (which the folder
  makes of ``x - x``, ``x & 0``, ...) is ``XOR x, x`` or ``AND x, 0`` of any input ``x``:
  two per input, owned by the root, when 0 is needed in a register and not the prolog's to
  leave. (``AND x, 0`` is how a lane turns the input it holds into the 0 a HASH of 0
  reads at the next EU's entry.)
* **Hashes of constants.** The scheduler folds ``hash<i>(c)`` of a constant ``c`` into the
  constant ``crc_i(c)`` (``x & 0`` feeding a hash, say), which then needs an immediate of
  its own; a HASH selector of lane ``i`` computes it instead from ``c`` in ``A[i]`` at an
  EU's entry — 0 is often there already. One per constant and lane whose CRC of some
  constant of the DPF is that constant, owned by the root; the word is selected in A in
  the EU the HASH runs in.
"""

from __future__ import annotations

from dataclasses import replace

from dpfc.isa import AluOp, hash_word
from dpfc.isa import alu as alu_result
from dpfc.schedule.problem.domains import exit_values
from dpfc.schedule.problem.tree import Branch, Kind, Operation, Problem, TreeNode
from dpfc.target import MemoryAddress

# The ALU operations tried for a constant from two others (MIN/MAX give an operand back).
COMBINERS = (AluOp.ADD, AluOp.SUB, AluOp.XOR, AluOp.OR, AluOp.AND, AluOp.LSH, AluOp.RSH)
MAX_COMBINED = 8  # constants computed from others, at most (bounds the model's size)


def materialise_constants(problem: Problem) -> Problem:
    """See the module docstring."""
    builder = _Materialiser(problem)
    builder.addresses()
    builder.combinations()
    builder.hashes()
    builder.zeros()
    return builder.result()


class _Materialiser:
    def __init__(self, problem: Problem) -> None:
        self.problem = problem
        self.ops = list(problem.ops)
        self.node_ops = [list(n.ops) for n in problem.nodes]
        self.same_word = dict(problem.same_word)

    def _add(self, owner: int, alu: AluOp, x: int, y: int, word: int, before: int | None) -> None:
        op_id = len(self.ops)
        constant = self.ops[word]
        self.ops.append(
            Operation(
                op_id,
                Kind.ALU,
                owner=owner,
                operands=(x, y),
                alu=alu,
                name=f"{constant.name or constant.value} (ALU)",
                span=self.ops[before].span if before is not None else constant.span,
            )
        )
        self.same_word[op_id] = word
        own = self.node_ops[owner]
        own.insert(own.index(before) if before is not None else 0, op_id)

    def _zero(self) -> int:
        zero = next((o.id for o in self.ops if o.kind is Kind.CONST and o.value == 0), None)
        if zero is None:
            zero = len(self.ops)
            self.ops.append(Operation(zero, Kind.CONST, owner=0, value=0, name="0"))
        return zero

    def addresses(self) -> None:
        if self.problem.profile.memory_address is not MemoryAddress.ENTRY:
            return
        made: set[tuple[int, int]] = set()  # (constant, node)
        for access in list(self.ops):
            if access.kind is not Kind.MEM:
                continue
            address = self.ops[access.operands[0]]
            key = (address.id, access.owner)
            if address.kind is Kind.CONST and address.value != 0 and key not in made:
                made.add(key)
                self._add(access.owner, AluOp.ADD, self._zero(), address.id, address.id, access.id)

    def combinations(self) -> None:
        needed = self._constants_in_registers()
        values = {self.ops[c].value: c for c in needed}
        count = 0
        for word in sorted(needed, key=lambda c: self.ops[c].value):
            if count >= MAX_COMBINED:
                return
            found = self._combination(word, values)
            if found is not None:
                alu, x, y = found
                self._add(0, alu, x, y, word, None)
                count += 1

    def _combination(self, word: int, values: dict[int, int]) -> tuple[AluOp, int, int] | None:
        target = self.ops[word].value
        others = sorted(v for v in values if v != target)
        profile = self.problem.profile
        for alu in COMBINERS:
            for a in others:
                for b in others:
                    if alu in (AluOp.LSH, AluOp.RSH) and not profile.shifts_by(b):
                        continue  # an amount the ALU lacks would fault the packet
                    if alu_result(alu, a, b) == target:
                        return alu, values[a], values[b]
        return None

    def hashes(self) -> None:
        needed = self._constants_in_registers()
        sources = sorted(
            {o.value: o.id for o in self.ops if o.kind is Kind.CONST}.items(), reverse=True
        )
        profile = self.problem.profile
        for word in needed:
            target = self.ops[word].value
            for lane in range(profile.lanes):
                function = profile.hash_for_lane(lane)
                for value, source in sources:
                    if hash_word(function, value) == target:
                        self._add_hash(lane, source, word)
                        break

    def _add_hash(self, lane: int, source: int, word: int) -> None:
        op_id = len(self.ops)
        constant = self.ops[word]
        self.ops.append(
            Operation(
                op_id,
                Kind.HASH,
                owner=0,
                operands=(source,),
                lane=lane,
                name=f"{constant.name or constant.value} (HASH)",
                span=constant.span,
            )
        )
        self.same_word[op_id] = word
        self.node_ops[0].insert(0, op_id)

    def zeros(self) -> None:
        needed = self._constants_in_registers(zero=True)
        zero = next((c for c in needed if self.ops[c].value == 0), None)
        if zero is None:
            return
        inputs = [o.id for o in self.ops if o.kind in (Kind.PARAM, Kind.PEEK, Kind.META)]
        for x in inputs:
            self._add(0, AluOp.XOR, x, x, zero, None)
            # AND x, 0: with 0 LOAD_IMM'd in B, the lane's own input stays put in A (XOR x, x
            # needs x in both registers).
            self._add(0, AluOp.AND, x, zero, zero, None)

    def _constants_in_registers(self, zero: bool = False) -> list[int]:
        """Non-zero (or with ``zero``, all) constants some operation, epilog or branch
        needs in a register."""
        ops, p = self.ops, self.problem
        used: set[int] = set()
        for op in ops:
            # A HASH computing a constant reads one too (.hashes); the ALU ones do not count.
            if op.kind is Kind.HASH or (
                op.kind in (Kind.ALU, Kind.MEM) and op.id not in self.same_word
            ):
                used |= set(op.operands)
        for node in p.nodes:
            if isinstance(node.end, Branch):
                continue  # a branch takes a constant as an immediate
            used |= set(exit_values(p, node.end))
        return sorted(c for c in used if ops[c].kind is Kind.CONST and (zero or ops[c].value != 0))

    def result(self) -> Problem:
        if self.same_word == self.problem.same_word:
            return self.problem
        nodes = tuple(
            TreeNode(n.id, n.parent, tuple(self.node_ops[n.id]), n.end, n.label)
            for n in self.problem.nodes
        )
        return replace(self.problem, ops=tuple(self.ops), nodes=nodes, same_word=self.same_word)
