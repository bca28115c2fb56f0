"""What the installed dependencies can do, for code (Scrapy's tests among it) that asks
``scrapy.utils._deps_compat`` before relying on a feature of a newer release.

Only the flags about skitter's own dependencies are here (the standard library's
robots.txt parser, parsel); Scrapy's flags about Twisted and pyOpenSSL describe
libraries skitter does not use.
"""

from __future__ import annotations

import sys
from importlib.metadata import version

__all__ = ["PARSEL_SUPPORTS_JMESPATH", "STDLIB_IMPROVED_ROBOTFILEPARSER"]

#: ``urllib.robotparser`` with wildcards and longest-match precedence (CPython 3.13.14+,
#: 3.14.5+); older ones apply the first matching rule.
STDLIB_IMPROVED_ROBOTFILEPARSER: bool = sys.version_info >= (3, 14, 5) or (
    (3, 13, 14) <= sys.version_info < (3, 14)
)


def _release(distribution: str) -> tuple[int, ...]:
    """The leading numbers of an installed distribution's version (``1.12.1`` -> (1, 12))."""
    numbers = []
    for part in version(distribution).split(".")[:2]:
        digits = part[: len(part) - len(part.lstrip("0123456789"))]
        numbers.append(int(digits or 0))
    return tuple(numbers)


#: ``Selector.jmespath()`` arrived in parsel 1.8.
PARSEL_SUPPORTS_JMESPATH: bool = _release("parsel") >= (1, 8)
