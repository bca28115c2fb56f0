"""Finding a spider's contracts and checking them against the live site.

``ContractsManager`` reads the docstrings: every callback with a line starting with
``@`` is tested; ``@url`` is what makes a sample request (a callback without it is
skipped, as in Scrapy). ``check`` then downloads each sample request through the
crawl's components (a ``Probe``: the spider's settings, middlewares and scope), runs
the pre-hooks on the response, the callback, and the post-hooks on what it returned.
Each hook run is one check, reported on a ``unittest.TestResult``; a download that
fails (or a status the spider does not handle) is an error of the callback's
"errback", one that raises an error of its "callback", as Scrapy reports them.
Callbacks may be async (coroutines, async generators): the check awaits them.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Iterable
from inspect import getmembers
from typing import Any, Protocol
from unittest import TestCase, TestResult

from skitter.contracts._contract import Contract, contract_case, crawl_case
from skitter.exceptions import ConfigError
from skitter.http import Request, Response
from skitter.spider import aiter_output

__all__ = ["ContractProbe", "ContractsManager"]

_CONTRACT_LINE = re.compile(r"^\s*@", re.MULTILINE)
_PARTS = re.compile(r"@(\w+)\s*(.*)")


class ContractProbe(Protocol):
    """What checking needs of a crawl (``engine.Probe`` is one)."""

    async def fetch(self, request: Request) -> Response: ...

    async def check_input(self, response: Response) -> None: ...


class ContractsManager:
    """The contracts by name (``SPIDER_CONTRACTS_BASE`` merged with ``SPIDER_CONTRACTS``)."""

    def __init__(self, contracts: Iterable[type[Contract]]) -> None:
        self.contracts: dict[str, type[Contract]] = {}
        for contract in contracts:
            if not (isinstance(contract, type) and issubclass(contract, Contract)):
                raise ConfigError(f"SPIDER_CONTRACTS: {contract!r} is not a Contract subclass")
            if not getattr(contract, "name", None):
                raise ConfigError(f"SPIDER_CONTRACTS: {contract.__qualname__} has no name")
            self.contracts[contract.name] = contract

    def tested_methods_from_spidercls(self, spidercls: type) -> list[str]:
        """The names of the spider's methods whose docstring has a contract line."""
        return [
            name
            for name, value in getmembers(spidercls)
            if callable(value) and value.__doc__ and _CONTRACT_LINE.search(value.__doc__)
        ]

    def extract_contracts(self, method: Callable[..., Any]) -> list[Contract]:
        contracts: list[Contract] = []
        for line in (method.__doc__ or "").splitlines():
            line = line.strip()
            match = _PARTS.match(line) if line.startswith("@") else None
            if match is None:
                continue
            name, rest = match.groups()
            cls = self.contracts.get(name)
            if cls is None:
                known = ", ".join(f"@{n}" for n in sorted(self.contracts))
                raise ConfigError(
                    f"unknown contract @{name} (known: {known}; see SPIDER_CONTRACTS)"
                )
            contracts.append(cls(method, *rest.split()))
        return contracts

    def from_method(
        self, method: Callable[..., Any], contracts: list[Contract] | None = None
    ) -> Request | None:
        """The sample request of ``method`` (None without ``@url``): its contracts'
        ``adjust_request_args`` applied in order, never dupe-filtered."""
        if contracts is None:
            contracts = self.extract_contracts(method)
        if not contracts:
            return None
        request_cls: type[Request] = Request
        for contract in contracts:
            if contract.request_cls is not None:
                request_cls = contract.request_cls
        kwargs: dict[str, Any] = {"dont_filter": True, "callback": method}
        for contract in contracts:
            kwargs = contract.adjust_request_args(kwargs)
        if "url" not in kwargs:
            return None
        return request_cls(**kwargs)

    async def check(self, spider: Any, probe: ContractProbe, results: TestResult) -> None:
        """Check every tested callback of ``spider``, one after the other; what breaks
        the whole run (a probe that cannot download) is an error of ``[spider] crawl``."""
        try:
            await self._check_all(spider, probe, results)
        except Exception:
            results.addError(crawl_case(getattr(spider, "name", "?")), sys.exc_info())

    async def _check_all(self, spider: Any, probe: ContractProbe, results: TestResult) -> None:
        for name in self.tested_methods_from_spidercls(type(spider)):
            method = getattr(spider, name)
            try:
                contracts = self.extract_contracts(method)
                request = self.from_method(method, contracts)
            except Exception:
                results.addError(contract_case(method, "contract"), sys.exc_info())
                continue
            if request is not None:
                await self._check_one(method, contracts, request, probe, results)

    async def _check_one(
        self,
        method: Callable[..., Any],
        contracts: list[Contract],
        request: Request,
        probe: ContractProbe,
        results: TestResult,
    ) -> None:
        try:
            response = await probe.fetch(request)
            await probe.check_input(response)
        except Exception:
            results.addError(contract_case(method, "errback"), sys.exc_info())
            return
        for contract in contracts:
            hook = getattr(contract, "pre_process", None)
            if callable(hook):
                _run_hook(contract.testcase_pre, hook, response, results)
        callback = request.callback or method
        try:
            output = [obj async for obj in aiter_output(callback(response, **request.cb_kwargs))]
        except Exception:
            results.addError(contract_case(method, "callback"), sys.exc_info())
            return
        for contract in contracts:
            hook = getattr(contract, "post_process", None)
            if callable(hook):
                _run_hook(contract.testcase_post, hook, output, results)


def _run_hook(case: TestCase, hook: Callable[[Any], Any], arg: Any, results: TestResult) -> None:
    results.startTest(case)
    try:
        hook(arg)
    except AssertionError:
        results.addFailure(case, sys.exc_info())
    except Exception:
        results.addError(case, sys.exc_info())
    else:
        results.addSuccess(case)
    finally:
        results.stopTest(case)
