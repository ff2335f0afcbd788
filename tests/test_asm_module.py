"""Assembly of whole modules: what ``dpfc compile --emit asm`` writes, ``dpfc asm`` and
scenarios read back (docs/assembly.md, "Several DPFs").

* Round trip: for every module of ``examples/dpf``, compile -> emit asm -> assemble gives
  each DPF's code bytes (options, code-memory words, the text beside them), arrays,
  chains, parameters, app id and symbol exactly as the compiled object has them.
* ``dpfc asm`` on a file of several DPFs reports each, writes their object or text, and
  writes bytes or packets of the one ``--dpf`` names (DPF0131 without it).
* A scenario installs the KVS from its emitted assembly and answers as from the source.
* The directives of a module file (``.module``, ``.array``) and chains (``NEXT_PC
  module.dpf``) in hand-written text, and their mistakes.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from dpfc.asm import assemble_module, assemble_text
from dpfc.backends.scenario import load_scenario
from dpfc.cli.main import main
from dpfc.codegen.emit import format_module
from dpfc.diagnostics import DiagnosticError, SourceFile
from dpfc.driver import CompileOptions, compile_source
from dpfc.machine.program import PLACEHOLDER, ArrayBinding, Relocation
from dpfc.objfile import write_object
from tests.conftest import ROOT

EXAMPLES = sorted((ROOT / "examples" / "dpf").glob("*.dpf"))
KVS = ROOT / "examples" / "dpf" / "kvs.dpf"
COMPILER_ONLY = ("location", "source", "schedule", "report")  # notes assembly does not carry


def _code(object_json: dict[str, Any]) -> list[dict[str, Any]]:
    """Each DPF of an object without the compiler's notes (and the bundles' source lines and
    register variables)."""
    out = []
    for dpf in object_json["dpfs"]:
        kept = {k: v for k, v in dpf.items() if k not in COMPILER_ONLY}
        kept["bundles"] = [
            {k: v for k, v in b.items() if k not in ("source", "registers")} for b in dpf["bundles"]
        ]
        out.append(kept)
    return out


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_compiled_assembly_assembles_to_the_compiled_code(path: Path) -> None:
    module = compile_source(path, CompileOptions())
    text = format_module(module.module.name, [u.compiled for u in module.units])
    assembled = assemble_module(SourceFile(f"{path.stem}.dpfasm", text))
    compiled = json.loads(write_object(module.object()))
    again = json.loads(write_object(assembled.object()))
    assert again["module"] == compiled["module"]
    assert again["target_fingerprint"] == compiled["target_fingerprint"]
    assert _code(again) == _code(compiled)
    # and the text is canonical: printing what was assembled gives the text without notes
    assert assemble_module(SourceFile("again", assembled.text())).text() == assembled.text()


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args), prog_name="dpfc")
    assert "Traceback" not in result.output + result.stderr, result.output + result.stderr
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture(scope="module")
def kvs_asm(tmp_path_factory: pytest.TempPathFactory) -> Path:
    where = tmp_path_factory.mktemp("kvs") / "kvs.dpfasm"
    code, _, stderr = run("compile", str(KVS), "--emit", "asm", "-o", str(where))
    assert code == 0, stderr
    return where


def test_dpfc_asm_reports_every_dpf_of_a_module(kvs_asm: Path) -> None:
    code, stdout, _ = run("asm", str(kvs_asm))
    assert code == 0
    heads = [line.split(":")[0] for line in stdout.splitlines() if ": target" in line]
    assert heads == ["cache_get", "cache_put", "empty"]


def test_dpfc_asm_writes_the_object_of_every_dpf(kvs_asm: Path, tmp_path: Path) -> None:
    code, _, stderr = run("asm", str(kvs_asm), "-o", str(tmp_path / "kvs.dpfo"))
    assert code == 0, stderr
    written = json.loads((tmp_path / "kvs.dpfo").read_text())
    compiled = json.loads(write_object(compile_source(KVS, CompileOptions()).object()))
    assert [d["symbol"] for d in written["dpfs"]] == ["kvs.cache_get", "kvs.cache_put", "kvs.empty"]
    assert _code(written) == _code(compiled)
    # the canonical text of the module reads back to the same text
    code, _, _ = run("asm", str(kvs_asm), "--emit", "asm", "-o", str(tmp_path / "again.dpfasm"))
    assert code == 0
    text = (tmp_path / "again.dpfasm").read_text()
    assert text.startswith(".module kvs\n\n.dpf cache_get\n")
    assert "    NEXT_PC count_min.count_min\n" in text


def test_dpfc_asm_writes_bytes_of_the_dpf_named(kvs_asm: Path, tmp_path: Path) -> None:
    out = tmp_path / "put.bin"
    code, stdout, _ = run("asm", str(kvs_asm), "--dpf", "cache_put", "-o", str(out))
    assert code == 0
    assert stdout.startswith("cache_put: target tofino1")
    compiled = compile_source(KVS, CompileOptions()).unit("cache_put").compiled
    assert out.read_bytes() == compiled.encoded.options
    code, _, stderr = run("asm", str(kvs_asm), "-o", str(tmp_path / "x.pcap"))
    assert code == 1 and "error[DPF0131]" in stderr and "--dpf NAME" in stderr
    code, _, stderr = run("asm", str(kvs_asm), "--dpf", "cache_gte")
    assert code == 1 and "no DPF named `cache_gte`" in stderr and "`cache_get`?" in stderr


def test_a_scenario_installs_a_module_from_its_assembly(kvs_asm: Path, tmp_path: Path) -> None:
    """examples/scenarios/kvs.toml with the KVS from its assembly: the same report."""
    scenario = (ROOT / "examples" / "scenarios" / "kvs.toml").read_text()
    scenario = scenario.replace('"../dpf/kvs.dpf"', json.dumps(str(kvs_asm)))
    scenario = scenario.replace(
        '"../dpf/count_min.dpf"', json.dumps(str(ROOT / "examples/dpf/count_min.dpf"))
    )
    (tmp_path / "kvs.toml").write_text(scenario)
    from_asm = load_scenario(tmp_path / "kvs.toml")
    from_source = load_scenario(ROOT / "examples" / "scenarios" / "kvs.toml")
    from_asm.network.run()
    from_source.network.run()
    received = [f for h in ("client", "server") for f in from_asm.network.hosts[h].received]
    expected = [f for h in ("client", "server") for f in from_source.network.hosts[h].received]
    assert received == expected and len(received) == 6


MODULE_TEXT = """\
.module demo
.dpf first
.placement switch
.array demo.counts segment 16 eu0 lane1
prolog entry:
    POP A1
    JMP count
