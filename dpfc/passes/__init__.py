"""Optimisation passes over the SSA IR, one module per pass, and the pass manager.

Each pass module documents its rewrite with an example and its requires/ensures contract;
:mod:`.manager` lists them (``PASSES``), orders them (``DEFAULT_PIPELINE``) and runs them
(``run_pipeline``), optionally verifying the IR between passes. :func:`split_shifts`
(:mod:`.shifts`) is the one step that needs the target profile: the compile driver runs it
after the pipeline.
"""

from dpfc.passes.base import FunctionPass
from dpfc.passes.manager import (
    DEFAULT_PIPELINE,
    PASSES,
    PassRun,
    PassVerificationError,
    UnknownPassError,
    describe_passes,
    parse_pipeline,
    run_pipeline,
    verify_input,
)
from dpfc.passes.shifts import split_shifts

__all__ = [
    "DEFAULT_PIPELINE",
    "PASSES",
    "FunctionPass",
    "PassRun",
    "PassVerificationError",
    "UnknownPassError",
    "describe_passes",
    "parse_pipeline",
    "run_pipeline",
    "split_shifts",
    "verify_input",
]
