"""Every exception skitter raises, in two trees.

Errors describe something that went wrong; control signals are raised on purpose by
middlewares, pipelines and callbacks to steer the crawl. Keeping them apart means an
``except SkitterError`` never swallows a ``CloseSpider``::

    SkitterError
    ├── ConfigError                  bad settings, spider that cannot be loaded
    ├── FrontierUnavailable          the task store (Redis) cannot be reached for now
    ├── FatalError                   the crawl cannot go on correctly: it stops, and fails
    │   ├── StorageError             a feed, the job database or Redis refused a write
    │   ├── JobStateLost             the job's state vanished from Redis
    │   └── FrontierOutage           the task store was unavailable for too long
    ├── CrawlFailed                  raised by Crawler.run(): the crawl did not do what was
    │                                asked (a FatalError, failing start requests); .stats
    ├── RequestError                 carries .request
    │   ├── InvalidURL               the URL cannot be fetched (scheme, host, syntax)
    │   ├── TransportError           the network failed us
    │   │   ├── ConnectError
    │   │   │   └── DNSLookupError   the host name does not resolve
    │   │   ├── DownloadTimeout      also a builtin TimeoutError (alias TCPTimedOutError)
    │   │   └── ConnectionLost       reset, truncated body, protocol garbage
    │   ├── ResponseTooLarge         DOWNLOAD_MAXSIZE exceeded (also for gzip bombs)
    │   ├── RedirectError            too many redirects or a redirect loop
    │   ├── TLSCertificateError      the server's certificate failed verification
    │   ├── Blocked                  the site blocked every session a request tried
    │   └── HttpError                a status the spider does not handle; carries .response
    ├── CallbackError                a callback yielded something that is not a request or item
    └── CodecError                   a request cannot be stored, or stored bytes cannot be read
        └── UnknownCallback          a stored callback name the spider no longer has

    CrawlControl
    ├── IgnoreRequest                drop this request quietly (counted)
    ├── RetryLater                   fail this attempt; the scheduler decides when to retry
    ├── DropItem                     a pipeline rejects an item (counted)
    ├── CloseSpider                  stop the crawl gracefully, with a reason
    └── DontCloseSpider              from a spider_idle handler: keep the spider open

    NotConfigured                    raised by a component's constructor or from_crawler
                                     to take itself out (Scrapy's); never seen by a crawl
    ContractFail                     a spider contract's check failed (skitter check); an
                                     AssertionError, as in Scrapy
"""

from __future__ import annotations

import builtins
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from skitter.http import Request, Response

__all__ = [
    "Blocked",
    "CallbackError",
    "CannotResolveHostError",
    "CloseSpider",
    "CodecError",
    "ConfigError",
    "ConnectError",
    "ConnectionLost",
    "ContractFail",
    "CrawlControl",
    "CrawlFailed",
    "DNSLookupError",
    "DontCloseSpider",
    "DownloadConnectionRefusedError",
    "DownloadTimeout",
    "DownloadTimeoutError",
    "DropItem",
    "FatalError",
    "FrontierOutage",
    "FrontierUnavailable",
    "HttpError",
    "IgnoreRequest",
    "InvalidURL",
    "JobStateLost",
    "MonitorsFailed",
    "NotConfigured",
    "NotSupported",
    "RedirectError",
    "RequestError",
    "ResponseTooLarge",
    "RetryLater",
    "ScrapyDeprecationWarning",
    "SkitterError",
    "StopDownload",
    "StorageError",
    "TCPTimedOutError",
    "TLSCertificateError",
    "TransportError",
    "UnknownCallback",
]


class NotConfigured(Exception):
    """Raised by a component (middleware, pipeline) that is switched off by the settings:
    the component builder leaves it out of the chain."""


class ContractFail(AssertionError):
    """Raised by a contract's ``pre_process``/``post_process``: the callback broke its
    contract (``skitter check`` reports it as a FAIL, not an ERROR)."""


class SkitterError(Exception):
    """Base of every error skitter raises."""


class ConfigError(SkitterError):
    """A setting, spider or command line that cannot work as given."""


