"""Where the benchmarks find their inputs and put their outputs (paths of a clone of the
repository: the benchmarks measure its examples)."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ASM_EXAMPLES = ROOT / "examples" / "asm"
DPF_EXAMPLES = ROOT / "examples" / "dpf"
CORPUS = ROOT / "examples" / "corpus"
# Relative to the working directory, as a build tool's output directory is.
RESULTS = Path("bench") / "results.json"
SCALING_PLOT = ROOT / "docs" / "performance" / "scaling.png"
