"""The stages around the EUs: permissions, prolog, epilog and steering.

Contract: :func:`permissions_stage`, :func:`prolog_stage`, :func:`epilog_stage` and
:func:`steering_stage` return the tables of those stages (:mod:`.plan` numbers them).

* **Permissions (stage 0).** The tenant's row (VNI, app id) gives its slot; the stage also
  draws the prolog's two random words and loads the switch metadata the prolog reads into
  32-bit fields (:func:`metadata_sources`: identity moves, on TNA hash units, no PHV move).
* **Prolog.** One table per register keyed by the prolog PC, the in-packet selector and
  the validity and kind of each earlier register's in-packet selector (an in-packet POP
  or RAND reads the word numbered by the POPs or RANDs before it: :mod:`.packet`):
  POP/PEEK read the stack word the parser copied (``meta.pop<j>``: the j-th word from the
  top), LOAD_MD a metadata field, RAND a random word; the prolog code table (keyed by
  every in-packet selector's validity and kind) gives EU0's PC and how many words the
  prolog pops.
* **Epilog.** One table per push position picks the register it pushes into that push
  header; the epilog code table sets the push count, the steering action and value and the
  next DPF pointer. A steering value held in a register comes through one 16-bit identity
  move per register, chosen by ``meta.nsrc``, which the last EU's branch (or a HALT)
  writes from its code's hint.
* **Steering.** Forwarding and multicast entries per tenant, routes for ``pass``, and the
  special actions (return to sender, set_port, recirculate with gas, drop).

Every architecture-specific piece (units, intrinsic metadata, the packet's fate) comes
from the :class:`~.arch.StagedArch` each builder is given.
"""

from __future__ import annotations

from dpfc.backends.p4.lang import Assign, Do, Expr, If, Lit, Stmt, Var, chain, lit, n
from dpfc.target import TargetProfile

from .arch import StagedArch
from .egress import egress_steering, pointer, pointer_in, pointer_out
from .eu import code_size, load_immediates, reg
from .grants import grant_tables
from .loads import (
    ETHERNET_BYTES,
    PACKET_LENGTH,
    loaded_sources,
    metadata_loaded,
    metadata_sources,
)
from .next_register import next_from_register, next_register_actions
from .plan import StagePlan
from .units import Part

meta, hdr = n("meta"), n("hdr")

# meta.perm: the tenant's permission bits (the grant's action data)
PERM_METADATA, PERM_PRIVILEGED, PERM_RECIRCULATE = 1, 2, 4
STEER_FORWARD, STEER_MULTICAST, STEER_PASS = 3, 4, 0
NO_PC = 0xFFFF  # a PC no code entry matches
FORWARDING_SIZE, MULTICAST_SIZE, ROUTES_SIZE = 32_768, 4_096, 4_096


def prolog_selector_packet_entries(plan: StagePlan, index: int) -> int:
    """The in-packet entries of the prolog selector table of register ``index`` (register
    code order; :mod:`.packet` writes them): POP and PEEK by each set of earlier POPs,
    RAND after no or one earlier RAND, LOAD_MD by index."""
    return (1 << index) + 1 + index + len(metadata_loaded(plan))


def prolog_code_packet_entries(plan: StagePlan) -> int:
    """The fixed entries of ``prolog_code``: one per set of POP selectors, and per register
    the refusals of LOAD_MD (no metadata bit; each block of fields the program lacks), and
    the refusal of an in-switch prolog that reads metadata (:mod:`.packet`)."""
    blocks = 8  # at most: a field index is 8 bits, the refused ones a few aligned blocks
    passing = len(plan.registers) + 1 if plan.grants else 0  # :mod:`.grants`
    return (1 << len(plan.registers)) + len(plan.registers) * (1 + blocks) + 1 + passing


