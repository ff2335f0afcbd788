"""The scheduler's entities in the source's words, for diagnostics.

Contract: the functions here turn parts of a :class:`~dpfc.schedule.problem.Problem` into
short texts a user recognises, each with the source span to point at: a value
(:func:`value_words`: its variable name, else its source text, else the source text of the
nearest value computed from it, never an IR name such as ``%28``), a branch's decision
(:func:`decision_words`: ```dscp` < 46``, stated from the branch unit's compare, so it is
exact whatever the source's spelling), a path (:func:`path_words`, :func:`path_end`: the
statement a path ends with, e.g. ``forward(2);``, else its last branch — never the DPF's
closing brace when something better exists) and a link of a critical path
(:func:`link_note`, :mod:`dpfc.schedule.problem.chain`). Nothing here decides anything; it only words.
"""

from __future__ import annotations

import re

from dpfc.diagnostics import Note, Span
from dpfc.isa import CtrlOp
from dpfc.schedule.problem.chain import Link
from dpfc.schedule.problem.tree import Branch, Exit, Kind, Operation, Problem

MAX_TEXT = 48  # characters of source text quoted before it is cut with "..."
MAX_DECISIONS = 4  # branches named in a path's description (the last ones)

# The branch unit's compares, and how the path that does not take the branch reads.
_TAKEN = {
    CtrlOp.BEQ: ("==", "!="),
    CtrlOp.BLT: ("<", ">="),
    CtrlOp.BGT: (">", "<="),
    CtrlOp.BSLT: ("<", ">="),
    CtrlOp.BSGT: (">", "<="),
}


def quoted(span: Span | None) -> str | None:
    """The source text of ``span`` on one line, cut to :data:`MAX_TEXT` characters."""
    if span is None:
        return None
    text = re.sub(r"\s+", " ", span.text()).strip().rstrip(";")
    if not text or text == "}":
        return None
    if len(text) > MAX_TEXT:
        text = text[: MAX_TEXT - 3].rstrip() + "..."
    return f"`{text}`"


def _users(problem: Problem, op_id: int) -> list[int]:
    """The operations that use ``op_id``, in source order."""
    return [o.id for o in sorted(problem.ops, key=source_order) if op_id in o.operands]


def source_order(op: Operation) -> tuple[int, str, int, int]:
    """A sort key that lists operations in the order the source writes them (operation ids
    do not follow it: :mod:`dpfc.schedule.problem.canonical`)."""
    if op.span is None:
        return (1, "", 0, op.id)
    return (0, op.span.source.name, op.span.start, op.id)


def value_words(problem: Problem, op_id: int, *, signed: bool = False) -> tuple[str, Span | None]:
    """A value: ```slack```, ```meta.queue_depth << 2```, ``-64``; with the span to point at.
    A value of no source expression of its own (one the optimiser made) is named by the
    nearest value computed from it: ``a step of `x * 10```."""
    op = problem.ops[op_id]
    if op.kind is Kind.CONST:
        value = op.value - (1 << 32) if signed and op.value >= 1 << 31 else op.value
        return (str(value) if -(1 << 16) < value < 1 << 16 else f"{value:#x}"), None
    if op.name and not op.name.startswith("%"):
        return f"`{op.name}`", op.span
    text = quoted(op.span)
    if text is not None:
        return text, op.span
    frontier, visited = [op_id], set()
    while frontier:
        value = frontier.pop(0)
        if value in visited:
            continue
        visited.add(value)
        found = problem.ops[value]
        text = quoted(found.span)
        if value != op_id and found.name and not found.name.startswith("%"):
            return f"a step of `{found.name}`", found.span
        if value != op_id and text is not None:
            return f"a step of {text}", found.span
        said = _epilog_use(problem, value)
        if said is not None:
            return said
        frontier += _users(problem, value)
    return "a value the optimiser introduced", None


