"""``Failure``: an exception as Scrapy's errbacks and signal handlers are handed one.

Scrapy passes Twisted's ``Failure`` to errbacks (and to ``spider_error`` and
``item_error`` handlers); spiders written for it call ``failure.check(HttpError)``,
read ``failure.value`` and ``failure.request``. This is the same surface without
Twisted. Reading any other attribute reads the exception's, so errbacks written the
way skitter's own documentation showed (``failure.response``, ``failure.reason``) keep
working; only ``isinstance(failure, X)`` must become ``failure.check(X)``.
"""

from __future__ import annotations

import builtins
import traceback
from typing import Any, NoReturn

__all__ = ["Failure"]


class Failure:
    """An exception, with the request it happened to (when there is one)."""

    __slots__ = ("request", "value")

    def __init__(self, value: BaseException, request: Any = None) -> None:
        self.value = value
        #: The request that failed; Scrapy sets it on the failure an errback gets.
        self.request = request if request is not None else getattr(value, "request", None)

    @property
    def type(self) -> type[BaseException]:
        return type(self.value)

    @property
    def tb(self) -> Any:
        return self.value.__traceback__

    def check(
        self, *error_types: builtins.type[BaseException] | str
    ) -> builtins.type[BaseException] | str | None:
        """The first of ``error_types`` the exception is an instance of (Twisted also
        takes the class's dotted name), or None."""
        mro = type(self.value).__mro__
        for wanted in error_types:
            if isinstance(wanted, str):
                if any(f"{cls.__module__}.{cls.__qualname__}" == wanted for cls in mro):
                    return wanted
            elif isinstance(self.value, wanted):
                return wanted
        return None

    def trap(
        self, *error_types: builtins.type[BaseException] | str
    ) -> builtins.type[BaseException] | str:
        """The matching type, as ``check``; if none matches, raise the exception again."""
        found = self.check(*error_types)
        if found is None:
            self.raiseException()
        return found

    def raiseException(self) -> NoReturn:
        raise self.value.with_traceback(self.tb)

    def getErrorMessage(self) -> str:
        return str(self.value)

    def getTraceback(self) -> str:
        return "".join(traceback.format_exception(self.value))

    def printTraceback(self, file: Any = None) -> None:
        traceback.print_exception(self.value, file=file)

    def __getattr__(self, name: str) -> Any:
        # Only reached for names the Failure lacks: the exception's attributes.
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(self.value, name)

    def __str__(self) -> str:
        return f"[Failure instance: {self.type.__module__}.{self.type.__qualname__}: {self.value}]"

    def __repr__(self) -> str:
        return f"<Failure {self.type.__module__}.{self.type.__qualname__}: {self.value}>"