def permissions_stage(profile: TargetProfile, plan: StagePlan, arch: StagedArch) -> Part:
    part, stage = Part(), plan.permissions
    # the tenant's capabilities (PERM_METADATA, PERM_PRIVILEGED, PERM_RECIRCULATE) go with
    # the packet: the prolog's code table and the steering check them
    grant = part.action(
        "grant",
        ["bit<10> slot", "bit<8> perm"],
        [
            Assign(meta.dot("slot"), n("slot")),
            Assign(meta.dot("ppc"), pointer(plan)),
            Assign(meta.dot("perm"), n("perm")),
        ],
    )
    deny = part.action("deny", [], [arch.drop()])
    keys = [(hdr.dot("geneve").dot("vni"), "exact"), (hdr.dot("sv").dot("app_id"), "exact")]
    table = Part()
    table.table("permissions", stage, keys, [grant, deny], "deny()", profile.permission_entries)
    part.decls += table.decls
    # a tenant's packet without a SwitchVM header runs nothing and passes (R4, no default
    # DPF): a prolog PC no entry matches, so the EUs and the epilog are skipped; a frame
    # that is no tenant's (not Geneve over UDP over IPv4) is dropped
    nothing = [Assign(meta.dot("ppc"), Lit(NO_PC, 16))]
    tenant = If(hdr.dot("geneve").dot("isValid").call(), nothing, [arch.drop()])
    # a default DPF, unauthorized packets that pass (a program with them: :mod:`.grants`)
    grants = grant_tables(plan, profile.permission_entries)
    if grants is not None:
        part.decls += grants.decls
    applied = table.apply if grants is None else grants.apply
    part.apply.append(If(hdr.dot("sv").dot("isValid").call(), applied, [tenant]))
    for q in (0, 1):
        decls, draw = arch.random(f"rng{q}", meta.dot(f"rnd{q}"))
        part.decls += decls
        part.always(f"draw{q}", stage, draw)
    for index, source in metadata_sources(plan, arch).items():
        decls, body = arch.identity(f"md{index}_unit", meta.dot(f"md{index}"), source)
        part.decls += decls
        part.always(f"load_md{index}", stage, body)
    return part


def prolog_stage(profile: TargetProfile, plan: StagePlan, arch: StagedArch) -> Part:
    part, stage, slots = Part(), plan.prolog, profile.code_slots_per_stage
    for r in plan.registers:
        name, target = plan.prolog_selector(r), reg(r)
        acts = [part.action(f"{name}_zero", [], [Assign(target, lit(0))])]
        for j in range(2 * plan.lanes):
            acts.append(part.action(f"{name}_pop{j}", [], [Assign(target, meta.dot(f"pop{j}"))]))
        for index in loaded_sources(plan):
            source = meta.dot(f"md{index}")
            if index == PACKET_LENGTH:
                source = source + ETHERNET_BYTES
            acts.append(part.action(f"{name}_md{index}", [], [Assign(target, source)]))
        acts.append(part.action(f"{name}_value", ["bit<32> value"], [Assign(target, n("value"))]))
        for q in (0, 1):
            acts.append(part.action(f"{name}_rnd{q}", [], [Assign(target, meta.dot(f"rnd{q}"))]))
        sel = hdr.dot(f"pro_sel_{r}")
        keys = [(meta.dot("ppc"), "ternary"), (sel.dot("isValid").call(), "ternary")]
        keys += [(sel.dot("kind"), "ternary"), (sel.dot("operand"), "ternary")]
        # in-packet code: the stack word (the random word) a selector reads is numbered by
        # the POPs (the RANDs) before it, so the key sees the earlier selectors
        for before in plan.registers[: plan.registers.index(r)]:
            earlier = hdr.dot(f"pro_sel_{before}")
            keys += [(earlier.dot("isValid").call(), "ternary"), (earlier.dot("kind"), "ternary")]
        size = slots + prolog_selector_packet_entries(plan, plan.registers.index(r))
        part.table(name, stage, keys, acts, f"{name}_zero()", size)
    code = [Assign(meta.dot("pc0"), n("pc")), Assign(meta.dot("npops"), n("npops"))]
    switch = part.action("prolog_switch", ["bit<16> pc", "bit<8> npops"], code)
    packet = part.action(
        "prolog_packet",
        ["bit<8> npops"],
        [
            Assign(meta.dot("pc0"), hdr.dot("pro_head").dot("pct")),
            Assign(meta.dot("npops"), n("npops")),
        ],
    )
    keys = [(meta.dot("ppc"), "ternary"), (meta.dot("perm"), "ternary")]
    for r in plan.registers:  # an absent selector never counts (its fields are undefined)
        sel = hdr.dot(f"pro_sel_{r}")
        keys += [(sel.dot("isValid").call(), "ternary"), (sel.dot("kind"), "ternary")]
        keys += [(sel.dot("operand"), "ternary")]
    # no prolog (no DPF, or one this switch lacks): the EUs are skipped, the epilog misses
    skip = [Assign(meta.dot("halt"), lit(1)), Assign(meta.dot("epc"), Lit(NO_PC, 16))]
    none = part.action("prolog_none", [], skip)
    # a prolog that may not run (LOAD_MD without the metadata bit, R5; a LOAD_MD of a field
    # the program lacks): nothing runs, the packet gets the unauthorized action (drop)
    refused = part.action("prolog_refused", [], [*skip, arch.drop()])
    acts = [switch, packet, none, refused, "NoAction"]
    size = slots + prolog_code_packet_entries(plan)
    part.table("prolog_code", stage, keys, acts, "prolog_none()", size)
    part.add(load_immediates(plan, 0, stage, arch))
    return part


