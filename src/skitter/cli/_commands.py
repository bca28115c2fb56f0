"""The small commands: ``list``, ``settings``, ``version``; and the wiring of
``startproject``, ``genspider`` (``_generate``), ``bench`` (``_bench``), ``practice``
(``_practicecmd``) and ``docs`` (``_docscmd``).

Each command sets its handler with ``set_defaults(handler=...)``; a handler takes the
parsed arguments and the stderr console and returns the exit status. What a command
answers goes to stdout, plain, so that scripts can read it.
"""

from __future__ import annotations

import argparse
import difflib
import json
import os
import platform
import ssl
from pathlib import Path
from typing import Any

from rich.console import Console

from skitter._secrets import MASK, is_secret_name, mask_text
from skitter._version import __version__
from skitter.cli import _bench, _docscmd, _generate, _practicecmd, _servercmd
from skitter.cli._options import pairs
from skitter.cli._project import load_project
from skitter.cli._spiders import SpiderLoader
from skitter.cli._targets import project_here, project_settings

__all__ = ["add_parsers", "versions"]

#: The libraries whose versions ``skitter version -v`` shows: (label, distribution).
_LIBRARIES = (
    ("aiohttp", "aiohttp"),
    ("parsel", "parsel"),
    ("lxml", "lxml"),
    ("redis-py", "redis"),
    ("Playwright", "playwright"),
    ("rich", "rich"),
)


def versions() -> list[tuple[str, str]]:
    """What a bug report needs: skitter's version and those it runs on."""
    from importlib import metadata  # here: it loads email and zipfile, which a crawl needs not

    out = [("skitter", __version__)]
    for label, dist in _LIBRARIES:
        try:
            out.append((label, metadata.version(dist)))
        except metadata.PackageNotFoundError:
            out.append((label, "not installed"))
    out.append(("Python", platform.python_version()))
    out.append(("OpenSSL", ssl.OPENSSL_VERSION))
    out.append(("Platform", platform.platform()))
    return out


def _cmd_version(args: argparse.Namespace, console: Console) -> int:
    if not args.verbose:
        print(f"skitter {__version__}")
        return 0
    rows = versions()
    width = max(len(label) for label, _ in rows)
    for label, version in rows:
        print(f"{label:<{width}} : {version}")
    return 0


def _cmd_list(args: argparse.Namespace, console: Console) -> int:
    project = project_here(Path.cwd(), os.environ, "skitter list")
    settings = project_settings(project, os.environ, pairs(args.set, "-s"))
    for name in SpiderLoader.from_settings(settings).list():
        print(name)
    return 0


def _shown(name: str, value: Any) -> str:
    """A value as ``settings --get`` prints it: dicts as JSON, secrets masked."""
    if is_secret_name(name):
        return MASK
    if isinstance(value, dict):
        masked = {k: MASK if is_secret_name(str(k)) else v for k, v in value.items()}
        return mask_text(json.dumps(masked, default=repr))
    return mask_text(str(value))


def _cmd_settings(args: argparse.Namespace, console: Console) -> int:
    project = load_project([Path.cwd()], Path.cwd(), os.environ)
    settings = project_settings(project, os.environ, pairs(args.set, "-s"))
    getter, name = next(  # argparse requires exactly one of them
        (getter, name)
        for getter in ("get", "getbool", "getint", "getfloat", "getlist")
        if (name := getattr(args, getter)) is not None
    )
    if name not in settings:  # neither known nor set: say so, as a typo would be silent
        close = difflib.get_close_matches(name, list(settings), n=1, cutoff=0.8)
        hint = f"; did you mean {close[0]}?" if close else ""
        console.print(f"[yellow]note:[/yellow] {name} is not a known setting{hint}")
    print(_shown(name, getattr(settings, getter)(name)))
    return 0


def add_parsers(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    _generate.add_parsers(commands)

    listing = commands.add_parser("list", help="list the spiders of the project, by name")
    listing.add_argument("-s", "--set", action="append", default=[], metavar="NAME=VALUE")
    listing.set_defaults(handler=_cmd_list)

    settings = commands.add_parser(
        "settings",
        help="print a setting's value (the project's, inside a project)",
        description="Prints the value a crawl here would get: defaults < the project's "
        "settings module < SKITTER_<NAME> variables < -s. Secrets are masked.",
    )
    settings.add_argument("-s", "--set", action="append", default=[], metavar="NAME=VALUE")
    ask = settings.add_mutually_exclusive_group(required=True)
    for flag, what in (
        ("--get", "the raw value"),
        ("--getbool", "the value as a boolean"),
        ("--getint", "the value as an integer"),
        ("--getfloat", "the value as a float"),
        ("--getlist", "the value as a list"),
    ):
        ask.add_argument(flag, metavar="NAME", help=f"print {what}")
    settings.set_defaults(handler=_cmd_settings)

    version = commands.add_parser("version", help="print skitter's version (-v: and more)")
    version.add_argument(
        "-v", "--verbose", action="store_true", help="also Python's, the libraries', the OS"
    )
    version.set_defaults(handler=_cmd_version)

    _bench.add_parser(commands)
    _practicecmd.add_parser(commands)
    _servercmd.add_parser(commands)
    _docscmd.add_parser(commands)
