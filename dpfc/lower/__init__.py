"""Lowering of checked DPF programs to the SSA IR (:mod:`.lower`)."""

from dpfc.lower.lower import lower_program

__all__ = ["lower_program"]
