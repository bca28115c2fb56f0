"""What ``skitter check`` (the CLI) composes from the contracts package: the crawl of
one contract case. Not for spiders: their contracts are ``skitter.contracts``'s.
"""

from skitter.contracts._contract import crawl_case

__all__ = [
    "crawl_case",
]
