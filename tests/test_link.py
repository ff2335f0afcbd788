"""``dpfc link``: code sharing, chain resolution, array placements, capacities, incremental
links and determinism, on the compiled examples (objects and images through their bytes)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner

from dpfc.asm import assemble_text
from dpfc.cli.main import main
from dpfc.diagnostics import DiagnosticError
from dpfc.driver import CompileOptions, compile_source
from dpfc.encoding import decode_options, decode_slot, stage_kind
from dpfc.isa.bundle import EPILOG_STAGE, PC, PROLOG_STAGE, EpilogBundle
from dpfc.link import Image, LinkInput, LinkOptions, image_bytes, image_id, link
from dpfc.link.image import install_rank
from dpfc.machine import PLACEHOLDER, encode_program
from dpfc.objfile import ObjectFile
from tests.link_fixtures import TOFINO1, link_bytes, named, obj, object_bytes
from tests.test_driver import READER, WRITER

KVS_PLACE = {"kvs.cache_*": (0,), "kvs.empty": (1,), "count_min.*": (1,)}


def kvs_image(*tenants: int, kvs: str = "small_kvs") -> Image:
    """Each tenant's KVS: cache-get and cache-put on pipe 0, count-min on pipe 1."""
    inputs = [LinkInput(obj(m), t) for t in tenants for m in (kvs, "count_min")]
    return link_bytes(inputs, LinkOptions(pipes=2, place=KVS_PLACE))


def test_two_tenants_share_one_copy_of_the_code_and_get_their_own_memory() -> None:
    one, two = kvs_image(7), kvs_image(7, 8)
    # the same slots: the second tenant's code is the first's
    assert [(c.stage, c.slot, c.word) for c in two.code] == [
        (c.stage, c.slot, c.word) for c in one.code
    ]
    assert all(c.refs == 2 for c in two.code)
    assert {c.users for c in two.code if c.stage == PROLOG_STAGE} == {
        ("7:count_min.count_min", "8:count_min.count_min"),
        ("7:kvs.empty", "8:kvs.empty"),
    }
    for symbol in ("count_min.count_min", "kvs.empty"):
        assert two.dpf(symbol, 7).entry == two.dpf(symbol, 8).entry
    # ... and the in-packet cache_get of both tenants chains to that one count-min
    for tenant in (7, 8):
        code = decode_options(two.dpf("kvs.cache_get", tenant).in_packet_options or b"", TOFINO1)
        chains = {e.next_pc for e in code.code.epilogs if isinstance(e.next_pc, PC)}
        assert chains == {PC(False, two.dpf("count_min.count_min", tenant).entry or 0)}
    # separate memory: every array once per tenant, at the object's placement
    arrays = {(m.tenant, m.array): (m.eu, m.lane, m.pipes) for m in two.memory}
    assert len(arrays) == 2 * len(one.memory)
    assert arrays[(7, "kvs.index")] == arrays[(8, "kvs.index")] == (0, 0, (0,))
    # the paper-sized cache fills its lanes: two tenants' do not fit one switch
    with pytest.raises(DiagnosticError) as info:
        kvs_image(7, 8, kvs="kvs")
    assert {d.code for d in info.value.diagnostics} == {"DPF7005"}
    assert "memory words of EU0 lane 0 of pipe 0: 90000 needed, 45000 exist (45000 over" in (
        info.value.diagnostics[0].message
    )
    assert arrays[(8, "countmin.row2")] == (1, 2, (1,))
    assert [p.tenant for p in two.permissions] == [7, 8]
    assert two.permissions[0].app_ids == (0x4B5601,)


def test_no_placeholder_survives_linking() -> None:
    image = kvs_image(7)
    entries = {d.entry for d in image.dpfs if d.entry is not None}
    for slot in image.code:
        bundle = decode_slot(stage_kind(slot.stage), slot.word, TOFINO1)
        if isinstance(bundle, EpilogBundle) and isinstance(bundle.next_pc, PC):
            assert bundle.next_pc.index in entries
    for dpf in image.dpfs:
        for chain in dpf.chains:
            assert chain.slot == image.dpf(chain.target, dpf.tenant).entry
        if dpf.in_packet_options is not None:
            code = decode_options(dpf.in_packet_options, TOFINO1).code
            targets = {PC(False, c.slot) for c in dpf.chains}
            assert {e.next_pc for e in code.epilogs if e.next_pc is not None} == targets
    # the objects held placeholders; the image holds the targets
    get = obj("small_kvs").dpf("kvs.cache_get").program
    assert [b.bundle.next_pc for b in get.bundles if b.label == "exit_n2"] == [PLACEHOLDER]
    assert image.dpf("kvs.cache_get", 7).chains[0].target == "count_min.count_min"


