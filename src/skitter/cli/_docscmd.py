"""``skitter docs [--out DIR]``: build the documentation into HTML, to read it offline.

The pages are Markdown in the checkout's ``docs/`` folder; Sphinx (the ``docs`` extra)
builds them with warnings as errors, as the test suite does, and the command prints the
page to open. The site needs no server: a browser opens ``index.html`` from the disk. An
installed wheel has no ``docs/`` folder, and a missing Sphinx is not guessed around:
either is said, with what to do.
"""

from __future__ import annotations

import argparse
import importlib.util
import subprocess
import sys
from pathlib import Path

from rich.console import Console

from skitter.exceptions import ConfigError

__all__ = ["add_parser"]

#: The checkout's documentation: src/skitter/cli/ -> the repository's root.
_DOCS = Path(__file__).resolve().parents[3] / "docs"


def _cmd_docs(args: argparse.Namespace, console: Console) -> int:
    if not (_DOCS / "conf.py").is_file():
        raise ConfigError(
            f"no documentation sources at {_DOCS}: `skitter docs` builds them from a source "
            "checkout (pip install -e '.[docs]')"
        )
    if not all(importlib.util.find_spec(name) for name in ("sphinx", "myst_parser", "furo")):
        raise ConfigError("building the documentation needs Sphinx: pip install 'skitter[docs]'")
    out = Path(args.out).resolve() if args.out else _DOCS / "_build" / "html"
    command = [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html"]
    done = subprocess.run([*command, str(_DOCS), str(out)], check=False)
    if done.returncode != 0:
        console.print("[red]error:[/red] the documentation did not build (messages above)")
        return 1
    print(f"The documentation: {(out / 'index.html').as_uri()}")
    return 0


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    docs = commands.add_parser(
        "docs",
        help="build the documentation into HTML and print the page to open (offline)",
        description="Builds the documentation of a source checkout (docs/) with Sphinx, "
        "warnings as errors, and prints the address of its first page. The pages need no "
        "server and no network. Needs the docs extra: pip install -e '.[docs]'.",
    )
    docs.add_argument(
        "--out", metavar="DIR", help="where to write the HTML (default: docs/_build/html)"
    )
    docs.set_defaults(handler=_cmd_docs)
