"""dpfc's benchmark suite: ``python -m dpfc.bench [compile|sim|scaling|link|p4|startup|all]``.

* ``compile`` (:mod:`.compile`): compile time and schedules of each example DPF;
* ``sim`` (:mod:`.sim`): packets/s of the simulator's engines (:mod:`.engines`) on the
  paper's DPFs (:mod:`.workloads`), with bmv2 (:mod:`.p4`) when its toolchain exists;
* ``scaling`` (:mod:`.scaling`): how that cost grows with EUs, tenants and installed DPFs,
  as a table and a PNG plot (:mod:`.plot`, matplotlib);
* ``link`` (:mod:`.link`): linking thousands of DPFs into one image;
* ``startup`` (:mod:`.startup`): how long ``dpfc --help`` and ``dpfc --version`` take;
* ``all``: each of the above that can run here.

Every command prints a table on stdout, a progress bar on stderr when stderr is a
terminal (:mod:`.progress`), and writes its rows with the machine they were measured on to
``bench/results.json`` (:mod:`.results`). Numbers depend on the machine and its load;
nothing here asserts a speed.
"""

from __future__ import annotations

from .engines import ENGINES, Engine, register
from .results import Result, Skipped, format_results, write_results

__all__ = ["ENGINES", "Engine", "Result", "Skipped", "format_results", "register", "write_results"]
