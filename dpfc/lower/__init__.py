"""Lowering of checked DPF programs to the SSA IR (:mod:`.lower`, with :mod:`.paths`,
:mod:`.builder` and :mod:`.expressions`)."""

from dpfc.lower.lower import lower_program

__all__ = ["lower_program"]
