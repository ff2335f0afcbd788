"""The control plane of the stage-structured program: code and fixed units as table entries.

Contract: :func:`eu_entries` turns an EU bundle installed in code-memory slot ``slot`` into
the entries of that EU's selector, comparison and code tables (keyed by the EU's PC);
:func:`prolog_entries` does the same for a prolog bundle; :func:`fixed_entries` returns the
entries every switch holds from the start: the ALU tables (one action per opcode, a shift
per listed amount, any other amount a fault), the memory tables (opcode and translation
hits to one of the lane register's actions, none when a shift of any lane of the EU
faults: :mod:`.faults`), the branch-resolution TCAM of
:mod:`dpfc.backends.p4.branch_tcam`, and the entries that run in-packet code
(format version 2: the packet's fields in the key). Every entry names its table, keys,
action and parameters as the program does (:mod:`.plan`, :func:`.units.key_name`);
a bundle the program cannot run is refused with :class:`EntryError` saying why.
"""

from __future__ import annotations

from collections.abc import Mapping

from dpfc.backends.p4.branch_tcam import RESOLUTION, Form, Outcome, compare, plan_branch
from dpfc.encoding import encode_pc
from dpfc.isa import AluOp, Bundle, Imm, MemOp, Register, SelectorKind
from dpfc.target import TargetProfile

from .ends import PERM_METADATA
from .entry import ANY as ANY
from .entry import IN_PACKET_PC as IN_PACKET_PC
from .entry import PC_MASK as PC_MASK
from .entry import Entry as Entry
from .entry import EntryError as EntryError
from .entry import Key as Key
from .entry import Prefix as Prefix
from .entry import Ternary as Ternary
from .entry import name as name
from .entry import packet_pc as packet_pc
from .entry import pc_key as _pc_key
from .epilog import epilog_entries as epilog_entries
from .epilog import hint as hint
from .externs import REGISTER_ACTIONS
from .faults import AMOUNT_BITS, fault_cubes, shift_op_keys
from .grants import PERM_PASS
from .loads import SWITCH_ID, held_values, metadata_loaded
from .plan import StagePlan
from .translation import direct_entry as direct_entry
from .translation import fold16 as fold16
from .translation import segment_entry as segment_entry

WORD = 0xFFFF_FFFF
REFUSAL_PRIORITY = 1 << 16  # after every other entry of its table
TENANT_MASK = 0x3FF  # meta.slot: 10 bits
IMMEDIATE_OPERAND = 0x80  # a branch operand byte naming immediate slot k is 0x80 | k
BRANCH_SLOT = 0  # format version 2: an in-packet branch immediate is in slot 0
RANDOM_WORDS = 2
SHIFTS = (AluOp.LSH, AluOp.RSH)
ALU_ACTIONS = {
    AluOp.ADD: "add",
    AluOp.SUB: "sub",
    AluOp.AND: "and",
    AluOp.OR: "or",
    AluOp.XOR: "xor",
    AluOp.NEG: "neg",
    AluOp.MIN: "min",
    AluOp.MAX: "max",
}


def _tenant_key(plan: StagePlan, register: str) -> tuple[tuple[str, Key], ...]:
    """A B selector's slot key, any slot (a profile with LOAD_CONST), else none."""
    return (("slot", ANY),) if plan.constants and register.startswith("b") else ()


