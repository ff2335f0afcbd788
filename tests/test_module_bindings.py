"""Every module that compiles also links: each array of a module has an (EU, lane) of its own.

A lane's memory holds one array of a tenant (the linker's DPF7004), and the DPFs of one
module are linked for one tenant. So when :func:`dpfc.schedule.schedule_module` schedules a
DPF, the place of every array that another DPF of the module (of the same pipeline)
accesses — pinned, or bound by a DPF scheduled earlier — is reserved
(``Problem.reserved``): no array of this DPF is bound there, and a ``@pin`` there is
DPF6021. Before, only the arrays the DPF itself accessed were pinned, so two DPFs with an
unpinned array each could both bind theirs to EU1 lane 0.

The property compiles random modules of two to four DPFs (Z3, the default scheduler; a few
dozen examples, each a module of tiny DPFs) and links each object for one tenant.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpfc.diagnostics import DiagnosticError, SourceFile
from dpfc.driver import CompiledModule, CompileOptions, compile_source
from dpfc.link import LinkInput, link
from dpfc.schedule import ScheduleOptions

EXAMPLES = min(40, settings().max_examples)
# What a module may be rejected with: two @pins in one lane (DPF6021); an access that
# cannot be ready in the EU its array is pinned or bound to by an earlier DPF (DPF6027); no
# place left (DPF6020). A module without @pins whose DPFs share no array fits.
REFUSALS = {"DPF6020", "DPF6021", "DPF6027"}

TWO_ARRAYS = """
module two;
segment array a: u32[16];
segment array b: u32[16];
@placement(switch)
dpf f(x: u32) { a[x & 15] += 1; }
@placement(switch)
dpf g(x: u32) { b[x & 15] += 1; }
"""


def _compile(name: str, text: str) -> CompiledModule:
    options = CompileOptions(schedule=ScheduleOptions(cache=False))
    return compile_source(SourceFile(f"{name}.dpf", text), options)


def _link(module: CompiledModule) -> None:
    link([LinkInput(module.object(), 1)])


def test_two_dpfs_with_an_unpinned_array_each_get_two_lanes() -> None:
    module = _compile("two", TWO_ARRAYS)
    places = [unit.result.schedule.bindings for unit in module.units]
    assert places[0]["a"] != places[1]["b"]
    _link(module)


def test_two_arrays_pinned_to_one_lane_in_different_dpfs_are_refused() -> None:
    text = TWO_ARRAYS.replace("segment array a", "@pin(eu = 1, lane = 0)\nsegment array a")
    text = text.replace("segment array b", "@pin(eu = 1, lane = 0)\nsegment array b")
    with pytest.raises(DiagnosticError) as info:
        _compile("two", text)
    (diag,) = info.value.diagnostics
    assert diag.code == "DPF6021"
    assert "array `a` and array `b` of module `two` both need EU1 lane 0" in diag.message


def test_an_egress_dpf_may_use_the_lane_of_an_ingress_array() -> None:
    text = TWO_ARRAYS.replace("segment array a", "@pin(eu = 1, lane = 0)\nsegment array a")
    text = text.replace("segment array b", "@pin(eu = 1, lane = 0)\nsegment array b")
    text = text.replace("@placement(switch)\ndpf g", "@placement(switch) @egress\ndpf g")
    _link(_compile("two", text))


def module_source(seed: int) -> tuple[str, bool]:
    """A random module of 2-4 DPFs over 1-6 arrays (some pinned, some shared), and
    whether it must fit (no array pinned, none shared)."""
    rng = random.Random(seed)
    arrays = [f"a{n}" for n in range(rng.randint(1, 6))]
    pins = {a: (rng.randrange(4), rng.randrange(4)) for a in arrays if rng.random() < 0.2}
    lines = ["module mixed;"]
    for name in arrays:
        if name in pins:
            eu, lane = pins[name]
            lines.append(f"@pin(eu = {eu}, lane = {lane})")
        lines.append(f"segment array {name}: u32[16];")
    egress_arrays: set[str] = set()
    ingress_arrays: set[str] = set()
    shared = False
    for number in range(rng.randint(2, 4)):
        egress = rng.random() < 0.2
        free = [a for a in arrays if a not in (ingress_arrays if egress else egress_arrays)]
        used = rng.sample(free, min(len(free), rng.randint(1, 3)))
        shared |= bool(set(used) & (egress_arrays | ingress_arrays))
        (egress_arrays if egress else ingress_arrays).update(used)
        body = []
        for index, name in enumerate(used):
            address = rng.choice(["x & 15", "y & 15", "(x + y) & 15", "x"])
            if index == 1 and rng.random() < 0.4:
                body.append(f"if x > 5 {{ {name}[{address}] += 1; }}")
            elif rng.random() < 0.5:
                body.append(f"{name}[{address}] += 1;")
            else:
                body.append(f"push({name}[{address}]);")
        where = "@placement(switch) @egress" if egress else "@placement(switch)"
        lines.append(f"{where}\ndpf d{number}(x: u32, y: u32) {{ {' '.join(body)} }}")
    return "\n".join(lines) + "\n", not pins and not shared


@settings(max_examples=EXAMPLES)
@given(seed=st.integers(0, 2**32 - 1))
def test_every_module_that_compiles_links(seed: int) -> None:
    text, must_fit = module_source(seed)
    try:
        module = _compile("mixed", text)
    except DiagnosticError as error:
        assert not must_fit, text
        assert {d.code for d in error.diagnostics} <= REFUSALS, text
        return
    _link(module)
