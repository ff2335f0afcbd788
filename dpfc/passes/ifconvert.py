"""If-conversion: a small branch diamond becomes straight-line code with selects.

Example::

    entry:                                  entry:
      %0 = param 0                            %0 = param 0
      %1 = param 1                            %1 = param 1
      %2 = ult %0, %1                         %2 = ult %0, %1
      br %2, lo, hi                           %3 = min %0, %1
    lo:                                       exit push(%3)
      jmp join
    hi:
      jmp join
    join:
      %3 = phi w32 [%0, lo], [%1, hi]
      exit push(%3)

(the phi became ``select %2, %0, %1``, which is ``min``; the join, now reached only from
the head, is merged into it; ``dce`` drops the unused compare.)

Why: on SwitchVM a branch is decided in one EU and each arm runs in the EUs after it, so a
diamond costs the branch EU plus the EUs of its longest arm, whatever the arms do. After
conversion both arms run side by side in spare lanes of the same EUs and the join reads a
select; when the select is a ``min``/``max`` (one ALU op) or a bool mask, the branch EU is
saved. The heuristic, in numbers:

* the head ends in ``br c, T, F``; each arm (T and F, or just T for a triangle
  ``br c, T, J`` with ``T: jmp J``) has the head as only predecessor, ends in ``jmp J``
  (no exit: an arm that leaves the DPF stays a branch), and holds at most
  :data:`MAX_ARM_OPS` ops, none a memory op, RAND or PHI (they run on both paths now, so
  they must be pure: no state change, no extra RAND draw, no extra array access);
* the join needs at most :data:`MAX_SELECTS` selects (phis whose two values differ).

After the rewrite the head jumps to the join; when it is the join's only predecessor the
join is merged into it, so a diamond nested in an arm of another flattens in the same run.

Then, on every select of the function (new or old), cheaper forms:

* ``select (ult|ule) x, y; x, y`` -> ``min x, y`` and with the arms swapped -> ``max``;
  ``select (ugt|uge) x, y; x, y`` -> ``max x, y``, swapped -> ``min`` (MIN/MAX are unsigned);
* bool masks: ``select i1 c, a, false`` -> ``and c, a``; ``select i1 c, true, b`` ->
  ``or c, b``;
* ``select w32 c, 1, 0`` -> ``zext c``; ``select w32 c, 0, 1`` -> ``zext`` of the inverse
  compare when ``c`` is a compare other than TEST.

Requires: a well-formed, acyclic function. Ensures: the same behaviour on every input (only
pure ops are hoisted); the memory accesses, RAND draws and exits of every path unchanged.
"""

from __future__ import annotations

from dpfc.ir import (
    INVERSE_COMPARE,
    MEMORY_OPS,
    SIDE_EFFECT_OPS,
    Block,
    Br,
    Function,
    Instr,
    Jump,
    Op,
    Ty,
    predecessors,
)
from dpfc.passes.base import FunctionPass
from dpfc.passes.rewrite import const_value, leading_phis, remove_instrs, replace_uses
from dpfc.passes.simplifycfg import merge_into

MAX_ARM_OPS = 2  # non-CONST ops per arm (CONSTs are immediates, free in a selector)
MAX_SELECTS = 2
NOT_HOISTED = MEMORY_OPS | SIDE_EFFECT_OPS | {Op.PHI}

MIN_MAX_FORMS = {
    Op.ULT: (Op.MIN, Op.MAX),
    Op.ULE: (Op.MIN, Op.MAX),
    Op.UGT: (Op.MAX, Op.MIN),
    Op.UGE: (Op.MAX, Op.MIN),
}


def convert_function(function: Function) -> bool:
    changed = False
    while _convert_one(function):
        changed = True
    return _cheapen_selects(function) or changed


def _arm_ok(arm: Block, head: str, join: str, preds: dict[str, list[str]]) -> bool:
    if preds[arm.label] != [head]:
        return False
    if not isinstance(arm.term, Jump) or arm.term.target != join:
        return False
    if any(i.op in NOT_HOISTED for i in arm.instrs):
        return False
    return sum(i.op is not Op.CONST for i in arm.instrs) <= MAX_ARM_OPS


