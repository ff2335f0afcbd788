"""A BF-RT script (bfrt_python) that installs a linked image on a Tofino running SwitchVM.

Contract: :func:`bfrt_script` returns the Python text that, run by bfshell's bfrt_python
on a switch whose TNA SwitchVM program was generated for ``profile`` (``dpfc p4 --arch
tna``) and compiled under the name ``program``, installs ``image`` on an empty switch.
The steps are :func:`dpfc.deploy.plan`'s, in its order (permissions and memory, code from
the epilog back to EU0, the prologs last, default DPFs): a packet sees no DPF or a whole
one. Each step becomes the entries :class:`~dpfc.backends.p4.entries.EntryControl` computes
for it — the very ones the bmv2 control writes, validated by the same ledger — rendered as
BF-RT calls:

    bfrt.<program>.pipe.SwitchVMIngress.<table>.add_with_<action>(<key>=.., <param>=..)
    bfrt.<program>.pipe.SwitchVMIngress.<register>.mod(REGISTER_INDEX=.., f1=..)

Keys and action parameters are named as the TNA program declares them (the program is
built here to read them, so the script and the program cannot disagree); a ternary key
``k`` gives ``k`` and ``k_mask``, with ``MATCH_PRIORITY`` (BF-RT, like bmv2's CLI, prefers
the lowest). Tables are written symmetrically (every pipe): an image whose DPFs run on some
pipes only is refused (DPF4016), and so is an image with an egress DPF (DPF4022): the TNA
program has no egress stages. The script never reads the switch back.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from dpfc.backends.p4.arch import key_name, parameter_names
from dpfc.backends.p4.entries import EntryControl
from dpfc.backends.p4.lang import Block, Function, Instance, Table
from dpfc.backends.p4.program import program as build_program
from dpfc.backends.p4.tna import Tna
from dpfc.backends.p4.writer import REFUSED, EntryWriter, Match
from dpfc.catalog import codes
from dpfc.deploy import Deployment, describe, execute, plan
from dpfc.link import Image
from dpfc.switch import SwitchRefused
from dpfc.target import TargetProfile

SYMMETRIC = "the BF-RT script writes symmetric tables (every pipe)"


@dataclass(frozen=True)
class Schema:
    """The control plane's view of the TNA program: keys, action parameters, registers,
    each qualified by its control (``SwitchVMIngress.permissions``)."""

    keys: dict[str, list[tuple[str, str]]]  # table -> (key name, match kind)
    params: dict[str, list[str]]  # action -> parameter names
    registers: set[str]

    @classmethod
    def of(cls, profile: TargetProfile) -> Schema:
        keys: dict[str, list[tuple[str, str]]] = {}
        params: dict[str, list[str]] = {}
        registers: set[str] = set()
        for decl in build_program(profile, Tna.for_profile(profile)).decls:
            if not isinstance(decl, Block) or decl.kind != "control":
                continue
            for local in decl.locals:
                name = f"{decl.name}.{getattr(local, 'name', '')}"
                if isinstance(local, Table):
                    keys[name] = [(key_name(k), kind) for k, kind in local.keys]
                elif isinstance(local, Function) and local.ret == "action":
                    params[name] = parameter_names(local.params)
                elif isinstance(local, Instance) and local.type.startswith("Register<"):
                    registers.add(name)
        return cls(keys, params, registers)


def _arguments(pairs: Sequence[tuple[str, int | str]]) -> str:
    """Keyword arguments (the TNA program renames what Python reserves: tna/blocks.py)."""
    return ", ".join(f"{name}={value}" for name, value in pairs)


class BfrtWriter(EntryWriter):
    """The entry operations as bfrt_python lines (see the module docstring)."""

    def __init__(self, program: str, schema: Schema) -> None:
        self.pipe = f"bfrt.{program}.pipe"
        self.schema = schema
        self.lines: list[str] = []
        # handle -> the table's key arguments (BF-RT finds an entry by its key, not a handle)
        self.keys: dict[int, list[tuple[str, int | str]]] = {}
        self.next_node = 1

    def _key(
        self, table: str, key: Sequence[Match], priority: int | None
    ) -> list[tuple[str, int | str]]:
        fields = self.schema.keys.get(table)
        if fields is None or len(fields) != len(key):
            raise ValueError(f"the TNA program has no table {table} with {len(key)} keys")
        out: list[tuple[str, int | str]] = []
        for (name, kind), match in zip(fields, key, strict=True):
            out.append((name, match.value))
            if kind == "ternary":
                mask = match.mask if match.mask is not None else 0xFFFF_FFFF
                out.append((f"{name}_mask", f"{mask:#x}"))
        if priority is not None:
            out.append(("MATCH_PRIORITY", priority))
        return out

    def _data(self, action: str, params: Sequence[int]) -> list[tuple[str, int | str]]:
        names = self.schema.params.get(action)
        if names is None or len(names) != len(params):
            raise ValueError(f"the TNA program has no action {action} of {len(params)} values")
        return list(zip(names, params, strict=True))

    def _call(self, table: str, method: str, pairs: Sequence[tuple[str, int | str]]) -> None:
        self.lines.append(f"{self.pipe}.{table}.{method}({_arguments(pairs)})")

    def add_entry(
        self,
        table: str,
        action: str,
        key: Sequence[Match],
        params: Sequence[int],
        priority: int | None = None,
    ) -> int:
        fields = self._key(table, key, priority)
        short = action.rsplit(".", 1)[-1]
        self._call(table, f"add_with_{short}", [*fields, *self._data(action, params)])
        handle = len(self.keys) + 1
        self.keys[handle] = fields
        return handle

    def modify_entry(self, table: str, action: str, handle: int, params: Sequence[int]) -> None:
        short = action.rsplit(".", 1)[-1]
        self._call(table, f"mod_with_{short}", [*self.keys[handle], *self._data(action, params)])

    def delete_entry(self, table: str, handle: int) -> None:
        self._call(table, "delete", self.keys.pop(handle))

    def set_default(self, table: str, action: str, params: Sequence[int]) -> None:
        short = action.rsplit(".", 1)[-1]
        self._call(table, f"set_default_with_{short}", self._data(action, params))

    def write_register(self, register: str, index: int, value: int) -> None:
        if register not in self.schema.registers:
            raise ValueError(f"the TNA program has no register {register}")
        self._call(register, "mod", [("REGISTER_INDEX", index), ("f1", value)])

    def read_register(self, register: str, indices: Sequence[int]) -> list[int]:
        raise SwitchRefused(REFUSED, f"a BF-RT script cannot read {register} back")

    def _pre(self, table: str, method: str, pairs: Sequence[tuple[str, int | str]]) -> None:
        self.lines.append(f"bfrt.pre.{table}.{method}({_arguments(pairs)})")

    def _members(self, group: int, node: int, method: str) -> None:
        self._pre(
            "mgid",
            method,
            [
                ("MGID", group),
                ("MULTICAST_NODE_ID", f"[{node}]"),
                ("MULTICAST_NODE_L1_XID_VALID", "[False]"),
                ("MULTICAST_NODE_L1_XID", "[0]"),
            ],
        )

    def create_group(self, group: int) -> None:
        empty = "[]"
        self._pre(
            "mgid",
            "add",
            [
                ("MGID", group),
                ("MULTICAST_NODE_ID", empty),
                ("MULTICAST_NODE_L1_XID_VALID", empty),
                ("MULTICAST_NODE_L1_XID", empty),
            ],
        )

    def destroy_group(self, group: int) -> None:
        self._pre("mgid", "delete", [("MGID", group)])

    def create_node(self, rid: int, port: int) -> int:
        node, self.next_node = self.next_node, self.next_node + 1
        self._pre(
            "node",
            "add",
            [
                ("MULTICAST_NODE_ID", node),
                ("MULTICAST_RID", rid),
                ("MULTICAST_LAG_ID", "[]"),
                ("DEV_PORT", f"[{port}]"),
            ],
        )
        return node

    def associate(self, group: int, node: int) -> None:
        self._members(group, node, "mod_inc")

    def dissociate(self, group: int, node: int) -> None:
        self._members(group, node, "mod_dec")

    def destroy_node(self, node: int) -> None:
        self._pre("node", "delete", [("MULTICAST_NODE_ID", node)])


class BfrtControl(EntryControl):
    """The control protocol recorded as a script for a switch of ``pipes`` pipes, every
    request for all of them (:data:`SYMMETRIC`)."""

    def __init__(self, writer: BfrtWriter, profile: TargetProfile, pipes: int) -> None:
        super().__init__(writer, profile, pipes, every_pipe=SYMMETRIC)


def bfrt_script(image: Image, profile: TargetProfile, program: str = "switchvm") -> str:
    """The bfrt_python script that installs ``image`` (see the module docstring).
    Raises SwitchRefused when the image holds an egress DPF (DPF4022: the TNA program has no
    egress stages), is not for ``profile`` (DPF7008) or its steps cannot be written
    symmetrically (DPF4016)."""
    egress = [dpf.key for dpf in image.dpfs if dpf.pipeline == "egress"]
    if egress:
        raise SwitchRefused(
            codes.SWITCH_NO_EGRESS_DPFS,
            f"the TNA program runs no egress DPFs: {', '.join(egress)} would never run",
        )
    writer = BfrtWriter(program, Schema.of(profile))
    control = BfrtControl(writer, profile, image.pipes)
    Deployment(control).check(image)
    dpfs = ", ".join(dpf.key for dpf in image.dpfs) or "no DPF"
    pipes = f"{image.pipes} pipe{'s' if image.pipes != 1 else ''}"
    out = [
        f"# bfrt_python script generated by `dpfc p4 bfrt` for {profile.name} ({pipes}): it",
        f"# installs {dpfs}.",
        f"# Run it on a switch running `{program}`, the TNA program of `dpfc p4 --target",
        f"# {profile.name} --arch tna` (docs/p4.md). The steps are `dpfc deploy`'s, prologs last.",
    ]
    for step in plan(None, image):
        writer.lines.append(f"# {describe(step)}")
        execute(control, step)
    return "\n".join(out + writer.lines) + "\n"


__all__ = ["BfrtControl", "BfrtWriter", "Schema", "bfrt_script"]