def own_words(problem: Problem, op_id: int) -> str | None:
    """A value's own name or source text (without the quotes), if it has one."""
    op = problem.ops[op_id]
    if op.kind is Kind.CONST or (op.name and not op.name.startswith("%")):
        return value_words(problem, op_id)[0].strip("`")
    text = quoted(op.span)
    return text.strip("`") if text is not None else None


def _epilog_use(problem: Problem, op_id: int) -> tuple[str, Span | None] | None:
    """A value an epilog reads, said by the statement that reads it: the steering value
    of ``forward(...)``, a word of ``push(...)``."""
    for node in problem.nodes:
        end = node.end
        if not isinstance(end, Exit):
            continue
        if end.steer_value == op_id:
            return f"the value `{end.steer}` takes", end.actions.steer or end.span
        if op_id in end.push:
            return "a word `push` pushes", end.actions.push or end.span
    return None


def decision_words(problem: Problem, node: int, taken: bool) -> str:
    """What the branch that ends ``node`` decided on the side ``taken``: ```dscp` < 46``."""
    end = problem.nodes[node].end
    assert isinstance(end, Branch)
    signed = end.op in (CtrlOp.BSLT, CtrlOp.BSGT)
    x, _ = value_words(problem, end.x, signed=signed)
    y, _ = value_words(problem, end.y, signed=signed)
    suffix = " (signed)" if signed else ""
    if end.op is CtrlOp.BSET:
        return f"{x} & {y} {'!=' if taken else '=='} 0"
    yes, no = _TAKEN.get(end.op, ("?", "not ?"))
    return f"{x} {yes if taken else no} {y}{suffix}"


def branch_words(problem: Problem, node: int) -> str:
    """The branch that ends ``node``: its condition as the source wrote it, else as the
    branch unit tests it (its taken side)."""
    return quoted(problem.nodes[node].end.span) or decision_words(problem, node, True)


def decisions(problem: Problem, leaf: int) -> list[str]:
    """The decisions of the branches on the way to ``leaf`` (a node), root first."""
    found: list[str] = []
    child, parent = leaf, problem.nodes[leaf].parent
    while parent is not None:
        end = problem.nodes[parent].end
        assert isinstance(end, Branch)
        found.append(decision_words(problem, parent, end.taken == child))
        child, parent = parent, problem.nodes[parent].parent
    found.reverse()
    return found


def path_words(problem: Problem, leaf: int) -> str:
    """ "the path where `dscp` < 46 and `x` > 3" ("the only path" without branches; the
    last :data:`MAX_DECISIONS` decisions of a deep path)."""
    found = decisions(problem, leaf)
    if not found:
        return "the only path"
    if len(found) > MAX_DECISIONS:
        found = ["...", *found[-MAX_DECISIONS:]]
    if len(found) == 1:
        return f"the path where {found[0]}"
    return f"the path where {', '.join(found[:-1])} and {found[-1]}"


def path_end(problem: Problem, leaf: int) -> tuple[str, Span | None]:
    """What the path to ``leaf`` ends with, and where: the statement that ends it (its
    steering action, push, chain, drop_code or ``return``) when no other path ends there;
    else (paths the optimiser merged into one epilog, or a DPF that just ends) its
    steering action, at its last branch."""
    end = problem.nodes[leaf].end
    assert isinstance(end, Exit)
    shared = {
        id(span)
        for other in problem.leaves()
        if other != leaf and isinstance(ended := problem.nodes[other].end, Exit)
        for span in _end_spans(ended)
    }
    for span in _end_spans(end):
        text = quoted(span)
        if text is not None and id(span) not in shared:
            return f"ends with {text}", span
    parent = problem.nodes[leaf].parent
    at = problem.nodes[parent].end.span if parent is not None else end.span
    said = []
    if end.push:
        values = ", ".join(own_words(problem, v) or "..." for v in end.push)
        said.append(f"`push({values})`")
    if end.steer_value is not None:
        said.append(f"`{end.steer}({own_words(problem, end.steer_value) or '...'})`")
    elif end.steer != "pass":
        said.append(f"`{end.steer}()`")
    if end.chain is not None:
        said.append(f"`chain {end.chain}`")
    return ("ends with " + " and ".join(said) if said else "ends"), at


