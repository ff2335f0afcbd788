"""The schedule cache: an unchanged DPF costs no solver time and compiles to the same bytes;
what is not a valid entry is ignored (the cache makes compiles faster, never different)."""

from __future__ import annotations

from pathlib import Path

import pytest

from dpfc.diagnostics import SourceFile
from dpfc.driver import CompileOptions, compile_source
from dpfc.objfile import write_object
from dpfc.schedule import ScheduleOptions
from tests.conftest import ROOT

CACHED = CompileOptions(schedule=ScheduleOptions(cache=True))


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("DPFC_CACHE_DIR", str(tmp_path))
    return tmp_path


def _compile(text: str) -> tuple[bytes, bool]:
    compiled = compile_source(SourceFile("flow.dpf", text), CACHED)
    (unit,) = compiled.units
    return write_object(compiled.object()), unit.result.cached


def test_a_second_compile_reads_the_cache_and_gives_the_same_bytes(cache: Path) -> None:
    text = (ROOT / "examples/corpus/flow_counter.dpf").read_text()
    first, was_cached = _compile(text)
    assert not was_cached and len(list(cache.glob("*.json"))) == 1
    second, was_cached = _compile(text)
    assert was_cached and second == first
    # A comment moves every source position but not the schedule: still a hit.
    _, was_cached = _compile("// a new first line\n" + text)
    assert was_cached
    # A different program is a miss.
    _, was_cached = _compile(text.replace("LIMIT = 1000", "LIMIT = 999"))
    assert not was_cached


def test_corrupt_or_foreign_entries_are_ignored(cache: Path) -> None:
    text = (ROOT / "examples/corpus/flow_counter.dpf").read_text()
    first, _ = _compile(text)
    (entry,) = cache.glob("*.json")
    for damaged in ("{not json", '{"format": 99}', entry.read_text().replace('"eu": 1', '"eu": 0')):
        entry.write_text(damaged)
        again, was_cached = _compile(text)
        assert again == first and not was_cached
