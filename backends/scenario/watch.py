"""The ``[[watch]]`` section of a scenario: words of a lane memory to print after the run.

Contract: a watch names a switch, pipe, tenant and either an array the switch's linked
code placed (its EU, lane and pipeline come from the image; giving them too is DPF4105)
or an EU, lane and pipeline; then a virtual address and a count. The words are read once
at load time, so that an unmapped or foreign address is a load error (the control plane's
DPF40xx code), not a run error.
"""

from __future__ import annotations

from .lookups import TENANT_MAX, BuilderBase
from .model import MemoryWatch, Scenario
from .reader import CODE_VALUE, Table

WATCH_KEYS = (
    "label", "switch", "pipe", "pipeline", "tenant", "eu", "lane", "vaddr", "array", "count"
)  # fmt: skip


class WatchBuilder(BuilderBase):
    """Reads the memory watches of a scenario."""

    def watch(self, scenario: Scenario, table: Table) -> MemoryWatch:
        table.only(*WATCH_KEYS)
        network = scenario.network
        switch = self.switch_name(network, table.required("switch"), table.at("switch"))
        tenant = table.integer("tenant", high=TENANT_MAX)
        if table.has("array"):
            # an array the switch's linked code placed: its EU and lane come from the image
            for key in ("eu", "lane"):
                if table.has(key):
                    self.fail(
                        CODE_VALUE, f"{table.at(key)}: give the array or eu and lane, not both"
                    )
            request = self.request(
                scenario, switch, tenant, table.string("array"), table.at("array")
            )
            eu, lane = request.eu, request.lane
            if table.has("pipeline"):
                self.fail(
                    CODE_VALUE,
                    f"{table.at('pipeline')}: an array's pipeline comes from the image "
                    f"({request.pipeline}); give the array or eu, lane and pipeline",
                )
            pipeline = request.pipeline
        else:
            eu, lane = table.integer("eu", high=255), table.integer("lane", high=255)
            pipeline = self.pipeline(table)
        watch = MemoryWatch(
            label=table.string("label", ""),
            switch=switch,
            pipe=table.integer("pipe", 0, high=len(network.switches[switch].pipes) - 1),
            tenant=tenant,
            eu=eu,
            lane=lane,
            vaddr=table.integer("vaddr", 0),
            count=table.integer("count", 1, low=1, high=4096),
            pipeline=pipeline,
        )
        # read once now, so an unmapped or foreign address is a load error, not a run error
        with self.refusals(table.path):
            network.switches[switch].control.read_memory(
                watch.tenant,
                watch.eu,
                watch.lane,
                watch.vaddr,
                watch.count,
                pipe=watch.pipe,
                pipeline=watch.pipeline,
            )
        return watch
