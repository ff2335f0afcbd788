"""Declarations other than DPF bodies: ``app``, memory sizes and pins, attributes.

Contract: :func:`check_items` fills in :class:`~dpfc.sema.resolve.ModuleInfo.app_id`, each
:class:`~dpfc.sema.resolve.MemoryInfo`'s size and pin and each
:class:`~dpfc.sema.resolve.DpfInfo`'s profile, placement and pipeline, reporting:

* unknown attributes, or ones on the wrong kind of item (DPF5211): memory takes ``@pin``,
  a ``dpf`` takes ``@target``, ``@placement``, ``@ingress``, ``@egress``;
* ``@target`` naming no built-in profile (DPF5212); malformed arguments (DPF5213);
  ``@placement`` other than ``packet`` / ``switch`` (DPF5214); an attribute given twice or
  ``@ingress`` with ``@egress`` (DPF5215);
* ``@pin(eu = E, lane = L)`` outside the profile's EUs and lanes, or a direct map in a lane
  without direct mappings (DPF5216);
* a memory size that is not positive or exceeds one lane (DPF5217); element or key types
  that are not words (DPF5125).

Everything is checked against the one profile the driver resolved for the program
(:func:`dpfc.driver.resolve_profile`: ``--target``, else the ``@target`` every DPF agrees
on, else tofino1).
"""

from __future__ import annotations

from dpfc.catalog import codes
from dpfc.diagnostics import Note, Span, did_you_mean
from dpfc.sema.consteval import ConstEvaluator
from dpfc.sema.report import Reporter
from dpfc.sema.resolve import DpfInfo, MemoryInfo, ModuleInfo
from dpfc.sema.types import SemType
from dpfc.syntax import ast
from dpfc.target import BUILTIN_PROFILES, TargetProfile

DPF_ATTRIBUTES = ("target", "placement", "ingress", "egress")
MEMORY_ATTRIBUTES = ("pin",)
PLACEMENTS = ("packet", "switch")


def _single_name(attr: ast.Attribute) -> str | None:
    if len(attr.args) == 1 and not attr.kwargs:
        arg = attr.args[0]
        if isinstance(arg, ast.Name) and len(arg.parts) == 1:
            return arg.parts[0]
    return None


def _attrs_by_name(
    attrs: tuple[ast.Attribute, ...], allowed: tuple[str, ...], kind: str, report: Reporter
) -> dict[str, ast.Attribute]:
    seen: dict[str, ast.Attribute] = {}
    for attr in attrs:
        if attr.name not in allowed:
            other = "a memory declaration" if kind == "dpf" else "a `dpf`"
            misplaced = attr.name in (MEMORY_ATTRIBUTES if kind == "dpf" else DPF_ATTRIBUTES)
            report.error(
                codes.UNKNOWN_ATTRIBUTE,
                f"`@{attr.name}` applies to {other}, not to a {kind}"
                if misplaced
                else f"unknown attribute `@{attr.name}`",
                attr.span,
                hint=(None if misplaced else did_you_mean(attr.name, allowed, prefix="@"))
                or "attributes here: " + ", ".join(f"@{a}" for a in allowed),
            )
            continue
        first = seen.get(attr.name)
        if first is not None:
            report.error(
                codes.CONFLICTING_ATTRIBUTES,
                f"`@{attr.name}` is given twice",
                attr.span,
                notes=(Note("first given here", first.span),),
            )
            continue
        seen[attr.name] = attr
    return seen


def _with_listing(suggestion: str | None, listing: str) -> str:
    """A suggestion followed by the short list it was chosen from (a new profile's name,
    say, is better answered by the list than by the nearest name alone)."""
    return listing if suggestion is None else f"{suggestion} {listing}"


