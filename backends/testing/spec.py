"""What a test file asks: its cases, their packets, and the expectations of each.

Contract: :func:`read_cases` reads the ``cases`` of a test file strictly (unknown keys,
types, value sets: the scenario reader's codes DPF4102–DPF4105, each naming its key path)
into :class:`Case` values before anything runs; names the file's code defines (DPFs,
arrays) are resolved when a case is built. A packet keeps its table (its inputs are read by
the case builder, :mod:`.build`); its expectations are :class:`Expect` values, where
``None`` (or an empty mapping) means "not checked".

A case without ``packets`` is one packet: its own table holds the packet's keys and its
``expect``. With ``packets``, the case's packet keys are the defaults of each packet, and
the case's ``expect`` holds what is checked after the last packet (``memory``,
``counters``, ``reports``).
"""

from __future__ import annotations

from dataclasses import dataclass

from dpfc.backends.scenario import CODE_VALUE, Fail, Table, quote
from dpfc.diagnostics import did_you_mean
from dpfc.switch import TENANT_COUNTERS

from .inner import read_inner

TENANT_MAX = (1 << 24) - 1
VERDICTS = ("pass", "drop", "return_to_sender", "forward", "multicast", "set_port", "recirculate")
PLACEMENTS = ("packet", "switch")
PACKET_KEYS = (
    "dpf", "code", "egress", "stack", "app_id", "gas", "payload", "tenant", "port", "from",
    "to", "timestamp", "queue_depth", "packet_length", "inner", "expect",
)  # fmt: skip
CASE_KEYS = ("name", "switch", "tenant", "placement", "tenants", "memory", "packets", "expect")
STATE_KEYS = ("memory", "counters", "reports")
OUTPUT_KEYS = ("port", "to", "stack", "dpf", "egress", "tenant")
EXPECT_KEYS = (
    "verdict", "reason", "passes", "frames", *OUTPUT_KEYS[:-1], "outputs", *STATE_KEYS
)  # fmt: skip


@dataclass(frozen=True)
class Words:
    """Expected (or initial) words of one memory: an array by name or a lane by EU and lane,
    on one pipe (None: the pipe the array is placed on)."""

    key: str  # as written: "counter.counters", "kvs.hits@1", "egress.eu1.lane0"
    path: str  # its key path in the file
    cells: tuple[tuple[int, int], ...]  # (index or virtual address, word)


@dataclass(frozen=True)
class OutputExpect:
    """What one frame leaving the switch must be (None: not checked)."""

    path: str
    port: int | None = None
    to: str | None = None
    stack: tuple[int, ...] | None = None
    dpf: str | None = None
    egress: str | None = None
    tenant: int | None = None


@dataclass(frozen=True)
class Expect:
    path: str  # the key path of the expect table
    verdict: str | None = None
    reason: str | None = None  # a part of the first pass's reason
    passes: tuple[str, ...] | None = None  # the verdict of every pass, in order
    frames: int | None = None  # frames that left the switches
    ports: tuple[int, ...] | None = None  # `port`: one int is one frame
    to: tuple[str, ...] | None = None
    each: OutputExpect = OutputExpect("")  # stack, dpf, egress every frame must have
    outputs: tuple[OutputExpect, ...] | None = None
    memory: tuple[Words, ...] = ()
    counters: tuple[tuple[str, int], ...] = ()
    reports: tuple[str, ...] | None = None

    def empty(self) -> bool:
        return self == Expect(self.path)


@dataclass(frozen=True)
class Packet:
    path: str  # "cases[1]" (the case's one packet) or "cases[1].packets[0]"
    table: Table
    expect: Expect


@dataclass(frozen=True)
class Case:
    index: int
    name: str
    path: str
    table: Table
    packets: tuple[Packet, ...]
    after: Expect  # checked after the last packet
    placement: str | None = None


def _choice(fail: Fail, value: object, path: str, choices: tuple[str, ...], what: str) -> str:
    text = fail.string(value, path)
    if text not in choices:
        hint = did_you_mean(text, choices)
        listed = ", ".join(choices)
        fail(
            CODE_VALUE,
            f"{path}: {quote(text)} is not {what} ({listed}){'; ' + hint if hint else ''}",
        )
    return text


def _words(fail: Fail, value: object, path: str) -> tuple[int, ...]:
    items = fail.array(value, path)
    return tuple(fail.integer(v, f"{path}[{i}]") for i, v in enumerate(items))


def memory_words(fail: Fail, table: Table) -> tuple[Words, ...]:
    """``{ "array" = [w0, ...] | { index = w }, "eu0.lane1@P" = {...} }``."""
    out = []
    for key, value in table.data.items():
        path = table.at(key)
        if isinstance(value, list):
            cells = tuple(enumerate(_words(fail, value, path)))
        elif isinstance(value, dict):
            words = Table(fail, path, value)
            cells = tuple(
                (
                    fail.index_key(k, words.at(k), "an index", 0xFFFF_FFFF),
                    fail.integer(v, words.at(k)),
                )
                for k, v in value.items()
            )
        else:
            fail.wrong_type(path, "an array of words or a table index = word", value)
        out.append(Words(key, path, cells))
    return tuple(out)


def _output(fail: Fail, table: Table, keys: tuple[str, ...]) -> OutputExpect:
    return OutputExpect(
        table.path,
        port=table.optional_integer("port", high=0xFFFF) if "port" in keys else None,
        to=table.string("to") if table.has("to") and "to" in keys else None,
        stack=_words(fail, table.raw("stack"), table.at("stack")) if table.has("stack") else None,
        dpf=table.string("dpf") if table.has("dpf") else None,
        egress=table.string("egress") if table.has("egress") else None,
        tenant=table.optional_integer("tenant", high=TENANT_MAX) if "tenant" in keys else None,
    )


