"""A tenant's memory in a scenario's configuration: mapped segments and direct entries
(``[[config.tenants.memory]]``), words of the arrays the linked code placed (``arrays``)
and constant-table entries (``constants``).

Contract: every mapping and write goes through the switch's
:class:`~dpfc.backends.sim.control.ControlPlane` (so it passes the checks an operator's call
would; a refusal keeps its DPF40xx code); ``values`` that do not fit the segment, and an
index beyond an array, are DPF4105; an array the code does not place for the tenant is
DPF4106. Array words are written on the pipes where the image placed the array (of those
the ``config`` block names).
"""

from __future__ import annotations

from dpfc.backends.sim import ControlPlane

from .lookups import BuilderBase
from .model import Scenario
from .reader import CODE_VALUE, Table, key_path, quote

MEMORY_KEYS = {
    "segment": ("kind", "pipeline", "eu", "lane", "vaddr", "size", "values"),
    "null_segment": ("kind", "pipeline", "eu", "lane", "vaddr", "size"),
    "direct": ("kind", "pipeline", "eu", "lane", "vaddr", "value"),
}


class MemoryBuilder(BuilderBase):
    """Maps and writes a tenant's memory, arrays and constants."""

    def memory(
        self, control: ControlPlane, table: Table, tenant: int, pipes: list[int] | None
    ) -> None:
        kind = table.string("kind")
        if kind not in MEMORY_KEYS:
            self.fail(
                CODE_VALUE,
                f'{table.at("kind")}: expected "segment", "null_segment" or "direct", '
                f"got {quote(kind)}",
            )
        table.only(*MEMORY_KEYS[kind])
        pipeline = self.pipeline(table)
        eu = table.integer("eu", high=255)
        lane = table.integer("lane", high=255)
        vaddr = table.integer("vaddr", 0)
        if kind == "direct":
            with self.refusals(table.path):
                control.map_direct(
                    tenant,
                    eu,
                    lane,
                    vaddr,
                    value=table.integer("value", 0),
                    pipes=pipes,
                    pipeline=pipeline,
                )
            return
        size = table.integer("size", None if kind == "segment" else 1 << 32, low=1, high=1 << 32)
        if kind == "null_segment":
            with self.refusals(table.path):
                control.map_null_segment(
                    tenant, eu, lane, vaddr, size, pipes=pipes, pipeline=pipeline
                )
            return
        with self.refusals(table.path):
            control.map_segment(tenant, eu, lane, vaddr, size, pipes=pipes, pipeline=pipeline)
        path = table.at("values")
        items = self.fail.array(table.raw("values"), path) if table.has("values") else []
        values = [self.fail.integer(v, f"{path}[{i}]") for i, v in enumerate(items)]
        if len(values) > size:
            self.fail(CODE_VALUE, f"{path}: {len(values)} values do not fit in {size} words")
        with self.refusals(path):
            control.write_memory(tenant, eu, lane, vaddr, values, pipes=pipes, pipeline=pipeline)

    def arrays(
        self, scenario: Scenario, table: Table, tenant: int, switch: str, pipes: list[int] | None
    ) -> None:
        """``arrays = { "kvs.values0" = [w0, w1, ...], "kvs.index" = { 100 = w } }``: words
        of the tenant's arrays the linked code placed (where: the switch's image)."""
        given = table.table("arrays")
        if given is None:
            return
        control = scenario.network.switches[switch].control
        for name, value in given.data.items():
            path = key_path(given.path, name)
            request = self.request(scenario, switch, tenant, name, path)
            if isinstance(value, list):
                cells = [(i, item, f"{path}[{i}]") for i, item in enumerate(value)]
            elif isinstance(value, dict):
                cells = [
                    (
                        self.fail.index_key(k, key_path(path, k), "an array index", 0xFFFF_FFFF),
                        item,
                        key_path(path, k),
                    )
                    for k, item in value.items()
                ]
            else:
                self.fail.wrong_type(path, "an array of words or a table index = word", value)
            targets = [p for p in request.pipes if pipes is None or p in pipes]
            for index, item, where in cells:
                word = self.fail.integer(item, where)
                if index >= request.size:
                    self.fail(
                        CODE_VALUE,
                        f"{where}: index {index} is beyond `{name}` ({request.size} words)",
                    )
                with self.refusals(where):
                    control.write_memory(
                        tenant,
                        request.eu,
                        request.lane,
                        index,
                        [word],
                        pipes=targets,
                        pipeline=request.pipeline,
                    )

    def constants(
        self, control: ControlPlane, table: Table, tenant: int, pipes: list[int] | None
    ) -> None:
        """``constants = [v0, v1, ...]`` or ``constants = { 5 = v5 }``."""
        if not table.has("constants"):
            return
        value = table.raw("constants")
        path = table.at("constants")
        if isinstance(value, list):
            entries = [(i, item, f"{path}[{i}]") for i, item in enumerate(value)]
        elif isinstance(value, dict):
            entries = [
                (
                    self.fail.index_key(k, key_path(path, k), "a constant index"),
                    item,
                    key_path(path, k),
                )
                for k, item in value.items()
            ]
        else:
            self.fail.wrong_type(path, "an array or a table of constants", value)
        for index, item, where in entries:
            word = self.fail.integer(item, where)
            with self.refusals(where):
                control.set_constant(tenant, index, word, pipes=pipes)
