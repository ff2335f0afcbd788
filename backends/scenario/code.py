"""The code of a scenario: files to objects, objects to one linked image per switch, images
deployed through the simulator's control protocol (``SimControl``).

* A ``[[config.code]]`` file is assembly (``.dpfasm``: one DPF, or a module's DPFs as
  ``dpfc compile --emit asm`` writes them, arrays and chains included), an object
  (``.dpfo``: its arrays are mapped where the object places them), DPF-language source
  (``.dpf``, compiled for the scenario's target, its schedules taken from and kept in the
  schedule cache when the loader is asked to, as ``dpfc run`` does unless ``--no-cache``;
  its warnings kept in :attr:`CodeFiles.warnings` for the command to report) or an install
  image (``.dpfimg``). Each file is read once, whatever refers to it.
* Per switch, every code entry of every ``config`` block is linked into one image (an
  image file, at most one per switch, is the base the others are linked into): a DPF runs
  on the block's pipes, ``prolog_slot`` pins its prolog, ``tenant`` makes its arrays and
  permissions that tenant's (without it, the code is shared and may use no arrays);
  ``placement`` overrides the ``@placement`` of DPFs of a ``.dpf`` source.
* A chain to a DPF installed on another switch resolves through that switch's image
  (``--extern``): switches are linked in an order that makes that possible.
* The image is deployed with :class:`dpfc.deploy.Deployment`, prologs last; ``owners``
  then limits the DPF's slots to those tenants (a simulator feature).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path

from dpfc.asm import assemble_module
from dpfc.backends.sim import Network, SimControl
from dpfc.catalog import codes
from dpfc.deploy import Deployment
from dpfc.diagnostics import Diagnostic, DiagnosticError, Note, decode_source
from dpfc.driver import CompileOptions, compile_source
from dpfc.link import (
    Image,
    LinkedDPF,
    LinkInput,
    LinkOptions,
    dpf_key,
    image_bytes,
    image_id,
    link,
    read_image,
)
from dpfc.objfile import ObjectDPF, ObjectFile, read_object
from dpfc.schedule import ScheduleOptions
from dpfc.switch import SwitchRefused
from dpfc.target import TargetProfile

from .reader import CODE_FILE, CODE_TOPOLOGY, CODE_UNKNOWN_NAME, Fail, quote

SUFFIXES = (".dpfasm", ".dpfo", ".dpf", ".dpfimg")


@dataclass(frozen=True)
class CodeEntry:
    """One ``[[config.code]]`` table, read."""

    path: str  # its key path, for messages
    switch: str
    pipes: tuple[int, ...] | None  # None: every pipe
    file: Path
    name: str | None
    tenant: int | None
    prolog_slot: int | None
    owners: tuple[int, ...] | None
    # DPF name -> "packet" | "switch", overriding the source's @placement (.dpf files only)
    placements: tuple[tuple[str, str], ...] = ()


@dataclass
class CodeFiles:
    """Files of code, read (and compiled or assembled) once each."""

    fail: Fail
    scenario: str
    profile: TargetProfile
    objects: dict[tuple[Path, tuple[tuple[str, str], ...]], ObjectFile]  # by file, placements
    images: dict[Path, tuple[Image, str]]
    # switch -> the DPF instances linked into its image (``tenant:symbol``) -> the object
    # DPF each was linked from (under the symbol the image gives it)
    linked: dict[str, dict[str, ObjectDPF]]
    cache: bool = False  # reuse schedules from the schedule cache (dpfc compile's)
    # the warnings of the DPF-language sources compiled, for the command to report
    warnings: list[Diagnostic] = field(default_factory=list)

    @classmethod
    def for_scenario(
        cls, fail: Fail, scenario: str, profile: TargetProfile, *, cache: bool = False
    ) -> CodeFiles:
        return cls(fail, scenario, profile, {}, {}, {}, cache)

    @contextmanager
    def named(self, where: str) -> Iterator[None]:
        """A compiler, assembler or linker diagnostic, with a note naming ``where``."""
        try:
            yield
        except DiagnosticError as exc:
            note = Note(f"for {where} of {self.scenario}")
            raise DiagnosticError(
                [replace(d, notes=(*d.notes, note)) for d in exc.diagnostics]
            ) from None

    def read(self, path: Path, where: str) -> bytes:
        try:
            return path.read_bytes()
        except OSError as exc:
            made_by = {".dpfo": "dpfc compile FILE.dpf -o", ".dpfimg": "dpfc link OBJ... -o"}
            how = made_by.get(path.suffix.lower())
            hint = f" (write it with `{how} {path}`)" if how and not path.exists() else ""
            self.fail(CODE_FILE, f"{where}: cannot read {path}: {exc.strerror}{hint}")

    def check_suffix(self, path: Path, relative: str, where: str, allowed: Sequence[str]) -> None:
        if path.suffix.lower() not in allowed:
            kinds = {
                ".dpfasm": "assembly (.dpfasm)",
                ".dpfo": "an object (.dpfo)",
                ".dpf": "DPF source (.dpf)",
                ".dpfimg": "an install image (.dpfimg)",
            }
            listed = ", ".join(kinds[s] for s in allowed)
            self.fail(CODE_FILE, f"{where}: {quote(relative)} is none of: {listed}")

    def object(
        self, path: Path, where: str, placements: tuple[tuple[str, str], ...] = ()
    ) -> ObjectFile:
        """The object of a code file (``placements``: of a ``.dpf`` compiled with those
        DPFs' placements overridden), read or compiled once."""
        cached = self.objects.get((path, placements))
        if cached is not None:
            return cached
        suffix = path.suffix.lower()
        with self.named(where):
            if suffix == ".dpfo":
                data = self.read(path, where)
                try:
                    obj = read_object(data, str(path), self.profile)
                except DiagnosticError as exc:
                    self.fail(CODE_FILE, f"{where}: {exc.diagnostics[0].message}")
            elif suffix == ".dpf":
                if not path.is_file():
                    self.fail(CODE_FILE, f"{where}: cannot read {path}: no such file")
                options = CompileOptions(
                    target=self.profile,
                    schedule=ScheduleOptions(cache=self.cache),
                    placements=dict(placements),
                )
                compiled = compile_source(path, options)
                self.warnings.extend(compiled.checked.warnings)
                obj = compiled.object()
                known = [d.program.name for d in obj.dpfs]
                for name, _placement in placements:
                    if name not in known:
                        self.fail(
                            CODE_UNKNOWN_NAME,
                            f"{where}: {path} has no DPF named {quote(name)} to place "
                            f"(its DPFs: {', '.join(known)})",
                        )
            else:
                # Not UTF-8: located at the byte (file:line:col), as for every source file.
                source = decode_source(str(path), self.read(path, where))
                obj = replace(assemble_module(source, self.profile).object(), path=str(path))
        self.objects[path, placements] = obj
        return obj

    def image(self, path: Path, where: str) -> tuple[Image, str]:
        cached = self.images.get(path)
        if cached is None:
            data = self.read(path, where)
            try:
                cached = read_image(data, str(path), self.profile), image_id(data)
            except DiagnosticError as exc:
                self.fail(exc.diagnostics[0].code, f"{where}: {exc.diagnostics[0].message}")
            self.images[path] = cached
        return cached


def link_switches(
    files: CodeFiles, network: Network, entries: Sequence[CodeEntry]
) -> dict[str, tuple[Image, str]]:
    """One image per switch with code: the switches are linked in file order, except that
    a switch whose chains need another switch's image waits for it."""
    by_switch: dict[str, list[CodeEntry]] = {}
    for entry in entries:
        by_switch.setdefault(entry.switch, []).append(entry)
    done: dict[str, tuple[Image, str]] = {}
    waiting = list(by_switch)
    while waiting:
        failures: list[DiagnosticError] = []
        for switch in list(waiting):
            try:
                done[switch] = _link_switch(files, network, switch, by_switch[switch], done)
            except DiagnosticError as exc:
                if [d.code for d in exc.diagnostics] != [codes.LINK_UNRESOLVED_CHAIN]:
                    raise
                failures.append(exc)
                continue
            waiting.remove(switch)
        if failures and len(failures) == len(waiting):
            raise failures[0]  # nothing links any more: a chain target no switch installs
    return done


def _link_switch(
    files: CodeFiles,
    network: Network,
    switch: str,
    entries: Sequence[CodeEntry],
    others: dict[str, tuple[Image, str]],
) -> tuple[Image, str]:
    pipe_count = len(network.switches[switch].pipes)
    base: tuple[Image, str] | None = None
    inputs: list[LinkInput] = []
    place: dict[str, tuple[int, ...]] = {}
    entry_slots: dict[str, int] = {}
    private: set[str] = set()
    for entry in entries:
        if entry.file.suffix.lower() == ".dpfimg":
            if base is not None:
                files.fail(CODE_TOPOLOGY, f"{entry.path}: a switch takes one image file")
            base = files.image(entry.file, f"{entry.path}.file")
            continue
        obj = files.object(entry.file, f"{entry.path}.file", entry.placements)
        if entry.name is not None and len(obj.dpfs) == 1:
            # the name is the DPF's symbol here: one file may be installed twice
            obj = replace(obj, dpfs=(replace(obj.dpfs[0], symbol=entry.name),))
        inputs.append(LinkInput(obj, entry.tenant))
        for dpf in obj.dpfs:
            files.linked.setdefault(switch, {})[dpf_key(entry.tenant, dpf.symbol)] = dpf
            place[dpf.symbol] = entry.pipes or tuple(range(pipe_count))
            if entry.owners is not None:  # its slots will be limited to the owners
                private.add(dpf_key(entry.tenant, dpf.symbol))
        if entry.prolog_slot is not None:
            if len(obj.dpfs) != 1:
                files.fail(
                    CODE_FILE,
                    f"{entry.path}.prolog_slot: {entry.file} holds {len(obj.dpfs)} DPFs; "
                    "prolog_slot pins the prolog of a one-DPF file",
                )
            entry_slots[obj.dpfs[0].symbol] = entry.prolog_slot
    options = LinkOptions(
        profile=files.profile,
        pipes=pipe_count,
        place=place,
        entries=entry_slots,
        private=frozenset(private),
        base=None if base is None else base[0],
        base_id=None if base is None else base[1],
        externs=tuple(image for name, image in others.items() if name != switch),
    )
    with files.named(f"the code of switch {switch}"):
        image = link(inputs, options)
    return image, image_id(image_bytes(image))


def deploy(
    files: CodeFiles,
    network: Network,
    entries: Sequence[CodeEntry],
    images: dict[str, tuple[Image, str]],
) -> dict[str, tuple[str, LinkedDPF]]:
    """Install each switch's image; returns every DPF by the names a scenario may use
    (its symbol, and the entry's ``name``) -> (switch, where it is)."""
    found: dict[str, tuple[str, LinkedDPF]] = {}
    for switch, (image, _ident) in images.items():
        try:
            Deployment(SimControl(network.switches[switch].control)).apply(image)
        except SwitchRefused as exc:
            files.fail(exc.code, f"installing the code of switch {switch}: {exc.message}")
        for dpf in image.dpfs:
            found.setdefault(dpf.symbol, (switch, dpf))
    for entry in entries:
        image = images[entry.switch][0]
        if entry.file.suffix.lower() == ".dpfimg":
            continue
        obj = files.objects[entry.file, entry.placements]
        symbols = [d.symbol for d in obj.dpfs]
        if entry.name is not None and len(symbols) == 1:
            symbols = [entry.name]
        mine = [image.dpf(symbol, entry.tenant) for symbol in symbols]
        if entry.name is not None:
            if len(mine) != 1:
                files.fail(
                    CODE_FILE, f"{entry.path}.name: {entry.file} holds {len(mine)} DPFs, not one"
                )
            if entry.name in found and found[entry.name][1] is not mine[0]:
                files.fail(
                    CODE_TOPOLOGY,
                    f"{entry.path}.name: a DPF named {quote(entry.name)} is already installed "
                    "(give this one another name)",
                )
            found[entry.name] = (entry.switch, mine[0])
        for dpf in mine:
            found[dpf.symbol] = (entry.switch, dpf)
            if entry.owners is not None:
                _restrict(network, entry.switch, image, dpf, entry.owners, entry.path, files)
    return found


def _restrict(
    network: Network,
    switch: str,
    image: Image,
    dpf: LinkedDPF,
    owners: tuple[int, ...],
    path: str,
    files: CodeFiles,
) -> None:
    """Limit the DPF's code slots to ``owners`` (the simulator's per-slot owner sets)."""
    control = network.switches[switch].control
    for label in dpf.labels:
        if label.in_packet:
            continue
        slot = image.slot_at(label.stage, label.slot)
        assert slot is not None
        try:
            control.install_code(
                label.stage, label.slot, slot.word, owners=owners, pipes=slot.pipes
            )
        except SwitchRefused as exc:
            files.fail(exc.code, f"{path}.owners: {exc.message}")


__all__ = ["SUFFIXES", "CodeEntry", "CodeFiles", "deploy", "link_switches"]
