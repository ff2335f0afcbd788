"""The ingress parser of the stage-structured program: in-packet code (format version 2)
into fixed fields, every decision a lookahead of the next part's own first bytes.

Contract: :func:`parser_states` returns the states, ``start`` first (it begins with what
the architecture's intrinsic metadata needs: :meth:`~.arch.StagedArch.parser_start`). After the outer
headers and the SwitchVM header option, the stack option's words are extracted by the
header's ``stack_depth`` hint (the top ``2L`` also copied into ``meta.pop<j>`` for the
prolog); then the code loop reads bundles: ``0xFB, stage << 3`` starts the bundle of that
stage, whose parts are selectors (first byte below 0xF8: the destination register's code),
the ALU group (0xF8), the memory group (0xF9) and the immediates (0xFA, 0xFC); 0xFF ends
the code (its padding, 0xFF as well, follows): the parser stops there, and the end byte, the
padding and the rest of the packet stay payload, which the deparser sends as it came. The in-packet code is one code option
(the fit profiles allow one): a second option's header and padding between two
bundles would each need headers of their own in every bundle slot, and a header's valid
bit is a POV bit, of which the Tofino-2 ingress has 128 (8 EUs with such slots need 176:
p4c-barefoot 9.13.4 stops with "Total size of containers used for ingress POV
allocation is 176b"). Why lookaheads only: a Tofino-1 parser has one 16-bit and two 8-bit
match registers, so a count or presence bitmap saved across states runs out of them.
"""

from __future__ import annotations

from dpfc.backends.p4.lang import Assign, Do, Expr, Select, State, Stmt, n

from .arch import StagedArch
from .headers import header_bytes, headers_struct, instances, slots
from .inner import INNER, inner_states
from .plan import StagePlan

hdr, meta, pkt = n("hdr"), n("meta"), n("pkt")
BUNDLE_TAG, END = 0xFB, 0xFF
ALU_TAG, MEM_TAG, IMM_TAGS = 0xF8, 0xF9, (0xFA, 0xFC)
STEER_IMM, STEER_REG, NEXT_PC, NEXT_REG = 0xF6, 0xF7, 0xF4, 0xF5
EPILOG_STAGE = 31
CODE_OPTION, HEADER_OPTION = 0xFFF002, 0xFFF001


def look(bits: int) -> Expr:
    return n(f"pkt.lookahead<bit<{bits}>>").call()


def extract(field: str) -> Stmt:
    return Do(pkt.dot("extract").call(hdr.dot(field)))


def _go(field: str, then: str | Select, extra: list[Stmt] | None = None) -> State:
    return State(f"parse_{field}", [*(extra or []), extract(field)], then)


