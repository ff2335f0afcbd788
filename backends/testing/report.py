"""The results of ``dpfc test`` as text, JSON and JUnit XML.

Contract: :func:`render_case` is one case as text: a status line ``PASS|FAIL|ERROR|SKIP
FILE:LINE: NAME``, then for a failure every mismatch as a small diff (the field, the line
of its expectation, the expected and the observed value on two aligned lines), grouped by
packet when the case has several; :func:`render_summary` is the last line. The JSON
(:func:`results_json`) and the JUnit XML (:func:`junit_xml`: a suite per file, a test
case per case, ``failure`` holding the same diff) say the same. Nothing here depends on
the clock: the same results give the same bytes.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any
from xml.etree import ElementTree

from dpfc.backends.scenario import ScenarioError
from dpfc.diagnostics import Diagnostic, DiagnosticError, SourceFile, render_all

from .locate import locate
from .runner import CaseResult, TestFile

STATUS = {"pass": "PASS", "fail": "FAIL", "error": "ERROR", "skip": "SKIP"}


@dataclass
class Summary:
    target: str
    files: int = 0
    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(STATUS, 0))
    file_errors: int = 0  # files that could not be read

    def add(self, result: CaseResult) -> None:
        self.counts[result.status] += 1

    @property
    def failed(self) -> bool:
        return bool(self.counts["fail"] or self.counts["error"] or self.file_errors)


def _line(test: TestFile | None, path: str) -> int | None:
    if test is None or test.text is None:
        return None
    where = locate(test.text, path)
    return where[0] if where else None


def _where(test: TestFile | None, file: str, path: str) -> str:
    line = _line(test, path)
    return f"{file}:{line}" if line is not None else file


def error_text(exc: ScenarioError | DiagnosticError) -> str:
    """A case's or a file's error, as the CLI prints diagnostics."""
    if isinstance(exc, DiagnosticError):
        return render_all(exc.diagnostics)
    if exc.line is not None:
        try:
            with open(exc.file, encoding="utf-8") as handle:
                source = SourceFile(exc.file, handle.read())
        except (OSError, UnicodeDecodeError):
            source = None
        if source is not None:
            return Diagnostic(exc.code, exc.message, source.span_at(exc.line, exc.column)).render()
    return f"{exc.file}: error[{exc.code}]: {exc.message}"


def diff_lines(test: TestFile | None, result: CaseResult) -> list[str]:
    """The mismatches of a failed case, as indented lines."""
    lines: list[str] = []
    several = len(result.packets) > 1
    for number, packet in enumerate(result.packets, start=1):
        if not packet.mismatches:
            continue
        indent = "  "
        if several:
            label = (
                "after the last packet" if packet.path.endswith(".expect") else f"packet {number}"
            )
            lines.append(f"  {label} ({packet.path}):")
            indent = "    "
        for mismatch in packet.mismatches:
            line = _line(test, mismatch.path)
            at = f" (line {line})" if line is not None else ""
            lines.append(f"{indent}{mismatch.what}{at}:")
            lines.append(f"{indent}  expected {mismatch.expected_text}")
            lines.append(f"{indent}  got      {mismatch.got_text}")
    return lines


def render_case(test: TestFile | None, result: CaseResult, *, trace: bool = False) -> str:
    head = f"{STATUS[result.status]} {_where(test, result.file, result.path)}: {result.name}"
    if result.status == "skip":
        head += f": skipped: {result.skipped}"
    unchecked = sorted({u.what for p in result.packets for u in p.unchecked})
    if unchecked:
        head += f" (not checked here: {', '.join(unchecked)})"
    lines = [head]
    if result.status == "fail":
        lines += diff_lines(test, result)
    if trace and result.trace:
        lines += ["    | " + line for line in result.trace.splitlines()]
    return "\n".join(lines) + "\n"


def render_summary(summary: Summary) -> str:
    counts = summary.counts
    total = sum(counts.values())
    parts = [f"{counts['pass']} passed"]
    for status, word in (("fail", "failed"), ("error", "errors"), ("skip", "skipped")):
        if counts[status]:
            parts.append(
                f"{counts[status]} {word if counts[status] > 1 or status != 'error' else 'error'}"
            )
    if summary.file_errors:
        parts.append(f"{summary.file_errors} file{'s' if summary.file_errors > 1 else ''} not read")
    files = f"{summary.files} file{'s' if summary.files != 1 else ''}"
    cases = f"{total} case{'s' if total != 1 else ''}"
    return f"{cases}: {', '.join(parts)} ({files}, on {summary.target})\n"


def case_json(test: TestFile | None, result: CaseResult, *, trace: bool) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "file": result.file,
        "case": result.path,
        "name": result.name,
        "line": _line(test, result.path),
        "status": result.status,
        "packets": [
            {
                "path": packet.path,
                "mismatches": [
                    {
                        "what": m.what,
                        "path": m.path,
                        "line": _line(test, m.path),
                        "expected": m.expected,
                        "got": m.got,
                        "expected_text": m.expected_text,
                        "got_text": m.got_text,
                    }
                    for m in packet.mismatches
                ],
                "unchecked": [
                    {"what": u.what, "path": u.path, "reason": u.reason} for u in packet.unchecked
                ],
            }
            for packet in result.packets
        ],
        "error": error_text(result.error) if result.error is not None else None,
        "skipped": result.skipped or None,
    }
    if result.native != (0, 0):
        entry["jit"] = {"native": result.native[0], "handed_over": result.native[1]}
    if trace and result.trace:
        entry["trace"] = result.trace
    return entry


def results_json(
    runs: Sequence[
        tuple[str, TestFile | None, list[CaseResult], ScenarioError | DiagnosticError | None]
    ],
    summary: Summary,
    *,
    trace: str = "",
) -> str:
    """``trace``: "" (none), "failed" or "all": whose traces the JSON holds."""
    files = []
    for file, test, results, error in runs:
        files.append(
            {
                "file": file,
                "error": error_text(error) if error is not None else None,
                "cases": [
                    case_json(
                        test, r, trace=trace == "all" or (trace == "failed" and r.status == "fail")
                    )
                    for r in results
                ],
            }
        )
    data = {
        "target": summary.target,
        "files": files,
        "summary": {
            **summary.counts,
            "files": summary.files,
            "files_not_read": summary.file_errors,
        },
    }
    return json.dumps(data, indent=2) + "\n"


def junit_xml(
    runs: Sequence[
        tuple[str, TestFile | None, list[CaseResult], ScenarioError | DiagnosticError | None]
    ],
    summary: Summary,
) -> bytes:
    """JUnit XML: ``testsuites`` > a ``testsuite`` per file > a ``testcase`` per case."""
    root = ElementTree.Element("testsuites", name=f"dpfc test on {summary.target}")
    totals = dict.fromkeys(("tests", "failures", "errors", "skipped"), 0)
    for file, test, results, error in runs:
        suite = ElementTree.SubElement(root, "testsuite", name=file)
        classname = file.removesuffix(".toml").removesuffix(".json").replace("/", ".").strip(".")
        counts = {
            "tests": len(results) + (error is not None),
            "failures": sum(r.status == "fail" for r in results),
            "errors": sum(r.status == "error" for r in results) + (error is not None),
            "skipped": sum(r.status == "skip" for r in results),
        }
        for key, value in counts.items():
            suite.set(key, str(value))
            totals[key] += value
        if error is not None:
            case = ElementTree.SubElement(
                suite, "testcase", classname=classname, name="(reading the file)"
            )
            message = error.message if isinstance(error, ScenarioError) else "it does not compile"
            ElementTree.SubElement(case, "error", message=message).text = error_text(error)
        for result in results:
            case = ElementTree.SubElement(
                suite, "testcase", classname=classname, name=result.name, file=file
            )
            line = _line(test, result.path)
            if line is not None:
                case.set("line", str(line))
            if result.status == "fail":
                count = sum(len(p.mismatches) for p in result.packets)
                word = "mismatch" if count == 1 else "mismatches"
                failure = ElementTree.SubElement(case, "failure", message=f"{count} {word}")
                failure.text = "\n".join(diff_lines(test, result)) + "\n"
            elif result.status == "error" and result.error is not None:
                ElementTree.SubElement(
                    case, "error", message="the case cannot run"
                ).text = error_text(result.error)
            elif result.status == "skip":
                ElementTree.SubElement(case, "skipped", message=result.skipped)
            if result.trace:
                ElementTree.SubElement(case, "system-out").text = result.trace
    for key, value in totals.items():
        root.set(key, str(value))
    ElementTree.indent(root)
    text = ElementTree.tostring(root, encoding="unicode")
    return ('<?xml version="1.0" encoding="utf-8"?>\n' + text + "\n").encode()


__all__ = [
    "STATUS",
    "Summary",
    "case_json",
    "diff_lines",
    "error_text",
    "junit_xml",
    "render_case",
    "render_summary",
    "results_json",
]
