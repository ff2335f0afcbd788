"""The stage-structured SwitchVM data plane: the paper's layout of SwitchVM on Tofino.

Permissions | prolog | EU0 stage 1 | EU0 stage 2 | ... | epilog | steering, each unit a
small match-action table keyed on its code field, in-packet code (format version 2) in
fixed fields, state as Tofino holds it; rendered for TNA (Tofino-1 and -2) and for v1model
(bmv2) from the same builders, with the same tables, keys and actions. Modules:
:mod:`.plan` (stages and names), :mod:`.headers`, :mod:`.parser`, :mod:`.eu`, :mod:`.ends`,
:mod:`.externs` (the register actions), :mod:`.units`, :mod:`.arch` (the architecture
seam), :mod:`.tna` and :mod:`.v1model` (its two sides), :mod:`.program` (the frame).
docs/p4.md ("The stage-structured program") says what it covers today.
"""

from dpfc.backends.p4.staged.plan import PlanError, StagePlan
from dpfc.backends.p4.staged.program import ARCHITECTURES, generate

__all__ = ["ARCHITECTURES", "PlanError", "StagePlan", "generate"]