def _convert_one(function: Function) -> bool:
    preds = predecessors(function)
    labels = {b.label: b for b in function.blocks}
    for head in function.blocks:
        term = head.term
        if not isinstance(term, Br) or term.then == term.orelse:
            continue
        then, orelse = labels[term.then], labels[term.orelse]
        arms: list[Block]
        if isinstance(then.term, Jump) and then.term.target == orelse.label:
            join, arms, edges = orelse, [then], (then.label, head.label)
        elif isinstance(orelse.term, Jump) and orelse.term.target == then.label:
            join, arms, edges = then, [orelse], (head.label, orelse.label)
        elif isinstance(then.term, Jump):
            join, arms, edges = labels[then.term.target], [then, orelse], (then.label, orelse.label)
        else:
            continue
        if join.label in (head.label, then.label, orelse.label) and len(arms) == 2:
            continue
        if not all(_arm_ok(arm, head.label, join.label, preds) for arm in arms):
            continue
        phis = leading_phis(join.instrs)
        pairs = [(_value(p, edges[0]), _value(p, edges[1])) for p in phis]
        if sum(a is not b for a, b in pairs) > MAX_SELECTS:
            continue
        _hoist(function, head, term.cond, arms, join, phis, pairs, edges)
        return True
    return False


def _value(phi: Instr, label: str) -> Instr:
    return phi.args[phi.incoming.index(label)]


def _hoist(
    function: Function,
    head: Block,
    cond: Instr,
    arms: list[Block],
    join: Block,
    phis: list[Instr],
    pairs: list[tuple[Instr, Instr]],
    edges: tuple[str, str],
) -> None:
    for arm in arms:
        head.instrs.extend(arm.instrs)
        function.blocks.remove(arm)
    copies: dict[int, Instr] = {}
    for phi, (if_true, if_false) in zip(phis, pairs, strict=True):
        value = if_true
        if if_true is not if_false:
            value = Instr(Op.SELECT, [cond, if_true, if_false], phi.ty, hint=phi.hint)
            head.instrs.append(value)
        entries = [
            (a, lbl) for a, lbl in zip(phi.args, phi.incoming, strict=True) if lbl not in edges
        ]
        entries.append((value, head.label))
        if len(entries) == 1:
            copies[id(phi)] = value
        phi.args = [a for a, _ in entries]
        phi.incoming = [lbl for _, lbl in entries]
    head.term = Jump(join.label, head.term.span)
    replace_uses(function, copies)
    remove_instrs(function, set(copies))
    preds = predecessors(function)
    if preds[join.label] == [head.label] and join is not function.blocks[0]:
        # Straight-line now: the join continues the head, so an enclosing diamond whose arm
        # this was can be flattened in the same run.
        merge_into(function, head, join, preds)


def _cheapen_selects(function: Function) -> bool:
    changed = False
    for block in function.blocks:
        out: list[Instr] = []
        for instr in block.instrs:
            if instr.op is Op.SELECT:
                extra = _cheapen(instr)
                if extra is not None:
                    out.extend(extra)
                    changed = True
            out.append(instr)
        block.instrs = out
    return changed


def _cheapen(select: Instr) -> list[Instr] | None:
    """Rewrite ``select`` in place into a cheaper op; returns new instrs to put before it."""
    cond, if_true, if_false = select.args
    if cond.op in MIN_MAX_FORMS and select.ty is Ty.WORD:
        x, y = cond.args
        direct, swapped = MIN_MAX_FORMS[cond.op]
        if if_true is x and if_false is y:
            return _become(select, direct, [x, y])
        if if_true is y and if_false is x:
            return _become(select, swapped, [x, y])
    t, f = const_value(if_true), const_value(if_false)
    if select.ty is Ty.BOOL:
        if f == 0:
            return _become(select, Op.AND, [cond, if_true])
        if t == 1:
            return _become(select, Op.OR, [cond, if_false])
        return None
    if (t, f) == (1, 0):
        return _become(select, Op.ZEXT, [cond])
    if (t, f) == (0, 1) and cond.op in INVERSE_COMPARE:
        inverse = Instr(INVERSE_COMPARE[cond.op], list(cond.args), Ty.BOOL)
        _become(select, Op.ZEXT, [inverse])
        return [inverse]
    return None


def _become(instr: Instr, op: Op, args: list[Instr]) -> list[Instr]:
    instr.op = op
    instr.args = args
    return []


PASS = FunctionPass(
    "ifconvert", "turn small branch diamonds into selects (min/max/masks)", convert_function
)
