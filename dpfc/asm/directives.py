"""The directives of a DPF (``.dpf``, ``.target``, ``.placement``, ``.pipeline``, ``.app``,
``.entry``, ``.array``; docs/assembly.md): each is checked and its value stored in the
assembler's state.

Contract: a directive with a bad name, argument count or argument is reported (DPF0105;
an unknown ``.target`` is DPF0108) and leaves the state as it was; ``.target`` is ignored
when a profile was given on the command line. ``.module`` is read before, by
:mod:`dpfc.asm.module`, which also splits a file at its ``.dpf`` directives.
"""

from __future__ import annotations

import re

from dpfc.asm.state import (
    DIRECTIVES,
    MAPPINGS,
    WORD_MAX,
    AssemblerState,
    parse_stage,
    suggest,
)
from dpfc.asm.syntax import Directive
from dpfc.catalog import codes
from dpfc.isa import EPILOG_STAGE, PROLOG_STAGE
from dpfc.machine import ArrayBinding, Pipeline, Placement
from dpfc.target import BUILTIN_PROFILES


class DirectiveReader:
    """Reads the directives that open a DPF's section into the assembler's state."""

    def __init__(self, state: AssemblerState) -> None:
        self.state = state

    def read(self, d: Directive) -> None:
        """Check one directive and store its value in the state."""
        if d.name not in DIRECTIVES:
            self.state.error(
                codes.ASM_BAD_DIRECTIVE,
                f"unknown directive `.{d.name}`" + suggest(d.name, DIRECTIVES, "."),
                d.span,
            )
            return
        if d.name == "array":
            self._array(d)
            return
        if len(d.args) != 1:
            self.state.error(
                codes.ASM_BAD_DIRECTIVE, f"`.{d.name}` takes exactly one argument", d.span
            )
            return
        arg = d.args[0]
        if d.name == "app":
            if arg.number is None or not 0 <= arg.number <= WORD_MAX:
                self.state.error(
                    codes.ASM_BAD_DIRECTIVE,
                    "`.app` takes a 32-bit unsigned number (the app-id token)",
                    arg.span,
                )
            else:
                self.state.app_id = arg.number
            return
        if arg.kind != "name":
            self.state.error(codes.ASM_BAD_DIRECTIVE, f"`.{d.name}` takes a name", arg.span)
            return
        if d.name == "dpf":
            self.state.name = arg.text
        elif d.name == "entry":
            self.state.entry_name = (arg.text, arg.span)
        elif d.name == "placement":
            try:
                self.state.placement = Placement(arg.text)
            except ValueError:
                self.state.error(
                    codes.ASM_BAD_DIRECTIVE, "`.placement` is `packet` or `switch`", arg.span
                )
        elif d.name == "pipeline":
            try:
                self.state.pipeline = Pipeline(arg.text)
            except ValueError:
                self.state.error(
                    codes.ASM_BAD_DIRECTIVE, "`.pipeline` is `ingress` or `egress`", arg.span
                )
        elif d.name == "target" and self.state.cli_profile is None:
            if arg.text not in BUILTIN_PROFILES:
                self.state.error(
                    codes.ASM_UNKNOWN_TARGET,
                    f"unknown target `{arg.text}` in `.target`"
                    + suggest(arg.text, list(BUILTIN_PROFILES))
                    + f" (built-in: {', '.join(BUILTIN_PROFILES)})",
                    arg.span,
                    hint="a TOML profile file is given on the command line: --target FILE.toml",
                )
                return
            self.state.profile = BUILTIN_PROFILES[arg.text]

    def _array(self, d: Directive) -> None:
        """``.array NAME direct|segment SIZE eu<k> lane<i>``: an array the DPF uses and
        where it lives (an object's array binding, docs/objects.md)."""
        form = "`.array NAME direct|segment SIZE eu<k> lane<i>`"
        if len(d.args) != 5:
            self.state.error(
                codes.ASM_BAD_DIRECTIVE, f"{form} takes five arguments, got {len(d.args)}", d.span
            )
            return
        name, mapping, size, eu, lane = d.args
        lane_match = re.fullmatch(r"lane(\d+)", lane.text) if lane.kind == "name" else None
        stage = parse_stage(eu.text) if eu.kind == "name" else None
        problems = [
            (name.kind not in ("name", "symbol"), name, "the array's name"),
            (mapping.text not in MAPPINGS, mapping, "`direct` or `segment`"),
            (size.number is None or size.number < 1, size, "a size in words (1 or more)"),
            (stage is None or stage in (PROLOG_STAGE, EPILOG_STAGE), eu, "an EU (`eu0` ..)"),
            (lane_match is None, lane, "a lane (`lane0` ..)"),
        ]
        for bad, operand, wanted in problems:
            if bad:
                self.state.error(
                    codes.ASM_BAD_DIRECTIVE,
                    f"{form}: expected {wanted}, got `{operand.text}`",
                    operand.span,
                )
                return
        assert stage is not None and lane_match is not None and size.number is not None
        eu_index, lane_index = stage - 1, int(lane_match.group(1))
        if eu_index >= self.state.profile.num_eus or lane_index >= self.state.profile.lanes:
            self.state.error(
                codes.ASM_BAD_DIRECTIVE,
                f"{self.state.profile.name} has no EU {eu_index} lane {lane_index} "
                f"({self.state.profile.num_eus} EUs of {self.state.profile.lanes} lanes)",
                d.span,
            )
            return
        if any(a.name == name.text for a in self.state.arrays):
            self.state.error(
                codes.ASM_BAD_DIRECTIVE, f"array `{name.text}` is declared twice", name.span
            )
            return
        self.state.arrays.append(
            ArrayBinding(name.text, mapping.text, size.number, eu_index, lane_index)
        )
