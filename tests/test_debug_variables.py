"""The register variables of an object's debug notes (debug version 2, docs/objects.md).

* Compiled code names, for each bundle, the source variable each register holds after it
  (an epilog: when it runs): the tutorial's guard, bundle by bundle, written out here.
* For every example DPF, every bundle has its entry and every name is one of the DPF's
  variables, never a constant or a temporary (``%N``). That a named register holds that
  variable's value when the code runs is checked on traces (tests/test_trace_sources.py).
* Objects round-trip their names; an object of debug version 1 (written before the names
  existed: no ``debug_version``, no ``registers``) still reads, with the same code and no
  names; assembly names no registers.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dpfc.asm import assemble_module
from dpfc.diagnostics import SourceFile
from dpfc.driver import CompileOptions, compile_source
from dpfc.isa import Register
from dpfc.objfile import DEBUG_VERSION, read_object, write_object
from tests.conftest import ROOT

EXAMPLES = sorted((ROOT / "examples" / "dpf").glob("*.dpf"))
FLOW_GUARD = ROOT / "examples" / "dpf" / "flow_guard.dpf"
A = [Register.a(i) for i in range(4)]
B = [Register.b(i) for i in range(4)]


def test_the_guard_names_its_variables_bundle_by_bundle() -> None:
    (dpf,) = compile_source(FLOW_GUARD, CompileOptions()).object().dpfs
    assert dict(dpf.variables) == {
        "entry": {A[0]: "src", B[0]: "port"},  # the prolog popped the two parameters
        "eu0_n0": {B[0]: "port"},  # A0 now holds src ^ port, which no variable names
        "eu1_n0": {A[0]: "flow"},  # hash(...) & 255
        "eu2_n0": {A[0]: "flow", B[0]: "before"},  # fetch_add's old word
        "eu3_n0": {A[0]: "flow", B[0]: "before", B[1]: "before"},  # MOV B1 <- B0 too
        "exit_n1": {A[0]: "flow", B[0]: "before", B[1]: "before"},
        "exit_n2": {A[0]: "flow", B[0]: "before", B[1]: "before"},
    }


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_every_bundle_names_variables_only(path: Path) -> None:
    module = compile_source(path, CompileOptions())
    for unit in module.units:
        compiled = unit.compiled
        names = {op.name for op in compiled.problem.ops}
        labels = {b.label for b in compiled.program.bundles}
        assert set(compiled.variables) == labels
        for label, variables in compiled.variables.items():
            for reg, name in variables.items():
                assert name in names and not name.startswith("%"), (label, reg, name)
                assert not name[0].isdigit(), (label, reg, name)  # a constant's name


def test_objects_round_trip_their_names() -> None:
    obj = compile_source(ROOT / "examples" / "dpf" / "kvs.dpf", CompileOptions()).object()
    data = write_object(obj)
    document = json.loads(data)
    assert document["debug_version"] == DEBUG_VERSION == 2
    again = read_object(data, "kvs.dpfo")
    assert [dict(d.variables) for d in again.dpfs] == [dict(d.variables) for d in obj.dpfs]
    assert any(d.variables[label] for d in again.dpfs for label in d.variables)


def test_an_object_of_debug_version_1_reads_without_names() -> None:
    obj = compile_source(FLOW_GUARD, CompileOptions()).object()
    document = json.loads(write_object(obj))
    del document["debug_version"]
    for dpf in document["dpfs"]:
        for bundle in dpf["bundles"]:
            del bundle["registers"]
    old = read_object(json.dumps(document).encode(), "old.dpfo")
    assert not any(names for d in old.dpfs for names in d.variables.values())
    assert [d.encoded.words for d in old.dpfs] == [d.encoded.words for d in obj.dpfs]
    assert [d.source for d in old.dpfs] == [d.source for d in obj.dpfs]
    # written again, it is an object of the current debug version, with no names
    rewritten = json.loads(write_object(old))
    assert rewritten["debug_version"] == 2
    assert {json.dumps(b["registers"]) for b in rewritten["dpfs"][0]["bundles"]} == {"{}"}


def test_assembly_names_no_registers() -> None:
    path = ROOT / "examples" / "asm" / "counter.dpfasm"
    obj = assemble_module(SourceFile(str(path), path.read_text(encoding="utf-8"))).object()
    document = json.loads(write_object(obj))
    assert document["debug_version"] == 2
    assert all(b["registers"] == {} for d in document["dpfs"] for b in d["bundles"])
