"""Frozen per-subsystem views of the resolved settings.

A subsystem declares the settings it reads as a frozen dataclass whose field names are
the settings' names in lower case, and gets them with ``settings.view(ItsView)``: one
object, built once per resolved Settings (so once per crawl), instead of a
``settings["NAME"]`` lookup per name in every constructor. Lists become tuples and dicts
read-only mappings, so a component cannot change what another one sees. Values are
the resolved settings' own: a view adds no defaults and no coercion of its own, so
reading a view is exactly reading the names. Validation stays with the component that
refuses a value (``AiohttpTransport`` refuses a negative DOWNLOAD_MAXSIZE), where the
error message is written.

A plugin can declare its own view the same way: subclass ``View`` in a
``@dataclass(frozen=True, slots=True)``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Self

if TYPE_CHECKING:
    from skitter.settings._settings import Settings

__all__ = ["BrowserSettings", "DownloaderSettings", "View"]


def _frozen(value: Any) -> Any:
    if isinstance(value, list):
        return tuple(value)
    if isinstance(value, dict):
        return MappingProxyType(dict(value))
    return value


class View:
    """Base of a frozen settings view: ``from_settings`` fills each field from the setting
    of the same name in upper case; a plug-in's own setting that is not set takes the
    field's default. A component that lists its view in ``declared_settings`` declares
    those names (``_declared``)."""

    __slots__ = ()

    @classmethod
    def from_settings(cls, settings: Settings) -> Self:
        if not dataclasses.is_dataclass(cls):
            raise TypeError(f"{cls.__name__} must be a dataclass to be a settings view")
        values = {
            f.name: _frozen(settings[f.name.upper()])
            for f in dataclasses.fields(cls)
            if f.name.upper() in settings or not _has_default(f)
        }
        return cls(**values)


def _has_default(field: dataclasses.Field[Any]) -> bool:
    return field.default is not dataclasses.MISSING or field.default_factory is not (
        dataclasses.MISSING
    )


@dataclasses.dataclass(frozen=True, slots=True)
class DownloaderSettings(View):
    """What the Downloader, its transport and its built-in middlewares read."""

    concurrent_requests: int  # the transport's connection pool
    user_agent: str
    default_request_headers: Mapping[str, Any]
    download_timeout: float
    download_connect_timeout: float
    download_read_timeout: float
    download_maxsize: int
    download_warnsize: int
    download_max_headers_size: int
    compression_enabled: bool
    cookies_enabled: bool
    redirect_enabled: bool
    redirect_max_times: int
    redirect_priority_adjust: int
    retry_enabled: bool
    retry_http_codes: tuple[int, ...]
    httpproxy_enabled: bool
    robotstxt_obey: bool
    robotstxt_user_agent: str
    robotstxt_parser: object  # a class or its path: read by ``RobotsTxtMiddleware``
    downloader_middlewares: Mapping[Any, int | None]
    browser_render: object  # True, False or "auto": read by ``render_default``
    download_transport: object  # a name, or a transport factory: read by ``_transports``
    download_handlers: Mapping[str, Any]  # per scheme: read by ``_handlers``
    download_fail_on_dataloss: bool
    download_verify_certificates: bool
    download_impersonate: str  # the curl transport's browser profile
    download_delay: float  # a session's pause between its requests
    retry_exceptions: tuple[Any, ...]
    metarefresh_enabled: bool
    metarefresh_maxdelay: float
    metarefresh_ignore_tags: tuple[str, ...]
    recrawl_conditional: bool
    cookies_debug: bool
    cookies_persist: bool
    httpauth_user: str
    httpauth_pass: str
    httpauth_domain: str | None


@dataclasses.dataclass(frozen=True, slots=True)
class BrowserSettings(View):
    """What the browser transport and its page pool read (besides the download limits,
    which are ``DownloaderSettings``')."""

    browser_concurrency: int
    browser_executable_path: str
    playwright_launch_options: Mapping[str, Any]
    playwright_browser_type: str
    browser_block_resources: tuple[str, ...]
    browser_wait_until: str
    browser_share_cookies: bool
    browser_render_auto_selector: str
    browser_render_auto_learn: int
    browser_render_auto_recheck: int
    browser_render_auto_patterns: int