def test_the_install_order_writes_prologs_last_and_tables_first() -> None:
    image = kvs_image(7)
    kinds = [step.kind for step in image.install]
    assert kinds == sorted(kinds, key=["permission", "memory", "code", "default_dpf"].index)
    ranks = [
        install_rank(image.code[s.index].stage, TOFINO1.num_eus)
        for s in image.install
        if s.kind == "code"
    ]
    assert ranks == sorted(ranks) and ranks[-1] == TOFINO1.num_eus + 1  # prologs last
    first = next(s for s in image.install if s.kind == "code")
    assert image.code[first.index].stage == EPILOG_STAGE


def test_images_are_deterministic_and_named_by_their_digest() -> None:
    first, second = image_bytes(kvs_image(7, 8)), image_bytes(kvs_image(7, 8))
    assert first == second
    assert image_id(first) == image_id(second) and len(image_id(first)) == 64
    assert image_id(image_bytes(kvs_image(7))) != image_id(first)


def test_an_incremental_link_keeps_every_placed_pc() -> None:
    base = kvs_image(7)
    grown = link_bytes(
        [LinkInput(obj("paxos"), 9), LinkInput(obj("lb2"), 10)],
        LinkOptions(base=base, base_id=image_id(image_bytes(base))),
    )
    old = {(c.stage, c.slot): c.word for c in base.code}
    new = {(c.stage, c.slot): c.word for c in grown.code}
    assert all(new[key] == word for key, word in old.items())  # nothing moved
    assert len(new) > len(old)
    for dpf in base.dpfs:
        again = grown.dpf(dpf.symbol, dpf.tenant)
        assert (again.entry, again.labels, again.in_packet_options) == (
            dpf.entry,
            dpf.labels,
            dpf.in_packet_options,
        )
    assert set(base.memory) <= set(grown.memory)
    assert grown.base == image_id(image_bytes(base))
    # a tenant already in the base links again only with --replace
    with pytest.raises(DiagnosticError) as info:
        link([LinkInput(obj("kvs"), 7)], LinkOptions(base=base))
    assert info.value.diagnostics[0].code == "DPF7002"


def test_an_unresolved_chain_names_the_object_and_the_source() -> None:
    with pytest.raises(DiagnosticError) as info:
        link([LinkInput(obj("kvs"), 7)])
    [diagnostic] = info.value.diagnostics
    assert diagnostic.code == "DPF7001"
    assert "kvs.dpfo: `kvs.cache_get` chains to `count_min.count_min`" in diagnostic.message
    assert diagnostic.span is not None and diagnostic.span.source.name.endswith("kvs.dpf")


def test_a_symbol_defined_twice_names_both_objects() -> None:
    with pytest.raises(DiagnosticError) as info:
        link([LinkInput(obj("lb2"), 3), LinkInput(named("copy.dpfo", obj("lb2")), 3)])
    [diagnostic] = info.value.diagnostics
    assert diagnostic.code == "DPF7002"
    assert "lb2.lb2` of tenant 3 is defined twice: in copy.dpfo and in lb2.dpfo" in (
        diagnostic.message
    )


def test_a_shared_array_placed_twice_is_refused_naming_both_objects(tmp_path: Path) -> None:
    """The issue's example: module B imports an unpinned array of module A; compiled apart,
    the two place it differently, and the linker refuses the pair."""
    (tmp_path / "writer.dpf").write_text(WRITER)
    (tmp_path / "reader.dpf").write_text(READER)
    writer = named("writer.dpfo", compile_source(tmp_path / "writer.dpf").object())
    reader = named("reader.dpfo", compile_source(tmp_path / "reader.dpf").object())
    with pytest.raises(DiagnosticError) as info:
        link([LinkInput(writer, 5), LinkInput(reader, 5)])
    [diagnostic] = info.value.diagnostics
    assert diagnostic.code == "DPF7003"
    assert diagnostic.message.startswith("array `writer.table` of tenant 5 is 64 words at EU")
    assert "(segment) in reader.dpfo but 64 words at EU" in diagnostic.message
    assert diagnostic.message.endswith("(segment) in writer.dpfo")
    # compiled against the writer's object, the reader takes its placement: they link
    against = compile_source(tmp_path / "reader.dpf", CompileOptions(objects=(writer,)))
    image = link([LinkInput(writer, 5), LinkInput(named("reader.dpfo", against.object()), 5)])
    [table] = image.memory
    assert table.users == ("5:reader.get", "5:writer.put")


