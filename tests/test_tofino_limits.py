"""The Tofino limits the SwitchVM design rests on (dpfc.backends.p4.tofino_limits), measured.

For every limit and both chips, p4c-barefoot (when found; skipped with the reason otherwise)
compiles the limit's probe at its value and refuses it one step beyond, with the limit's
message. A compiler that moves a boundary fails here, before a design built on the old
value fails somewhere less readable.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from dpfc.backends.p4 import TOFINO_TARGETS, ToolchainMissing
from dpfc.backends.p4.barefoot import compile_tna, find_barefoot
from dpfc.backends.p4.tofino_limits import LIMITS, Limit


def _barefoot() -> Path:
    try:
        return find_barefoot()
    except ToolchainMissing as missing:
        pytest.skip(f"p4c-barefoot not run: {missing}")


def test_every_probe_grows_with_its_size() -> None:
    for limit in LIMITS:
        at, beyond = limit.program(limit.value), limit.program(limit.value + 1)
        assert at != beyond, limit.name
        assert "#include <t2na.p4>" in limit.program(limit.value, "t2na")


@pytest.mark.slow
@pytest.mark.parametrize("chip", sorted(TOFINO_TARGETS))
@pytest.mark.parametrize("limit", LIMITS, ids=lambda limit: limit.name)
def test_the_probe_compiles_at_the_limit_and_is_refused_beyond(
    limit: Limit, chip: str, tmp_path: Path
) -> None:
    barefoot = _barefoot()
    for size, accepted in ((limit.value, True), (limit.value + 1, False)):
        source = tmp_path / f"{limit.name}_{size}.p4"
        source.write_text(limit.program(size, TOFINO_TARGETS[chip]))
        run = compile_tna(barefoot, source, chip, tmp_path / f"out_{size}")
        if accepted:
            assert run.errors == (), (limit.name, size)
            assert run.resources is not None
        else:
            assert not run.compiled, (limit.name, size)
            assert any(limit.refusal in line for line in run.errors), run.errors
