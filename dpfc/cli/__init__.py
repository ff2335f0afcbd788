"""The ``dpfc`` command line (click)."""

from dpfc.cli.main import main

__all__ = [
    "main",
]
