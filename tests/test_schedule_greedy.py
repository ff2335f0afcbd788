"""The greedy list scheduler (dpfc.schedule.greedy): every schedule it returns is valid.

Validity is judged by an independent symbolic re-execution of the schedule
(:func:`_violations`, the machine rules of dpfc/schedule/schedule.py: prolog order, selector
and lane semantics, bindings and pins, branch views, immediates, spans, epilogs); once
``dpfc.schedule.check`` exists its ``check_schedule`` is used as well. Inputs: hand-built
Problems of the paper's apps (the EU counts of the paper's hand schedules), seeded random
Problems on five profiles (tofino1, tofino2, a 2-lane profile, selected/loaded operand
views), and, once ``dpfc.schedule.problem.build`` exists, every example DPF.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import itertools
import random
from pathlib import Path
from typing import Any

import pytest

from dpfc.isa.bundle import RegClass, Register
from dpfc.isa.opcodes import AluOp, CtrlOp, MemOp, SelectorKind
from dpfc.schedule import (
    ArrayInfo,
    Branch,
    Exit,
    Kind,
    Operation,
    Problem,
    Schedule,
    TreeNode,
    greedy_schedule,
)
from dpfc.target import BUILTIN_PROFILES
from dpfc.target.profile import BranchOperands, MemoryAddress, TargetProfile

ROOT = Path(__file__).resolve().parent.parent
T1 = BUILTIN_PROFILES["tofino1"]
PROFILES: dict[str, TargetProfile] = {
    "tofino1": T1,
    "tofino2": BUILTIN_PROFILES["tofino2"],
    "two_lane": dataclasses.replace(
        T1, name="two_lane", lanes=2, hash_functions=("crc32", "crc32c")
    ),
    "selected": dataclasses.replace(
        T1,
        name="selected",
        branch_operands=BranchOperands.SELECTED,
        memory_address=MemoryAddress.SELECTED,
    ),
    "loaded": dataclasses.replace(T1, name="loaded", branch_operands=BranchOperands.LOADED),
}
HAVE_CHECK = importlib.util.find_spec("dpfc.schedule.check") is not None
HAVE_BUILD = importlib.util.find_spec("dpfc.schedule.problem.build") is not None

JUNK = -1


# -- an independent validator: re-run every path symbolically ---------------------------------
def _violations(s: Schedule) -> list[str]:
    p = s.problem
    prof = p.profile
    L = prof.lanes
    out: list[str] = []

    def idx(reg: Register) -> int:
        return reg.cls.value * L + reg.lane

    zero = next((o.id for o in p.ops if o.kind is Kind.CONST and o.value == 0), JUNK)
    params = {o.index: o.id for o in p.ops if o.kind is Kind.PARAM}
    peek = next((o.id for o in p.ops if o.kind is Kind.PEEK), None)
    state = [zero] * (2 * L)
    pos, last = 0, -1
    for load in s.prolog:
        r = idx(load.dest)
        if r <= last:
            out.append("prolog not in register order")
        last = r
        if load.kind in (SelectorKind.POP, SelectorKind.PEEK):
            word = params.get(pos, JUNK) if pos < p.params else peek
            if word is None or (JUNK if load.op is None else load.op) != word:
                out.append(f"prolog {load} reads stack word {pos}")
            state[r] = JUNK if word is None else word
            if load.kind is SelectorKind.POP:
                if pos >= p.params:
                    out.append("POP beyond the parameters")
                pos += 1
        else:
            assert load.op is not None
            want = Kind.META if load.kind is SelectorKind.LOAD_MD else Kind.RAND
            if p.ops[load.op].kind is not want:
                out.append(f"prolog {load} loads the wrong kind")
            state[r] = load.op
    if pos != p.params:
        out.append("the prolog does not pop every parameter")
    for n in p.nodes:
        span = s.spans[n.id]
        first = 0 if n.parent is None else s.spans[n.parent].last_eu + 1
        if span.first_eu != first:
            out.append(f"node {n.id} starts in EU{span.first_eu}, not EU{first}")
        if n.is_leaf:
            if first == prof.num_eus:
                if span.last_eu != prof.num_eus - 1:
                    out.append(f"leaf {n.id} span")
            elif not first <= span.last_eu <= prof.num_eus - 1:
                out.append(f"leaf {n.id} span")
        else:
            bare = all(p.nodes[c].is_leaf for c in n.children)
            if not (
                first <= span.last_eu <= prof.num_eus - 2
                or (span.last_eu == prof.num_eus - 1 and bare)
            ):
                out.append(f"node {n.id} branches in EU{span.last_eu}")
        for k in span.eus():
            if not any(x.node == n.id and x.eu == k for x in s.steps):
                out.append(f"node {n.id} has no step in EU{k}")
    per_eu: dict[int, int] = {}
    for placed in s.steps:
        per_eu[placed.eu] = per_eu.get(placed.eu, 0) + 1
    if p.placement == "packet" and max(per_eu.values(), default=0) > prof.packet_bundles_per_stage:
        out.append("too many in-packet bundles in one EU")
    below: dict[int, set[int]] = {}
    for n in reversed(p.nodes):
        below[n.id] = {n.id}.union(*(below[c] for c in n.children))
    mem_runs: dict[int, int] = {}

    def run(t: int, state: list[int]) -> None:
        n = p.nodes[t]
        span = s.spans[t]
        src: Register | int | None  # where a branch operand or the steering value comes from
        for k in span.eus():
            step = s.step(t, k)
            entry = list(state)
            sel = list(entry)
            imms: set[int] = set()
            dests = [x.dest for x in step.selectors]
            if len(set(dests)) != len(dests):
                out.append(f"two selectors write one register ({t}, EU{k})")
            for x in step.selectors:
                r = idx(x.dest)
                if x.kind is SelectorKind.MOV:
                    assert x.source is not None
                    sel[r] = entry[idx(x.source)]
                elif x.kind is SelectorKind.LOAD_IMM:
                    assert x.op is not None
                    if x.dest.cls is not RegClass.B or p.ops[x.op].kind is not Kind.CONST:
                        out.append("bad LOAD_IMM")
                    sel[r] = x.op
                    imms.add(p.ops[x.op].value)
                elif x.kind is SelectorKind.HASH:
                    assert x.op is not None
                    o = p.ops[x.op]
                    ok = x.dest.cls is RegClass.A and o.kind is Kind.HASH and o.lane == x.dest.lane
                    if not ok or entry[r] != o.operands[0] or o.owner not in below[t]:
                        out.append(f"bad HASH ({t}, EU{k})")
                    sel[r] = x.op
                else:
                    out.append(f"selector kind {x.kind}")
            nxt = list(sel)
            loaded = list(sel)
            for a in step.alu:
                o = p.ops[a.op]
                if o.kind is not Kind.ALU or o.owner not in below[t]:
                    out.append(f"ALU op {a.op} in node {t}")
                A, B = sel[a.lane], sel[L + a.lane]
                if o.alu is AluOp.NEG:
                    ok = o.operands[0] == A
                else:
                    x_, y_ = o.operands
                    ok = ((y_, x_) if a.swapped else (x_, y_)) == (A, B)
                    ok = ok and (o.commutative or not a.swapped)
                if not ok:
                    out.append(f"ALU operands of {a.op} ({t}, EU{k})")
                nxt[a.lane] = a.op
            if len({a.lane for a in step.alu}) != len(step.alu):
                out.append("two ALU ops on one lane")
            if len({m.lane for m in step.mem}) != len(step.mem):
                out.append("two memory ops on one lane")
            for m in step.mem:
                o = p.ops[m.op]
                assert o.array is not None
                if o.kind is not Kind.MEM or o.owner != t:
                    out.append(f"memory op {m.op} in node {t}")
                mem_runs[m.op] = mem_runs.get(m.op, 0) + 1
                if s.bindings.get(o.array) != (k, m.lane):
                    out.append(f"array {o.array} accessed in EU{k} lane {m.lane}")
                info = p.arrays.get(o.array)
                if info is not None and info.pin is not None and info.pin != (k, m.lane):
                    out.append(f"pin of {o.array}")
                entry_view = prof.memory_address is MemoryAddress.ENTRY
                address = entry[m.lane] if entry_view else sel[m.lane]
                if address != o.operands[0]:
                    out.append(f"address of {m.op} ({t}, EU{k})")
                if o.mem is not MemOp.LOAD and sel[L + m.lane] != o.operands[1]:
                    out.append(f"data of {m.op} ({t}, EU{k})")
                if o.mem is not MemOp.STORE:
                    nxt[L + m.lane] = loaded[L + m.lane] = m.op
            if k == span.last_eu and isinstance(n.end, Branch):
                views = {
                    BranchOperands.ENTRY: entry,
                    BranchOperands.SELECTED: sel,
                    BranchOperands.LOADED: loaded,
                }
                view = views[prof.branch_operands]
                if step.branch is None:
                    out.append(f"node {t} has no branch")
                else:
                    for src, operand in ((step.branch.x, n.end.x), (step.branch.y, n.end.y)):
                        if isinstance(src, Register):
                            if view[idx(src)] != operand:
                                out.append(f"branch operand ({t}, EU{k})")
                        elif src != operand or p.ops[operand].kind is not Kind.CONST:
                            out.append("bad branch immediate")
                        else:
                            imms.add(p.ops[operand].value)
            elif step.branch is not None:
                out.append(f"stray branch ({t}, EU{k})")
            if len(imms) > prof.immediates_per_bundle:
                out.append(f"too many immediates ({t}, EU{k})")
            state = nxt
        if isinstance(n.end, Exit):
            use = s.exit(t)
            if len(use.push) != len(n.end.push):
                out.append("PUSH length")
            for reg, v in zip(use.push, n.end.push, strict=False):
                if state[idx(reg)] != v:
                    out.append(f"leaf {t} pushes {reg}, which does not hold {v}")
            sv = n.end.steer_value
            if sv is not None:
                src = use.steer_value
                if isinstance(src, Register):
                    if state[idx(src)] != sv:
                        out.append("steering register")
                elif src != sv or p.ops[sv].kind is not Kind.CONST or p.ops[sv].value > 0xFFFF:
                    out.append("steering immediate")
        else:
            for c in n.children:
                run(c, state)

    run(0, state)
    for n in p.nodes:
        for x in n.ops:
            if p.ops[x].kind is Kind.MEM and mem_runs.get(x, 0) != 1:
                out.append(f"memory op {x} runs {mem_runs.get(x, 0)} times")
    if HAVE_CHECK:
        from dpfc.schedule import check_schedule

        out += [f"{v.code}: {v.message}" for v in check_schedule(s)]
    return out


def _assert_valid(s: Schedule | None) -> None:
    if s is not None:
        assert s.scheduler == "greedy"
        assert _violations(s) == []


# -- hand-built Problems of the paper's apps ----------------------------------------------
def cache_get(profile: TargetProfile = T1) -> Problem:
    ops = (
        Operation(0, Kind.PARAM, 0, index=0, name="key"),
        Operation(1, Kind.MEM, 0, (0,), mem=MemOp.LOAD, array="index"),
        Operation(2, Kind.CONST, 0, value=0x80000000),
        Operation(3, Kind.CONST, 0, value=0x7FFFFFFF),
        Operation(4, Kind.ALU, 1, (1, 3), alu=AluOp.AND),
        Operation(5, Kind.MEM, 1, (4,), mem=MemOp.LOAD, array="values0"),
        Operation(6, Kind.MEM, 1, (4,), mem=MemOp.LOAD, array="values1"),
        Operation(7, Kind.MEM, 1, (4,), mem=MemOp.LOAD, array="values2"),
        Operation(8, Kind.CONST, 0, value=1),
        Operation(9, Kind.MEM, 1, (4, 8), mem=MemOp.FAADD, array="hits"),
    )
    nodes = (
        TreeNode(0, None, (1,), Branch(CtrlOp.BSET, 1, 2, 1, 2)),
        TreeNode(1, 0, (4, 5, 6, 7, 9), Exit((0, 5, 6, 7), "return_to_sender", None, None, True)),
        TreeNode(2, 0, (), Exit((0,), chain="count_min.count_min")),
    )
    arrays = {
        n: ArrayInfo(n, m, 45000, pin)
        for n, m, pin in [
            ("index", "direct", (0, 0)),
            ("values0", "segment", (2, 0)),
            ("values1", "segment", (2, 1)),
            ("values2", "segment", (2, 2)),
            ("hits", "segment", (3, 0)),
        ]
    }
    return Problem("kvs", "cache_get", profile, 1, "packet", 1, ops, nodes, arrays)


def count_min(profile: TargetProfile = T1) -> Problem:
    Op = Operation
    ops = (
        Op(0, Kind.PARAM, 0, index=0),
        Op(1, Kind.HASH, 0, (0,), lane=0),
        Op(2, Kind.CONST, 0, value=0x3FF),
        Op(3, Kind.ALU, 0, (1, 2), alu=AluOp.AND),
        Op(4, Kind.CONST, 0, value=1),
        Op(5, Kind.MEM, 0, (3, 4), mem=MemOp.FAADD, array="row0"),
        Op(6, Kind.HASH, 0, (0,), lane=1),
        Op(7, Kind.ALU, 0, (6, 2), alu=AluOp.AND),
        Op(8, Kind.MEM, 0, (7, 4), mem=MemOp.FAADD, array="row1"),
        Op(9, Kind.HASH, 0, (0,), lane=2),
        Op(10, Kind.ALU, 0, (9, 2), alu=AluOp.AND),
        Op(11, Kind.MEM, 0, (10, 4), mem=MemOp.FAADD, array="row2"),
        Op(12, Kind.ALU, 0, (5, 8), alu=AluOp.MIN),
        Op(13, Kind.ALU, 0, (12, 11), alu=AluOp.MIN),
    )
    nodes = (
        TreeNode(0, None, (1, 3, 5, 6, 7, 8, 9, 10, 11, 12, 13), Exit((0, 13), drop_code=True)),
    )
    arrays = {f"row{i}": ArrayInfo(f"row{i}", "segment", 1024, (1, i)) for i in range(3)}
    return Problem("count_min", "count_min", profile, 1, "switch", 1, ops, nodes, arrays)


def paxos(profile: TargetProfile = T1) -> Problem:
    Op = Operation
    ops = (
        Op(0, Kind.PARAM, 0, index=0),
        Op(1, Kind.PARAM, 0, index=1),
        Op(2, Kind.PARAM, 0, index=2),
        Op(3, Kind.MEM, 0, (0, 1), mem=MemOp.FAMAX, array="rounds"),
        Op(4, Kind.MEM, 2, (0, 2), mem=MemOp.STORE, array="values"),
        Op(5, Kind.MEM, 2, (0, 1), mem=MemOp.STORE, array="vrounds"),
        Op(6, Kind.CONST, 0, value=1),
    )
    nodes = (
        TreeNode(0, None, (3,), Branch(CtrlOp.BGT, 3, 1, 1, 2)),
        TreeNode(1, 0, (), Exit((), "drop")),
        TreeNode(2, 0, (4, 5), Exit((0, 1, 2), "multicast", 6)),
    )
    arrays = {
        "rounds": ArrayInfo("rounds", "segment", 4096, (0, 0)),
        "values": ArrayInfo("values", "segment", 4096, (2, 0)),
        "vrounds": ArrayInfo("vrounds", "segment", 4096, (2, 1)),
    }
    return Problem("paxos", "acceptor", profile, 3, "packet", 1, ops, nodes, arrays)


def free_paxos(profile: TargetProfile = T1) -> Problem:
    p = paxos(profile)
    from dataclasses import replace

    return replace(p, arrays={k: replace(v, pin=None) for k, v in p.arrays.items()})


def counter(profile: TargetProfile = T1) -> Problem:
    ops = (
        Operation(0, Kind.PARAM, 0, index=0),
        Operation(1, Kind.CONST, 0, value=1),
        Operation(2, Kind.MEM, 0, (0, 1), mem=MemOp.FAADD, array="counters"),
    )
    nodes = (TreeNode(0, None, (2,), Exit((0, 2))),)
    arrays = {"counters": ArrayInfo("counters", "segment", 4096, (0, 0))}
    return Problem("counter", "counter", profile, 1, "switch", None, ops, nodes, arrays)


# -- random Problems --------------------------------------------------------------------------
ALUS = [
    AluOp.ADD,
    AluOp.SUB,
    AluOp.AND,
    AluOp.OR,
    AluOp.XOR,
    AluOp.LSH,
    AluOp.RSH,
    AluOp.NEG,
    AluOp.MIN,
    AluOp.MAX,
]
MEMS = [MemOp.LOAD, MemOp.STORE, MemOp.FAADD, MemOp.FAMAX, MemOp.FAOR]


def random_problem(seed: int, profile: TargetProfile) -> Problem:
    """A random tree of pure, memory and branch operations (not always schedulable)."""
    rng = random.Random(seed)
    ops: list[Operation] = []
    consts: dict[int, int] = {}

    def add(**kw: Any) -> int:
        o = Operation(len(ops), **kw)
        ops.append(o)
        return o.id

    def const(v: int) -> int:
        if v not in consts:
            consts[v] = add(kind=Kind.CONST, owner=0, value=v)
        return consts[v]

    params = rng.randint(0, 3)
    inputs = [add(kind=Kind.PARAM, owner=0, index=i) for i in range(params) if rng.random() < 0.9]
    if rng.random() < 0.2:
        inputs.append(add(kind=Kind.PEEK, owner=0))
    if rng.random() < 0.3:
        inputs.append(add(kind=Kind.META, owner=0, index=rng.randint(0, 5)))
    if rng.random() < 0.1:
        inputs.append(add(kind=Kind.RAND, owner=0, index=0))
    narr = rng.randint(0, 4)
    arrays: dict[str, ArrayInfo] = {}
    for a in range(narr):
        pin = (
            (rng.randrange(profile.num_eus), rng.randrange(profile.lanes))
            if rng.random() < 0.4
            else None
        )
        arrays[f"a{a}"] = ArrayInfo(f"a{a}", rng.choice(["direct", "segment"]), 64, pin)
    # node id -> node; ids are handed out in preorder, a node's before its children's
    nodes: dict[int, TreeNode] = {}
    node_ids = itertools.count()

    def val(avail: list[int]) -> int:
        if not avail or rng.random() < 0.2:
            return const(rng.choice([0, 1, 7, 0x3FF, 0x80000000, 12345]))
        return rng.choice(avail)

    def build(parent: int | None, avail: list[int], used_arrays: frozenset[str], depth: int) -> int:
        nid = next(node_ids)
        avail = list(avail)
        mine: list[int] = []
        opsd: tuple[int, ...]  # the operands of an operation
        for _ in range(rng.randint(0, 4)):
            r = rng.random()
            if r < 0.45:
                alu = rng.choice(ALUS)
                opsd = (val(avail),) if alu is AluOp.NEG else (val(avail), val(avail))
                v = add(kind=Kind.ALU, owner=nid, operands=opsd, alu=alu)
            elif r < 0.6 and avail:
                v = add(
                    kind=Kind.HASH,
                    owner=nid,
                    operands=(rng.choice(avail),),
                    lane=rng.randrange(profile.lanes),
                )
            else:
                free = [a for a in arrays if a not in used_arrays]
                if not free:
                    continue
                a = rng.choice(free)
                used_arrays = used_arrays | {a}
                m = rng.choice(MEMS)
                opsd = (val(avail),) if m is MemOp.LOAD else (val(avail), val(avail))
                v = add(kind=Kind.MEM, owner=nid, operands=opsd, mem=m, array=a)
                if m is MemOp.STORE:
                    mine.append(v)
                    continue
            mine.append(v)
            avail.append(v)
        end: Branch | Exit
        if depth < 2 and rng.random() < 0.5:
            x, y = val(avail), val(avail)
            t = build(nid, avail, used_arrays, depth + 1)
            f = build(nid, avail, used_arrays, depth + 1)
            end = Branch(rng.choice([CtrlOp.BEQ, CtrlOp.BLT, CtrlOp.BSET, CtrlOp.BGT]), x, y, t, f)
        else:
            push = tuple(val(avail) for _ in range(rng.randint(0, 3)))
            sv = val(avail) if rng.random() < 0.3 else None
            end = Exit(push, "forward" if sv is not None else "pass", sv)
        nodes[nid] = TreeNode(nid, parent, tuple(mine), end)
        return nid

    build(None, inputs, frozenset(), 0)
    return Problem(
        "r",
        f"r{seed}",
        profile,
        params,
        rng.choice(["packet", "switch"]),
        None,
        tuple(ops),
        tuple(nodes[nid] for nid in range(len(nodes))),
        arrays,
    )


# -- tests ------------------------------------------------------------------------------------
def test_kvs_cache_get_fits_four_eus_like_the_paper() -> None:
    s = greedy_schedule(cache_get())
    assert s is not None
    _assert_valid(s)
    assert s.eus_used == 4
    # `i = tuple & INDEX` is speculated into the root's branch EU, once per value lane.
    step = s.step(0, 1)
    assert sorted(a.lane for a in step.alu) == [0, 1, 2]
    assert step.branch is not None


@pytest.mark.parametrize(("make", "eus"), [("count_min", 4), ("paxos", 3), ("counter", 1)])
def test_paper_apps_use_the_hand_schedules_eu_counts(make: str, eus: int) -> None:
    s = greedy_schedule(globals()[make]())
    assert s is not None
    _assert_valid(s)
    assert s.eus_used == eus


def test_free_arrays_get_one_binding_per_unit() -> None:
    s = greedy_schedule(free_paxos())
    assert s is not None
    _assert_valid(s)
    assert s.eus_used == 3
    assert len(set(s.bindings.values())) == 3


def test_max_eus_is_respected_and_result_is_deterministic() -> None:
    assert greedy_schedule(cache_get(), max_eus=3) is None
    first, second = greedy_schedule(paxos()), greedy_schedule(paxos())
    assert first == second
    assert greedy_schedule(paxos(), max_eus=3) == first


@pytest.mark.parametrize("profile", list(PROFILES))
def test_random_problems_get_valid_schedules_or_none(profile: str) -> None:
    fitted = 0
    for seed in range(120):
        s = greedy_schedule(random_problem(seed, PROFILES[profile]))
        _assert_valid(s)
        fitted += s is not None
    assert fitted > 40  # the generator is not all infeasible problems


EXAMPLES = sorted((ROOT / "examples" / "dpf").glob("*.dpf"))


def _problems(path: Path, profile: TargetProfile) -> list[Problem]:
    from dpfc.diagnostics import DiagnosticError
    from dpfc.driver import check_source
    from dpfc.lower import lower_program
    from dpfc.passes.manager import DEFAULT_PIPELINE, run_pipeline
    from dpfc.schedule import build_problem

    try:
        module = lower_program(check_source(path, profile))
        run_pipeline(module, DEFAULT_PIPELINE)
        return [build_problem(module, f, profile) for f in module.functions]
    except DiagnosticError:
        return []


@pytest.mark.skipif(not HAVE_BUILD, reason="dpfc.schedule.problem.build is not written yet")
@pytest.mark.parametrize("profile", ["tofino1", "tofino2", "two_lane"])
@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_example_dpfs(path: Path, profile: str) -> None:
    for problem in _problems(path, PROFILES[profile]):
        _assert_valid(greedy_schedule(problem))


@pytest.mark.skipif(not HAVE_BUILD, reason="dpfc.schedule.problem.build is not written yet")
def test_generated_programs() -> None:
    from dpfc.diagnostics import DiagnosticError, SourceFile
    from dpfc.driver import check_source
    from dpfc.lower import lower_program
    from dpfc.passes.manager import DEFAULT_PIPELINE, run_pipeline
    from dpfc.schedule import build_problem
    from tests.dpf_programs import generate

    for seed in range(60):
        program = generate(seed)
        try:
            module = lower_program(check_source(SourceFile("generated.dpf", program.source)))
            run_pipeline(module, DEFAULT_PIPELINE)
            problems = [build_problem(module, f, T1) for f in module.functions]
        except DiagnosticError:
            continue
        for problem in problems:
            _assert_valid(greedy_schedule(problem))
