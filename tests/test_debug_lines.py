"""Debug lines of epilogs: each epilog instruction names the statement that asked for it.

Issue 13: the epilog's ``PUSH``, steering, ``NEXT_PC`` and ``DROP_CODE`` lines of
``dpfc compile --emit asm``, ``dpfc disasm --source`` (both from the code generator's source
map) and ``--explain`` (the schedule's epilog line) used to point at the DPF's closing
``}``. Where paths that join wrote an action in different statements, the ``if`` whose
arms wrote it is named rather than either arm.
"""

from __future__ import annotations

from dpfc.codegen.emit import format_with_source
from dpfc.diagnostics import SourceFile
from dpfc.driver import CompileOptions, compile_source
from dpfc.schedule import format_grid
from dpfc.target.profile import BUILTIN_PROFILES

SOURCE = """\
segment array seen: u32[16];

dpf first(key: u32) {
    let n = fetch_add(seen[key & 15], 1);
    push(key, n);
    if n > 3 {
        drop();
        drop_code();
    } else {
        forward(n);
        chain second;
    }
}

dpf second(key: u32) {
    if key == 0 {
        forward(1);
    } else {
        forward(2);
    }
}
"""


def _compile() -> dict[str, tuple[str, str]]:
    """Per DPF: the assembly with source notes, and the --explain grid."""
    module = compile_source(
        SourceFile("lines.dpf", SOURCE), CompileOptions(target=BUILTIN_PROFILES["tofino1"])
    )
    return {
        unit.name: (
            format_with_source(unit.compiled),
            format_grid(unit.result.schedule, result=unit.result),
        )
        for unit in module.units
    }


def _notes(asm: str, mnemonic: str) -> list[str]:
    return [
        line.split(";", 1)[1].strip()
        for line in asm.splitlines()
        if line.strip().startswith(mnemonic) and ";" in line
    ]


def test_epilog_instructions_name_their_statements() -> None:
    asm, grid = _compile()["first"]
    assert _notes(asm, "PUSH") == ["lines.dpf:5: push(key, n);"] * 2
    assert "lines.dpf:7: drop();" in _notes(asm, "FWD drop")
    assert _notes(asm, "HDR_MOD") == ["lines.dpf:8: drop_code();"]  # drop_code's instruction
    assert _notes(asm, "FWD forward") == ["lines.dpf:10: forward(n);"]
    assert _notes(asm, "NEXT_PC") == ["lines.dpf:11: chain second;"]
    epilogs = [line for line in grid.splitlines() if line.startswith("epilog")]
    assert any(" L5; drop L7; drop_code L8" in line for line in epilogs), epilogs
    assert any(" L5; forward " in line and line.endswith("; chain second L11") for line in epilogs)


def test_joined_arms_name_their_if() -> None:
    asm, grid = _compile()["second"]
    # `forward(1)` and `forward(2)` may share one epilog (a phi): neither arm is right for
    # both paths, so the line is the `if` whose arms wrote them.
    assert _notes(asm, "FWD forward") == ["lines.dpf:16: if key == 0 {"] * 2
    epilogs = [line for line in grid.splitlines() if line.startswith("epilog")]
    assert epilogs == ["epilog root.T: forward 1 L16", "epilog root.F: forward 2 L16"]
