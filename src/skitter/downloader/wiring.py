"""What other packages compose from the downloader: the body decoder (the sitemap
spider and Scrapy's ``HttpCompressionMiddleware`` path), the crawl's resolver, the
robots.txt cache, the validator and cookie-jar stores (the crawler and the job
directory), the session pool and its shared store (the cluster), the retry count and
give-up level (the engine), and the streaming transport and local handler behind the
test transport and Scrapy's handler paths. Not a user's API: the downloader's is
``skitter.downloader``.
"""

from skitter.downloader._decode import ACCEPT_ENCODING, TruncatedBody, decoder_for
from skitter.downloader._dns import CrawlResolver, crawl_resolver
from skitter.downloader._exchange import NO_BODY_STATUSES
from skitter.downloader._local import LocalHandler
from skitter.downloader._streaming import Head, StreamingTransport
from skitter.downloader.middlewares._conditional import ValidatorStore
from skitter.downloader.middlewares._cookiejar_files import CookieJarFiles
from skitter.downloader.middlewares._retry import failed_times, give_up_level
from skitter.downloader.middlewares._robots import RobotsCache
from skitter.downloader.middlewares._sessionpool import Session, SessionPool
from skitter.downloader.middlewares._sessionshare import LEASE_USES, Lease, SessionStore

__all__ = [
    "ACCEPT_ENCODING",
    "LEASE_USES",
    "NO_BODY_STATUSES",
    "CookieJarFiles",
    "CrawlResolver",
    "Head",
    "Lease",
    "LocalHandler",
    "RobotsCache",
    "Session",
    "SessionPool",
    "SessionStore",
    "StreamingTransport",
    "TruncatedBody",
    "ValidatorStore",
    "crawl_resolver",
    "decoder_for",
    "failed_times",
    "give_up_level",
]
