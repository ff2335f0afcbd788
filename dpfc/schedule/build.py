"""Optimised SSA IR -> the scheduling :class:`~dpfc.schedule.problem.Problem` of one DPF.

Contract: the input is a verified, optimised IR function (``DEFAULT_PIPELINE`` has run: no
loops, no MUL by a constant). The output is the tree of paths the scheduler places, or a
user diagnostic (DPF6001-6006) for what SwitchVM cannot run.

* **Tree of paths.** The CFG is walked from the entry; Jumps continue the current tree node,
  so a join block is copied into every path that reaches it and its φs take the value of the
  predecessor on that path. Nodes are numbered in preorder (taken subtree first).
* **Booleans become branches.** A condition is kept symbolic (a compare, ``and``/``or``/
  ``xor``/``select`` of conditions, or a constant) until something needs it: a ``br`` turns
  it into a decision tree of :class:`Branch` nodes (``≤ ≥ ≠`` are the strict compares with
  the targets swapped, docs/isa.md item 6); a word ``select``/``zext`` of a condition splits
  the node there, and each child continues the code with its own value.
* **Operations.** Inputs and constants are shared by all paths (constants unique by value);
  a pure operation identical to one on an ancestor node is reused (so code copied into
  several paths does not multiply work the parent could do once); memory operations are
  never merged: each path runs its own copy exactly once.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace

from dpfc.diagnostics import Diagnostic, DiagnosticError, Note, Span
from dpfc.ir.core import COMPARE_OPS, Br, Exit, Function, Instr, Jump, Module, Op, Ty
from dpfc.ir.evaluate import ALU_OPS as BINARY_ALU_OPS
from dpfc.ir.evaluate import COMPARES, MEM_OPS
from dpfc.isa.opcodes import AluOp
from dpfc.isa.semantics import hash_word
from dpfc.schedule.boolwords import bool_op_word, compare_word, select_word
from dpfc.schedule.materialise import materialise_constants
from dpfc.schedule.problem import (
    COMMUTATIVE,
    ArrayInfo,
    Branch,
    Kind,
    Operation,
    Problem,
    TreeNode,
)
from dpfc.schedule.problem import Exit as ProblemExit
from dpfc.target.profile import TargetProfile

# The IR ops' machine counterparts, from the one table the IR evaluator also uses.
ALU_OPS: dict[Op, AluOp] = {**BINARY_ALU_OPS, Op.NEG: AluOp.NEG}


@dataclass(frozen=True)
class Compare:
    op: Op
    x: int  # operation ids
    y: int
    span: Span | None


@dataclass(frozen=True)
class BoolOp:
    op: str  # "and" | "or" | "xor" | "select"
    args: tuple[Cond, ...]


Cond = bool | Compare | BoolOp
Value = int | Cond  # a word (operation id) or a condition


class _Walk:
    """One tree node's view while walking: the IR values and the pure ops it can reuse."""

    def __init__(
        self,
        env: dict[int, Value],
        pure: dict[tuple[object, ...], int],
        known: dict[tuple[str, int, int], frozenset[str]] | None = None,
    ) -> None:
        self.env = env  # id(Instr) -> value
        self.pure = pure  # hash-consing key -> operation id (ops of this node and ancestors)
        # What the branches of the ancestors decided on this path about pairs of values:
        # (order, x, y) with x <= y -> the relations still possible ("lt", "eq", "gt"; order
        # "u"/"s" for unsigned/signed compares, "t" for a bit test, "set"/"clear"). A
        # condition that is then decided (``a >= b`` after ``a < b``, or ``a == b`` after
        # ``a < b`` was true) reuses the branch instead of branching again.
        self.known = known if known is not None else {}

    def copy(self) -> _Walk:
        return _Walk(dict(self.env), dict(self.pure), dict(self.known))

    def outcome(self, cond: Compare) -> bool | None:
        """True/False if the path has decided ``cond``, else None."""
        for key, holds in _relations(cond):
            possible = self.known.get(key)
            if possible is not None and possible <= holds:
                return True
            if possible is not None and not possible & holds:
                return False
        return None

    def decided(self, cond: Compare, outcome: bool) -> _Walk:
        """A copy that knows ``cond`` came out ``outcome``."""
        out = self.copy()
        for key, holds in _relations(cond):
            every = TEST_RELATIONS if key[0] == "t" else ORDER_RELATIONS
            possible = out.known.get(key, every)
            out.known[key] = possible & (holds if outcome else every - holds)
        return out


