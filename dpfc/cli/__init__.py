"""The ``dpfc`` command line (click)."""