class ItemChecker:
    def __init__(
        self,
        tables: dict[str, ModuleInfo],
        consts: ConstEvaluator,
        report: Reporter,
        profile: TargetProfile,
    ) -> None:
        self.tables = tables
        self.consts = consts
        self.report = report
        self.profile = profile

    def check(self) -> None:
        for info in self.tables.values():
            self.app(info)
            for dpf in info.dpfs.values():
                self.dpf(dpf)
            for memory in info.memories.values():
                self.memory(memory, self.profile)

    def app(self, info: ModuleInfo) -> None:
        if info.app is None:
            return
        if info.app.value is None:
            info.app_id = 0
            return
        result = self.consts.eval(info.key, info.app.value, what="an app id")
        if result is None:
            return
        value, ty = result
        if ty is SemType.BOOL or not 0 <= value <= 0xFFFF_FFFF:
            self.report.error(
                codes.CONST_OVERFLOW,
                f"an app id is a 32-bit word, got {value}",
                info.app.value.span,
            )
            return
        info.app_id = value

    def dpf(self, dpf: DpfInfo) -> None:
        attrs = _attrs_by_name(dpf.decl.attrs, DPF_ATTRIBUTES, "dpf", self.report)
        # The driver resolved one profile for the program (--target > @target > the
        # default, every @target agreeing); here @target is only checked to be well formed.
        target = attrs.get("target")
        if target is not None:
            name = _single_name(target)
            if name is None:
                self._malformed(target, "`@target` takes one profile name: `@target(tofino1)`")
            elif name not in BUILTIN_PROFILES:
                self.report.error(
                    codes.UNKNOWN_TARGET,
                    f"unknown target profile `{name}`",
                    target.args[0].span,
                    hint=_with_listing(
                        did_you_mean(name, BUILTIN_PROFILES),
                        "built-in profiles: " + ", ".join(BUILTIN_PROFILES),
                    ),
                )
        placement = attrs.get("placement")
        if placement is not None:
            name = _single_name(placement)
            if name is None:
                self._malformed(
                    placement, "`@placement` takes `packet` or `switch`: `@placement(packet)`"
                )
            elif name not in PLACEMENTS:
                self.report.error(
                    codes.BAD_PLACEMENT,
                    f"placement must be `packet` or `switch`, not `{name}`",
                    placement.args[0].span,
                    hint=did_you_mean(name, PLACEMENTS)
                    or "`packet`: the code travels in the packet; `switch`: it is installed "
                    "in the switch's code memory",
                )
            else:
                dpf.placement = name
        for pipeline in ("ingress", "egress"):
            attr = attrs.get(pipeline)
            if attr is None:
                continue
            if attr.args or attr.kwargs:
                self._malformed(attr, f"`@{pipeline}` takes no arguments")
            dpf.pipeline = pipeline
        if "ingress" in attrs and "egress" in attrs:
            first, second = sorted((attrs["ingress"], attrs["egress"]), key=lambda a: a.span.start)
            self.report.error(
                codes.CONFLICTING_ATTRIBUTES,
                "a DPF runs in one pipeline: `@ingress` and `@egress` together",
                second.span,
                notes=(Note(f"`@{first.name}` is given here", first.span),),
            )

    def _malformed(self, attr: ast.Attribute, message: str, hint: str | None = None) -> None:
        self.report.error(codes.ATTRIBUTE_ARGS, message, attr.span, hint=hint)

    def memory(self, memory: MemoryInfo, profile: TargetProfile) -> None:
        decl = memory.decl
        for ref in (decl.elem_type, decl.key_type):
            if ref is not None and ref.name is ast.TypeName.BOOL:
                self.report.error(
                    codes.MEMORY_TYPE,
                    "memory holds words: use `u32` or `i32`, not `bool`",
                    ref.span,
                )
        attrs = _attrs_by_name(decl.attrs, MEMORY_ATTRIBUTES, "memory declaration", self.report)
        pin = attrs.get("pin")
        if pin is not None:
            memory.pin = self.pin(pin, memory, profile)
        is_map = decl.mapping is ast.Mapping.DIRECT
        limit = profile.direct_entries_per_lane if is_map else profile.memory_words_per_lane
        result = self.consts.eval(memory.module, decl.size, what="a memory size")
        if result is None:
            return
        size, ty = result
        if ty is SemType.BOOL:
            self.report.error(
                codes.OPERAND_TYPE, "a memory size is a word, not `bool`", decl.size.span
            )
            return
        if not 1 <= size <= limit:
            what = "direct entries" if is_map else "words"
            self.report.error(
                codes.MEMORY_SIZE,
                f"size of `{decl.name}` is {size}; it must be 1 .. {limit} ({what} per lane "
                f"on {profile.name})",
                decl.size.span,
            )
            return
        memory.size = size

    def pin(
        self, attr: ast.Attribute, memory: MemoryInfo, profile: TargetProfile
    ) -> tuple[int, int] | None:
        values: dict[str, ast.Expr] = {}
        for key, arg in zip(("eu", "lane"), attr.args, strict=False):
            values[key] = arg
        for key, arg in attr.kwargs:
            if key not in ("eu", "lane") or key in values:
                hint = None if key in values else did_you_mean(key, ("eu", "lane"))
                self._malformed(attr, "`@pin` takes `eu = E, lane = L`", hint)
                return None
            values[key] = arg
        if len(attr.args) > 2 or set(values) != {"eu", "lane"}:
            self._malformed(attr, "`@pin` takes `eu = E, lane = L`")
            return None
        numbers: dict[str, int] = {}
        for key, limit in (("eu", profile.num_eus), ("lane", profile.lanes)):
            expr = values[key]
            result = self.consts.eval(memory.module, expr, what=f"a pinned {key}")
            if result is None:
                return None
            value = result[0]
            if not 0 <= value < limit:
                self._pin_range(
                    f"{key} {value} is out of range: {profile.name} has {limit} "
                    f"{'EUs' if key == 'eu' else 'lanes'} (0 .. {limit - 1})",
                    expr.span,
                )
                return None
            numbers[key] = value
        if memory.decl.mapping is ast.Mapping.DIRECT and not profile.lane_has_direct_mapping(
            numbers["lane"]
        ):
            self._pin_range(
                f"lane {numbers['lane']} of {profile.name} has no direct mappings; "
                "pin a direct map to lane 0",
                values["lane"].span,
            )
            return None
        return numbers["eu"], numbers["lane"]

    def _pin_range(self, message: str, span: Span) -> None:
        self.report.error(codes.PIN_RANGE, message, span)
