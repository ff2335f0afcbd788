"""The stage-structured SwitchVM data plane: the paper's layout of SwitchVM on Tofino.

Permissions | prolog | EU0 stage 1 | EU0 stage 2 | ... | epilog | steering, each unit a
small match-action table keyed on its code field, in-packet code (format version 2) in
fixed fields, state as Tofino holds it. Modules: :mod:`.plan` (stages and names),
:mod:`.headers`, :mod:`.parser`, :mod:`.eu`, :mod:`.ends`, :mod:`.externs`, :mod:`.units`,
:mod:`.program` (the TNA frame). docs/p4.md ("The stage-structured program") says what it
covers today.
"""

from dpfc.backends.p4.staged.plan import PlanError, StagePlan
from dpfc.backends.p4.staged.program import generate

__all__ = ["PlanError", "StagePlan", "generate"]
