"""Scenario files: a simulated network, its configuration and its traffic, written as data.

A scenario is a TOML (``.toml``) or JSON (``.json``) file; both use one schema, described in
``docs/simulator.md`` ("Scenario files"). :func:`load_scenario` reads it, checks every key
strictly, builds the :class:`~dpfc.backends.sim.network.Network`, configures each switch
through its :class:`~dpfc.backends.sim.control.ControlPlane` (so every table entry passes
the checks an operator's call would) and queues the packets. The result,
:class:`Scenario`, is ready to ``network.run()``.

Contract:

* Nothing escapes as a traceback. A malformed file, a missing or unknown key, a value of the
  wrong type or range, an unknown name raises :class:`ScenarioError`, which names the file
  and the key path: ``kvs.toml: switches[0].pipes: expected an integer, got "two"``.
* A refused control-plane call keeps its code (DPF40xx) and gets the key path in front of
  its message; a packet the encoder refuses keeps its DPF2xxx code; assembly errors are the
  assembler's own :class:`~dpfc.diagnostics.DiagnosticError` (with source excerpts), with a
  note naming the scenario key that asked for the file.
* Files a scenario names (assembly, objects, DPF sources, images, pcaps, TOML profiles) are
  relative to the scenario's directory.
* Order of effects: the network, then the code of every ``config`` block, linked into one
  image per switch and deployed (:mod:`.code`: memory, permissions and code, prologs
  last; so a tenant may name a DPF installed by a later block), then each block's tenants
  (permission entries — merged with the ones the image made, :mod:`.permissions` —,
  memory, array words, constants, forwarding, multicast), routes and default port; last,
  the packets are queued in file order (``repeat`` copies one after the other).

The builder is one class per part of the file, over :class:`~.lookups.BuilderBase` (its
state and the lookups of names): :mod:`.topology`, :mod:`.config` (with :mod:`.memory`),
:mod:`.traffic` and :mod:`.watch`; the result types are :mod:`.model`'s, the typed reader
is :mod:`.reader`. This module reads the top level and runs the parts in the order above.
"""

from __future__ import annotations

from pathlib import Path

from dpfc.backends.sim import Network
from dpfc.target import BUILTIN_PROFILES, DEFAULT_PROFILE, TargetError, TargetProfile, load_profile

from .code import deploy, link_switches
from .config import ConfigBuilder
from .model import MemoryWatch, QueuedPacket, Scenario
from .reader import CODE_FILE, CODE_VALUE, ScenarioError, Table, parse_file, quote
from .topology import TopologyBuilder
from .traffic import PacketBuilder
from .watch import WatchBuilder

TOP_KEYS = ("target", "seed", "switches", "hosts", "links", "config", "packets", "watch")


def load_scenario(path: str | Path, *, cache: bool = False) -> Scenario:
    """Read, check and build the scenario at ``path`` (errors name it as given); with
    ``cache``, its ``.dpf`` files are scheduled through the schedule cache (``dpfc compile``'s:
    an unchanged DPF costs no solver time, and compiles to the same bytes)."""
    file = str(path)
    data = parse_file(Path(path), file)
    return ScenarioBuilder(file, Path(path).parent, cache=cache).build(data)


class ScenarioBuilder(TopologyBuilder, ConfigBuilder, PacketBuilder, WatchBuilder):
    """Builds one scenario from its parsed file, part by part (see the module docstring).

    :meth:`build` is the whole file; its steps :meth:`network` (the target, seed and
    topology) and :meth:`install` (the ``config`` blocks: code linked and deployed, then
    each block's tenants, routes and default port) are public for front ends that read
    files of their own around the same schema (``dpfc test``)."""

    # -- the whole file ------------------------------------------------------------------------
    def build(self, data: dict[str, object]) -> Scenario:
        top = Table(self.fail, "", data)
        top.only(*TOP_KEYS)
        scenario = self.network(top)
        self.install(scenario, top.tables("config"))
        for index, table in enumerate(top.tables("packets")):
            self.packets(scenario, table, f"packets[{index}]")
        scenario.watches = [self.watch(scenario, table) for table in top.tables("watch")]
        self.record_code(scenario)  # the packets' in-packet code too
        return scenario

    def record_code(self, scenario: Scenario) -> None:
        """Keep in ``scenario`` the code files read so far, for traces with their source."""
        scenario.linked = self.files.linked
        scenario.objects = [dpf for obj in self.files.objects.values() for dpf in obj.dpfs]

    def network(self, top: Table) -> Scenario:
        """The network of ``top``'s ``target``, ``seed``, ``switches``, ``hosts`` and
        ``links``, with nothing installed yet."""
        profile = self.target(top)
        network = Network(profile, seed=top.integer("seed", 0, high=2**63 - 1))
        scenario = Scenario(self.file, self.directory, profile, network)
        for table in top.tables("switches"):
            self.switch(network, table)
        for table in top.tables("hosts"):
            self.host(network, table)
        self.links(network, top)
        self.use_files(profile)
        return scenario

    def install(self, scenario: Scenario, configs: list[Table]) -> None:
        """The ``config`` blocks: their code linked per switch and deployed, then each
        block's tenants, routes and default port, in file order."""
        network = scenario.network
        targets = [self.config_target(network, table) for table in configs]
        entries = [
            self.code(code, name, pipes)
            for table, (name, pipes) in zip(configs, targets, strict=True)
            for code in table.tables("code")
        ]
        scenario.images = link_switches(self.files, network, entries)
        scenario.warnings = self.files.warnings
        scenario.dpfs = deploy(self.files, network, entries, scenario.images)
        for table, (name, pipes) in zip(configs, targets, strict=True):
            self.configure(scenario, table, name, pipes)
        self.record_code(scenario)

    def target(self, top: Table) -> TargetProfile:
        name = top.string("target", DEFAULT_PROFILE.name)
        if name in BUILTIN_PROFILES:
            return BUILTIN_PROFILES[name]
        if not name.endswith(".toml"):
            self.fail(
                CODE_VALUE,
                f"target: unknown target {quote(name)} (built-in: {', '.join(BUILTIN_PROFILES)};"
                " or a .toml profile file)",
            )
        try:
            return load_profile(str(self.resolve(name)))
        except TargetError as exc:
            self.fail(CODE_FILE, f"target: {exc}")


__all__ = [
    "TOP_KEYS",
    "MemoryWatch",
    "QueuedPacket",
    "Scenario",
    "ScenarioBuilder",
    "ScenarioError",
    "load_scenario",
]
