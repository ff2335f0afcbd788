"""The package layout, which pyproject.toml cannot state: the repository keeps the back ends
and the DPF standard library in top-level folders, and the wheel ships them inside the
``dpfc`` package (``dpfc.backends``, ``dpfc/stdlib/*.dpf``). Everything else about the
project is in pyproject.toml."""

from setuptools import find_packages, setup

setup(
    packages=[
        *find_packages(include=["dpfc", "dpfc.*"]),
        *(f"dpfc.{name}" for name in find_packages(include=["backends", "backends.*"])),
        "dpfc.stdlib",
    ],
    package_dir={"dpfc.backends": "backends", "dpfc.stdlib": "stdlib"},
)