ORDER_RELATIONS = frozenset({"lt", "eq", "gt"})
TEST_RELATIONS = frozenset({"set", "clear"})
# Each compare: its order and the relations of (x, y) for which it is true.
_HOLDS: dict[Op, tuple[str, frozenset[str]]] = {
    Op.EQ: ("u", frozenset({"eq"})),
    Op.NE: ("u", frozenset({"lt", "gt"})),
    Op.ULT: ("u", frozenset({"lt"})),
    Op.ULE: ("u", frozenset({"lt", "eq"})),
    Op.UGT: ("u", frozenset({"gt"})),
    Op.UGE: ("u", frozenset({"gt", "eq"})),
    Op.SLT: ("s", frozenset({"lt"})),
    Op.SLE: ("s", frozenset({"lt", "eq"})),
    Op.SGT: ("s", frozenset({"gt"})),
    Op.SGE: ("s", frozenset({"gt", "eq"})),
    Op.TEST: ("t", frozenset({"set"})),
}
_MIRROR = {"lt": "gt", "gt": "lt", "eq": "eq"}


def _relations(cond: Compare) -> list[tuple[tuple[str, int, int], frozenset[str]]]:
    """The keys of ``walk.known`` that decide ``cond`` and the relations that make it
    true: operands in id order (mirrored when swapped); an equality is read in both the
    unsigned and the signed order. A bit test is not symmetric: its key keeps the order."""
    order, holds = _HOLDS[cond.op]
    x, y = cond.x, cond.y
    if order != "t" and x > y:
        x, y = y, x
        holds = frozenset(_MIRROR[r] for r in holds)
    keys = [((order, x, y), holds)]
    if cond.op in (Op.EQ, Op.NE):
        keys.append((("s", x, y), holds))
    return keys


