"""A content-addressed cache of schedules: an unchanged DPF costs no solver time.

Contract: :func:`lookup` returns the :class:`~dpfc.schedule.result.ScheduleResult` stored
for a key, rebuilt on the given problem and accepted by the independent checker, or None;
:func:`store` writes one. The key (:func:`cache_key`) is a SHA-256 over everything the result depends on:

* the compiler build: the bytes of every ``dpfc`` source file (a development checkout
  that changes any module gets fresh keys) and the z3 version;
* the target profile's fingerprint;
* the problem without source positions and names (editing a comment or renaming a local
  does not change the schedule, so it hits);
* the options that decide the result (scheduler, resource budget, seed, secondary).

Entries are small JSON files in ``$DPFC_CACHE_DIR`` (default ``~/.cache/dpfc/schedules``),
one per key, written atomically (a temporary file renamed into place, so concurrent
compiles never read half a file). The directory is safe to delete at any time. A file that
does not parse, does not fit the problem or fails the checker is ignored (and replaced on
the next store): the cache can make a compile faster, never different.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from dataclasses import replace
from functools import cache
from pathlib import Path
from typing import Any

from dpfc.isa import Register, SelectorKind
from dpfc.schedule.check import check_schedule
from dpfc.schedule.measures import Measures
from dpfc.schedule.problem.tree import Problem
from dpfc.schedule.result import ScheduleOptions
from dpfc.schedule.schedule import (
    BranchUse,
    ExitUse,
    LaneOp,
    NodeSpan,
    PrologLoad,
    Schedule,
    SelectorAssign,
    Source,
    Step,
)
from dpfc.schedule.z3.adapter import solver_version

FORMAT = 1
PACKAGE = Path(__file__).resolve().parents[1]


def cache_dir() -> Path:
    configured = os.environ.get("DPFC_CACHE_DIR")
    if configured:
        return Path(configured)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "dpfc" / "schedules"


@cache
def _build_id() -> str:
    digest = hashlib.sha256(solver_version().encode())
    for path in sorted(PACKAGE.rglob("*.py")):
        digest.update(str(path.relative_to(PACKAGE)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def _canonical(problem: Problem) -> str:
    ops = tuple(replace(o, span=None, name="") for o in problem.ops)
    nodes = tuple(replace(n, end=replace(n.end, span=None), label="") for n in problem.nodes)
    arrays = sorted((a.name, a.mapping, a.size, a.pin) for a in problem.arrays.values())
    head = (problem.params, problem.placement, problem.app_id, problem.pipeline)
    reserved = sorted(problem.reserved.items())
    return repr((head, ops, nodes, arrays, sorted(problem.same_word.items()), reserved))


def cache_key(problem: Problem, options: ScheduleOptions) -> str:
    """The key of ``problem`` scheduled with ``options`` (see the module docstring)."""
    decided_by = (
        options.scheduler,
        options.budget,
        options.seed,
        options.secondary,
        options.max_eus,
    )
    parts = [_build_id(), problem.profile.fingerprint(), _canonical(problem), repr(decided_by)]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


# -- (de)serialisation ----------------------------------------------------------------------
def _source(source: Source | None) -> Any:
    if source is None or isinstance(source, int):
        return source
    return str(source)


def _register(text: str) -> Register:
    return Register.a(int(text[1:])) if text[0] == "A" else Register.b(int(text[1:]))


def _unsource(value: Any) -> Source | None:
    return value if value is None or isinstance(value, int) else _register(value)


def _schedule_json(schedule: Schedule) -> dict[str, Any]:
    return {
        "prolog": [[str(p.dest), p.kind.name, p.op] for p in schedule.prolog],
        "spans": [[s.node, s.first_eu, s.last_eu] for s in schedule.spans],
        "steps": [
            {
                "node": s.node,
                "eu": s.eu,
                "selectors": [
                    [str(x.dest), x.kind.name, _source(x.source), x.op] for x in s.selectors
                ],
                "alu": [[x.lane, x.op, x.swapped] for x in s.alu],
                "mem": [[x.lane, x.op] for x in s.mem],
                "branch": None if s.branch is None else [_source(s.branch.x), _source(s.branch.y)],
            }
            for s in schedule.steps
        ],
        "exits": [
            [e.node, [str(r) for r in e.push], _source(e.steer_value)] for e in schedule.exits
        ],
        "bindings": {name: list(where) for name, where in sorted(schedule.bindings.items())},
        "scheduler": schedule.scheduler,
    }


def _schedule(problem: Problem, data: dict[str, Any]) -> Schedule:
    steps = []
    for s in data["steps"]:
        selectors = tuple(
            SelectorAssign(_register(d), SelectorKind[k], _unsource(src), op)  # type: ignore[arg-type]
            for d, k, src, op in s["selectors"]
        )
        branch = None if s["branch"] is None else BranchUse(*map(_unsource, s["branch"]))  # type: ignore[arg-type]
        steps.append(
            Step(
                s["node"],
                s["eu"],
                selectors,
                tuple(LaneOp(lane, op, swapped) for lane, op, swapped in s["alu"]),
                tuple(LaneOp(lane, op) for lane, op in s["mem"]),
                branch,
            )
        )
    return Schedule(
        problem,
        tuple(PrologLoad(_register(d), SelectorKind[k], op) for d, k, op in data["prolog"]),
        tuple(NodeSpan(*span) for span in data["spans"]),
        tuple(steps),
        tuple(
            ExitUse(node, tuple(_register(r) for r in push), _unsource(steer))
            for node, push, steer in data["exits"]
        ),
        {name: (where[0], where[1]) for name, where in data["bindings"].items()},
        data["scheduler"],
    )


def lookup(key: str, problem: Problem) -> dict[str, Any] | None:
    """The stored fields of the result for ``key`` with ``schedule`` rebuilt on ``problem``
    and checked, or None (no entry, or one that is unreadable or wrong: ignored)."""
    path = cache_dir() / f"{key}.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if data.get("format") != FORMAT:
            return None
        schedule = _schedule(problem, data["schedule"])
        if check_schedule(schedule):
            return None
        fields = dict(data["result"])
        fields["schedule"] = schedule
        fields["undecided"] = tuple(fields["undecided"])
        for name in ("measures", "greedy_measures"):
            if fields[name] is not None:
                fields[name] = Measures(*fields[name])
        return fields
    except (OSError, ValueError, KeyError, TypeError, IndexError):
        return None


def store(key: str, fields: dict[str, Any]) -> None:
    """Write the result ``fields`` (``schedule`` among them) for ``key``; a cache that
    cannot be written is skipped silently (it only saves time)."""
    result = {k: v for k, v in fields.items() if k != "schedule"}
    for name in ("measures", "greedy_measures"):
        measures = result.get(name)
        if isinstance(measures, Measures):
            result[name] = [
                measures.eus,
                measures.bundles,
                measures.selectors,
                measures.instructions,
                measures.code_bytes,
            ]
    result["undecided"] = list(result.get("undecided", ()))
    data = {"format": FORMAT, "schedule": _schedule_json(fields["schedule"]), "result": result}
    directory = cache_dir()
    try:
        directory.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=directory, suffix=".tmp")
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            json.dump(data, out, sort_keys=True)
        os.replace(temporary, directory / f"{key}.json")
    except OSError:
        return
