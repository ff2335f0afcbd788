"""dpfc: the compiler toolchain for SwitchVM Data-Plane Filters (DPFs).

Phases live in one package each (see ``docs/architecture.md``):

* :mod:`dpfc.diagnostics` -- spans, diagnostics and their rendering;
* :mod:`dpfc.target`      -- SwitchVM target profiles (limits, timing rules);
* :mod:`dpfc.isa`         -- the instruction set as data, plus its exact semantics;
* :mod:`dpfc.encoding`    -- code-header and in-switch instruction-word formats;
* :mod:`dpfc.asm`         -- the ``.dpfasm`` assembler and disassembler;
* :mod:`dpfc.packet`      -- SwitchVM packets (scapy layers, pcap files);
* :mod:`dpfc.cli`         -- the ``dpfc`` command.
"""

__version__ = "0.1.0"