def _end_spans(end: Exit) -> list[Span | None]:
    actions = end.actions
    return [actions.steer, actions.push, actions.chain, actions.drop_code, end.span]


def chain_notes(problem: Problem, links: list[Link]) -> list[Note]:
    """A critical path (:func:`~dpfc.schedule.problem.chain.critical_path`) as notes, the
    latest step first; a node that follows its parent's branch says so in its own note."""
    notes: list[Note] = []
    for index, link in enumerate(links):
        if link.kind == "follows" and index > 0 and links[index - 1].node == link.node:
            continue  # said by the note before
        if _same_value(problem, links, index - 1, index):
            continue  # one source expression computed in several steps: said by the first
        after = None
        following = links[index + 1] if index + 1 < len(links) else None
        if following is not None and following.kind == "follows" and following.node == link.node:
            parent = problem.nodes[link.node or 0].parent
            if parent is not None:
                after = f", after the branch on {branch_words(problem, parent)}"
        note = link_note(problem, link)
        steps = 1
        while _same_value(problem, links, index + steps - 1, index + steps):
            steps += 1
        if steps > 1:
            first = links[index + steps - 1].eu
            after = f" ({steps} dependent operations from EU{first} on)" + (after or "")
        notes.append(Note(note.message + (after or ""), note.span))
    return notes


def _same_value(problem: Problem, links: list[Link], before: int, index: int) -> bool:
    """Links ``before`` and ``index`` are operations of one source expression (a signed
    ``min`` is three, a condition made a word several)."""
    if before < 0 or index >= len(links):
        return False
    first, second = links[before], links[index]
    if first.kind != "operation" or second.kind != "operation":
        return False
    assert first.operand is not None and second.operand is not None
    return value_words(problem, first.operand) == value_words(problem, second.operand)


def link_note(problem: Problem, link: Link) -> Note:
    """One step of a critical path as a note."""
    eu = f"EU{link.eu}"
    if link.kind == "operation":
        assert link.operand is not None
        op = problem.ops[link.operand]
        value, span = value_words(problem, link.operand)
        if op.kind is Kind.MEM:
            info = problem.arrays.get(op.array or "")
            pinned = ""
            if info is not None and info.pin is not None and info.pin[0] == link.eu:
                by = "pinned" if info.pinned_by == "pin" else f"bound by DPF `{info.pinned_by}`"
                pinned = f" ({by} there)"
            return Note(f"{value} accesses `{op.array}` in {eu} at the earliest{pinned}", span)
        return Note(f"{value} is computed in {eu} at the earliest", span)
    assert link.node is not None
    node = problem.nodes[link.node]
    if link.kind == "branch":
        return Note(
            f"the branch on {branch_words(problem, link.node)} is decided in {eu} at the earliest",
            node.end.span,
        )
    if link.kind == "exit":
        assert link.operand is not None
        value, _ = value_words(problem, link.operand)
        ends, span = path_end(problem, link.node)
        return Note(
            f"{path_words(problem, link.node)} {ends}, which needs {value} in a register "
            f"after {eu}",
            span,
        )
    if link.kind == "end":
        ends, span = path_end(problem, link.node)
        return Note(f"{path_words(problem, link.node)} {ends} after {eu}", span)
    # "follows" on its own: a node whose first EU comes after its parent's branch
    parent = node.parent
    assert parent is not None
    return Note(
        f"{path_words(problem, link.node)} begins in {eu}, after the branch on "
        f"{branch_words(problem, parent)}",
        problem.nodes[parent].end.span,
    )
