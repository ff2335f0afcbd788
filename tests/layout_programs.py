"""Random DPFs written in several layouts that mean the same thing, for the layout property
of tests/test_schedule_layout.py.

:func:`layouts` builds one program from a seed and returns it in every layout:

* ``"before"``: a pure ``let s = ...`` (over parameters and metadata only) written before
  the ``if`` whose arm (or arms) use it;
* ``"in_arm"``: the same ``let`` written at the top of each arm that uses it (in both arms
  when both use it, which writes the computation twice);
* ``"in_nested"``: when only an ``if`` nested in the then-arm uses it, at the top of that
  nested arm;
* ``"earlier"``: the ``let`` moved up among the statements before the ``if`` (none of them
  uses it);
* ``"shuffled"``: the statements before the ``if`` reordered (they are independent by
  construction: pure ``let``s of parameters, loads and updates of distinct arrays).

Every layout checks (``dpfc check``) and behaves the same; the RMT rule holds because the
statements before the ``if`` use arrays of their own. The programs are small (1-3
parameters, up to four arrays, one ``if`` with an optional nested ``if``), so most of them
compile.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

PARAMS = ("a", "b", "c")
OPS = ("+", "-", "^", "&", "|")


@dataclass(frozen=True)
class Program:
    seed: int
    sources: dict[str, str]  # layout name -> source text


class _Builder:
    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.params = PARAMS[: self.rng.randint(1, 3)]
        self.lets: list[str] = []  # words defined before the `if`
        self.arrays = [f"m{n}" for n in range(4)]
        self.free_arrays = list(self.arrays)

    def leaf(self, names: tuple[str, ...] | list[str]) -> str:
        roll = self.rng.random()
        if roll < 0.15:
            return self.rng.choice(("meta.queue_depth", "meta.packet_length"))
        if roll < 0.3:
            return str(self.rng.choice((1, 2, 3, 7, 46, 100, 2000)))
        return self.rng.choice(list(names))

    def expr(self, names: tuple[str, ...] | list[str], depth: int) -> str:
        if depth <= 0 or self.rng.random() < 0.25:
            return self.leaf(names)
        kind = self.rng.random()
        left, right = self.expr(names, depth - 1), self.expr(names, depth - 1)
        if kind < 0.1:
            return f"hash<{self.rng.randrange(4)}>({left})"
        if kind < 0.2:
            return f"{self.rng.choice(('min', 'max'))}({left}, {right})"
        if kind < 0.3:
            return f"({left} << {self.rng.randint(1, 4)})"
        return f"({left} {self.rng.choice(OPS)} {right})"

    def array(self) -> str | None:
        if not self.free_arrays:
            return None
        return self.free_arrays.pop(self.rng.randrange(len(self.free_arrays)))

    def before(self) -> list[str]:
        """Independent statements: lets of parameters, loads and updates of own arrays."""
        out: list[str] = []
        for number in range(self.rng.randint(0, 3)):
            roll = self.rng.random()
            name = f"v{number}"
            array = self.array() if roll < 0.5 else None
            if array is not None and roll < 0.25:
                out.append(f"let {name} = {array}[{self.rng.choice(self.params)} & 15];")
                self.lets.append(name)
            elif array is not None:
                value = self.expr(self.params, 1)
                out.append(f"{array}[{self.rng.choice(self.params)} & 15] += {value};")
            else:
                out.append(f"let {name} = {self.expr(self.params, 2)};")
                self.lets.append(name)
        return out

    def use(self, names: list[str]) -> list[str]:
        """An arm that uses ``s``: a steering decision, a push or an update of an array."""
        roll = self.rng.random()
        value = f"({self.expr(names, 1)} {self.rng.choice(OPS)} s)"
        if roll < 0.4:
            limit = self.rng.choice(("64", "2000", "7"))
            return [f"if {value} < {limit} {{ forward(2); }} else {{ forward(1); }}"]
        if roll < 0.7:
            return [f"push({value});", "forward(3);"]
        array = self.array()
        if array is None:
            return [f"forward({value} & 7);"]
        return [f"{array}[{value} & 15] += 1;", "forward(4);"]

    def other(self) -> list[str]:
        """An arm that does not use ``s``."""
        names = [*self.params, *self.lets]
        roll = self.rng.random()
        if roll < 0.5:
            return [f"forward({self.rng.randint(0, 3)});"]
        return [f"push({self.expr(names, 1)});", "drop();"]


def _block(lines: list[str], indent: str) -> str:
    return "".join(f"{indent}{line}\n" for line in lines)


def layouts(seed: int) -> Program:
    """One program in every layout that applies (see the module docstring)."""
    build = _Builder(seed)
    before = build.before()
    movable = f"let s = {build.expr(build.params, 2)};"
    names = [*build.params, *build.lets]
    cond = f"{build.expr(names, 1)} > {build.rng.choice((3, 46, 100))}"
    shape = build.rng.choice(("then", "both", "nested"))
    with_s = [*names, "s"]
    then_use, else_use = build.use(with_s), build.other()
    if shape == "both":
        else_use = build.use(with_s)
    nested_cond = f"{build.expr(names, 1)} != {build.rng.randint(0, 9)}"
    tail = [f"push({build.rng.choice(names)} + 1);"] if build.rng.random() < 0.5 else []
    placement = build.rng.choice(("switch", "packet"))
    params = ", ".join(f"{p}: u32" for p in build.params)
    head = "module layout;\n\n" + "".join(f"segment array {a}: u32[16];\n" for a in build.arrays)

    def render(top: list[str], then_lets: list[str], else_lets: list[str], inner: list[str]) -> str:
        then_body = [*then_lets, *then_use]
        if shape == "nested":
            nested = f"if {nested_cond} {{\n" + _block(inner + then_use, " " * 12) + "        }"
            then_body = [*then_lets, nested, "else { forward(5); }"]
        body = _block(top, "    ")
        body += f"    if {cond} {{\n" + _block(then_body, " " * 8) + "    } else {\n"
        body += _block(else_lets + else_use, " " * 8) + "    }\n" + _block(tail, "    ")
        return f"{head}\n@placement({placement})\ndpf f({params}) {{\n{body}}}\n"

    sources = {"before": render([*before, movable], [], [], [])}
    if shape == "nested":
        sources["in_arm"] = render(before, [movable], [], [])
        sources["in_nested"] = render(before, [], [], [movable])
    else:
        sources["in_arm"] = render(before, [movable], [movable] if shape == "both" else [], [])
    if before:
        at = build.rng.randrange(len(before))
        sources["earlier"] = render([*before[:at], movable, *before[at:]], [], [], [])
        # Pure lets moved among the other statements (memory statements keep their order),
        # and, apart, the memory statements reordered among themselves.
        pure = [line for line in before if "[" not in line]
        shuffled = [line for line in before if "[" in line]
        for line in pure:
            shuffled.insert(build.rng.randint(0, len(shuffled)), line)
        sources["shuffled"] = render([*shuffled, movable], [], [], [])
        memory = [line for line in before if "[" in line]
        build.rng.shuffle(memory)
        reordered = [memory.pop(0) if "[" in line else line for line in before]
        sources["memory_reordered"] = render([*reordered, movable], [], [], [])
    return Program(seed, sources)
