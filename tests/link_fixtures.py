"""Objects of the example modules, compiled once per test run and shared by the link tests
(each goes through its bytes: written by the object writer, read back by the reader)."""

from __future__ import annotations

import functools
import shutil
import tempfile
from dataclasses import replace
from pathlib import Path

from dpfc.driver import CompiledModule, CompileOptions, compile_source
from dpfc.link import Image, LinkInput, LinkOptions, image_bytes, link, read_image
from dpfc.objfile import ObjectFile, read_object, write_object
from dpfc.target import BUILTIN_PROFILES, TargetProfile
from tests.conftest import ROOT

TOFINO1 = BUILTIN_PROFILES["tofino1"]
EXAMPLES = ROOT / "examples" / "dpf"


@functools.cache
def compiled(name: str, target: TargetProfile = TOFINO1) -> CompiledModule:
    return compile_source(EXAMPLES / f"{name}.dpf", CompileOptions(target=target))


@functools.cache
def object_bytes(name: str) -> bytes:
    """``name`` is an example module, or ``small_kvs``: kvs.dpf with a cache of 1,000
    tuples, so that two tenants' caches fit one switch (45,000 words fill a lane)."""
    if name != "small_kvs":
        return write_object(compiled(name).object())
    with tempfile.TemporaryDirectory() as directory:
        folder = Path(directory)
        source = (EXAMPLES / "kvs.dpf").read_text(encoding="utf-8")
        small = source.replace("const CACHE = 45000;", "const CACHE = 1000;")
        assert small != source
        (folder / "kvs.dpf").write_text(small, encoding="utf-8")
        shutil.copy(EXAMPLES / "count_min.dpf", folder / "count_min.dpf")
        module = compile_source(folder / "kvs.dpf", CompileOptions(target=TOFINO1))
        return write_object(module.object())


def obj(name: str) -> ObjectFile:
    """The example's object as a reader gets it from a file ``<name>.dpfo``."""
    return read_object(object_bytes(name), f"{name}.dpfo")


def obj_for(name: str, target: TargetProfile) -> ObjectFile:
    """:func:`obj` compiled for ``target`` (the object itself: a reader knows the built-in
    profiles only)."""
    if target == TOFINO1:
        return obj(name)
    if name == "small_kvs":
        source = (EXAMPLES / "kvs.dpf").read_text(encoding="utf-8")
        small = source.replace("const CACHE = 45000;", "const CACHE = 1000;")
        with tempfile.TemporaryDirectory() as directory:
            folder = Path(directory)
            (folder / "kvs.dpf").write_text(small, encoding="utf-8")
            shutil.copy(EXAMPLES / "count_min.dpf", folder / "count_min.dpf")
            module = compile_source(folder / "kvs.dpf", CompileOptions(target=target))
    else:
        module = compiled(name, target)
    return module.object()  # its bytes name a profile a reader does not know


def through_bytes(image: Image) -> Image:
    """What a back end loads: the image's bytes, read back strictly."""
    return read_image(image_bytes(image), "image.dpfimg")


def link_bytes(inputs: list[LinkInput], options: LinkOptions | None = None) -> Image:
    return through_bytes(link(inputs, options))


def named(path: str, o: ObjectFile) -> ObjectFile:
    return replace(o, path=path)


__all__ = ["TOFINO1", "compiled", "link_bytes", "named", "obj", "object_bytes", "through_bytes"]