class _Builder:
    def __init__(
        self,
        module: Module,
        function: Function,
        profile: TargetProfile,
        bindings: Mapping[str, tuple[int, int]],
        bound_by: Mapping[str, str],
        booleans: str = "branch",
    ) -> None:
        self.module = module
        self.booleans = booleans  # a word select/zext of a condition: "branch" | "alu"
        self.value_conditions = 0  # ... how many the DPF has
        self.function = function
        self.profile = profile
        self.bindings = bindings
        self.bound_by = bound_by
        self.ops: list[Operation] = []
        self.node_parent: list[int | None] = []
        self.node_ops: list[list[int]] = []
        self.node_end: list[Branch | ProblemExit | None] = []
        self.node_label: list[list[str]] = []
        self.node_depth: list[int] = []
        self.node_branches: list[list[Span | None]] = []
        self.shared: dict[tuple[object, ...], int] = {}  # inputs and constants
        numbered = [i for b in function.blocks for i in b.instrs]
        self.number = {id(instr): n for n, instr in enumerate(numbered)}
        rands = [i for i in numbered if i.op is Op.RAND]
        self.rand_index = {id(instr): n for n, instr in enumerate(rands)}
        # Cap the tree: a DPF whose paths cannot fit the EUs is rejected (DPF6003) long
        # before this, but the cap also bounds the work on pathological programs.
        self.max_nodes = 2 ** (profile.num_eus + 2)

    # -- operations ------------------------------------------------------------------------
    def _new_op(self, **fields: object) -> int:
        op_id = len(self.ops)
        self.ops.append(Operation(id=op_id, **fields))  # type: ignore[arg-type]
        return op_id

    def shared_op(self, key: tuple[object, ...], **fields: object) -> int:
        if key not in self.shared:
            self.shared[key] = self._new_op(owner=0, **fields)
        return self.shared[key]

    def const(self, value: int) -> int:
        return self.shared_op(("const", value), kind=Kind.CONST, value=value, name=_hex(value))

    def name(self, instr: Instr) -> str:
        return instr.hint or f"%{self.number.get(id(instr), '?')}"

    # -- nodes -----------------------------------------------------------------------------
    def new_node(self, parent: int | None, span: Span | None) -> int:
        node = len(self.node_ops)
        if node >= self.max_nodes:
            raise DiagnosticError(self._too_many_paths(span))
        self.node_parent.append(parent)
        self.node_ops.append([])
        self.node_end.append(None)
        self.node_label.append([])
        depth = 0 if parent is None else self.node_depth[parent] + 1
        self.node_depth.append(depth)
        branches = [] if parent is None else [*self.node_branches[parent], span]
        self.node_branches.append(branches)
        if depth > self.profile.num_eus:
            raise DiagnosticError(self._too_many_paths(span, node))
        return node

    def _too_many_paths(self, span: Span | None, node: int | None = None) -> Diagnostic:
        spans = self.node_branches[node] if node is not None else []
        notes = tuple(Note("a two-way branch on this path", s) for s in spans if s is not None)
        return Diagnostic(
            "DPF6003",
            f"a path of DPF `{self.function.name}` needs more two-way branches than "
            f"{self.profile.name} has EUs ({self.profile.num_eus}; one branch unit per EU)",
            span or self.function.span,
            notes=notes[:8],
            hint="simplify the conditions, split the DPF with `chain`, or use a profile with "
            "more EUs",
        )

    # -- walking ---------------------------------------------------------------------------
    def walk(self, node: int, label: str, index: int, pred: str | None, walk: _Walk) -> None:
        """Continue the code at ``label``[``index``:] in tree node ``node``."""
        while True:
            block = self.function.block(label)
            if index == 0:
                self.node_label[node].append(label)
                for instr in block.instrs:
                    if instr.op is Op.PHI:
                        if pred is None or pred not in instr.incoming:
                            raise AssertionError(f"phi in {label} without an incoming {pred}")
                        arg = instr.args[instr.incoming.index(pred)]
                        walk.env[id(instr)] = walk.env[id(arg)]
            for position in range(index, len(block.instrs)):
                instr = block.instrs[position]
                if instr.op is Op.PHI:
                    continue
                split = self.instr(node, instr, walk)
                if split is not None:
                    cond, if_true, if_false = split

                    def resume(
                        value: Value,
                        at: int = position,
                        i: Instr = instr,
                        where: str = label,
                        came_from: str | None = pred,
                    ) -> Cont:
                        def go(child: int, w: _Walk) -> None:
                            w.env[id(i)] = value
                            self.walk(child, where, at + 1, came_from, w)

                        return go

                    self.branch_on(node, cond, resume(if_true), resume(if_false), walk, instr.span)
                    return
            term = block.term
            if isinstance(term, Jump):
                pred, label, index = label, term.target, 0
                continue
            if isinstance(term, Br):
                cond = self.cond(walk, term.cond)
                here = label

                def to(target: str, came_from: str = here) -> Cont:
                    def go(child: int, w: _Walk) -> None:
                        self.walk(child, target, 0, came_from, w)

                    return go

                self.branch_on(node, cond, to(term.then), to(term.orelse), walk, term.span)
                return
            assert isinstance(term, Exit)
            self.exit(node, term, walk)
            return

    def word(self, walk: _Walk, instr: Instr) -> int:
        value = walk.env[id(instr)]
        assert isinstance(value, int) and not isinstance(value, bool), instr
        return value

    def cond(self, walk: _Walk, instr: Instr) -> Cond:
        value = walk.env[id(instr)]
        assert isinstance(value, bool | Compare | BoolOp), instr
        return value

    def instr(self, node: int, instr: Instr, walk: _Walk) -> tuple[Cond, Value, Value] | None:
        """Record ``instr``; returns (condition, value if true, value if false) when it is a
        word select that must split the node."""
        op = instr.op
        env = walk.env
        if op is Op.CONST:
            value = instr.imm or 0
            env[id(instr)] = bool(value) if instr.ty is Ty.BOOL else self.const(value)
        elif op is Op.PARAM:
            index = instr.imm or 0
            env[id(instr)] = self.shared_op(
                ("param", index),
                kind=Kind.PARAM,
                index=index,
                name=self.name(instr),
                span=instr.span,
            )
        elif op is Op.PEEK:
            env[id(instr)] = self.shared_op(
                ("peek",), kind=Kind.PEEK, name=self.name(instr), span=instr.span
            )
        elif op is Op.META:
            field = self.profile.metadata_by_name(instr.symbol or "")
            if field is None:
                raise DiagnosticError(
                    Diagnostic(
                        "DPF6007",
                        f"{self.profile.name} has no switch metadata `{instr.symbol}`",
                        instr.span,
                    )
                )
            env[id(instr)] = self.shared_op(
                ("meta", field.index),
                kind=Kind.META,
                index=field.index,
                name=self.name(instr),
                span=instr.span,
            )
        elif op is Op.RAND:
            index = self.rand_index[id(instr)]
            env[id(instr)] = self.shared_op(
                ("rand", index), kind=Kind.RAND, index=index, name=self.name(instr), span=instr.span
            )
        elif op in COMPARE_OPS:
            x, y = (self.word(walk, a) for a in instr.args)
            env[id(instr)] = Compare(op, x, y, instr.span)
        elif op in (Op.AND, Op.OR, Op.XOR) and instr.ty is Ty.BOOL:
            a, b = (self.cond(walk, arg) for arg in instr.args)
            env[id(instr)] = _bool_op(op.value, a, b)
        elif op is Op.SELECT:
            cond = self.cond(walk, instr.args[0])
            on_true, on_false = env[id(instr.args[1])], env[id(instr.args[2])]
            if isinstance(cond, bool):
                env[id(instr)] = on_true if cond else on_false
            elif instr.ty is Ty.BOOL:
                assert not isinstance(on_true, int) or isinstance(on_true, bool)
                assert not isinstance(on_false, int) or isinstance(on_false, bool)
                env[id(instr)] = BoolOp("select", (cond, on_true, on_false))
            else:
                self.value_conditions += 1
                if self.booleans == "branch":
                    return cond, on_true, on_false
                assert isinstance(on_true, int) and isinstance(on_false, int)
                word = self.bool_word(node, walk, cond, instr)
                env[id(instr)] = select_word(
                    word, on_true, on_false, self.alu_of(node, walk, instr)
                )
        elif op is Op.ZEXT:
            cond = self.cond(walk, instr.args[0])
            one, zero = self.const(1), self.const(0)
            if isinstance(cond, bool):
                env[id(instr)] = one if cond else zero
            else:
                self.value_conditions += 1
                if self.booleans == "branch":
                    return cond, one, zero
                env[id(instr)] = self.bool_word(node, walk, cond, instr)
        elif op in ALU_OPS:
            args = tuple(self.word(walk, a) for a in instr.args)
            env[id(instr)] = self.alu_op(node, walk, instr, ALU_OPS[op], args)
        elif op is Op.HASH:
            lane = instr.imm or 0
            if lane >= self.profile.lanes:
                raise DiagnosticError(
                    Diagnostic(
                        "DPF6002",
                        f"hash<{lane}> is lane {lane}'s CRC, but {self.profile.name} has "
                        f"{self.profile.lanes} lanes",
                        instr.span,
                        hint=f"use hash<0> .. hash<{self.profile.lanes - 1}> on this target",
                    )
                )
            args = (self.word(walk, instr.args[0]),)
            operand = self.ops[args[0]]
            if operand.kind is Kind.CONST:
                # The CRC of a constant is a constant: computed here, where the profile
                # (whose hash function lane k runs) is known; the IR cannot fold it.
                crc = hash_word(self.profile.hash_for_lane(lane), operand.value)
                env[id(instr)] = self.const(crc)
                return None
            key = ("hash", lane, args)
            if key not in walk.pure:
                walk.pure[key] = self._owned(
                    node,
                    kind=Kind.HASH,
                    lane=lane,
                    operands=args,
                    name=self.name(instr),
                    span=instr.span,
                )
            env[id(instr)] = walk.pure[key]
        elif op in MEM_OPS:
            args = tuple(self.word(walk, a) for a in instr.args)
            env[id(instr)] = self._owned(
                node,
                kind=Kind.MEM,
                mem=MEM_OPS[op],
                array=instr.symbol,
                operands=args,
                name=self.name(instr),
                span=instr.span,
            )
        elif op is Op.MUL:
            raise DiagnosticError(
                Diagnostic(
                    "DPF6001",
                    "SwitchVM has no multiplier: this multiplication of two run-time values "
                    "cannot run",
                    instr.span,
                    hint="multiply by a constant (it becomes shifts and adds), or precompute "
                    "the product",
                )
            )
        else:
            raise DiagnosticError(
                Diagnostic(
                    "DPF6008",
                    f"the IR operation `{op.value}` has no SwitchVM implementation",
                    instr.span,
                )
            )
        return None

    def alu_op(
        self, node: int, walk: _Walk, instr: Instr, alu: AluOp, args: tuple[int, ...]
    ) -> int:
        """The ALU operation ``alu`` on ``args`` (one per path: reused when an ancestor or
        this node computes it already)."""
        # One operation for x op y and y op x (the operands stay as written).
        key: tuple[object, ...] = ("alu", alu, tuple(sorted(args)) if alu in COMMUTATIVE else args)
        if key not in walk.pure:
            walk.pure[key] = self._owned(
                node, kind=Kind.ALU, alu=alu, operands=args, name=self.name(instr), span=instr.span
            )
        return walk.pure[key]

    def alu_of(self, node: int, walk: _Walk, instr: Instr) -> Callable[[AluOp, int, int], int]:
        def make(alu: AluOp, x: int, y: int) -> int:
            return self.alu_op(node, walk, instr, alu, (x,) if alu is AluOp.NEG else (x, y))

        return make

    def bool_word(self, node: int, walk: _Walk, cond: Cond, instr: Instr) -> int:
        """``cond`` as the word 1 or 0, computed by ALU operations (:mod:`.boolwords`); a
        compare this path has decided already is a constant."""
        if isinstance(cond, Compare):
            outcome = walk.outcome(cond)
            if outcome is not None:
                cond = outcome
        if isinstance(cond, bool):
            return self.const(int(cond))
        alu = self.alu_of(node, walk, instr)
        if isinstance(cond, Compare):
            return compare_word(cond.op, cond.x, cond.y, alu, self.const)
        words = [self.bool_word(node, walk, arg, instr) for arg in cond.args]
        return bool_op_word(cond.op, words, alu, self.const)

    def _owned(self, node: int, **fields: object) -> int:
        op_id = self._new_op(owner=node, **fields)
        self.node_ops[node].append(op_id)
        return op_id

    def branch_on(
        self, node: int, cond: Cond, if_true: Cont, if_false: Cont, walk: _Walk, span: Span | None
    ) -> None:
        """End ``node`` with the decision tree of ``cond``; the continuations run the rest."""
        if isinstance(cond, bool):
            (if_true if cond else if_false)(node, walk)
            return
        if isinstance(cond, Compare):
            outcome = walk.outcome(cond)
            if outcome is not None:  # decided by an ancestor's branch on this path
                (if_true if outcome else if_false)(node, walk)
                return
            kind, swap_operands, swap_targets = COMPARES[cond.op]
            x, y = (cond.y, cond.x) if swap_operands else (cond.x, cond.y)
            first, second = (if_false, if_true) if swap_targets else (if_true, if_false)
            taken = self.new_node(node, span or cond.span)
            first(taken, walk.decided(cond, not swap_targets))
            not_taken = self.new_node(node, span or cond.span)
            second(not_taken, walk.decided(cond, swap_targets))
            self.node_end[node] = Branch(kind, x, y, taken, not_taken, cond.span or span)
            return
        op, args = cond.op, cond.args
        if op == "and":
            a, b = args
            self.branch_on(
                node,
                a,
                lambda n, w: self.branch_on(n, b, if_true, if_false, w, span),
                if_false,
                walk,
                span,
            )
        elif op == "or":
            a, b = args
            self.branch_on(
                node,
                a,
                if_true,
                lambda n, w: self.branch_on(n, b, if_true, if_false, w, span),
                walk,
                span,
            )
        elif op == "xor":
            a, b = args
            self.branch_on(
                node,
                a,
                lambda n, w: self.branch_on(n, b, if_false, if_true, w, span),
                lambda n, w: self.branch_on(n, b, if_true, if_false, w, span),
                walk,
                span,
            )
        else:  # select
            c, a, b = args
            self.branch_on(
                node,
                c,
                lambda n, w: self.branch_on(n, a, if_true, if_false, w, span),
                lambda n, w: self.branch_on(n, b, if_true, if_false, w, span),
                walk,
                span,
            )

    def exit(self, node: int, term: Exit, walk: _Walk) -> None:
        push = tuple(self.word(walk, v) for v in term.push)
        if len(push) > self.profile.max_push:
            raise DiagnosticError(
                Diagnostic(
                    "DPF6004",
                    f"this epilog pushes {len(push)} words but PUSH takes at most "
                    f"{self.profile.max_push} registers on {self.profile.name}",
                    term.actions.push or term.span,
                )
            )
        steer_value = self.word(walk, term.steer_value) if term.steer_value is not None else None
        self.node_end[node] = ProblemExit(
            push, term.steer, steer_value, term.chain, term.drop_code, term.span, term.actions
        )

    # -- the result ------------------------------------------------------------------------
    def arrays(self) -> dict[str, ArrayInfo]:
        out: dict[str, ArrayInfo] = {}
        for name, decl in self.module.arrays.items():
            pin, by = decl.pin, "pin"
            if pin is None and name in self.bindings:
                pin, by = self.bindings[name], self.bound_by.get(name, "an earlier DPF")
            if pin is not None and (pin[0] >= self.profile.num_eus or pin[1] >= self.profile.lanes):
                raise DiagnosticError(
                    Diagnostic(
                        "DPF6005",
                        f"array `{name}` is pinned to EU{pin[0]} lane {pin[1]}, but "
                        f"{self.profile.name} has {self.profile.num_eus} EUs x "
                        f"{self.profile.lanes} lanes",
                        decl.span,
                        hint="change the @pin, or compile for a larger profile",
                    )
                )
            out[name] = ArrayInfo(name, decl.mapping, decl.size, pin, decl.span, by)
        return out

    def problem(self) -> Problem:
        root = self.new_node(None, self.function.span)
        self.walk(root, self.function.blocks[0].label, 0, None, _Walk({}, {}))
        nodes = []
        for node, end in enumerate(self.node_end):
            assert end is not None
            nodes.append(
                TreeNode(
                    node,
                    self.node_parent[node],
                    tuple(self.node_ops[node]),
                    end,
                    "+".join(self.node_label[node]),
                )
            )
        inputs = sum(1 for o in self.ops if o.kind in (Kind.META, Kind.RAND, Kind.PEEK))
        needed = self.function.params + inputs
        if needed > self.profile.registers:
            raise DiagnosticError(
                Diagnostic(
                    "DPF6006",
                    f"the prolog of DPF `{self.function.name}` must load {needed} words (stack "
                    f"parameters, metadata, random words) but has {self.profile.registers} "
                    "registers",
                    self.function.span,
                    hint="pass fewer parameters; pop the rest in a chained DPF",
                )
            )
        attrs = self.function.attrs
        return Problem(
            module=self.module.name,
            name=self.function.name,
            profile=self.profile,
            params=self.function.params,
            placement=attrs.get("placement", "packet"),
            app_id=self.module.app_id,
            ops=tuple(self.ops),
            nodes=tuple(nodes),
            arrays=self.arrays(),
            span=self.function.span,
            pipeline=attrs.get("pipeline", "ingress"),
        )


