"""OpenTelemetry traces of a crawl: a span per task (its request) and per callback.

Imported only when TRACING_ENABLED (``make_monitor``), so an untraced crawl never loads
OpenTelemetry and runs exactly the code it ran before: the tracing is a
``ProjectMonitor`` subclass (the monitor already hears of every task's start and end)
and one spider middleware next to the spider, neither of which exists otherwise.

- ``skitter.request``: from a task's start to its end (download, callback, pipelines),
  with ``url.full`` (without a user:password), ``http.request.method``,
  ``http.response.status_code``, ``skitter.slot``, ``skitter.attempt``,
  ``skitter.retries``, ``skitter.transport``, ``skitter.items``; an error status with
  the reason when the task failed or will be retried.
- ``skitter.callback``: a child of it, from the callback's call to the end of its
  output, with ``skitter.callback``, ``skitter.items`` and ``skitter.requests``.

Times are the crawl's clock (``Clock.time``), so a crawl on virtual time has virtual
spans. Spans go through a batch processor to TRACING_EXPORTER: a collector over OTLP
(HTTP), the console (stderr, since stdout may carry a feed), or any ``SpanExporter``;
everything is flushed when the spider closes.
"""

from __future__ import annotations

import asyncio
import contextvars
import sys
from collections.abc import AsyncIterable, AsyncIterator
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, ConsoleSpanExporter, SpanExporter
from opentelemetry.trace import Span, Status, StatusCode, Tracer

from skitter._clock import Clock
from skitter._components import load_object
from skitter._secrets import mask_url, page_url_without_userinfo
from skitter._version import __version__
from skitter.engine._monitor import ProjectMonitor
from skitter.exceptions import ConfigError
from skitter.http import Request
from skitter.settings import EngineSettings, Settings
from skitter.signals import SignalManager, spider_closed

__all__ = ["CallbackSpans", "TracingMonitor"]

#: The task span of the running task, and the token that made it current.
_TASK: contextvars.ContextVar[tuple[Span, object] | None] = contextvars.ContextVar(
    "skitter_task_span", default=None
)
#: The callback span started before the callback ran, and its response.
_CALLBACK: contextvars.ContextVar[tuple[Any, Span] | None] = contextvars.ContextVar(
    "skitter_callback_span", default=None
)


def _ns(clock: Clock) -> int:
    return int(clock.time() * 1e9)


def _exporter(settings: Settings) -> SpanExporter:
    """TRACING_EXPORTER: 'otlp', 'console', or a SpanExporter (object, class or path)."""
    own = settings.view(EngineSettings)
    spec = own.tracing_exporter
    if spec == "console":
        return ConsoleSpanExporter(out=sys.stderr)
    if spec == "otlp":
        try:
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        except ImportError:
            raise ConfigError(
                "TRACING_EXPORTER 'otlp' needs the OTLP exporter: pip install 'skitter[otel]'"
            ) from None
        endpoint = own.tracing_otlp_endpoint
        return OTLPSpanExporter(endpoint=endpoint) if endpoint else OTLPSpanExporter()
    wrong = ConfigError(
        f"TRACING_EXPORTER {mask_url(str(spec))!r}: use 'otlp', 'console', or a SpanExporter "
        "(an object, or the dotted path of one)"
    )
    if isinstance(spec, str) and "." not in spec:
        raise wrong
    exporter = load_object(spec)
    if isinstance(exporter, type):
        exporter = exporter()
    if not callable(getattr(exporter, "export", None)):
        raise wrong
    return exporter  # type: ignore[no-any-return]


