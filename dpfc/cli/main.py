"""``dpfc``: the command-line entry point, and the conventions every command follows.

The commands: asm (:mod:`.assemble`), disasm (:mod:`.disassemble`), packet (:mod:`.packet`),
target (:mod:`.target`), check and compile (:mod:`.lang`), opt (:mod:`.opt`), link
(:mod:`.link`), run (:mod:`.run`), test (:mod:`.testing`), deploy (:mod:`.deploy`), p4
(:mod:`.p4`), explain (:mod:`.explain`). Each module is imported when its command runs
(:mod:`.lazy`), so that ``dpfc --help`` and ``dpfc --version`` import neither the
compiler's phases nor z3, llvmlite or scapy.

Conventions (one place enforces each: :mod:`.conventions`, :mod:`.errors`, :mod:`.files`):

* results go to stdout, diagnostics and "wrote FILE (N bytes)" lines to stderr;
* exit 0 on success, 1 on any user error — usage errors (an unknown option, a missing
  argument, a value out of its set) included, as DPF0003 — and 2 on an internal compiler
  error only;
* ``--diagnostics-format text|json`` is accepted before the subcommand and on every
  command, and applies to usage errors too;
* ``--target PROFILE`` (a built-in profile or a ``.toml`` file) on every command whose
  work depends on a profile (all but ``run``, whose scenario names its target, ``target``,
  which takes the profile as its argument, and ``explain``);
* ``-`` names standard input for an input file and standard output for ``-o -``;
* every path a command writes is checked before any work (:class:`.files.OutputPath`);
* ``-q, --quiet`` on every command: nothing but diagnostics and the output asked for
  (:mod:`.options`);
* a value out of a fixed set, a misspelt option or subcommand gets "did you mean";
* ``--version`` names dpfc and the versions of the libraries its output depends on.
"""

from __future__ import annotations

import click

from dpfc.cli.conventions import DpfcGroup, version_option
from dpfc.cli.lazy import LazyCommand

# name, where the command is, and the first sentence of its help (dpfc --help lists it)
COMMANDS = (
    LazyCommand(
        "asm",
        "dpfc.cli.assemble:asm_command",
        "Assemble a .dpfasm file (- for stdin); print a size report, write bytes, a pcap or "
        "an object.",
    ),
    LazyCommand(
        "check",
        "dpfc.cli.lang:check_command",
        "Check a .dpf file and the modules it imports (names, types, rules).",
    ),
    LazyCommand(
        "compile",
        "dpfc.cli.lang:compile_command",
        "Compile a .dpf file: schedule every DPF onto the target's EUs and emit machine code.",
    ),
    LazyCommand(
        "deploy",
        "dpfc.cli.deploy:deploy_command",
        "Install a linked image on a switch (bmv2 or the simulator), prologs last.",
    ),
    LazyCommand(
        "disasm",
        "dpfc.cli.disassemble:disasm_command",
        "Explain SwitchVM bytes (FILE, or - for stdin): a pcap, a raw frame, raw Geneve "
        "options, an object file or an install image; with --source, an object annotated "
        "with the source lines.",
    ),
    LazyCommand(
        "explain",
        "dpfc.cli.explain:explain_command",
        "Explain a diagnostic code such as DPF5101: what it means, why, an example, the fix.",
    ),
    LazyCommand(
        "link",
        "dpfc.cli.link:link_command",
        "Link objects into an install image for one switch: code slots (identical bundles "
        "shared), chain targets, memory, permissions and steering, checked against the "
        "profile.",
    ),
    LazyCommand(
        "opt",
        "dpfc.cli.opt:opt_command",
        "Optimise textual IR (FILE.ir) with the given passes and print the IR.",
    ),
    LazyCommand(
        "p4",
        "dpfc.cli.p4:p4_command",
        "Generate the SwitchVM data plane as a P4-16 program (or, with `bfrt`, a BF-RT "
        "script that installs an image).",
    ),
    LazyCommand(
        "packet",
        "dpfc.cli.packet:packet_command",
        "Craft a SwitchVM packet and explain it (the code of an ``.pipeline egress`` file is "
        "named by the egress pointer).",
    ),
    LazyCommand(
        "run",
        "dpfc.cli.run:run_command",
        "Run a scenario (.toml or .json) in the simulator; report what came out where.",
    ),
    LazyCommand(
        "test",
        "dpfc.cli.testing:dpftest_command",
        "Run test files of DPFs on the simulator, its JIT or a switch; diff what differs.",
    ),
    LazyCommand(
        "verify",
        "dpfc.cli.verify:verify_command",
        "Decide on every path whether a tenant's code (an object, image or pcap) keeps a policy: "
        "instructions, metadata, steering, chains, stack, memory, code slots.",
    ),
    LazyCommand(
        "target",
        "dpfc.cli.target:target_command",
        "Show a target profile (limits, slot widths, metadata, steering, hashes).",
    ),
)


@click.group(cls=DpfcGroup, lazy=COMMANDS, context_settings={"help_option_names": ["-h", "--help"]})
@version_option
def main() -> None:
    """dpfc: the compiler toolchain for SwitchVM Data-Plane Filters (DPFs)."""


if __name__ == "__main__":  # pragma: no cover
    main()
