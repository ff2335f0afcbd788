"""Running a test file: every case built afresh, its packets sent, their expectations checked.

Contract: :func:`load_test_file` reads a test file (TOML or JSON, the scenario reader's
strictness) and its cases, and builds its network with its code and configuration once (so
a file whose code does not compile is one error, not one per case), or raises
:class:`ScenarioError` located at the line of the key it names (:func:`located`) or the
compiler's :class:`~dpfc.diagnostics.DiagnosticError`. :func:`run_case` runs one case on a :class:`Target` — the
simulator (``jit``: its passes as native code) or a :class:`~.device.Device` — and returns
a :class:`CaseResult`: ``pass``, ``fail`` (with every :class:`~.compare.Mismatch`),
``error`` (the case cannot be built or run: the exception, located) or ``skip`` (a device
cannot hold it, with the reason). Cases are independent: each starts from the file's
network and configuration; code files are read and compiled once per file.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from dpfc.backends.scenario import ScenarioError, Table, key_path, parse_file
from dpfc.catalog import codes
from dpfc.diagnostics import DiagnosticError
from dpfc.switch import SwitchRefused
from dpfc.target import TargetProfile

from .build import CaseBuilder
from .compare import Mismatch, Unchecked, compare
from .device import Device, DeviceRun, device_failure, lane_mappings, unsupported
from .locate import locate
from .observe import Observed, SimRun
from .spec import Case, read_cases

UNKNOWN_KEY = re.compile(r'unknown key ("(?:[^"\\]|\\.)*")')


@dataclass(frozen=True)
class Target:
    """Where cases run: the simulator (``jit``: natively where it can), or ``device``."""

    jit: bool = False
    trace: bool = False
    device: Device | None = None

    @property
    def name(self) -> str:
        if self.device is not None:
            return self.device.name
        return "jit" if self.jit else "sim"


@dataclass
class PacketResult:
    path: str
    mismatches: list[Mismatch] = field(default_factory=list)
    unchecked: list[Unchecked] = field(default_factory=list)


@dataclass
class CaseResult:
    file: str
    index: int
    name: str
    path: str
    status: str  # pass | fail | error | skip
    packets: list[PacketResult] = field(default_factory=list)
    error: ScenarioError | DiagnosticError | None = None
    skipped: str = ""
    trace: str = ""
    native: tuple[int, int] = (0, 0)  # JIT passes run natively, handed to the interpreter


@dataclass
class TestFile:
    file: str
    text: str | None  # the TOML text (None for JSON): where errors are located
    builder: CaseBuilder
    cases: list[Case]
    profile: TargetProfile


def located(exc: ScenarioError, text: str | None) -> ScenarioError:
    """``exc`` with the line and column of the key path its message starts with."""
    if exc.line is not None or text is None:
        return exc
    head, sep, _ = exc.message.partition(": ")
    if not sep:
        return exc
    unknown = UNKNOWN_KEY.search(exc.message)
    if unknown is not None:
        key = json.loads(unknown.group(1))
        head = key_path("" if head == "the top level" else head, key)
    where = locate(text, head)
    if where is not None:
        exc.line, exc.column = where
    return exc


def load_test_file(path: str | Path) -> TestFile:
    file = str(path)
    source = Path(path)
    try:
        data = parse_file(source, file)
    except ScenarioError as exc:
        exc.message = exc.message.replace("a scenario is", "a test file is")
        raise
    text = source.read_text(encoding="utf-8") if source.suffix.lower() == ".toml" else None
    try:
        builder = CaseBuilder(file, source.parent, data)
        cases = read_cases(builder.fail, builder.top, builder.default_tenant)
        profile = builder.prepare().profile
    except ScenarioError as exc:
        raise located(exc, text) from None
    return TestFile(file, text, builder, cases, profile)


def _tenant_tables(test: TestFile, case: Case) -> list[Table]:
    """Every ``tenants`` table a case's switch gets: the file's, its blocks', the case's."""
    tables = test.builder.top.tables("tenants")
    for block in test.builder.top.tables("config"):
        tables += block.tables("tenants")
    return tables + case.table.tables("tenants")


def run_case(test: TestFile, case: Case, target: Target) -> CaseResult:
    result = CaseResult(test.file, case.index, case.name, case.path, "pass")
    builder = test.builder
    try:
        scenario = builder.case(case)
        switch = builder.case_switch(scenario, case)
        packets = [builder.frame(scenario, case, p) for p in case.packets]
        cells = [
            [c for w in p.expect.memory for c in builder.cells(scenario, switch, i.tenant, w)]
            for p, i in zip(case.packets, packets, strict=True)
        ]
        tenant = packets[-1].tenant
        after = [c for w in case.after.memory for c in builder.cells(scenario, switch, tenant, w)]
        runner: SimRun | DeviceRun
        if target.device is not None:
            metadata = any(
                p.table.has(k) for p in case.packets for k in ("timestamp", "queue_depth")
            )
            lanes = lane_mappings(_tenant_tables(test, case))
            reason = unsupported(scenario, switch, lanes=lanes, metadata=metadata)
            if reason is not None or isinstance(lanes, str):
                result.status, result.skipped = "skip", reason or ""
                return result
            seed = builder.base().integer("seed", 0, high=2**63 - 1)
            runner = DeviceRun(target.device, scenario, switch, seed, lanes)
        else:
            runner = SimRun(scenario, jit=target.jit, trace=target.trace)
        seen: Observed | None = None
        reports: list[str] = []
        for packet, sent, wanted in zip(case.packets, packets, cells, strict=True):
            seen = runner.send(sent)
            reports += seen.reports or []
            mismatches, unchecked = compare(packet.expect, wanted, seen, scenario.profile)
            result.packets.append(PacketResult(packet.path, mismatches, unchecked))
            result.trace += seen.trace
        if not case.after.empty() and seen is not None:
            seen.reports = reports if seen.reports is not None else None
            mismatches, unchecked = compare(case.after, after, seen, scenario.profile)
            result.packets.append(PacketResult(case.after.path, mismatches, unchecked))
        if isinstance(runner, SimRun):
            result.native = runner.native_passes
    except ScenarioError as exc:
        result.status, result.error = "error", located(exc, test.text)
        return result
    except DiagnosticError as exc:
        result.status, result.error = "error", exc
        return result
    except SwitchRefused as refused:  # a device refused what the simulator accepted
        message = f"{case.path}: {target.name} refused a request: {refused.message}"
        result.status, result.error = "error", ScenarioError(test.file, refused.code, message)
        return result
    except Exception as exc:
        if target.device is None or not device_failure(exc):
            raise
        message = f"{case.path}: {target.name} failed: {type(exc).__name__}: {exc}"
        result.status = "error"
        result.error = ScenarioError(test.file, codes.SWITCH_REFUSED, message)
        return result
    if any(p.mismatches for p in result.packets):
        result.status = "fail"
    return result


__all__ = [
    "CaseResult",
    "PacketResult",
    "Target",
    "TestFile",
    "load_test_file",
    "located",
    "run_case",
]