def eu_entries(
    profile: TargetProfile,
    plan: StagePlan,
    eu: int,
    slot: int,
    bundle: Bundle,
    hints: tuple[int, int] = (0, 0),
    constants: Mapping[int, Mapping[int, int]] | None = None,
) -> list[Entry]:
    """EU ``eu``'s entries for ``bundle`` in code slot ``slot``; ``hints``: the successor
    hints (steering register code + 1 of the epilog each PC leads to, 0 none);
    ``constants``: each tenant slot's LOAD_CONST table (an entry not set reads 0)."""
    pc = f"pc{eu}"
    out: list[Entry] = []
    for sel in bundle.selectors:
        table, dest = plan.selector(eu, name(sel.dest)), name(sel.dest)
        sel_keys = ((f"eu{eu}_sel_{dest}_{f}", ANY) for f in ("valid", "kind", "operand"))
        keys = (_pc_key(pc, slot), *sel_keys, *_tenant_key(plan, dest))
        if sel.kind is SelectorKind.LOAD_CONST and plan.constants:
            for tenant, table_of in sorted((constants or {}).items()):
                value = table_of.get(sel.value, 0)
                tenant_keys = (*keys[:-1], ("slot", Ternary(tenant, TENANT_MASK)))
                out.append(Entry(table, tenant_keys, f"{table}_imm", (("v", value),), 0))
            out.append(Entry(table, keys, f"{table}_imm", (("v", 0),), 1))
        elif sel.kind is SelectorKind.MOV:
            assert sel.source is not None
            if sel.source == sel.dest:
                continue
            out.append(Entry(table, keys, f"{table}_mov_{name(sel.source)}"))
        elif sel.kind is SelectorKind.HASH:
            out.append(Entry(table, keys, f"{table}_hash"))
        elif sel.kind is SelectorKind.LOAD_IMM:
            out.append(Entry(table, keys, f"{table}_imm", (("v", sel.value & WORD),)))
        else:
            raise EntryError(f"EU{eu} slot {slot}: {sel.kind.name} is not on this program")
    ctrl = bundle.control
    op = ctrl.op
    if op.conditional:
        assert ctrl.x is not None and ctrl.y is not None
        branch = plan_branch(op, ctrl.x, ctrl.y)
        op = branch.op
        out.append(_compare_entry(plan, eu, (_pc_key(pc, slot),), branch.form, branch.x, branch.y))
    alu = {f"alu{i}": int(bundle.alu[i]) for i in range(plan.lanes)}
    mem = {f"mem{i}": int(bundle.mem[i]) for i in range(plan.lanes)}
    params = {**alu, **mem, "ctrl": int(op), "pct": encode_pc(ctrl.taken)}
    params["pcn"] = encode_pc(ctrl.not_taken) if ctrl.not_taken is not None else 0
    params["hint_t"], params["hint_n"] = hints
    code = plan.code(eu)
    keys = (_pc_key(pc, slot), (f"eu{eu}_alu_valid", ANY), (f"eu{eu}_mem_valid", ANY))
    out.append(Entry(code, keys, f"{code}_switch", tuple(params.items())))
    return out


def _compare_entry(
    plan: StagePlan, eu: int, keys: tuple[tuple[str, Key], ...], form: Form, x: object, y: object
) -> Entry:
    table = plan.compare(eu)
    keys = (*keys, (f"eu{eu}_br_x", ANY), (f"eu{eu}_br_y", ANY))
    if form is Form.CONSTANT:
        assert isinstance(x, Imm) and isinstance(y, Imm)
        words = compare(form, x.value, y.value)
        params = (("xr", words.xor), ("an", words.and_), ("dd", words.difference), ("rev", 0))
        return Entry(table, keys, f"{table}_const", params)
    assert isinstance(x, Register)
    if form is Form.IMMEDIATE_Y:
        assert isinstance(y, Imm)
        return Entry(table, keys, f"{table}_{name(x)}_imm", (("v", y.value & WORD),))
    assert isinstance(y, Register)
    first, second = sorted((x, y), key=lambda r: plan.registers.index(name(r)))
    rev = int(first != x)
    return Entry(table, keys, f"{table}_{name(first)}_{name(second)}", (("rev", rev),))


def prolog_key_names(plan: StagePlan, register: str) -> list[str]:
    """The keys of ``register``'s prolog selector table after the PC: its selector's
    validity, kind and operand, then each earlier register's selector validity and kind."""
    out = [f"pro_sel_{register}_{f}" for f in ("valid", "kind", "operand")]
    for before in plan.registers[: plan.registers.index(register)]:
        out += [f"pro_sel_{before}_valid", f"pro_sel_{before}_kind"]
    return out