Cont = Callable[[int, _Walk], None]


def _bool_op(op: str, a: Cond, b: Cond) -> Cond:
    if isinstance(a, bool) and isinstance(b, bool):
        return {"and": a and b, "or": a or b, "xor": a != b}[op]
    if isinstance(a, bool):
        a, b = b, a
    if isinstance(b, bool):
        if op == "and":
            return a if b else False
        if op == "or":
            return True if b else a
        if not b:  # xor false
            return a
    return BoolOp(op, (a, b))


def _hex(value: int) -> str:
    return str(value) if value < 256 else f"{value:#x}"


def build_problem(
    module: Module,
    function: Function,
    profile: TargetProfile,
    *,
    bindings: Mapping[str, tuple[int, int]] | None = None,
    bound_by: Mapping[str, str] | None = None,
    booleans: str = "branch",
) -> Problem:
    """The scheduling problem of ``function`` on ``profile`` (see the module docstring).

    ``bindings`` (array -> (EU, lane)) are the arrays earlier DPFs of the module bound; they
    become pins, attributed to ``bound_by[array]``. ``booleans``: a word select/zext of a
    condition becomes branches ("branch") or ALU operations ("alu", :mod:`.boolwords`).
    Raises DiagnosticError (DPF60xx)."""
    builder = _Builder(module, function, profile, bindings or {}, bound_by or {}, booleans)
    problem = builder.problem()
    problem = replace(problem, booleans=booleans, value_conditions=builder.value_conditions)
    return materialise_constants(problem)
