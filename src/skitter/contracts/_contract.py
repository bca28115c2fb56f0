"""The contract base class: a docstring line ``@name args...`` of a spider callback.

A contract may change the sample request (``adjust_request_args``), check the response
before the callback runs (``pre_process``) and check what the callback returned
(``post_process``); a check fails by raising ``ContractFail`` (an AssertionError) and
errs by raising anything else, as in Scrapy. Each hook that runs is one "contract" of
``skitter check``'s count.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar
from unittest import TestCase

from skitter.http import Request

__all__ = ["Contract", "contract_case", "crawl_case"]


class Contract:
    """Subclass it, set ``name`` (the word after ``@``) and define the hooks you need;
    ``args`` are the docstring line's words after the name. ``request_cls`` replaces
    the sample request's class (a FormRequest, say)."""

    name: ClassVar[str]
    request_cls: ClassVar[type[Request] | None] = None

    def __init__(self, method: Callable[..., Any], *args: Any) -> None:
        self.method = method
        self.args: tuple[Any, ...] = args
        self.testcase_pre = contract_case(method, f"@{self.name} pre-hook")
        self.testcase_post = contract_case(method, f"@{self.name} post-hook")

    def adjust_request_args(self, args: dict[str, Any]) -> dict[str, Any]:
        """The keyword arguments of the sample request, changed as this contract says."""
        return args

    # Optional hooks, looked up by name (as Scrapy does):
    #   def pre_process(self, response: Response) -> None
    #   def post_process(self, output: list[Any]) -> None


class _ContractCase(TestCase):
    """One reported check: unittest's result classes print and count these."""

    def __init__(self, label: str) -> None:
        super().__init__("runTest")
        self._label = label

    def runTest(self) -> None:  # unittest wants one; a contract case is only reported
        pass

    def shortDescription(self) -> None:
        return None

    def __str__(self) -> str:
        return self._label

    def id(self) -> str:
        return self._label


def contract_case(method: Callable[..., Any], desc: str) -> TestCase:
    """The case ``[spider] method (desc)`` reports a check under."""
    owner = getattr(method, "__self__", None)
    spider = getattr(owner, "name", None) or type(owner).__name__
    return _ContractCase(f"[{spider}] {getattr(method, '__name__', repr(method))} ({desc})")


def crawl_case(spider: str) -> TestCase:
    """The case ``[spider] crawl``: the spider's crawl could not start or broke off."""
    return _ContractCase(f"[{spider}] crawl")
