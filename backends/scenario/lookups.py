"""The state every part of the scenario builder shares, and the lookups of the names a
scenario's values refer to.

Contract: each lookup returns what a value names or fails with a :class:`ScenarioError`
naming the value's key path and what exists instead: a switch or host (DPF4106), an
installed DPF by symbol, code entry name or unambiguous short name (DPF4106), a DPF pointer
(``@switch:N``, ``@packet:N``, ``none`` or an installed DPF of the right pipeline, DPF4105),
an array the switch's linked code placed for a tenant (DPF4106), a pipeline name (DPF4105).
A control-plane call made under :meth:`BuilderBase.refusals` that the switch refuses keeps
its DPF40xx code, with the key path in front of its message.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from dpfc.backends.sim import Network
from dpfc.isa import PC
from dpfc.link import LinkedDPF, MemoryRequest
from dpfc.switch import SwitchRefused
from dpfc.target import TargetProfile

from .code import CodeFiles
from .model import Scenario
from .reader import CODE_UNKNOWN_NAME, CODE_VALUE, Fail, Table, names, quote

PIPELINES = ("ingress", "egress")
TENANT_MAX = (1 << 24) - 1


class BuilderBase:
    """Builds one scenario; every check names the key path of the value it rejects."""

    # the scenario's code files, read once each (set by the builder once the target is known)
    files: CodeFiles

    def __init__(
        self,
        file: str,
        directory: Path,
        files: CodeFiles | None = None,
        *,
        cache: bool = False,
    ) -> None:
        """``files``: code files already read for this file (several builds of one file,
        ``dpfc test``'s cases, compile each source once); used when the target matches.
        ``cache``: ``.dpf`` files are scheduled through the schedule cache."""
        self.file = file
        self.directory = directory
        self.fail = Fail(file)
        self.given_files = files
        self.cache = cache

    def use_files(self, profile: TargetProfile) -> None:
        """Read code files for ``profile``: those given to the builder, if for it."""
        given = self.given_files
        if given is not None and given.profile == profile:
            self.files = given
        else:
            self.files = CodeFiles.for_scenario(self.fail, self.file, profile, cache=self.cache)

    @contextmanager
    def refusals(self, path: str) -> Iterator[None]:
        """Report a refused control-plane call with its own code, at ``path``."""
        try:
            yield
        except SwitchRefused as exc:
            self.fail(exc.code, f"{path}: {exc.message}")

    def resolve(self, relative: str) -> Path:
        return self.directory / relative

    def switch_name(self, network: Network, value: object, path: str) -> str:
        name = self.fail.string(value, path)
        if name not in network.switches:
            self.fail(
                CODE_UNKNOWN_NAME,
                f"{path}: no switch named {quote(name)} (switches: {names(network.switches)})",
            )
        return name

    def host_name(self, network: Network, value: object, path: str) -> str:
        name = self.fail.string(value, path)
        if name not in network.hosts:
            self.fail(
                CODE_UNKNOWN_NAME,
                f"{path}: no host named {quote(name)} (hosts: {names(network.hosts)})",
            )
        return name

    def installed(self, scenario: Scenario, text: str, path: str) -> tuple[str, LinkedDPF]:
        """The installed DPF ``text`` names: a symbol (``flow_guard.flow_guard``), a code
        entry's ``name``, or a DPF's own name when one module alone has a DPF of that name
        (``flow_guard``)."""
        found = scenario.dpfs.get(text)
        if found is not None:
            return found
        # several entries may name one DPF (its symbol and an entry's name): count DPFs
        short = {id(dpf): (switch, dpf) for switch, dpf in scenario.dpfs.values()}
        matches = [m for m in short.values() if m[1].symbol.rpartition(".")[2] == text]
        if len(matches) == 1:
            return matches[0]
        if matches:
            listed = ", ".join(sorted(quote(m[1].symbol) for m in matches))
            self.fail(
                CODE_UNKNOWN_NAME, f"{path}: {quote(text)} is ambiguous: name one of {listed}"
            )
        self.fail(
            CODE_UNKNOWN_NAME,
            f"{path}: no installed DPF named {quote(text)} (installed: {names(scenario.dpfs)})",
        )

    def pointer(
        self, scenario: Scenario, value: object, path: str, pipeline: str = "ingress"
    ) -> PC | None:
        """``@switch:N``, ``@packet:N``, ``none`` or the name of an installed DPF of
        ``pipeline`` (the DPF pointer and a default DPF name ingress DPFs, the egress
        pointer egress DPFs)."""
        text = self.fail.string(value, path)
        if text == "none":
            return None
        if text.startswith("@"):
            try:
                return PC.parse(text)
            except ValueError:
                self.fail(
                    CODE_VALUE,
                    f"{path}: a DPF pointer is @switch:N, @packet:N, none or the name of an "
                    f"installed DPF, got {quote(text)}",
                )
        _switch, dpf = self.installed(scenario, text, path)
        if dpf.entry is None:
            self.fail(
                CODE_VALUE,
                f"{path}: {quote(text)} is in-packet code, not installed in switch code memory",
            )
        if dpf.pipeline != pipeline:
            hint = " (name it with egress)" if dpf.pipeline == "egress" else ""
            self.fail(
                CODE_VALUE,
                f"{path}: {quote(text)} is an {dpf.pipeline} DPF; this pointer names an "
                f"{pipeline} DPF{hint}",
            )
        return PC(False, dpf.entry)

    def named_dpf(self, scenario: Scenario, value: object, path: str) -> LinkedDPF | None:
        """The installed DPF a pointer value names, if it names one (not ``@switch:N``)."""
        text = self.fail.string(value, path)
        if text == "none" or text.startswith("@"):
            return None
        return self.installed(scenario, text, path)[1]

    def request(
        self, scenario: Scenario, switch: str, tenant: int, name: str, path: str
    ) -> MemoryRequest:
        """The memory request of tenant ``tenant``'s array ``name`` on ``switch``."""
        image = scenario.images.get(switch)
        found = [
            r for r in (image[0].memory if image else ()) if r.tenant == tenant and r.array == name
        ]
        if not found:
            known = sorted(
                {r.array for r in (image[0].memory if image else ()) if r.tenant == tenant}
            )
            self.fail(
                CODE_UNKNOWN_NAME,
                f"{path}: the code of switch {switch} places no array {quote(name)} for tenant "
                f"{tenant} (it places: {', '.join(known) or 'none'})",
            )
        return found[0]

    def pipeline(self, table: Table, default: str = "ingress") -> str:
        """``pipeline = "ingress" | "egress"``: whose lane memories (default ``default``)."""
        value = table.string("pipeline", default)
        if value not in PIPELINES:
            self.fail(
                CODE_VALUE,
                f'{table.at("pipeline")}: expected "ingress" or "egress", got {quote(value)}',
            )
        return value