def read_expect(fail: Fail, table: Table | None, path: str, keys: tuple[str, ...]) -> Expect:
    if table is None:
        return Expect(path)
    table.only(*keys)
    ports: tuple[int, ...] | None = None
    if table.has("port"):
        raw = table.raw("port")
        ports = (
            _words(fail, raw, table.at("port"))
            if isinstance(raw, list)
            else (table.integer("port", high=0xFFFF),)
        )
    to: tuple[str, ...] | None = None
    if table.has("to"):
        raw = table.raw("to")
        where = table.at("to")
        items = fail.array(raw, where) if isinstance(raw, list) else [raw]
        to = tuple(
            fail.string(v, where if not isinstance(raw, list) else f"{where}[{i}]")
            for i, v in enumerate(items)
        )
    passes = None
    if table.has("passes"):
        where = table.at("passes")
        passes = tuple(
            _choice(fail, v, f"{where}[{i}]", VERDICTS, "a verdict")
            for i, v in enumerate(fail.array(table.raw("passes"), where))
        )
    counters = table.table("counters")
    for name in counters.data if counters is not None else ():
        assert counters is not None
        if name not in TENANT_COUNTERS:
            _choice(fail, name, counters.at(name), TENANT_COUNTERS, "a tenant counter")
    reports = None
    if table.has("reports"):
        where = table.at("reports")
        reports = tuple(
            fail.string(v, f"{where}[{i}]")
            for i, v in enumerate(fail.array(table.raw("reports"), where))
        )
    memory = table.table("memory")
    return Expect(
        table.path,
        verdict=_choice(fail, table.raw("verdict"), table.at("verdict"), VERDICTS, "a verdict")
        if table.has("verdict")
        else None,
        reason=table.string("reason") if table.has("reason") else None,
        passes=passes,
        frames=table.optional_integer("frames", high=1 << 20),
        ports=ports,
        to=to,
        each=_output(fail, table, ("stack", "dpf", "egress")),
        outputs=tuple(_output(fail, t, OUTPUT_KEYS) for t in table.tables("outputs"))
        if table.has("outputs")
        else None,
        memory=memory_words(fail, memory) if memory is not None else (),
        counters=tuple(
            (name, fail.integer(v, counters.at(name), high=2**63 - 1))
            for name, v in counters.data.items()
        )
        if counters is not None
        else (),
        reports=reports,
    )


def _packet(fail: Fail, table: Table, path: str) -> Packet:
    table.only(*PACKET_KEYS)
    for key in ("port", "timestamp", "queue_depth", "packet_length"):
        table.optional_integer(key, high=0xFFFF if key == "port" else 2**63 - 1)
    for key in ("dpf", "code", "egress", "from", "to", "payload"):
        if table.has(key):
            table.string(key)
    if table.has("stack"):
        _words(fail, table.raw("stack"), table.at("stack"))
    read_inner(fail, table.table("inner"))
    expect_table = table.table("expect")
    for output in expect_table.tables("outputs") if expect_table is not None else ():
        output.only(*OUTPUT_KEYS)
    return Packet(path, table, read_expect(fail, expect_table, table.at("expect"), EXPECT_KEYS))


def read_cases(fail: Fail, top: Table, default_tenant: int | None) -> list[Case]:
    cases = []
    top.required("cases")
    for index, table in enumerate(top.tables("cases")):
        path = table.path
        table.only(*CASE_KEYS, *(k for k in PACKET_KEYS if k not in CASE_KEYS))
        shared = {k: v for k, v in table.data.items() if k in PACKET_KEYS and k != "expect"}
        if table.has("packets"):
            # the case's packet keys are the defaults of each of its packets
            packets = tuple(
                _packet(fail, Table(fail, t.path, {**shared, **t.data}), t.path)
                for t in table.tables("packets")
            )
            if not packets:
                fail(CODE_VALUE, f"{table.at('packets')}: list at least one packet")
            after = read_expect(fail, table.table("expect"), table.at("expect"), STATE_KEYS)
        else:
            packet_data = {k: v for k, v in table.data.items() if k in PACKET_KEYS}
            packets = (_packet(fail, Table(fail, path, packet_data), path),)
            after = Expect(table.at("expect"))
        tenants = table.has("tenant") or all(p.table.has("tenant") for p in packets)
        if default_tenant is None and not tenants:
            fail(CODE_VALUE, f"{path}: no tenant: give the case a tenant, or the file one")
        placement = None
        if table.has("placement"):
            placement = _choice(
                fail, table.raw("placement"), table.at("placement"), PLACEMENTS, "a placement"
            )
            if not all(p.table.has("dpf") for p in packets):
                fail(
                    CODE_VALUE,
                    f"{table.at('placement')}: placement places the DPF each packet names with dpf",
                )
        table.optional_integer("tenant", high=TENANT_MAX)
        if table.has("switch"):
            table.string("switch")
        name = table.string("name") if table.has("name") else path
        cases.append(Case(index, name, path, table, packets, after, placement))
    if not cases:
        fail(CODE_VALUE, "cases: list at least one case")
    return cases


__all__ = [
    "CASE_KEYS",
    "EXPECT_KEYS",
    "PACKET_KEYS",
    "PLACEMENTS",
    "STATE_KEYS",
    "TENANT_MAX",
    "VERDICTS",
    "Case",
    "Expect",
    "OutputExpect",
    "Packet",
    "Words",
    "memory_words",
    "read_cases",
    "read_expect",
]
