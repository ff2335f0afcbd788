"""``python -m dpfc.bench link``: linking many distinct DPFs into one install image.

The objects are generated first (not timed): ``dpfs`` small in-switch DPFs, each with its
own prolog and first EU bundle (distinct immediates, so nothing of them is shared) and the
same last bundles (shared by all), spread over ``tenants`` tenants whose DPFs all count in
one 64-word array of their own. The timed steps are :func:`dpfc.link.link` (placement,
sharing, resources, capacity checks), writing the image's bytes, and reading them back
strictly; peak memory is measured in a separate run under ``tracemalloc`` (Python
allocations), so that its overhead does not distort the times.
"""

from __future__ import annotations

import statistics
import time
import tracemalloc
from collections.abc import Callable
from dataclasses import dataclass, replace

from dpfc.asm import assemble_text
from dpfc.link import Image, LinkInput, LinkOptions, image_bytes, link, read_image
from dpfc.machine import ArrayBinding, encode_program
from dpfc.objfile import ObjectFile
from dpfc.target import BUILTIN_PROFILES, DEFAULT_PROFILE, TargetProfile

from .results import Result


def _source(k: int) -> str:
    return (
        ".placement switch\n"
        "prolog entry:\n POP A0\n JMP count\n"
        f"eu0 count:\n LOAD_IMM B0, {k + 1}\n FAADD B0, [A0]\n JMP done\n"
        "eu1 done:\n JMP out\neu2 out:\n JMP last\neu3 last:\n HALT reply\n"
        "epilog reply:\n PUSH A0, B0\n FWD return_to_sender\n"
    )


def make_inputs(dpfs: int, tenants: int, profile: TargetProfile) -> list[LinkInput]:
    """``dpfs`` distinct one-DPF objects, round-robin over ``tenants`` tenants."""
    inputs = []
    for k in range(dpfs):
        tenant = 1 + k % tenants
        program = assemble_text(_source(k), f"d{k}.dpfasm", profile)
        counts = ArrayBinding(f"t{tenant}.counts", "segment", 64, 0, 0)
        program = replace(program, name=f"d{k}", arrays=(counts,))
        inputs.append(LinkInput(ObjectFile.of_program(encode_program(program)), tenant))
    return inputs


@dataclass(frozen=True)
class LinkRow:
    step: str
    seconds: float  # median
    min_s: float = 0.0
    max_s: float = 0.0


def _timed(step: str, measure: Callable[[], object], runs: int) -> LinkRow:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        measure()
        times.append(time.perf_counter() - start)
    return LinkRow(step, statistics.median(times), min(times), max(times))


def link_rows(
    dpfs: int = 2000, tenants: int = 100, runs: int = 3, profile_name: str = DEFAULT_PROFILE.name
) -> tuple[list[LinkRow], Image, int, int]:
    """The timed steps, the image, its size in bytes and the peak traced memory of one
    link (bytes)."""
    profile = BUILTIN_PROFILES[profile_name]
    inputs = make_inputs(dpfs, tenants, profile)
    options = LinkOptions(profile=profile)
    image = link(inputs, options)
    data = image_bytes(image)
    rows = [
        _timed("link", lambda: link(inputs, options), runs),
        _timed("write bytes", lambda: image_bytes(image), runs),
        _timed("read bytes", lambda: read_image(data, "bench.dpfimg"), runs),
    ]
    tracemalloc.start()
    link(inputs, options)
    _current, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return rows, image, len(data), peak


def format_link_table(
    rows: list[LinkRow], image: Image, size: int, peak: int, *, dpfs: int, tenants: int, runs: int
) -> str:
    shared = sum(1 for slot in image.code if slot.refs > 1)
    lines = [
        f"dpfc link: {dpfs} distinct DPFs of {tenants} tenants, {image.profile.name}, "
        f"median of {runs} run(s)",
        f"image: {len(image.code)} code slots ({shared} shared), {len(image.memory)} arrays, "
        f"{size:,} bytes",
    ]
    width = max(len(r.step) for r in rows)
    lines += [f"  {r.step.ljust(width)}  {r.seconds:7.3f} s" for r in rows]
    lines.append(f"  {'peak memory of one link (tracemalloc)'}: {peak / 2**20:.1f} MiB")
    return "\n".join(lines) + "\n"


def link_results(rows: list[LinkRow], *, dpfs: int, tenants: int, runs: int) -> list[Result]:
    return [
        Result(
            "link",
            f"{r.step}: {dpfs} DPFs of {tenants} tenants",
            "dpfc link",
            None,
            runs,
            "s",
            r.seconds,
            r.min_s,
            r.max_s,
        )
        for r in rows
    ]


__all__ = ["LinkRow", "format_link_table", "link_results", "link_rows", "make_inputs"]