class RequestError(SkitterError):
    """Something went wrong with one request; the crawl goes on.

    ``cause``, when known, is what failed in the words of the OS or the TLS library,
    without host or port (``"Connection refused"``, ``"[SSL: WRONG_VERSION_NUMBER]
    wrong version number"``): few distinct values, so the stats count failures by it.
    The message says it too, with whatever helps the reader act on it."""

    #: What failed, as the OS or TLS library said it (None when not known).
    cause: str | None = None

    def __init__(
        self, message: str, *, request: Request | None = None, cause: str | None = None
    ) -> None:
        super().__init__(message)
        self.request = request
        if cause:
            self.cause = cause

    @property
    def detail(self) -> str:
        """The message without the request it starts with (``"<GET url>: "``), for a
        line or a record that names the request already."""
        text = str(self)
        if self.request is not None:
            prefix = f"{self.request!r}: "
            if text.startswith(prefix):
                return text[len(prefix) :]
        return text


class InvalidURL(RequestError, ValueError):
    """The URL cannot be fetched: no scheme or host, an unsupported scheme, bad syntax.

    Also a ValueError, as Scrapy raises one for a URL it cannot take."""


class TransportError(RequestError):
    """The network failed: retryable by default."""


class ConnectError(TransportError):
    """Could not connect (refused, DNS failure, TLS handshake)."""


class DNSLookupError(ConnectError):
    """The host name could not be resolved (Twisted's name, which Scrapy errbacks check)."""


#: Scrapy 2.14's name for a host name that does not resolve.
CannotResolveHostError = DNSLookupError


class DownloadTimeout(TransportError, builtins.TimeoutError):
    """A connect, read or total timeout expired: ``failure.check(TimeoutError)`` (the
    builtin, as Scrapy errbacks check Twisted's) matches."""


#: Twisted's name for a TCP timeout, which Scrapy errbacks check with TimeoutError.
TCPTimedOutError = DownloadTimeout
#: Scrapy 2.14's names for a timeout and for a connection that could not be made.
DownloadTimeoutError = DownloadTimeout
DownloadConnectionRefusedError = ConnectError


class ConnectionLost(TransportError):
    """The peer reset the connection, closed it early, or spoke broken HTTP."""


class ResponseTooLarge(RequestError):
    """The body (after decompression) is larger than DOWNLOAD_MAXSIZE."""


class RedirectError(RequestError):
    """Too many redirects, or a redirect back to a URL already in the chain."""


class TLSCertificateError(RequestError):
    """The server's TLS certificate failed verification (DOWNLOAD_VERIFY_CERTIFICATES is
    on): self-signed, expired, for another host... Not retried: a second attempt is
    shown the same certificate."""


class HttpError(RequestError):
    """The response status is not one the spider handles (see ``handle_httpstatus_list``)."""

    def __init__(self, message: str, *, response: Response) -> None:
        super().__init__(message, request=response.request)
        self.response = response


class Blocked(RequestError):
    """The site blocked the request on every session it tried (SESSION_MAX_BLOCK_RETRIES
    fresh ones after the first): its task fails, so that a site blocking everything is
    seen rather than retried for ever. ``response`` is the last block."""

    def __init__(self, message: str, *, response: Response) -> None:
        super().__init__(message, request=response.request)
        self.response = response


class FrontierUnavailable(SkitterError):
    """The task store cannot be reached (Redis restarting, network down). Nothing is
    lost: the engine pauses dispatch and tries again; leases it could not settle expire
    and their tasks run again."""


class FatalError(SkitterError):
    """The crawl cannot go on correctly, so it must not pretend to: the project stops
    dispatching, the task at hand is neither acknowledged nor failed (it runs again on a
    resume, or on another worker), the crawl ends with ``finish_reason`` "failed" and a
    non-zero exit status, and ``Crawler.run()`` raises ``CrawlFailed``.

    Raise it (or a subclass) from anywhere in a task: a pipeline, a middleware, a
    frontier. Every other exception of one request or item is contained to it."""


class StorageError(FatalError):
    """A durable store refused what the crawl produced: a feed file (disk full, I/O
    error), the job database (corrupt, unwritable), Redis (out of memory for too long).
    Going on would acknowledge tasks whose results were never stored."""


class JobStateLost(FatalError):
    """The job's state is gone from Redis (restarted without persistence, flushed,
    evicted, failed over to an empty replica): going on would recrawl from nothing and
    report success."""


