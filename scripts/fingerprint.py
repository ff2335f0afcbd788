"""Fingerprint everything the tree compiles, to show that a change of structure changes no
behaviour: run this before and after, then ``diff -r BEFORE AFTER`` must print nothing.

    python scripts/fingerprint.py OUT [--extra DIR ...] [--jobs N]

Every job runs one ``dpfc`` command in-process (the command line is the interface that
must not change) from the repository's root, and records its exit code, stdout, stderr
and every file it wrote (text in full, binary as hex) in ``OUT/<job>.txt``. The jobs:

* every ``.dpf`` in ``examples/``, ``tests/`` and ``stdlib/`` (and each ``--extra``
  directory, e.g. generated programs): ``check``, then ``compile`` with every ``--emit``
  kind and ``--explain``; the example modules also for every other built-in profile;
* every ``.dpfasm``: ``asm``, then ``disasm`` and ``disasm --source`` of its object;
* every ``.ir``: ``opt`` with the default pipeline;
* every scenario (``.toml``/``.json`` under ``examples/scenarios`` and
  ``tests/run_errors``): ``run --json`` and ``run --trace``;
* every test file (``examples/tests``, ``tests/dpftest``, ``tests/dpftest_errors``):
  ``test --json --trace-all`` and ``test --switch sim://``;
* the example modules linked one by one and all together into images, each image
  disassembled, deployed on ``sim://`` and turned into a BF-RT script;
* every corrupt image (``tests/bundle_errors``) and packet (``tests/packet_errors``):
  ``disasm``;
* the P4 program of every built-in profile (and ``tests/golden/p4/small.toml``) for both
  architectures; every profile shown by ``target``; every code explained.

Each job runs in a scratch directory of its own, with links to the repository's folders, so
that every path is relative ("wrote out/x.dpfo") and compares equal; the checkout's own path
becomes ``<root>`` and the standard library's ``<stdlib>``. The schedule cache is off and the wall-clock guard is 0; times the clock measured
(``Z3 0.12 s``) are replaced by ``<time> s``.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import re
import shutil
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# the DPF standard library's folder (it once lived inside the package)
STDLIB = next(p for p in (ROOT / "stdlib", ROOT / "dpfc" / "stdlib") if p.is_dir())
PROFILES = ("tofino1", "tofino2", "bmv2", "tofino1_fit", "tofino2_fit")  # the built-ins
TIME = re.compile(r"\b\d+\.\d+ s\b")
QUIET = ("--no-cache", "--no-progress", "--timeout", "0")
EMIT = "obj,asm,header,pcap,schedule,ast,ir,opt-ir"


@dataclass(frozen=True)
class Job:
    name: str
    steps: tuple[tuple[str, ...], ...]  # dpfc argument lists, run in order


def _rel(path: Path) -> str:
    if path.is_relative_to(STDLIB):
        return f"stdlib/{path.relative_to(STDLIB).as_posix()}"  # the scratch link's name
    return path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else str(path)


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text).strip("_")


def _dpf_files(extra: list[Path]) -> list[Path]:
    found = sorted(ROOT.glob("examples/**/*.dpf")) + sorted(ROOT.glob("tests/**/*.dpf"))
    found += sorted(STDLIB.glob("*.dpf"))
    for directory in extra:
        found += sorted(directory.resolve().glob("*.dpf"))
    return list(dict.fromkeys(found))


def jobs(extra: list[Path]) -> Iterator[Job]:
    out = "out"  # the folder the job writes, in its scratch directory
    for path in _dpf_files(extra):
        rel = _rel(path)
        targets = PROFILES if rel.startswith("examples/dpf/") else ("tofino1",)
        steps: list[tuple[str, ...]] = [("check", rel)]
        for target in targets:
            emit = ("--emit", EMIT, "-o", f"{out}/{target}", "--explain")
            steps.append(("compile", rel, *emit, *QUIET, "--target", target))
        yield Job(f"dpf/{_slug(rel)}", tuple(steps))
    for path in sorted(ROOT.glob("examples/**/*.dpfasm")) + sorted(ROOT.glob("tests/**/*.dpfasm")):
        rel = _rel(path)
        yield Job(
            f"asm/{_slug(rel)}",
            (
                ("asm", rel, "-o", f"{out}/x.dpfo"),
                ("disasm", f"{out}/x.dpfo"),
                ("disasm", "--source", f"{out}/x.dpfo"),
            ),
        )
    for path in sorted(ROOT.glob("tests/**/*.ir")) + sorted(ROOT.glob("examples/**/*.ir")):
        rel = _rel(path)
        yield Job(f"ir/{_slug(rel)}", (("opt", rel, "--verify-each"),))
    scenarios = sorted(ROOT.glob("examples/scenarios/*.toml")) + sorted(
        p for p in ROOT.glob("tests/run_errors/*") if p.suffix in (".toml", ".json")
    )
    for path in scenarios:
        rel = _rel(path)
        yield Job(
            f"run/{_slug(rel)}",
            (("run", rel, "--json", "--no-jit"), ("run", rel, "--trace", "--no-jit")),
        )
    test_files = sorted(ROOT.glob("examples/tests/**/*.toml")) + sorted(
        ROOT.glob("tests/dpftest*/*.toml")
    )
    for path in test_files:
        rel = _rel(path)
        yield Job(
            f"test/{_slug(rel)}",
            (("test", rel, "--json", "--trace-all"), ("test", rel, "--switch", "sim://")),
        )
    examples = sorted(ROOT.glob("examples/dpf/*.dpf"))
    objects = []
    for index, path in enumerate(examples):
        obj = f"{out}/{path.stem}.dpfo"
        objects.append(f"{obj}@{index + 1}")
        yield Job(
            f"link/{path.stem}",
            (
                ("compile", _rel(path), "-o", obj, "--no-cache", "--no-progress", "--timeout", "0"),
                ("link", obj, "-o", f"{out}/x.dpfimg"),
                ("disasm", f"{out}/x.dpfimg"),
                ("deploy", "--switch", "sim://", f"{out}/x.dpfimg"),
                ("p4", "bfrt", f"{out}/x.dpfimg", "-o", f"{out}/x.bfrt.py"),
            ),
        )
    compile_all = tuple(
        (
            "compile",
            _rel(p),
            "-o",
            f"{out}/{p.stem}.dpfo",
            "--no-cache",
            "--no-progress",
            "--timeout",
            "0",
        )
        for p in examples
    )
    yield Job(
        "link/all",
        (
            *compile_all,
            ("link", *objects, "--pipes", "2", "-o", f"{out}/all.dpfimg"),
            ("disasm", f"{out}/all.dpfimg"),
            ("deploy", "--switch", "sim://2", f"{out}/all.dpfimg"),
            ("p4", "bfrt", f"{out}/all.dpfimg", "-o", f"{out}/all.bfrt.py"),
        ),
    )
    for path in sorted(ROOT.glob("tests/bundle_errors/*.dpfimg")):
        yield Job(f"image/{path.stem}", (("disasm", _rel(path)),))
    for path in sorted(ROOT.glob("tests/packet_errors/*.hex")):
        yield Job(f"packet/{path.stem}", (("disasm", "--input", "packet", _rel(path)),))
    for target in (*PROFILES, "tests/golden/p4/small.toml"):
        for arch in ("v1model", "tna"):
            yield Job(
                f"p4/{_slug(target)}_{arch}",
                (("p4", "--target", target, "--arch", arch, "-o", f"{out}/p4"),),
            )
        yield Job(f"target/{_slug(target)}", (("target", target),))
    yield Job("explain/list", (("explain",),))
    codes = set()
    for toml in sorted((ROOT / "dpfc" / "catalog").glob("*.toml")):
        codes |= set(re.findall(r"^\[(DPF\d{4})\]", toml.read_text(encoding="utf-8"), re.M))
    for code in sorted(codes):
        yield Job(f"explain/{code}", (("explain", code),))


def _render_file(path: Path) -> str:
    data = path.read_bytes()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.hex(" ", 32).replace(" ", "\n") + "\n"


def run_job(job: Job, scratch: Path) -> tuple[str, str]:
    """Run ``job`` in ``scratch``: the inputs are reached through links named like the
    repository's folders, so every path a command sees or writes is relative and the same
    in every run, whatever the scratch directory or the checkout's location."""
    from click.testing import CliRunner

    from dpfc.cli.main import main

    shutil.rmtree(scratch, ignore_errors=True)
    (scratch / "out").mkdir(parents=True)
    for folder in ("examples", "tests"):
        (scratch / folder).symlink_to(ROOT / folder)
    (scratch / "stdlib").symlink_to(STDLIB)
    os.chdir(scratch)
    lines: list[str] = []
    runner = CliRunner()
    for args in job.steps:
        result = runner.invoke(main, list(args), catch_exceptions=True)
        lines.append(f"$ dpfc {' '.join(args)}\nexit {result.exit_code}\n")
        lines.append(f"--- stdout\n{result.stdout}--- stderr\n{result.stderr}")
        if result.exception is not None and not isinstance(result.exception, SystemExit):
            lines.append(f"--- exception {type(result.exception).__name__}: {result.exception}\n")
    for path in sorted(p for p in (scratch / "out").rglob("*") if p.is_file()):
        lines.append(f"--- file {path.relative_to(scratch / 'out')}\n{_render_file(path)}")
    os.chdir(ROOT)
    shutil.rmtree(scratch, ignore_errors=True)
    text = "".join(lines).replace(str(STDLIB), "<stdlib>").replace(str(ROOT), "<root>")
    # times measured by the clock (the scheduler's "Z3 0.12 s") are not behaviour
    return job.name, TIME.sub("<time> s", text)


def _worker(job: Job) -> tuple[str, str]:
    return run_job(job, Path(f"/tmp/dpfc-fingerprint-{os.getpid()}"))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--extra", type=Path, action="append", default=[])
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--only", default="", help="run the jobs whose name has this prefix")
    args = parser.parse_args()
    os.chdir(ROOT)
    os.environ["DPFC_CACHE_DIR"] = "/tmp/dpfc-fingerprint-cache-unused"
    todo = [job for job in jobs(args.extra) if job.name.startswith(args.only)]
    args.out.mkdir(parents=True, exist_ok=True)
    with multiprocessing.Pool(args.jobs) as pool:
        for done, (name, text) in enumerate(pool.imap_unordered(_worker, todo, chunksize=1)):
            target = args.out / f"{name}.txt"
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
            if done % 50 == 0:
                print(f"{done}/{len(todo)} {name}", file=sys.stderr, flush=True)
    print(f"{len(todo)} jobs written to {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