def prolog_entries(
    profile: TargetProfile, plan: StagePlan, slot: int, bundle: Bundle, switch_id: int = 0
) -> list[Entry]:
    """The prolog's entries for ``bundle`` in prolog code slot ``slot`` (``switch_id``: the
    value LOAD_MD switch_id loads)."""
    out: list[Entry] = []
    pops = rands = 0
    metadata = False
    for sel in bundle.selectors:
        table = plan.prolog_selector(name(sel.dest))
        keys = (_pc_key("ppc", slot), *((k, ANY) for k in prolog_key_names(plan, name(sel.dest))))
        if sel.kind in (SelectorKind.POP, SelectorKind.PEEK):
            action = f"{table}_pop{pops}"
            pops += sel.kind is SelectorKind.POP
        elif sel.kind is SelectorKind.RAND:
            if rands == RANDOM_WORDS:
                raise EntryError(f"prolog slot {slot}: more than {RANDOM_WORDS} RAND selectors")
            action, rands = f"{table}_rnd{rands}", rands + 1
        elif sel.kind is SelectorKind.LOAD_MD:
            if sel.value not in metadata_loaded(plan):
                known = ", ".join(map(str, metadata_loaded(plan)))
                raise EntryError(
                    f"prolog slot {slot}: LOAD_MD {sel.value} (this program loads {known})"
                )
            metadata = True
            values = held_values(plan)
            if sel.value in values:
                value = switch_id if sel.value == SWITCH_ID else values[sel.value]
                out.append(Entry(table, keys, f"{table}_value", (("value", value),)))
                continue
            action = f"{table}_md{sel.value}"
        else:
            raise EntryError(f"prolog slot {slot}: {sel.kind.name} is not a prolog selector")
        out.append(Entry(table, keys, action))
    # a prolog that reads metadata runs for a tenant with the metadata bit only; for the
    # others it misses, and the fixed refusal (:func:`prolog_refusal`) drops the packet (R5)
    perm = Ternary(PERM_METADATA, PERM_METADATA) if metadata else ANY
    selectors = tuple(
        (f"pro_sel_{r}_{f}", ANY) for r in plan.registers for f in ("valid", "kind", "operand")
    )
    params = (("pc", encode_pc(bundle.control.taken)), ("npops", pops))
    keys = (_pc_key("ppc", slot), ("perm", perm), *selectors)
    out.append(Entry("prolog_code", keys, "prolog_switch", params))
    return out


def prolog_refusal(plan: StagePlan) -> list[Entry]:
    """The in-switch prolog of a tenant without the metadata bit that no entry ran: one
    that reads metadata (R5), or an empty slot (nothing would run either); with
    :mod:`.grants`, a tenant whose unauthorized packets pass runs nothing instead."""
    selectors = tuple(
        (f"pro_sel_{r}_{f}", ANY) for r in plan.registers for f in ("valid", "kind", "operand")
    )
    bits = PERM_METADATA | (PERM_PASS if plan.grants else 0)
    out = []
    for perm, action in ((0, "prolog_refused"), (PERM_PASS, "prolog_none")):
        keys = (("ppc", Ternary(0, IN_PACKET_PC)), ("perm", Ternary(perm, bits)), *selectors)
        out.append(Entry("prolog_code", keys, action, (), REFUSAL_PRIORITY))
    return out if plan.grants else out[:1]


def fixed_entries(profile: TargetProfile, plan: StagePlan) -> list[Entry]:
    """The entries every switch holds (module docstring)."""
    out: list[Entry] = []
    for eu in range(plan.num_eus):
        for lane in range(plan.lanes):
            out += _alu_entries(profile, plan, eu, lane)
            out += _memory_entries(profile, plan, eu, lane)
        out += _branch_entries(plan, eu)
        out += _packet_entries(plan, eu)
    return out