def epilog_stage(profile: TargetProfile, plan: StagePlan, arch: StagedArch) -> Part:
    part, stage, size = Part(), plan.epilog, code_size(profile)
    # the push count first: bmv2's setValid zeroes a header that was invalid, so the
    # words are written into push headers already valid
    counts = []
    for count in range(2 * plan.lanes + 1):
        body: list[Stmt] = [Do(_slot(j).dot("setValid").call()) for j in range(count)]
        body += [Do(_slot(j).dot("setInvalid").call()) for j in range(count, 2 * plan.lanes)]
        body.append(Assign(meta.dot("npush"), Lit(count, 8)))
        counts.append(part.action(f"epilog_pushes{count}", [], body))
    head = hdr.dot("ep_head")
    keys = [(meta.dot("epc"), "ternary"), (head.dot("n_push"), "ternary")]
    part.table("epilog_pushes", stage, keys, counts, "epilog_pushes0()", size)
    for j in range(2 * plan.lanes):
        name, push = f"epilog_push{j}", hdr.dot(f"ep_push{j}")
        acts = [part.action(f"{name}_{r}", [], [Assign(_push(j), reg(r))]) for r in plan.registers]
        keys = [(meta.dot("epc"), "ternary"), (push.dot("isValid").call(), "ternary")]
        keys += [(push.dot("r"), "ternary")]
        part.table(name, stage, keys, [*acts, "NoAction"], "NoAction()", size)
    # the words the prolog popped leave the stack (the deparser emits the rest after the
    # pushes): one action per count, chosen by meta.npops (fixed entries)
    pops = []
    for count in range(2 * plan.lanes + 1):
        gone: list[Stmt] = [
            Do(hdr.dot("stack").at(j).dot("setInvalid").call()) for j in range(count)
        ]
        pops.append(part.action(f"epilog_pops{count}", [], gone))
    keys = [(meta.dot("npops"), "exact")]
    part.table("epilog_pops", stage, keys, pops, "epilog_pops0()", 2 * plan.lanes + 1)
    # HDR_MOD keeps a pointer the epilog set (v1model: :func:`.egress.cleared_when`)
    was_set = [Assign(meta.dot("next_set"), lit(1))] if plan.cut_code else []
    code = part.action(
        "epilog_switch",
        ["bit<8> steer", "bit<16> next"],
        [
            Assign(meta.dot("steer"), n("steer")),
            Assign(hdr.dot("sv").dot("dpf_ptr"), n("next")),
            *was_set,
        ],
    )
    # without NEXT_PC the DPF pointer stays (docs/simulator.md, the epilog)
    stay = part.action(
        "epilog_switch_stay", ["bit<8> steer"], [Assign(meta.dot("steer"), n("steer"))]
    )
    packet_steer = Assign(meta.dot("steer"), head.dot("steer").cast(8))
    packet = part.action(
        "epilog_packet",
        [],
        [
            packet_steer,
            Assign(hdr.dot("sv").dot("dpf_ptr"), hdr.dot("ep_next_pc").dot("v")),
            *was_set,
        ],
    )
    packet_stay = part.action("epilog_packet_stay", [], [packet_steer])
    epc = [(meta.dot("epc"), "ternary")]
    keys = [*epc, (hdr.dot("ep_next_pc").dot("isValid").call(), "ternary")]
    # in-packet HDR_MOD and NEXT_PC from a register are not on this program: a fault
    keys += [
        (head.dot("hdr_mod"), "ternary"),
        (hdr.dot("ep_next_reg").dot("isValid").call(), "ternary"),
    ]
    refused = part.action("epilog_refused", [], [arch.drop()])
    # no epilog (no prolog ran, or its slot is empty): the packet passes (R4); a copy of
    # the packet's epilog left from an earlier pass must not steer it
    none = part.action("epilog_none", [], [Assign(meta.dot("steer"), Lit(STEER_PASS, 8))])
    acts = [code, stay, packet, packet_stay, refused, none]
    acts += next_register_actions(part, plan, packet_steer)
    if plan.cut_code:  # HDR_MOD: the end of the ingress cuts the code (:mod:`.bundles`)
        cut = part.action("epilog_cut_on", [], [Assign(meta.dot("cut"), lit(1))])
        cuts = Part()
        keys_cut = [*epc, (head.dot("hdr_mod"), "ternary")]
        cuts.table("epilog_cut", stage, keys_cut, [cut, "NoAction"], "NoAction()", size)
        part.decls += cuts.decls
        part.apply += cuts.apply
    # the egress pass's NEXT_PC writes the egress pointer (:mod:`.egress`)
    part.apply += pointer_in(plan)
    part.table("epilog_code", stage, keys, acts, "epilog_none()", size)
    part.apply += next_from_register(plan)
    part.apply += pointer_out(plan)
    # The steering value: an immediate (action data or the packet's), or a register's low
    # 16 bits through that register's identity hash. The tables write one field, so they
    # are alternatives of one if-chain on meta.nsrc (the successor hint the last EU's
    # branch wrote) or on the in-packet epilog's register byte.
    value = part.action("epilog_value", ["bit<16> value"], [Assign(meta.dot("sval"), n("value"))])
    packet_value = part.action(
        "epilog_packet_value", [], [Assign(meta.dot("sval"), hdr.dot("ep_steer_imm").dot("v"))]
    )
    values = Part()
    values.table("epilog_values", stage, epc, [value, packet_value], "epilog_packet_value()", size)
    part.decls += values.decls
    cases: list[tuple[Expr, list[Stmt]]] = []
    steer_reg = hdr.dot("ep_steer_reg")
    for r in plan.registers:
        code_r = plan.register_code(r)
        decls, move = arch.identity(f"steer_{r}_unit", meta.dot("sval"), reg(r), 16)
        part.decls += decls
        inner = Part()
        inner.always(f"steer_from_{r}", stage, move)
        part.decls += inner.decls
        from_packet = steer_reg.dot("isValid").call().land(steer_reg.dot("v").eq(code_r))
        cases.append((meta.dot("nsrc").eq(code_r + 1).lor(from_packet), inner.apply))
    part.apply += chain(cases, values.apply)
    return part


