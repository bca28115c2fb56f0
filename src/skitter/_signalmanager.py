"""The signal manager behind ``crawler.signals`` (``skitter.signals`` has the signals).

A receiver's keyword names are read once, when it is connected, so sending filters the
arguments without inspecting anything; ``live`` (the signals with a receiver) lets a
sender skip a signal nobody listens to with one set lookup.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Awaitable, Callable, Hashable
from dataclasses import dataclass
from typing import Any

from skitter._failure import Failure
from skitter._tasks import TaskSet
from skitter._types import StatsSink

__all__ = ["SignalManager"]

log = logging.getLogger("skitter.signals")


@dataclass(frozen=True, slots=True)
class _Receiver:
    """A handler, with the keyword names it takes (None: it takes ``**kwargs``)."""

    func: Callable[..., Any]
    accepts: frozenset[str] | None

    @classmethod
    def of(cls, func: Callable[..., Any]) -> _Receiver:
        try:
            params = inspect.signature(func).parameters.values()
        except (TypeError, ValueError):  # a builtin without a signature: give it all
            return cls(func, None)
        if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params):
            return cls(func, None)
        names = (p.name for p in params if p.kind is not inspect.Parameter.POSITIONAL_ONLY)
        return cls(func, frozenset(names))

    def call(self, kwargs: dict[str, Any]) -> Any:
        accepts = self.accepts
        if accepts is None:
            return self.func(**kwargs)
        return self.func(**{k: v for k, v in kwargs.items() if k in accepts})


Result = tuple[Callable[..., Any], Any]


class SignalManager:
    """The handlers connected to each signal of one crawl.

    ``live`` is the set of signals with at least one handler; senders on the hot path
    test it first, so an unconnected signal costs nothing more."""

    def __init__(self, sender: Any = None, stats: StatsSink | None = None) -> None:
        self.sender = sender
        #: Where handler errors are counted (``signals/errors``); the crawler's stats.
        self.stats = stats
        self.live: set[Hashable] = set()
        self._receivers: dict[Hashable, list[_Receiver]] = {}
        self._background = TaskSet()

    def connect(self, receiver: Callable[..., Any], signal: Hashable, **_: Any) -> None:
        """Call ``receiver`` whenever ``signal`` is sent (once, however often connected)."""
        if not callable(receiver):
            raise TypeError(f"a signal receiver must be callable, got {receiver!r}")
        receivers = self._receivers.setdefault(signal, [])
        if all(r.func != receiver for r in receivers):
            receivers.append(_Receiver.of(receiver))
        self.live.add(signal)

    def disconnect(self, receiver: Callable[..., Any], signal: Hashable, **_: Any) -> None:
        receivers = [r for r in self._receivers.get(signal, ()) if r.func != receiver]
        self._set(signal, receivers)

    def disconnect_all(self, signal: Hashable, **_: Any) -> None:
        self._set(signal, [])

    def _set(self, signal: Hashable, receivers: list[_Receiver]) -> None:
        if receivers:
            self._receivers[signal] = receivers
        else:
            self._receivers.pop(signal, None)
            self.live.discard(signal)

    def _call_all(
        self, signal: Hashable, dont_log: Any, kwargs: dict[str, Any]
    ) -> list[tuple[_Receiver, Any]]:
        kwargs.setdefault("signal", signal)
        kwargs.setdefault("sender", self.sender)
        out: list[tuple[_Receiver, Any]] = []
        for receiver in list(self._receivers.get(signal, ())):
            try:
                result = receiver.call(kwargs)
            except Exception as exc:
                result = self._failed(signal, receiver, exc, dont_log)
            out.append((receiver, result))
        return out

    def send_catch_log(
        self, signal: Hashable, *, dont_log: Any = None, **kwargs: Any
    ) -> list[Result]:
        """Call every handler now; ``(handler, result)`` pairs, a ``Failure`` as the
        result of one that raised. A coroutine a handler returns is run as a task of
        the running loop (use ``send_catch_log_async`` to wait for it)."""
        out = []
        for receiver, result in self._call_all(signal, dont_log, kwargs):
            if inspect.isawaitable(result):
                result = self._in_background(signal, receiver, result, dont_log)
            out.append((receiver.func, result))
        return out

    async def send_catch_log_async(
        self, signal: Hashable, *, dont_log: Any = None, **kwargs: Any
    ) -> list[Result]:
        """Call every handler and await those that return awaitables, together; the
        pairs as ``send_catch_log`` gives them, with each awaited result."""
        called = self._call_all(signal, dont_log, kwargs)
        pending = [
            self._awaited(signal, r, result, dont_log)
            for r, result in called
            if inspect.isawaitable(result)
        ]
        if not pending:
            return [(r.func, result) for r, result in called]
        done = iter(await asyncio.gather(*pending))
        return [(r.func, next(done) if inspect.isawaitable(x) else x) for r, x in called]

    async def _awaited(
        self, signal: Hashable, receiver: _Receiver, result: Awaitable[Any], dont_log: Any
    ) -> Any:
        try:
            return await result
        except Exception as exc:
            return self._failed(signal, receiver, exc, dont_log)

    def _in_background(
        self, signal: Hashable, receiver: _Receiver, result: Awaitable[Any], dont_log: Any
    ) -> Any:
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            if inspect.iscoroutine(result):
                result.close()
            error = RuntimeError("an async signal handler needs a running event loop")
            return self._failed(signal, receiver, error, dont_log)
        return self._background.spawn(self._awaited(signal, receiver, result, dont_log))

    def _failed(
        self, signal: Hashable, receiver: _Receiver, exc: Exception, dont_log: Any
    ) -> Failure:
        if dont_log is None or not isinstance(exc, dont_log):
            log.error(
                "Error caught on signal handler %r (signal %r)", receiver.func, signal, exc_info=exc
            )
            if self.stats is not None:
                self.stats.inc("signals/errors")
        return Failure(exc)

    def receivers(self, signal: Hashable) -> list[Callable[..., Any]]:
        """The handlers connected to ``signal``, in the order they are called."""
        return [r.func for r in self._receivers.get(signal, ())]
