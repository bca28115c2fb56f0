"""The ``skitter`` command line."""

from skitter.cli._main import main

__all__ = ["main"]
