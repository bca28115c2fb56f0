"""Scrapy's ``scrapy.shell``: the interactive shell, and ``inspect_response`` to open it
from a callback in the middle of a crawl."""

from skitter.shell._loop import LoopThread
from skitter.shell._shell import Shell, inspect_response

__all__ = ["LoopThread", "Shell", "inspect_response"]