def test_kvs_update_compiled_alone_agrees_with_kvs_on_the_shared_arrays() -> None:
    """kvs_update writes kvs's pinned arrays: linked together, each array has one place."""
    image = link_bytes(
        [LinkInput(obj(m), 7) for m in ("kvs", "count_min", "kvs_update")],
        LinkOptions(pipes=2, place={**KVS_PLACE, "kvs_update.*": (0,)}),
    )
    index = [m for m in image.memory if m.array == "kvs.index"]
    assert len(index) == 1 and set(index[0].users) >= {
        "7:kvs.cache_get",
        "7:kvs_update.cache_update",
    }
    assert image.permissions[0].app_ids == (0x4B5601, 0x4B5602)


SMALL = replace(TOFINO1, name="small", code_slots_per_stage=3)


def _numbered(k: int) -> ObjectFile:
    """A small in-switch DPF whose prolog differs for each ``k`` (its EU code does not)."""
    text = (
        f".placement switch\nprolog p:\n POP A{k % 4}\n POP B{k // 4}\n JMP e\n"
        "eu0 e:\n HALT x\nepilog x:\n PUSH A0\n"
    )
    program = replace(assemble_text(text, f"n{k}.dpfasm", SMALL), name=f"n{k}")
    return named(f"n{k}.dpfo", ObjectFile.of_program(encode_program(program)))


def test_capacity_overflow_names_the_stage_and_the_numbers() -> None:
    assert link([LinkInput(_numbered(k), 1) for k in range(3)], LinkOptions(pipes=2))
    with pytest.raises(DiagnosticError) as info:
        link([LinkInput(_numbered(k), 1) for k in range(5)], LinkOptions(pipes=2))
    messages = [d.message for d in info.value.diagnostics]
    assert {d.code for d in info.value.diagnostics} == {"DPF7005"}
    assert messages == [
        "the image does not fit small: code memory of prolog on pipe 0: 5 slots needed, "
        "3 exist (2 over)",
        "the image does not fit small: code memory of prolog on pipe 1: 5 slots needed, "
        "3 exist (2 over)",
    ]


def test_disasm_shows_an_image_with_symbols_and_sharing(tmp_path: Path) -> None:
    path = tmp_path / "kvs.dpfimg"
    path.write_bytes(image_bytes(kvs_image(7, 8)))
    result = CliRunner().invoke(main, ["disasm", str(path)])
    assert result.exit_code == 0, result.stderr
    text = result.stdout
    assert "; dpfc install image" in text and "2 pipes" in text
    assert "shared by 2: 7:count_min.count_min, 8:count_min.count_min" in text
    assert "JMP count_min.count_min:eu1_n0@0" in text
    assert "7:kvs.index: 1000 words direct at EU0 lane 0, pipes 0" in text
    assert "; in-packet code of 8:kvs.cache_get, chain targets filled in:" in text


def test_link_cli_writes_the_image_and_links_incrementally(tmp_path: Path) -> None:
    for name in ("small_kvs", "count_min", "lb2"):
        (tmp_path / f"{name}.dpfo").write_bytes(object_bytes(name))
    runner = CliRunner()

    def run(*args: str) -> tuple[int, str, str]:
        result = runner.invoke(main, ["link", *args])
        return result.exit_code, result.stdout, result.stderr

    kvs, cm, lb2 = (str(tmp_path / f"{n}.dpfo") for n in ("small_kvs", "count_min", "lb2"))
    place = ["--pipes", "2"] + [
        f"--place={k}={','.join(map(str, v))}" for k, v in KVS_PLACE.items()
    ]
    code, out, err = run(
        kvs, cm, f"{kvs}@8", f"{cm}@8", "--tenant", "7", *place, "-o", str(tmp_path / "a.dpfimg")
    )
    assert code == 0, err
    assert "8 DPFs of 2 tenants on tofino1 with 2 pipes" in out and "shared" in out
    code, out, err = run(
        lb2, "--tenant", "9", "--base", str(tmp_path / "a.dpfimg"), "-o", str(tmp_path / "b.dpfimg")
    )
    assert code == 0, err and "extending" in out
    # errors: unknown pipe, a bad tenant, nothing to link, an unreadable base
    code, _, err = run(lb2, "--place", "lb2.*=5")
    assert code == 1 and "pipe 5 does not exist" in err
    code, _, err = run(f"{lb2}@x")
    assert code == 1 and "tenant of" in err
    code, _, err = run()
    assert code == 1 and "nothing to link" in err
    code, _, err = run(lb2, "--base", str(tmp_path / "missing.dpfimg"))
    assert code == 1 and "cannot read" in err