def _slot(j: int) -> Expr:
    return hdr.dot("push").at(j)


def _push(j: int) -> Expr:
    return _slot(j).dot("w")


def steering_stage(profile: TargetProfile, plan: StagePlan, arch: StagedArch) -> Part:
    part, stage, slot, sval = Part(), plan.steering, meta.dot("slot"), meta.dot("sval")
    eth, ip = hdr.dot("ethernet"), hdr.dot("ipv4")
    port = f"{arch.port_type} port"
    # a destination rewrites the destination MAC, the IPv4 destination, both or neither
    rewrites = {
        "to_port": [("bit<48> dmac", eth.dot("dst")), ("bit<32> dip", ip.dot("dst"))],
        "to_port_eth": [("bit<48> dmac", eth.dot("dst"))],
        "to_port_ip": [("bit<32> dip", ip.dot("dst"))],
        "to_port_only": [],
    }
    drop = part.action("drop", [], [arch.drop()])
    to_ports = [
        part.action(
            action,
            [port] + [param for param, _ in fields],
            [arch.send_to(n("port"))]
            + [Assign(target, n(param.split()[1])) for param, target in fields],
        )
        for action, fields in rewrites.items()
    ]
    forwarding, multicast, routes, special = Part(), Part(), Part(), Part()
    # a miss drops the packet (the tenant has no such destination: docs/simulator.md)
    forwarding.table(
        "forwarding",
        stage,
        [(slot, "exact"), (sval, "exact")],
        [*to_ports, drop],
        "drop()",
        FORWARDING_SIZE,
    )
    group = part.action("to_group", [f"{arch.group_type} group"], [arch.multicast(n("group"))])
    multicast.table(
        "multicast",
        stage,
        [(slot, "exact"), (sval, "exact")],
        [group, drop],
        "drop()",
        MULTICAST_SIZE,
    )
    route = part.action(
        "route",
        [port, "bit<48> dmac"],
        [arch.send_to(n("port")), Assign(eth.dot("dst"), n("dmac"))],
    )
    # the control protocol's routes name a port only; the default route is the table's
    # default action (route_port: the default port; drop: none)
    route_port = part.action("route_port", [port], [arch.send_to(n("port"))])
    routes.table(
        "routes",
        stage,
        [(ip.dot("dst"), "lpm")],
        [route, route_port, drop],
        "drop()",
        ROUTES_SIZE,
    )
    ret = part.action(
        "return_to_sender",
        [],
        [
            Var("bit<32>", "ip_src", ip.dot("src")),
            Assign(ip.dot("src"), ip.dot("dst")),
            Assign(ip.dot("dst"), n("ip_src")),
            Var("bit<48>", "eth_src", eth.dot("src")),
            Assign(eth.dot("src"), eth.dot("dst")),
            Assign(eth.dot("dst"), n("eth_src")),
            arch.send_to(arch.ingress_port()),
        ],
    )
    set_port = part.action("set_port", [], [arch.send_to(sval.slice(8, 0))])
    gas = hdr.dot("sv").dot("gas")
    recirculate = part.action("recirculate", [], [*arch.recirculate(), Assign(gas, gas - 1)])
    # set_port needs the privileged bit and a port the switch has, recirculate the
    # recirculate bit and gas (R6, R15): the fixed entries (:mod:`.frame`) and the port
    # ranges :meth:`~.control.StagedControl.configure` writes; anything else drops
    keys = [(meta.dot("steer"), "ternary"), (meta.dot("perm"), "ternary")]
    keys += [(gas, "ternary"), (sval, "ternary")]
    special.table("special", stage, keys, [ret, set_port, recirculate, drop], "drop()", 64)
    part.decls += forwarding.decls + multicast.decls + routes.decls + special.decls
    steer = meta.dot("steer")
    faults = [meta.dot(f"fault{i}").ne(0) for i in range(plan.lanes)]
    any_fault = faults[0]
    for fault in faults[1:]:
        any_fault = any_fault.lor(fault)
    faulted = Part()
    faulted.always("fault_drop", stage, [arch.drop()])
    part.decls += faulted.decls
    part.apply += chain(
        [
            (any_fault, faulted.apply),
            *egress_steering(plan, arch, STEER_PASS),
            (steer.eq(STEER_FORWARD), forwarding.apply),
            (steer.eq(STEER_MULTICAST), multicast.apply),
            (steer.eq(STEER_PASS), routes.apply),
        ],
        special.apply,
    )
    return part