class TracingMonitor(ProjectMonitor):
    """A ``ProjectMonitor`` that also opens a span per task (see the module docstring)."""

    def __init__(
        self, clock: Clock, tracer: Tracer, provider: TracerProvider, transport: str
    ) -> None:
        super().__init__(clock)
        self._tracer = tracer
        self._provider = provider
        self._transport = transport
        self.spider_hooks = (CallbackSpans(tracer, clock),)

    @classmethod
    def from_settings(
        cls, settings: Settings, clock: Clock, signals: SignalManager
    ) -> TracingMonitor:
        own = settings.view(EngineSettings)
        name = own.tracing_service_name or own.bot_name
        provider = TracerProvider(resource=Resource.create({"service.name": str(name)}))
        provider.add_span_processor(BatchSpanProcessor(_exporter(settings)))
        tracer = provider.get_tracer("skitter", __version__)
        monitor = cls(clock, tracer, provider, str(own.download_transport))
        signals.connect(monitor.flush, spider_closed)
        return monitor

    async def flush(self) -> None:
        """Export what is left and stop (once the spider has closed)."""
        await asyncio.to_thread(self._provider.shutdown)

    def _transport_of(self, request: Request | None) -> str:
        if request is None:
            return self._transport
        if request.render is True:
            return "browser"
        meta = request.meta
        return str(meta.get("transport") or self._transport) if meta else self._transport

    def started(self, taskid: str, url: str, slot: str, attempt: int, request: Any = None) -> None:
        super().started(taskid, url, slot, attempt, request)
        attributes = {
            "url.full": page_url_without_userinfo(url),
            "http.request.method": request.method if request is not None else "GET",
            "skitter.slot": slot,
            "skitter.attempt": attempt,
            "skitter.retries": attempt - 1,
            "skitter.transport": self._transport_of(request),
        }
        span = self._tracer.start_span(
            "skitter.request", attributes=attributes, start_time=_ns(self._clock)
        )
        token = otel_context.attach(trace.set_span_in_context(span))
        _TASK.set((span, token))

    def finished(
        self,
        taskid: str,
        url: str,
        *,
        ok: bool,
        status: int | None = None,
        reason: str = "",
        items: int = 0,
    ) -> None:
        super().finished(taskid, url, ok=ok, status=status, reason=reason, items=items)
        now = _ns(self._clock)
        dangling = _CALLBACK.get()
        if dangling is not None:  # its callback never ran (an error before it)
            _CALLBACK.set(None)
            dangling[1].set_status(Status(StatusCode.ERROR, "the callback did not run"))
            dangling[1].end(end_time=now)
        current = _TASK.get()
        if current is None:
            return
        _TASK.set(None)
        span, token = current
        if status is not None:
            span.set_attribute("http.response.status_code", status)
        span.set_attribute("skitter.items", items)
        if not ok:
            span.set_status(Status(StatusCode.ERROR, reason))
        span.end(end_time=now)
        otel_context.detach(token)  # type: ignore[arg-type]


class CallbackSpans:
    """The spider middleware next to the spider: a span per callback (or errback)."""

    def __init__(self, tracer: Tracer, clock: Clock) -> None:
        self._tracer = tracer
        self._clock = clock

    def _start(self, response: Any) -> Span:
        request = getattr(response, "request", None)
        callback = getattr(request, "callback", None)
        name = getattr(callback, "__qualname__", None) or ("parse" if response else "errback")
        return self._tracer.start_span(
            "skitter.callback",
            attributes={"skitter.callback": str(name)},
            start_time=_ns(self._clock),
        )

    def process_spider_input(self, response: Any, spider: Any) -> None:
        """Just before the callback is called: its span starts (a plain function's whole
        run happens before its output is read)."""
        _CALLBACK.set((response, self._start(response)))

    async def process_spider_output(
        self, response: Any, result: AsyncIterable[Any], spider: Any
    ) -> AsyncIterator[Any]:
        started = _CALLBACK.get()
        if started is not None and started[0] is response:
            span = started[1]
            _CALLBACK.set(None)
        else:  # an errback: no input step before it
            span = self._start(response)
        items = requests = 0
        try:
            async for obj in result:
                if isinstance(obj, Request):
                    requests += 1
                elif obj is not None:
                    items += 1
                yield obj
        except Exception as exc:
            span.record_exception(exc)
            span.set_status(Status(StatusCode.ERROR, f"{type(exc).__name__}: {exc}"))
            raise
        finally:
            span.set_attribute("skitter.items", items)
            span.set_attribute("skitter.requests", requests)
            span.end(end_time=_ns(self._clock))
