"""Where every unit of the stage-structured SwitchVM data plane sits, and what it is called.

Contract: :class:`StagePlan` numbers the hardware stages of one pass the way the paper lays
SwitchVM on Tofino (§5.1): permissions | prolog | EU0 stage 1 | EU0 stage 2 | ... |
EU(n-1) stage 2 | epilog | steering, so a profile of ``num_eus`` EUs needs 2·num_eus + 4
stages (12 for 4 EUs, 20 for 8), and refuses a profile whose pipeline does not have them.
It names the registers (``a0``.., ``b0``.., in register-code order) and every table the
control plane writes, so that the program, its entries and the BF-RT script take each name
from one place. Stage 1 of an EU holds selection, address translation, comparison and the
EU's code; stage 2 holds memory, the ALU and the branch (docs/isa.md §3 "Execution of one
EU", in the order Tofino can run it: a stage's tables read what earlier stages wrote).
"""

from __future__ import annotations

from dataclasses import dataclass

from dpfc.target import TargetProfile

# Stages outside the EUs: permissions, prolog, epilog, steering.
FRAME_STAGES = 4


class PlanError(ValueError):
    """The profile does not fit the stage-structured pipeline (the message says why)."""


@dataclass(frozen=True)
class StagePlan:
    """The stage of every unit for one profile (module docstring)."""

    num_eus: int
    lanes: int
    # in-packet bundles of one stage: one (a Tofino program) parsed into the units' fields;
    # more (v1model) parsed apart, the one a PC names copied there (:mod:`.bundles`)
    packet_bundles: int = 1
    # a LOAD_CONST table (const_table_entries > 0): the B selectors key on the tenant's slot
    # and hold each tenant's constants as entries (:func:`.entries.constant_entries`)
    constants: bool = False
    # HDR_MOD cuts the in-packet code out of the packet: a v1model program only (its parser
    # counts the code's bytes to reach the padding; the Tofino parsers stop at the end byte)
    cut_code: bool = False
    # egress DPFs run in a second pass of the same stages (v1model: :mod:`.egress`); a TNA
    # program runs none (Tofino-1's egress parser; on Tofino-2 the ingress's EUs use 28-32
    # of each stage's 32 action instruction rows, which an egress copy would share)
    egress_pass: bool = False
    # a tenant's default DPF and `unauthorized = "pass"` (v1model: :mod:`.grants`)
    grants: bool = False
    # LOAD_MD of the inner frame's header fields (v1model: its parser reaches the frame
    # past the code's padding, :mod:`.inner`)
    header_fields: bool = False
    # NEXT_PC from a register (v1model: the epilog moves the register's low 16 bits, a move
    # a Tofino epilog would need an identity hash unit per register for)
    next_from_register: bool = False

    @classmethod
    def for_profile(cls, profile: TargetProfile, arch: str = "tna") -> StagePlan:
        if profile.code_format != 2:
            raise PlanError(
                f"profile `{profile.name}`: the stage-structured program reads in-packet code of "
                "format version 2 (code_format = 2)"
            )
        if profile.max_code_options != 1:
            raise PlanError(
                f"profile `{profile.name}`: the stage-structured program reads one code option "
                "(max_code_options = 1)"
            )
        needed = 2 * profile.num_eus + FRAME_STAGES
        if needed > profile.hardware_stages:
            raise PlanError(
                f"profile `{profile.name}`: {profile.num_eus} EUs need {needed} stages "
                f"(2 per EU + {FRAME_STAGES}), the pipeline has {profile.hardware_stages}"
            )
        return cls(
            profile.num_eus,
            profile.lanes,
            profile.packet_bundles_per_stage,
            profile.const_table_entries > 0,
            arch == "v1model",
            arch == "v1model",
            arch == "v1model",
            arch == "v1model",
            arch == "v1model",
        )

    # -- stages ------------------------------------------------------------------------------
    @property
    def permissions(self) -> int:
        return 0

    @property
    def prolog(self) -> int:
        return 1

    def select(self, eu: int) -> int:
        """EU ``eu``'s stage 1: selection, translation, comparison, code."""
        return 2 + 2 * eu

    def execute(self, eu: int) -> int:
        """EU ``eu``'s stage 2: memory, ALU, branch."""
        return 3 + 2 * eu

    @property
    def epilog(self) -> int:
        return 2 + 2 * self.num_eus

    @property
    def steering(self) -> int:
        return 3 + 2 * self.num_eus

    @property
    def stages(self) -> int:
        return self.steering + 1

    # -- registers ---------------------------------------------------------------------------
    @property
    def registers(self) -> tuple[str, ...]:
        """``a0``..``a(L-1)``, ``b0``..``b(L-1)``: register-code order (docs/isa.md §1)."""
        return tuple(f"a{i}" for i in range(self.lanes)) + tuple(f"b{i}" for i in range(self.lanes))

    def register_code(self, register: str) -> int:
        """The 5-bit register code: class bit 4 (A 0, B 1), lane in bits 3..0."""
        return (16 if register[0] == "b" else 0) | int(register[1:])

    # -- table names (the control plane's) ----------------------------------------------------
    @staticmethod
    def selector(eu: int, register: str) -> str:
        return f"eu{eu}_sel_{register}"

    @staticmethod
    def direct(eu: int, lane: int) -> str:
        return f"eu{eu}_direct{lane}"

    @staticmethod
    def segment(eu: int, lane: int) -> str:
        return f"eu{eu}_segment{lane}"

    @staticmethod
    def compare(eu: int) -> str:
        return f"eu{eu}_compare"

    @staticmethod
    def code(eu: int) -> str:
        return f"eu{eu}_code"

    @staticmethod
    def memory(eu: int, lane: int) -> str:
        return f"eu{eu}_memory{lane}"

    @staticmethod
    def alu(eu: int, lane: int) -> str:
        return f"eu{eu}_alu{lane}"

    @staticmethod
    def branch(eu: int) -> str:
        return f"eu{eu}_branch"

    @staticmethod
    def prolog_selector(register: str) -> str:
        return f"prolog_sel_{register}"