eu0 count:
    LOAD_IMM B1, 1
    FAADD B1, [A1]
    HALT out
epilog out:
    PUSH A1
    NEXT_PC demo.second

.dpf second
.placement switch
prolog entry:
    JMP pass
eu0 pass:
    HALT done
epilog done:
"""


def test_module_directives_and_chains() -> None:
    module = assemble_module(SourceFile("demo.dpfasm", MODULE_TEXT))
    first, second = module.programs
    assert [module.symbol(p) for p in module.programs] == ["demo.first", "demo.second"]
    assert first.arrays == (ArrayBinding("demo.counts", "segment", 16, 0, 1),)
    assert first.relocations == (Relocation("out", "demo.second"),)
    (epilog,) = [b for b in first.bundles if b.label == "out"]
    assert epilog.bundle.next_pc == PLACEHOLDER  # type: ignore[union-attr]
    assert second.arrays == () and second.relocations == ()
    obj = module.object()
    assert obj.module == "demo" and [d.symbol for d in obj.dpfs] == ["demo.first", "demo.second"]


def test_one_dpf_files_mean_what_they_meant() -> None:
    program = assemble_text(".dpf solo\nprolog p:\n JMP e\neu0 e:\n HALT x\nepilog x:\n")
    module = assemble_module(
        SourceFile("solo.dpfasm", ".dpf solo\nprolog p:\n JMP e\neu0 e:\n HALT x\nepilog x:\n")
    )
    assert program.name == "solo" and module.object().dpfs[0].symbol == "solo"


@pytest.mark.parametrize(
    ("text", "code", "words"),
    [
        (MODULE_TEXT.replace(".dpf second", ".dpf first"), "DPF0132", "defined twice"),
        (
            MODULE_TEXT.replace(".dpf second\n", ".dpf second\n.target tofino2\n"),
            "DPF0132",
            "share a target",
        ),
        (
            MODULE_TEXT.replace(".module demo\n", "") + ".module late\n",
            "DPF0106",
            "`.module` comes first",
        ),
        (MODULE_TEXT.replace("segment 16", "segmnet 16"), "DPF0105", "`direct` or `segment`"),
        (MODULE_TEXT.replace("eu0 lane1", "eu9 lane1"), "DPF0105", "no EU 9 lane 1"),
        (MODULE_TEXT.replace(" eu0 lane1", ""), "DPF0105", "five arguments"),
    ],
    ids=["duplicate-dpf", "two-targets", "late-module", "bad-mapping", "bad-eu", "arity"],
)
def test_module_mistakes(text: str, code: str, words: str) -> None:
    with pytest.raises(DiagnosticError) as caught:
        assemble_module(SourceFile("demo.dpfasm", text))
    assert [d.code for d in caught.value.diagnostics] == [code]
    assert words in caught.value.diagnostics[0].message
