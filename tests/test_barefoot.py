"""The Tofino compiler as a judge (dpfc.backends.p4.barefoot).

* the resource figures of the paper's Table 3 read from the compiler's two logs: a small
  pair of logs written out by hand (tests/golden/p4/barefoot/), every figure checked;
* p4c-barefoot itself, when it is found (skipped with the reason otherwise), on a one-table
  TNA program for Tofino-1 and -2: it compiles in one stage, and the figures come from the
  logs it wrote.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from dpfc.backends.p4 import ToolchainMissing
from dpfc.backends.p4.barefoot import (
    Usage,
    command,
    compile_tna,
    find_barefoot,
    read_resources,
)

LOGS = Path(__file__).parent / "golden" / "p4" / "barefoot"

ONE_TABLE_TNA = """\
#include <core.p4>
#if __TARGET_TOFINO__ == 2
#include <t2na.p4>
#else
#include <tna.p4>
#endif
header eth_h { bit<48> dst; bit<48> src; bit<16> type; }
struct headers_t { eth_h eth; }
struct meta_t { }
parser IgP(packet_in pkt, out headers_t hdr, out meta_t meta,
           out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        pkt.extract(hdr.eth);
        transition accept;
    }
}
control Ig(inout headers_t hdr, inout meta_t meta, in ingress_intrinsic_metadata_t ig_intr_md,
           in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
           inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
           inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    action set_port(PortId_t p) { ig_tm_md.ucast_egress_port = p; }
    table fwd {
        key = { ig_intr_md.ingress_port: exact; }
        actions = { set_port; NoAction; }
        size = 512;
    }
    apply { fwd.apply(); }
}
control IgD(packet_out pkt, inout headers_t hdr, in meta_t meta,
            in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    apply { pkt.emit(hdr); }
}
struct eh_t { }
struct em_t { }
parser EgP(packet_in pkt, out eh_t hdr, out em_t meta,
           out egress_intrinsic_metadata_t eg_intr_md) {
    state start { pkt.extract(eg_intr_md); transition accept; }
}
control Eg(inout eh_t hdr, inout em_t meta, in egress_intrinsic_metadata_t eg_intr_md,
           in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
           inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md,
           inout egress_intrinsic_metadata_for_output_port_t eg_oport_md) {
    apply { }
}
control EgD(packet_out pkt, inout eh_t hdr, in em_t meta,
            in egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {
    apply { pkt.emit(hdr); }
}
Pipeline(IgP(), Ig(), IgD(), EgP(), Eg(), EgD()) pipe;
Switch(pipe) main;
"""


def test_table3_figures_from_the_logs() -> None:
    found = read_resources(LOGS / "resources.json", LOGS / "phv.json")
    assert (found.stages, found.chip_stages) == (2, 3)
    # used over the two stages the log has; available over the chip's three stages
    assert found.table3() == {
        "exact xbar": Usage(8, 3 * 128),
        "ternary xbar": Usage(2, 3 * 66),
        "TCAM": Usage(4, 3 * 24),
        "SRAM": Usage(16, 3 * 80),
        "hash bits": Usage(32, 3 * 416),
        "hash distribution": Usage(1, 3 * 6),
        "gateways": Usage(3, 3 * 16),
        "action instruction memory": Usage(11, 3 * 32),
        "logical tables": Usage(5, 3 * 16),
        # the 32- and 16-bit containers hold fields, the 8-bit one and the tagalong do not
        "normal PHV": Usage(48, 64 * 8 + 96 * 16 + 64 * 32),
    }
    assert found.logical_tables.percent == pytest.approx(100 * 5 / 48)


def test_command_names_the_architecture_of_the_target() -> None:
    argv = command(Path("p4c-barefoot"), Path("s.p4"), "tofino2", Path("out"))
    assert argv == (
        "p4c-barefoot",
        "--target",
        "tofino2",
        "--arch",
        "t2na",
        "-g",
        "--bf-rt-schema",
        "out/bfrt.json",
        "-o",
        "out",
        "s.p4",
    )
    with pytest.raises(ValueError, match="unknown Tofino target `tofino3`"):
        command(Path("p4c-barefoot"), Path("s.p4"), "tofino3", Path("out"))


def _barefoot() -> Path:
    try:
        return find_barefoot()
    except ToolchainMissing as missing:
        pytest.skip(f"p4c-barefoot not run: {missing}")


@pytest.mark.slow
@pytest.mark.parametrize("target", ["tofino", "tofino2"])
def test_one_table_program_compiles_in_one_stage(target: str, tmp_path: Path) -> None:
    barefoot = _barefoot()
    source = tmp_path / "one_table.p4"
    source.write_text(ONE_TABLE_TNA)
    run = compile_tna(barefoot, source, target, tmp_path / "out")
    assert run.errors == ()
    assert run.resources is not None
    assert run.resources.stages == 1
    assert run.resources.chip_stages == (12 if target == "tofino" else 20)
    assert run.resources.logical_tables.used == 1
    assert run.resources.tcam_blocks.used == 0
    assert 0 < run.resources.normal_phv_bits.used < run.resources.normal_phv_bits.available


@pytest.mark.slow
def test_a_refused_program_reports_the_compilers_error(tmp_path: Path) -> None:
    barefoot = _barefoot()
    source = tmp_path / "bad.p4"
    source.write_text(ONE_TABLE_TNA.replace("fwd.apply();", "fwd.apply(); meta.nope = 1;"))
    run = compile_tna(barefoot, source, "tofino", tmp_path / "out")
    assert not run.compiled
    assert any("nope" in line for line in run.errors)