def parser_states(plan: StagePlan, stack_depth: int, arch: StagedArch) -> list[State]:
    states = [
        State("start", arch.parser_start(), "parse_ethernet"),
        _go(
            "ethernet",
            Select(
                [hdr.dot("ethernet").dot("ether_type")],
                [("0x0800", "parse_ipv4"), ("default", "accept")],
            ),
        ),
        _go(
            "ipv4",
            Select([hdr.dot("ipv4").dot("protocol")], [("17", "parse_udp"), ("default", "accept")]),
        ),
        _go(
            "udp",
            Select(
                [hdr.dot("udp").dot("dst_port")], [("6081", "parse_geneve"), ("default", "accept")]
            ),
        ),
        _go(
            "geneve", Select([look(24)], [(hex(HEADER_OPTION), "parse_sv"), ("default", "accept")])
        ),
        _go(
            "sv",
            Select(
                [hdr.dot("sv").dot("depth")], [("0", "code_start"), ("default", "parse_stack_opt")]
            ),
        ),
        _go("stack_opt", "stack0"),
    ]
    states += _stack(plan, stack_depth)
    # after the options: the tenant's frame, where the program reads it (:mod:`.inner`)
    after = INNER if plan.header_fields else "accept"
    states.append(
        State(
            "code_start",
            [],
            Select([look(24)], [(hex(CODE_OPTION), "parse_code_opt"), ("default", after)]),
        )
    )
    states.append(_go("code_opt", "code"))
    stages = [*enumerate(slots(plan)), (EPILOG_STAGE, "ep")]
    cases = [(f"0x{BUNDLE_TAG:02X}{(i << 3):02X}", _first(plan, slot)) for i, slot in stages]
    # the end byte and its padding stay payload on Tofino (extracting them would cost POV
    # bits); a v1model program that cuts the code extracts them (:func:`_code_end`)
    end = "parse_code_end" if plan.cut_code else "accept"
    cases += [(f"0x{END:02X}00 &&& 0xFF00", end), ("default", "accept")]
    states.append(State("code", [], Select([look(16)], cases)))
    code: list[State] = []
    for _, slot in stages:
        if plan.packet_bundles > 1:
            code.append(_which(plan, slot))
        for instance in instances(plan, slot):
            code += _epilog(plan, instance) if slot == "ep" else _bundle(plan, slot, instance)
    if plan.cut_code:
        code = _counted(plan, code) + _code_end(after)
    if plan.header_fields:
        code += inner_states()
    return states + code


def _counted(plan: StagePlan, states: list[State]) -> list[State]:
    """``states`` adding the bytes each extracts to ``meta.code_bytes`` (a state
    ``parse_<field>`` extracts ``<field>``: :func:`_go`)."""
    sizes = header_bytes(plan)
    kinds = dict(headers_struct(plan, 0).fields)
    out = []
    count = meta.dot("code_bytes")
    for state in states:
        body = list(state.body)
        field = state.name.removeprefix("parse_")
        if field != state.name:
            body.append(Assign(count, count + sizes[kinds[field]]))
        out.append(State(state.name, body, state.transition, state.comment))
    return out


def _code_end(after: str) -> list[State]:
    """The end byte, then the padding to the option's multiple of 4 bytes, then ``after``."""
    count = meta.dot("code_bytes")
    pads = [("0", after), ("1", "parse_code_pad3"), ("2", "parse_code_pad2")]
    pads.append(("3", "parse_code_pad1"))
    extra = [Assign(count, count + 1)]
    out = [
        State("parse_code_end", [extract("code_end"), *extra], Select([count.slice(1, 0)], pads))
    ]
    out += [_go(f"code_pad{n}", after) for n in (1, 2, 3)]
    return out


def _first(plan: StagePlan, slot: str) -> str:
    """The state a bundle of ``slot``'s stage starts in."""
    return f"parse_{slot}_head" if plan.packet_bundles == 1 else f"{slot}_which"


def _which(plan: StagePlan, slot: str) -> State:
    """More bundles per stage (v1model): a stage's i-th bundle goes to instance i, the first
    whose head is not yet valid (a Tofino parser could not: one bundle per stage there)."""
    names = instances(plan, slot)
    valid = [hdr.dot(f"{name}_head").dot("isValid").call() for name in names]
    cases = []
    for i, name in enumerate(names):
        keyset = ", ".join(["true"] * i + ["false"] + ["_"] * (len(names) - i - 1))
        cases.append((f"({keyset})", f"parse_{name}_head"))
    return State(f"{slot}_which", [], Select(valid, [*cases, ("default", "accept")]))