def _alu_entries(profile: TargetProfile, plan: StagePlan, eu: int, lane: int) -> list[Entry]:
    table, selected = plan.alu(eu, lane), f"selected{plan.registers.index(f'b{lane}')}"
    out: list[Entry] = []

    def add(
        op: AluOp, amount: Ternary, action: str, params: tuple[tuple[str, int], ...] = ()
    ) -> None:
        keys = ((f"alu{lane}", Ternary(int(op), 0xFF)), (selected, amount))
        out.append(Entry(table, keys, f"{table}_{action}", params, len(out)))

    for op, action in ALU_ACTIONS.items():
        add(op, ANY, action)
    for op in SHIFTS:
        add(op, Ternary(0, 0x1F), "keep", (("fault", 0),))
        for amount in profile.shift_amounts:
            add(op, Ternary(amount, 0x1F), f"{op.name.lower()}{amount}")
        add(op, ANY, "keep", (("fault", 1),))  # any other amount: a fault (R14)
    return out


def _memory_entries(profile: TargetProfile, plan: StagePlan, eu: int, lane: int) -> list[Entry]:
    """First (higher priority) a shift fault of any lane: no register access (R14); then
    the opcode and translation hits pick the lane register's action."""
    table = plan.memory(eu, lane)
    action_of = {op: action for action, ops in REGISTER_ACTIONS for op in ops}
    amounts = [
        (f"alu{j}", f"selected{plan.registers.index(f'b{j}')}_{AMOUNT_BITS - 1}_0")
        for j in range(plan.lanes)
    ]
    access = ((f"mem{lane}", ANY), (f"dok{lane}", ANY), (f"sok{lane}", ANY))
    anywhere: tuple[tuple[str, Key], ...] = tuple((k, ANY) for pair in amounts for k in pair)
    out: list[Entry] = []
    for alu_key, amount_key in amounts:
        for shift in shift_op_keys():
            for cube in fault_cubes(profile):
                faulting = dict(anywhere)
                faulting[alu_key], faulting[amount_key] = Ternary(*shift), Ternary(*cube)
                keys = (*access, *faulting.items())
                out.append(Entry(table, keys, f"{table}_keep", (("mask", WORD),), len(out)))
    for op in MemOp:
        if op is MemOp.NOP:
            continue
        for direct, segment in ((1, 0), (0, 1), (0, 0)):
            keys = (
                (f"mem{lane}", Ternary(int(op), 0xFF)),
                (f"dok{lane}", Ternary(direct, 1)),
                (f"sok{lane}", Ternary(segment, 1)),
                *anywhere,
            )
            if direct or segment:
                out.append(Entry(table, keys, f"{table}_{action_of[op]}", (), len(out)))
            else:  # unmapped: STORE changes nothing, LOAD and FA* give 0 (R11)
                mask = WORD if op is MemOp.STORE else 0
                out.append(Entry(table, keys, f"{table}_keep", (("mask", mask),), len(out)))
    return out


def _branch_entries(plan: StagePlan, eu: int) -> list[Entry]:
    table = plan.branch(eu)
    action = {Outcome.TAKEN: "taken", Outcome.NOT_TAKEN: "not_taken", Outcome.HALT: "halt"}
    names = {"ctrl": "ctrl", "reversed": "rev", "xor": "xr", "and": "an", "difference": "dd"}
    out = []
    for at, entry in enumerate(RESOLUTION):
        keys = tuple((names[k], Ternary(*vm)) for k, vm in entry.ternary().items())
        out.append(Entry(table, keys, f"{table}_{action[entry.outcome]}", (), at))
    return out


