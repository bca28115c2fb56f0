"""The built-in contracts (SPIDER_CONTRACTS_BASE): @url, @cb_kwargs, @meta, @returns,
@scrapes, with Scrapy's arguments and messages."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from itemadapter import ItemAdapter

from skitter.contracts._contract import Contract
from skitter.exceptions import ContractFail
from skitter.http import Request
from skitter.items import is_item

__all__ = [
    "CallbackKeywordArgumentsContract",
    "MetadataContract",
    "ReturnsContract",
    "ScrapesContract",
    "UrlContract",
]


class UrlContract(Contract):
    """``@url URL``: the sample request's URL; a callback without it is not checked."""

    name = "url"

    def adjust_request_args(self, args: dict[str, Any]) -> dict[str, Any]:
        if not self.args:
            raise ValueError("@url needs a URL")
        args["url"] = self.args[0]
        return args


def _json_object(contract: Contract) -> dict[str, Any]:
    text = " ".join(contract.args)
    value = json.loads(text)
    if not isinstance(value, dict):
        raise ValueError(f"@{contract.name} needs a JSON object, got {text!r}")
    return value


class CallbackKeywordArgumentsContract(Contract):
    """``@cb_kwargs {"name": "value"}``: the sample request's ``cb_kwargs`` (JSON)."""

    name = "cb_kwargs"

    def adjust_request_args(self, args: dict[str, Any]) -> dict[str, Any]:
        args["cb_kwargs"] = _json_object(self)
        return args


class MetadataContract(Contract):
    """``@meta {"name": "value"}``: the sample request's ``meta`` (JSON)."""

    name = "meta"

    def adjust_request_args(self, args: dict[str, Any]) -> dict[str, Any]:
        args["meta"] = _json_object(self)
        return args


class ReturnsContract(Contract):
    """``@returns items|requests [min [max]]``: how many the callback returns (min
    defaults to 1, max to no limit)."""

    name = "returns"
    object_type_verifiers: dict[str, Callable[[Any], bool]] = {
        "request": lambda obj: isinstance(obj, Request),
        "requests": lambda obj: isinstance(obj, Request),
        "item": is_item,
        "items": is_item,
    }

    def __init__(self, method: Callable[..., Any], *args: Any) -> None:
        super().__init__(method, *args)
        if len(self.args) not in (1, 2, 3):
            raise ValueError(
                f"Incorrect argument quantity: expected 1, 2 or 3, got {len(self.args)}"
            )
        self.obj_name = self.args[0]
        if self.obj_name not in self.object_type_verifiers:
            kinds = ", ".join(self.object_type_verifiers)
            raise ValueError(f"@returns counts one of {kinds}, not {self.obj_name!r}")
        self.obj_type_verifier = self.object_type_verifiers[self.obj_name]
        self.min_bound: float = int(self.args[1]) if len(self.args) > 1 else 1
        self.max_bound: float = int(self.args[2]) if len(self.args) > 2 else float("inf")

    def post_process(self, output: list[Any]) -> None:
        occurrences = sum(1 for obj in output if self.obj_type_verifier(obj))
        if not self.min_bound <= occurrences <= self.max_bound:
            if self.min_bound == self.max_bound:
                expected = f"{self.min_bound}"
            else:
                expected = f"{self.min_bound}..{self.max_bound}"
            raise ContractFail(f"Returned {occurrences} {self.obj_name}, expected {expected}")


class ScrapesContract(Contract):
    """``@scrapes field ...``: every item returned has these fields."""

    name = "scrapes"

    def post_process(self, output: list[Any]) -> None:
        for obj in output:
            if is_item(obj):
                missing = [field for field in self.args if field not in ItemAdapter(obj)]
                if missing:
                    raise ContractFail(f"Missing fields: {', '.join(missing)}")
