"""Random well-typed DPF programs (as source text) and random inputs, for differential tests.

:func:`programs` draws a :class:`GeneratedProgram`: a module with 0-3 constants, 1-3 small
arrays (segment arrays and direct maps, 3-8 words so that indexes fall out of bounds
often), a DPF ``f`` with 0-3 parameters and a body of lets, reassignments, nested
if/else, ``for`` loops, arithmetic/compare/bool expressions, ``min``/``max``/``hash``/
``select``/``rand``/``peek``/``meta``, loads, stores, atomic RMWs and fetch ops, ``push``,
steering, ``drop_code``, ``chain`` and ``return``; and a second DPF ``other`` to chain to.

Every program is meant to pass ``dpfc check``; the generator keeps the rules by
construction:

* types: every operand has the type its operator needs; a literal only appears next to
  a typed operand where signedness matters (compares, ``min``/``max``), so its type is
  never ambiguous; ``>>`` only on ``u32``; ``*`` always has a literal operand;
* the RMT rule: an array is accessed at most once on any path (the arrays used so far on
  the path are tracked; the branches of an ``if`` each start from the state before it);
  loop bodies never touch memory (their iterations share one path);
* at most one steering action, one ``drop_code`` and one ``chain`` per path, none in loop
  bodies; at most :data:`MAX_PUSH` pushed words per path; ``return`` only ends a block;
* ``&&`` / ``||`` operands have no side effects (no rand, no memory), so the result does
  not depend on whether they short-circuit.

A program is built from one integer seed (fast, and reproducible from the seed hypothesis
prints); :func:`inputs_for` draws inputs sized for it.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from hypothesis import strategies as st

from dpfc.target.profile import BUILTIN_PROFILES

PROFILE = BUILTIN_PROFILES["tofino1"]
META_NAMES = tuple(m.name for m in PROFILE.metadata)
MAX_PUSH = 6
INTERESTING = (0, 1, 2, 3, 4, 5, 7, 8, 31, 32, 33, 255, 0x7FFF_FFFF, 0x8000_0000, 0xFFFF_FFFF)
STEER_WITH_VALUE = ("forward", "multicast", "set_port")
STEER_PLAIN = ("return_to_sender", "drop", "pass", "recirculate")

U32, I32, BOOL = "u32", "i32", "bool"


@dataclass(frozen=True)
class ArraySpec:
    name: str
    size: int
    is_map: bool


@dataclass(frozen=True)
class GeneratedProgram:
    seed: int
    source: str = field(repr=False)
    dpf: str
    params: int
    arrays: tuple[ArraySpec, ...]

    def __repr__(self) -> str:
        return f"GeneratedProgram(seed={self.seed}, source=\n{self.source})"


@dataclass
class _Path:
    """What the current path has used: arrays, steering/drop_code/chain, pushed words."""

    arrays: set[str] = field(default_factory=set)
    actions: set[str] = field(default_factory=set)
    pushed: int = 0

    def copy(self) -> _Path:
        return _Path(set(self.arrays), set(self.actions), self.pushed)

    def join(self, other: _Path) -> None:
        self.arrays |= other.arrays
        self.actions |= other.actions
        self.pushed = max(self.pushed, other.pushed)


class _Gen:
    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.consts: dict[str, str] = {}  # name -> type
        self.arrays: list[ArraySpec] = []
        self.scopes: list[dict[str, str]] = []
        self.loop_vars: list[str] = []
        self.counter = 0
        self.in_loop = 0

    # -- helpers ------------------------------------------------------------------------------

    def chance(self, p: float) -> bool:
        return self.rng.random() < p

    def fresh(self, prefix: str) -> str:
        self.counter += 1
        return f"{prefix}{self.counter}"

    def visible(self, ty: str) -> list[str]:
        names: dict[str, str] = {}
        for scope in self.scopes:
            names.update(scope)
        return [n for n, t in names.items() if t == ty]

    def word_literal(self, ty: str) -> str:
        if ty == I32:
            value = self.rng.choice((0, 1, 2, 3, 7, 100, 0x7FFF_FFFF, 0x4000_0000))
            return f"(-{value})" if self.chance(0.4) and value else str(value)
        value = self.rng.choice(INTERESTING) if self.chance(0.6) else self.rng.getrandbits(32)
        return hex(value) if value > 255 else str(value)

    # -- expressions --------------------------------------------------------------------------

    def expr(
        self, ty: str, depth: int, path: _Path, *, typed: bool = False, pure: bool = False
    ) -> str:
        if ty == BOOL:
            return self.bool_expr(depth, path, pure=pure)
        return self.word_expr(ty, depth, path, typed=typed, pure=pure)

    def word_leaf(self, ty: str, path: _Path, *, typed: bool, pure: bool) -> str:
        choices: list[str] = []
        names = self.visible(ty)
        consts = [c for c, t in self.consts.items() if t == ty]
        if names:
            choices += ["var"] * 4
        if consts:
            choices.append("const")
        if ty == U32:
            choices += ["meta", "peek"]
            if self.loop_vars and not typed:
                choices.append("loopvar")
            if not pure:
                choices.append("rand")
        if not typed or not choices:
            choices += ["lit"] * 2
        kind = self.rng.choice(choices)
        if kind == "var":
            return self.rng.choice(names)
        if kind == "const":
            return self.rng.choice(consts)
        if kind == "meta":
            return f"meta.{self.rng.choice(META_NAMES)}"
        if kind == "peek":
            return "peek()"
        if kind == "loopvar":
            return self.rng.choice(self.loop_vars)
        if kind == "rand":
            return "rand()"
        if ty == I32 and typed:
            return f"({self.word_literal(U32)} as i32)"
        return self.word_literal(ty)

    def free_array(self, path: _Path) -> ArraySpec | None:
        if self.in_loop:
            return None
        free = [a for a in self.arrays if a.name not in path.arrays]
        return self.rng.choice(free) if free else None

    def index_expr(self, path: _Path) -> str:
        roll = self.rng.random()
        if roll < 0.35:
            return str(self.rng.randrange(0, 10))
        inner = self.word_expr(U32, 1, path, typed=False, pure=False)
        if roll < 0.8:
            return f"({inner} & 7)"
        return inner

    def word_expr(self, ty: str, depth: int, path: _Path, *, typed: bool, pure: bool) -> str:
        if depth <= 0 or self.chance(0.3):
            return self.word_leaf(ty, path, typed=typed, pure=pure)
        kinds = ["arith"] * 5 + ["unary", "minmax", "select", "cast"]
        if ty == U32:
            kinds += ["hash", "shift", "mul"]
            if not pure and self.free_array(path) is not None:
                kinds += ["load", "load", "fetch"]
        else:
            kinds += ["shl", "mul"]
        kind = self.rng.choice(kinds)
        sub = depth - 1
        if kind == "arith":
            op = self.rng.choice(("+", "-", "&", "|", "^"))
            left = self.word_expr(ty, sub, path, typed=typed, pure=pure)
            right = self.word_expr(ty, sub, path, typed=False, pure=pure)
            if self.chance(0.5) and not typed:
                left, right = right, left
            return f"({left} {op} {right})"
        if kind == "unary":
            op = self.rng.choice(("-", "~"))
            return f"({op}{self.word_expr(ty, sub, path, typed=True, pure=pure)})"
        if kind == "minmax":
            func = self.rng.choice(("min", "max"))
            left = self.word_expr(ty, sub, path, typed=True, pure=pure)
            right = self.word_expr(ty, sub, path, typed=False, pure=pure)
            return f"{func}({left}, {right})"
        if kind == "select":
            cond = self.bool_expr(sub, path, pure=pure)
            yes = self.word_expr(ty, sub, path, typed=True, pure=pure)
            no = self.word_expr(ty, sub, path, typed=False, pure=pure)
            return f"select({cond}, {yes}, {no})"
        if kind == "cast":
            if ty == U32:
                if self.chance(0.3):
                    return f"({self.bool_expr(sub, path, pure=pure)} as u32)"
                return f"({self.word_expr(I32, sub, path, typed=True, pure=pure)} as u32)"
            return f"({self.word_expr(U32, sub, path, typed=True, pure=pure)} as i32)"
        if kind == "hash":
            lane = self.rng.randrange(4)
            return f"hash<{lane}>({self.word_expr(U32, sub, path, typed=False, pure=pure)})"
        if kind in ("shift", "shl"):
            op = "<<" if kind == "shl" or self.chance(0.5) else ">>"
            left = self.word_expr(ty, sub, path, typed=True, pure=pure)
            amount = (
                str(self.rng.randrange(0, 40))
                if self.chance(0.6)
                else self.word_expr(ty, sub, path, typed=False, pure=pure)
            )
            return f"({left} {op} {amount})"
        if kind == "mul":
            factor = self.rng.choice((0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 12, 16, 24, 100, 255, 1024))
            left = self.word_expr(ty, sub, path, typed=True, pure=pure)
            return f"({left} * {factor})" if self.chance(0.5) else f"({factor} * {left})"
        array = self.free_array(path)
        assert array is not None
        path.arrays.add(array.name)
        index = self.index_expr(path)
        if kind == "load":
            return f"{array.name}[{index}]"
        func = self.rng.choice(("fetch_add", "fetch_and", "fetch_or", "fetch_max", "fetch_min"))
        value = self.word_expr(U32, sub, path, typed=False, pure=pure)
        return f"{func}({array.name}[{index}], {value})"

    def bool_expr(self, depth: int, path: _Path, *, pure: bool) -> str:
        roll = self.rng.random()
        names = self.visible(BOOL)
        if depth <= 0 or roll < 0.15:
            if names and self.chance(0.7):
                return self.rng.choice(names)
            return self.rng.choice(("true", "false"))
        sub = depth - 1
        if roll < 0.65:
            ty = self.rng.choice((U32, U32, I32))
            op = self.rng.choice(("==", "!=", "<", "<=", ">", ">="))
            left = self.word_expr(ty, sub, path, typed=True, pure=pure)
            right = self.word_expr(ty, sub, path, typed=False, pure=pure)
            return f"({left} {op} {right})"
        if roll < 0.85:
            op = self.rng.choice(("&&", "||"))
            left = self.bool_expr(sub, path, pure=True)
            right = self.bool_expr(sub, path, pure=True)
            return f"({left} {op} {right})"
        return f"(!{self.bool_expr(sub, path, pure=pure)})"

    # -- statements ---------------------------------------------------------------------------

    def block(self, path: _Path, depth: int, count: int, indent: str) -> list[str]:
        self.scopes.append({})
        lines: list[str] = []
        for position in range(count):
            last = position == count - 1
            lines += self.stmt(path, depth, indent, last=last)
            if lines and lines[-1].strip() == "return;":
                break
        self.scopes.pop()
        return lines

    def stmt(self, path: _Path, depth: int, indent: str, *, last: bool) -> list[str]:
        kinds = ["let"] * 4 + ["assign"] * 3 + ["push"] * 2
        if not self.in_loop:
            if self.free_array(path) is not None:
                kinds += ["store", "store", "fetchstmt"]
            if "steer" not in path.actions:
                kinds += ["steer"]
            if "drop_code" not in path.actions:
                kinds += ["drop_code"]
            if "chain" not in path.actions:
                kinds += ["chain"]
            if last and depth < 2:
                kinds += ["return"]
        if depth < 2:
            kinds += ["if"] * 3
            if not self.in_loop:
                kinds += ["for"]
        kind = self.rng.choice(kinds)
        if kind == "let":
            ty = self.rng.choice((U32, U32, U32, I32, BOOL))
            name = self.fresh("v")
            value = self.expr(ty, self.rng.randint(1, 3), path, typed=(ty != BOOL))
            self.scopes[-1][name] = ty
            annotation = f": {ty}" if ty != U32 or self.chance(0.5) else ""
            return [f"{indent}let {name}{annotation} = {value};"]
        if kind == "assign":
            candidates = [(n, t) for scope in self.scopes for n, t in scope.items()]
            candidates = [(n, t) for n, t in candidates if not n.startswith("p")]
            if not candidates:
                return self.stmt(path, depth, indent, last=last)
            name, ty = self.rng.choice(candidates)
            value = self.expr(ty, self.rng.randint(1, 3), path, typed=(ty != BOOL))
            return [f"{indent}{name} = {value};"]
        if kind == "push":
            loop_factor = 3 if self.in_loop else 1
            room = (MAX_PUSH - path.pushed) // loop_factor
            if room <= 0:
                return [f"{indent}let {self.fresh('v')} = {self.expr(U32, 2, path)};"]
            count = self.rng.randint(1, min(3, room))
            path.pushed += count * loop_factor
            values = ", ".join(self.expr(U32, 2, path) for _ in range(count))
            return [f"{indent}push({values});"]
        if kind == "store":
            array = self.free_array(path)
            assert array is not None
            path.arrays.add(array.name)
            index = self.index_expr(path)
            op = self.rng.choice(("=", "=", "+=", "&=", "|="))
            return [f"{indent}{array.name}[{index}] {op} {self.expr(U32, 2, path)};"]
        if kind == "fetchstmt":
            array = self.free_array(path)
            assert array is not None
            path.arrays.add(array.name)
            func = self.rng.choice(("fetch_add", "fetch_and", "fetch_or", "fetch_max", "fetch_min"))
            index = self.index_expr(path)
            return [f"{indent}{func}({array.name}[{index}], {self.expr(U32, 2, path)});"]
        if kind == "steer":
            path.actions.add("steer")
            if self.chance(0.6):
                action = self.rng.choice(STEER_WITH_VALUE)
                return [f"{indent}{action}({self.expr(U32, 2, path)});"]
            return [f"{indent}{self.rng.choice(STEER_PLAIN)}();"]
        if kind == "drop_code":
            path.actions.add("drop_code")
            return [f"{indent}drop_code();"]
        if kind == "chain":
            path.actions.add("chain")
            return [f"{indent}chain other;"]
        if kind == "return":
            return [f"{indent}return;"]
        if kind == "if":
            return self.if_stmt(path, depth, indent)
        return self.for_stmt(path, depth, indent)

    def if_stmt(self, path: _Path, depth: int, indent: str) -> list[str]:
        cond = self.bool_expr(2, path, pure=False)
        inner = indent + "    "
        then_path = path.copy()
        lines = [f"{indent}if {cond} {{"]
        lines += self.block(then_path, depth + 1, self.rng.randint(1, 3), inner)
        lines.append(f"{indent}}}")
        if self.chance(0.6):
            else_path = path.copy()
            if self.chance(0.3) and depth < 2:
                nested = self.if_stmt(else_path, depth + 1, indent)
                lines[-1] = f"{indent}}} else {nested[0].strip()}"
                lines += nested[1:]
            else:
                lines[-1] = f"{indent}}} else {{"
                lines += self.block(else_path, depth + 1, self.rng.randint(1, 3), inner)
                lines.append(f"{indent}}}")
            then_path.join(else_path)
        path.join(then_path)
        return lines

    def for_stmt(self, path: _Path, depth: int, indent: str) -> list[str]:
        var = self.fresh("k")
        start = self.rng.randrange(0, 3)
        end = start + self.rng.randrange(0, 4)
        self.loop_vars.append(var)
        self.in_loop += 1
        lines = [f"{indent}for {var} in {start}..{end} {{"]
        lines += self.block(path, depth + 1, self.rng.randint(1, 3), indent + "    ")
        lines.append(f"{indent}}}")
        self.in_loop -= 1
        self.loop_vars.pop()
        return lines

    # -- the module ---------------------------------------------------------------------------

    def module(self, seed: int) -> GeneratedProgram:
        lines = ["module generated;", ""]
        for k in range(self.rng.randint(0, 3)):
            name = f"C{k}"
            ty = self.rng.choice((U32, U32, I32))
            value = self.word_literal(ty)
            if ty == I32:
                lines.append(f"const {name}: i32 = {value};")
            else:
                lines.append(
                    f"const {name}: u32 = {value};"
                    if self.chance(0.5)
                    else f"const {name} = {value};"
                )
            self.consts[name] = ty
        for k in range(self.rng.randint(1, 3)):
            spec = ArraySpec(f"m{k}", self.rng.randint(3, 8), self.chance(0.25))
            self.arrays.append(spec)
            if spec.is_map:
                lines.append(f"direct map {spec.name}: u32 -> u32 [{spec.size}];")
            else:
                lines.append(f"segment array {spec.name}: u32[{spec.size}];")
        params = self.rng.randint(0, 3)
        param_types = [self.rng.choice((U32, U32, I32)) for _ in range(params)]
        self.scopes.append({f"p{k}": t for k, t in enumerate(param_types)})
        signature = ", ".join(f"p{k}: {t}" for k, t in enumerate(param_types))
        lines += ["", f"dpf f({signature}) {{"]
        body = self.block(_Path(), 0, self.rng.randint(2, 6), "    ")
        lines += body
        lines += ["}", "", "dpf other() {", "}", ""]
        return GeneratedProgram(
            seed=seed,
            source="\n".join(lines),
            dpf="f",
            params=params,
            arrays=tuple(self.arrays),
        )


def generate(seed: int) -> GeneratedProgram:
    """The program of ``seed`` (deterministic)."""
    return _Gen(seed).module(seed)


def programs() -> st.SearchStrategy[GeneratedProgram]:
    return st.integers(min_value=0, max_value=2**63).map(generate)


@dataclass
class RawInputs:
    stack: list[int]
    memory: dict[str, list[int]]
    meta: dict[str, int]
    rand: list[int]


def inputs_for(program: GeneratedProgram, rng: random.Random) -> RawInputs:
    """Random inputs for ``program``: a stack around its parameter count, full arrays."""

    def word() -> int:
        roll = rng.random()
        if roll < 0.4:
            return rng.choice(INTERESTING)
        if roll < 0.6:
            return rng.randrange(0, 10)
        return rng.getrandbits(32)

    return RawInputs(
        stack=[word() for _ in range(rng.randint(max(0, program.params - 1), program.params + 2))],
        # Words past the declared size too: an out-of-bounds access must neither read nor write them.
        memory={a.name: [word() for _ in range(a.size + 2)] for a in program.arrays},
        meta={m: word() for m in META_NAMES},
        rand=[word() for _ in range(16)],
    )