class FrontierOutage(FatalError):
    """The task store stayed unavailable longer than FRONTIER_OUTAGE_TIMEOUT."""


class CrawlFailed(SkitterError):
    """Raised by ``Crawler.run()`` (and ``run_crawlers``, ``crawl``) after a crawl that did
    not do what was asked, once everything is closed: ``reason`` says why, ``stats`` holds
    the final statistics (``failures`` one ``(spider, reason)`` per failed crawler when
    several ran together)."""

    def __init__(
        self,
        reason: str,
        *,
        stats: dict[str, object] | None = None,
        failures: list[tuple[str, str]] | None = None,
    ) -> None:
        super().__init__(reason)
        self.reason = reason
        self.stats = stats if stats is not None else {}
        self.failures = failures if failures is not None else []


class MonitorsFailed(CrawlFailed):
    """The crawl ran, but what it produced fails its monitors (or their alerts or report
    could not be delivered): raised as ``CrawlFailed`` is; the CLI exits with 3."""


class CallbackError(SkitterError):
    """A callback produced an object that is neither a Request, an item nor None."""


class CodecError(SkitterError):
    """A request cannot be serialized (a callback that is not a spider method, meta that
    is not plain data) or stored bytes are not a valid request (truncated, unknown
    format version, wrong types). ``request`` is set when encoding."""

    def __init__(self, message: str, *, request: Request | None = None) -> None:
        super().__init__(message)
        self.request = request


class UnknownCallback(CodecError):
    """A stored request names a callback its spider no longer has (renamed or removed
    since it was stored): the task is marked BAD with this message."""

    def __init__(self, message: str, *, callback: str, spider_class: str, url: str) -> None:
        super().__init__(message)
        self.callback = callback
        self.spider_class = spider_class
        self.url = url


class CrawlControl(Exception):
    """Base of the exceptions raised on purpose to steer the crawl."""


class IgnoreRequest(CrawlControl):
    """Drop this request without calling its callback; its errback still hears of it."""

    def __init__(self, reason: str = "", *, request: Request | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.request = request


class RetryLater(CrawlControl):
    """This attempt failed in a way worth retrying.

    ``delay`` is a lower bound in seconds (from ``Retry-After``, say); the scheduler's
    retry table decides the rest. ``response`` is kept so that, once retries run out, the
    last response can still reach the spider or its errback.
    """

    def __init__(
        self,
        reason: str,
        *,
        request: Request | None = None,
        response: Response | None = None,
        delay: float | None = None,
        cause: BaseException | None = None,
    ) -> None:
        super().__init__(reason)
        self.reason = reason
        self.request = request
        self.response = response
        self.delay = delay
        self.cause = cause


class DropItem(CrawlControl):
    """Raised by a pipeline's ``process_item`` to discard an item."""


class CloseSpider(CrawlControl):
    """Raised anywhere in spider code to end the crawl gracefully."""

    def __init__(self, reason: str = "cancelled") -> None:
        super().__init__(reason)
        self.reason = reason


class StopDownload(CrawlControl):
    """Scrapy's way for a ``headers_received``/``bytes_received`` handler to stop a
    download. skitter's downloads do not stop so yet: raised from a handler it is that
    handler's error, logged and counted (``signals/errors``), and the download goes on.
    Defined so that code naming it imports and ``fail`` reads as in Scrapy."""

    def __init__(self, *, fail: bool = True) -> None:
        super().__init__()
        self.fail = fail


class NotSupported(Exception):
    """An operation the object cannot do, such as ``.css()`` on a non-text response
    (Scrapy's)."""


class ScrapyDeprecationWarning(Warning):
    """Scrapy's warning category for deprecated APIs: code that filters or raises it
    keeps working under skitter. Not a DeprecationWarning, as in Scrapy, so it is shown
    by default."""


class DontCloseSpider(CrawlControl):
    """Raised by a ``spider_idle`` signal handler to keep the idle spider open (it has
    queued more requests, or will): the engine asks again a few seconds later."""


class _InvalidOutput(TypeError):
    """A middleware hook returned something its contract does not allow (a number from
    ``process_request``, a non-iterable from ``process_spider_exception``...).

    A ``TypeError``, as skitter raised before; the class is Scrapy's (``scrapy.exceptions.
    _InvalidOutput``), so code that catches it by that name does."""
