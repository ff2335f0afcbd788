"""Which program a profile gets, hence which control a simple_switch running it takes.

Contract: the profile decides the program (:func:`staged_program`): a profile of code
format version 2 (the fit profiles) gets the stage-structured program (:mod:`.staged`),
every other profile the SwitchVM program of :mod:`.program`. ``dpfc p4`` generates by it;
:func:`control_for` gives the control of a simple_switch running the program ``dpfc p4``
generated for ``profile``: :class:`~.staged.control.StagedControl` over a
:class:`~.staged.writer.StagedCliWriter` (its fixed entries written: the switch must be
empty) or :class:`~.bmv2_control.Bmv2Control`. With the program's JSON (the switch's own)
the ``crc32_custom`` calculations of HASH get each lane's CRC in both.
"""

from __future__ import annotations

from pathlib import Path

from dpfc.backends.p4.bmv2_control import Bmv2Control
from dpfc.backends.p4.simple_switch_cli import Cli
from dpfc.backends.p4.staged.control import StagedControl
from dpfc.backends.p4.staged.writer import StagedCliWriter
from dpfc.target import TargetProfile

STAGED_FORMAT = 2  # profiles whose in-packet code is format version 2 get the staged program


def staged_program(profile: TargetProfile) -> bool:
    """Whether ``dpfc p4`` writes the stage-structured program for ``profile``."""
    return profile.code_format == STAGED_FORMAT


def control_for(
    cli: Cli, profile: TargetProfile, program_json: Path | str | None = None
) -> Bmv2Control | StagedControl:
    """The control of the simple_switch ``cli`` reaches, running ``profile``'s program
    (module docstring). The stage-structured program's fixed entries are written here, so
    that switch must hold nothing (SwitchRefused, DPF4099, when it holds them already)."""
    if not staged_program(profile):
        return Bmv2Control(cli, profile, program_json)
    writer = StagedCliWriter(cli)
    if program_json is not None:
        text = program_json.read_text() if isinstance(program_json, Path) else program_json
        writer.set_hash_functions(profile, text)
    control = StagedControl(writer, profile)
    control.start()
    return control


__all__ = ["STAGED_FORMAT", "StagedControl", "control_for", "staged_program"]
