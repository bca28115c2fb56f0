"""The ``skitter`` command line."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from skitter import scrapy_alias

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["main"]

#: The first argument that turns the Scrapy alias on (``skitter --scrapy-alias crawl x``).
_ALIAS_FLAG = "--scrapy-alias"


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command; the Scrapy alias, when asked for, is on before anything else of
    skitter is imported (so nothing can have imported the real Scrapy first)."""
    import sys

    args = list(sys.argv[1:] if argv is None else argv)
    try:
        wanted = scrapy_alias.enabled_by_env(os.environ)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args[:1] == [_ALIAS_FLAG] or wanted:
        scrapy_alias.install()
    from skitter.cli._main import main as run

    return run(args)
