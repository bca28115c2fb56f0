"""The network under the downloader: TLS, DNS and HTTP authentication (Scrapy's names).

Read by ``downloader/_tls.py`` (one SSL context per crawl), ``downloader/_dns.py`` (one
resolver per crawl, shared with the per-IP download slots) and
``downloader/middlewares/_auth.py``.
"""

from __future__ import annotations

from skitter.settings._setting import Setting

__all__ = ["GROUP"]

GROUP: list[Setting] = [
    Setting(
        "DOWNLOAD_VERIFY_CERTIFICATES",
        False,
        bool,
        "Check servers' TLS certificates (chain and host name); off as in Scrapy, so sites "
        "with a self-signed or expired chain are crawled (docs: TLS).",
    ),
    Setting(
        "DOWNLOAD_TLS_MIN_VERSION",
        None,
        str,
        "Lowest TLS version: TLSv1.0, TLSv1.1, TLSv1.2, TLSv1.3; None = Python's (TLSv1.2).",
    ),
    Setting(
        "DOWNLOAD_TLS_MAX_VERSION",
        None,
        str,
        "Highest TLS version (same names); None = the highest OpenSSL has.",
    ),
    Setting(
        "DOWNLOADER_CLIENT_TLS_CIPHERS",
        "DEFAULT",
        str,
        "OpenSSL cipher list offered to servers; None = Python's own list.",
    ),
    Setting(
        "DOWNLOAD_CLIENT_CERT",
        "",
        str,
        "PEM file of a client certificate (chain) shown to servers that ask; may hold the key.",
    ),
    Setting("DOWNLOAD_CLIENT_KEY", "", str, "PEM file of the client certificate's key, if apart."),
    Setting(
        "DOWNLOAD_CLIENT_KEY_PASSWORD", "", str, "Password of an encrypted DOWNLOAD_CLIENT_KEY."
    ),
    Setting("DNSCACHE_ENABLED", True, bool, "Keep DNS answers in memory (for 300 s at most)."),
    Setting("DNSCACHE_SIZE", 10000, int, "Host names the DNS cache holds."),
    Setting("DNS_TIMEOUT", 60.0, float, "Seconds one DNS lookup may take."),
    Setting(
        "DNS_RESOLVER",
        "skitter.downloader.ThreadedResolver",
        object,
        "Class (or dotted path) with `async resolve(host) -> list of IPs`, for every lookup "
        "(the per-IP slots' too); Scrapy's resolver names mean the default.",
    ),
    Setting(
        "HTTPAUTH_USER", "", str, "User name for HTTP Basic auth, sent to HTTPAUTH_DOMAIN only."
    ),
    Setting("HTTPAUTH_PASS", "", str, "Password for HTTP Basic auth."),
    Setting(
        "HTTPAUTH_DOMAIN",
        None,
        str,
        "Domain (and subdomains) that gets HTTPAUTH_USER's credentials, on the scheme's "
        "default port unless it names one (host:port), as Scrapy; must be set with them; "
        "None = every domain.",
    ),
]