def _packet_entries(plan: StagePlan, eu: int) -> list[Entry]:
    """In-packet code of EU ``eu``: the packet's fields choose the actions."""
    out: list[Entry] = []
    pc = (f"pc{eu}", packet_pc(plan))
    for r in plan.registers:
        sources = [(SelectorKind.MOV, plan.register_code(y), f"mov_{y}") for y in plan.registers]
        sources = [s for s in sources if s[2] != f"mov_{r}"]
        if r.startswith("a"):
            sources.append((SelectorKind.HASH, 0, "hash"))
        else:
            sources += [(SelectorKind.LOAD_IMM, j, f"ci{j}") for j in (0, 1)]
        out += [_packet_selector(plan, eu, r, pc, *source) for source in sources]
        if plan.constants and r.startswith("b"):  # a constant no entry sets: 0
            entry = _packet_selector(plan, eu, r, pc, SelectorKind.LOAD_CONST, 0, "imm")
            keys = tuple((k, ANY) if k.endswith("_operand") else (k, v) for k, v in entry.keys)
            out.append(Entry(entry.table, keys, entry.action, (("v", 0),), 1))
    table = plan.compare(eu)
    imm = IMMEDIATE_OPERAND | BRANCH_SLOT
    xy = (f"eu{eu}_br_x", f"eu{eu}_br_y")
    for at, x in enumerate(plan.registers):
        pairs: list[tuple[str | int, str | int, int, str]] = []
        for y in plan.registers[at + 1 :]:
            pairs += [(x, y, 0, f"{x}_{y}"), (y, x, 1, f"{x}_{y}")]
        pairs += [(x, imm, 0, f"{x}_ci0"), (imm, x, 1, f"{x}_ci0")]
        for first, second, rev, action in pairs:
            keys = (pc, (xy[0], _byte(plan, first)), (xy[1], _byte(plan, second)))
            out.append(Entry(table, keys, f"{table}_{action}", (("rev", rev),)))
    code = plan.code(eu)
    for alu in (0, 1):
        for mem in (0, 1):
            suffix = ("a" if alu else "") + ("m" if mem else "")
            valid = ((f"eu{eu}_alu_valid", Ternary(alu, 1)), (f"eu{eu}_mem_valid", Ternary(mem, 1)))
            out.append(Entry(code, (pc, *valid), f"{code}_packet{suffix}"))
    return out


def _packet_selector(
    plan: StagePlan,
    eu: int,
    register: str,
    pc: tuple[str, Key],
    kind: SelectorKind,
    operand: int,
    action: str,
) -> Entry:
    table, head = plan.selector(eu, register), f"eu{eu}_sel_{register}"
    keys = (
        pc,
        (f"{head}_valid", Ternary(1, 1)),
        (f"{head}_kind", Ternary(int(kind), 0x7)),
        (f"{head}_operand", Ternary(operand, 0xFF)),
        *_tenant_key(plan, register),
    )
    return Entry(table, keys, f"{table}_{action}")


def constant_entries(plan: StagePlan, tenant: int, index: int, value: int) -> list[Entry]:
    """In-packet LOAD_CONST ``index`` of the tenant in slot ``tenant``, in every EU's B
    selector tables: ``value`` (the fixed entries give 0 to every other)."""
    out = []
    for eu in range(plan.num_eus):
        for register in plan.registers[plan.lanes :]:
            table, head = plan.selector(eu, register), f"eu{eu}_sel_{register}"
            keys = (
                (f"pc{eu}", packet_pc(plan)),
                (f"{head}_valid", Ternary(1, 1)),
                (f"{head}_kind", Ternary(int(SelectorKind.LOAD_CONST), 0x7)),
                (f"{head}_operand", Ternary(index, 0xFF)),
                ("slot", Ternary(tenant, TENANT_MASK)),
            )
            out.append(Entry(table, keys, f"{table}_imm", (("v", value & WORD),), 0))
    return out


def _byte(plan: StagePlan, operand: str | int) -> Ternary:
    value = operand if isinstance(operand, int) else plan.register_code(operand)
    return Ternary(value, 0xFF)