def _stack(plan: StagePlan, stack_depth: int) -> list[State]:
    """The top words one by one (a prolog pops at most 2L of them: ``stack<j>``, copied to
    ``meta.pop<j>``), the rest in chunks of 2^k words, largest first (``rest<r>``: r words
    left). Each header is a POV bit, of which the ingress has 128: 16 single words would
    take 16, the chunks take at most five."""
    depth = hdr.dot("sv").dot("depth")
    top = min(stack_depth, 2 * plan.lanes)
    out = []
    for j in range(top):
        copy = [Assign(meta.dot(f"pop{j}"), look(32))]
        then: str | Select = "code_start"
        if j + 1 < stack_depth:
            nxt = f"stack{j + 1}" if j + 1 < top else "rest"
            then = Select([depth], [(str(j + 1), "code_start"), ("default", nxt)])
        body = [*copy, Do(pkt.dot("extract").call(hdr.dot("stack").at(j)))]
        out.append(State(f"stack{j}", body, then))
    rest = stack_depth - top
    if rest:
        cases = [(str(top + r), f"rest{r}") for r in range(1, rest + 1)]
        out.append(State("rest", [], Select([depth], [*cases, ("default", "code_start")])))
    for r in range(1, rest + 1):
        chunk = 1 << (r.bit_length() - 1)
        then = f"rest{r - chunk}" if r > chunk else "code_start"
        out.append(
            State(f"rest{r}", [Do(pkt.dot("extract").call(hdr.dot(f"stack_chunk{chunk}")))], then)
        )
    return out


def _bundle(plan: StagePlan, slot: str, at: str) -> list[State]:
    """The states of a prolog or EU bundle of ``slot``, into header instance ``at``."""
    parts = f"{at}_parts"
    if slot == "pro":
        out = [_go(f"{at}_head", parts)]
    else:
        ctrl = hdr.dot(f"{at}_head").dot("ctrl")
        out = [
            _go(
                f"{at}_head",
                Select([ctrl], [("0", parts), ("1", parts), ("default", f"parse_{at}_br")]),
            ),
            _go(f"{at}_br", parts),
        ]
    cases = [
        (f"0x{plan.register_code(r) << 3:02X} &&& 0xF8", f"parse_{at}_sel_{r}")
        for r in plan.registers
    ]
    out += [_go(f"{at}_sel_{r}", parts) for r in plan.registers]
    if slot != "pro":
        tags = [
            (ALU_TAG, "alu"),
            (MEM_TAG, "mem"),
            *((t, f"imm{j}") for j, t in enumerate(IMM_TAGS)),
        ]
        cases += [(f"0x{tag:02X}", f"parse_{at}_{part}") for tag, part in tags]
        out += [_go(f"{at}_{part}", parts) for _, part in tags]
    cases.append(("default", "code"))
    out.append(State(parts, [], Select([look(8)], cases)))
    return out


def _epilog(plan: StagePlan, at: str) -> list[State]:
    """The states of an epilog bundle, into header instance ``at``."""
    out = [_go(f"{at}_head", f"{at}_pushes0")]
    pushes = 2 * plan.lanes
    for j in range(pushes + 1):
        cases = [("0x00 &&& 0xE0", f"parse_{at}_push{j}")] if j < pushes else []
        cases.append(("default", f"{at}_steer"))
        out.append(State(f"{at}_pushes{j}", [], Select([look(8)], cases)))
        if j < pushes:
            out.append(_go(f"{at}_push{j}", f"{at}_pushes{j + 1}"))
    steer = [
        (f"0x{STEER_IMM:02X}", f"parse_{at}_steer_imm"),
        (f"0x{STEER_REG:02X}", f"parse_{at}_steer_reg"),
    ]
    out.append(State(f"{at}_steer", [], Select([look(8)], [*steer, ("default", f"{at}_next")])))
    out += [_go(f"{at}_steer_imm", f"{at}_next"), _go(f"{at}_steer_reg", f"{at}_next")]
    nxt = [
        (f"0x{NEXT_PC:02X}", f"parse_{at}_next_pc"),
        (f"0x{NEXT_REG:02X}", f"parse_{at}_next_reg"),
    ]
    out.append(State(f"{at}_next", [], Select([look(8)], [*nxt, ("default", "code")])))
    out += [_go(f"{at}_next_pc", "code"), _go(f"{at}_next_reg", "code")]
    return out
