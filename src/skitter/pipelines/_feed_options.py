"""The FEEDS setting, validated: one ``FeedOptions`` per feed.

``FEEDS`` has Scrapy's shape, ``{uri: {"format": ..., "overwrite": ..., "encoding": ...,
"fields": [...], "indent": ..., "item_classes": [...], "item_filter": ...,
"store_empty": ..., "uri_params": ..., "batch_item_count": ..., "postprocessing":
[...]}}``; every key is optional, the format defaults from the extension (``.jsonl``/
``.jl``/``.ndjson``, ``.json``, ``.csv``, ``.xml``; marshal and pickle only by name), and
``FEED_EXPORT_*``, ``FEED_STORE_EMPTY`` and ``FEED_URI_PARAMS`` give the defaults.

The URI is a path, a ``file://`` URI, ``-``/``stdout:``, ``s3://bucket/key``,
``gs://bucket/path`` or ``ftp://user:pass@host/path``, with placeholders: ``%(name)s``
and any other public attribute of the spider, ``%(time)s``, and with batches
``%(batch_id)d`` (from 1) and ``%(batch_time)s``. ``overwrite`` defaults per storage
as in Scrapy: False for local files, True for S3 and GCS (which cannot append) and FTP.

Every problem is a ``ConfigError`` naming the entry and what is wrong with it, raised
before the crawl starts: also a storage whose extra is not installed, or one skitter
does not have.
"""

from __future__ import annotations

import codecs
import importlib.util
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from skitter._components import load_object
from skitter._secrets import authority_problem, mask_url, split_userinfo
from skitter.exceptions import ConfigError
from skitter.extensions.wiring import BUILTIN_PLUGINS, SHORT_NAMES
from skitter.pipelines._exporters import (
    CsvExporter,
    ItemExporter,
    JsonExporter,
    JsonLinesExporter,
)
from skitter.pipelines._feed_registry import (
    builtin_storage,
    exporter_class,
    exporter_table,
    storage_class,
    storage_table,
)
from skitter.pipelines._more_exporters import MarshalExporter, PickleExporter, XmlExporter

__all__ = ["FEED_FORMATS", "FeedOptions", "parse_feeds"]

#: The built-in format names (Scrapy's, plus common aliases) to exporter classes;
#: ``FEED_EXPORTERS`` adds to them (``_feed_registry``).
FEED_FORMATS: Mapping[str, type[ItemExporter]] = {
    "jsonl": JsonLinesExporter,
    "jsonlines": JsonLinesExporter,
    "jl": JsonLinesExporter,
    "ndjson": JsonLinesExporter,
    "json": JsonExporter,
    "csv": CsvExporter,
    "xml": XmlExporter,
    "marshal": MarshalExporter,
    "pickle": PickleExporter,
}
_BY_EXTENSION = {".jsonl": "jsonl", ".jl": "jsonl", ".ndjson": "jsonl", ".json": "json"}
_BY_EXTENSION.update({".csv": "csv", ".xml": "xml"})
_OPTIONS = frozenset(
    {
        "format", "overwrite", "encoding", "fields", "indent", "item_classes", "item_filter",
        "store_empty", "uri_params", "batch_item_count", "postprocessing",
        "item_export_kwargs",
    }
)  # fmt: skip
#: Options the built-in post-processing plugins read.
_PLUGIN_PREFIXES = ("gzip_", "bz2_", "lzma_", "zstd_")
_STDOUT = ("-", "stdout:")
#: Storages by URI scheme: whether they overwrite by default, and the extra they need.
_STORAGES: Mapping[str, tuple[bool, str | None]] = {
    "file": (False, None),
    "stdout": (False, None),
    "s3": (True, "aiobotocore"),
    "gs": (True, "gcloud.aio.storage"),
    "ftp": (True, None),
}
#: Storages whose URI names a server or bucket, credentials included.
_REMOTE = frozenset({"s3", "gs", "ftp"})
_POSTPROCESSING_PREFIXES = (
    "skitter.extensions.postprocessing.",
    "scrapy.extensions.postprocessing.",
)
_PLACEHOLDER = re.compile(r"%%|%\([^)]+\)[-+ #0]*(?:\d+|\*)?(?:\.(?:\d+|\*))?[diouxXeEfFgGcrsa]")
#: Placeholder values used to check a URI's placeholders at start.
_PROBE = {"batch_id": 1, "batch_time": "2000-01-01T00-00-00.000000+00-00"}


@dataclass(frozen=True, slots=True)
class FeedOptions:
    """One validated FEEDS entry. ``path`` is the local file the feed writes (its first
    batch's), None for standard output and remote storages; ``uri`` is the entry's key,
    the template every batch's target is made from (``target``)."""

    uri: str
    path: Path | None
    format: str
    overwrite: bool = False
    encoding: str = "utf-8"
    fields: tuple[str, ...] | None = None
    indent: int | None = None
    item_classes: tuple[type, ...] = ()
    #: ``file``, ``stdout``, ``s3`` or ``ftp``.
    scheme: str = "file"
    store_empty: bool = True
    batch_item_count: int = 0
    #: An object with ``accepts(item) -> bool`` (Scrapy's ItemFilter contract), or None.
    item_filter: Any = None
    #: Post-processing plugin classes, applied in order when a feed is stored.
    postprocessing: tuple[type, ...] = ()
    #: The entry's options as given (what post-processing plugins read).
    raw: Mapping[str, Any] = field(default_factory=dict)
    #: The placeholders every batch shares (the spider's attributes, ``time``).
    params: Mapping[str, Any] = field(default_factory=dict)
    uri_params: Callable[..., Any] | None = None
    #: The exporter class: an ``ItemExporter``, or a Scrapy-API one from FEED_EXPORTERS.
    exporter: type = JsonLinesExporter
    #: A staged feed's storage class from FEED_STORAGES (Scrapy's API); None: built-in.
    storage: type | None = None

    @property
    def staged(self) -> bool:
        """Whether the feed is written to a local staging file and stored when finished
        (remote storages, and compressed local files), rather than written in place."""
        return (
            self.scheme not in ("file", "stdout")
            or bool(self.postprocessing)
            or self.storage is not None
        )

    def target(self, batch: Mapping[str, Any], spider: Any = None) -> str:
        """The URI (a path for a local file) of the batch with these parameters."""
        return _resolve(self.uri, {**self.params, **batch}, self.uri_params, spider)

    def local_path(self, target: str) -> Path:
        """A local feed's target as a path."""
        return _local_path(self.uri, target)


def parse_feeds(
    feeds: Mapping[Any, Any],
    *,
    spider_name: str = "",
    now: datetime | None = None,
    encoding: str | None = None,
    settings: Mapping[str, Any] | None = None,
    spider: Any = None,
) -> list[FeedOptions]:
    """Validate FEEDS; raises ConfigError naming the entry and what is wrong with it.
    ``settings`` gives the FEED_* defaults."""
    if not isinstance(feeds, Mapping):
        raise ConfigError(f"FEEDS must be a dict {{path: options}}, not {type(feeds).__name__}")
    params = spider_params(spider)
    params["name"] = spider_name or params.get("name", "")
    params["time"] = time_stamp(now)
    defaults = dict(settings or {})
    if encoding is not None:
        defaults["FEED_EXPORT_ENCODING"] = encoding
    parsed = [_parse_one(str(uri), options, params, defaults) for uri, options in feeds.items()]
    tempdir = defaults.get("FEED_TEMPDIR")
    if tempdir and any(feed.staged for feed in parsed) and not Path(tempdir).is_dir():
        raise ConfigError(f"FEED_TEMPDIR {str(tempdir)!r} is not a folder")
    return parsed


def time_stamp(now: datetime | None = None) -> str:
    """``%(time)s``: the UTC time to the second, with ``-`` for ``:`` (file-name safe)."""
    return (now or datetime.now(tz=UTC)).replace(microsecond=0).isoformat().replace(":", "-")


def batch_stamp(now: datetime | None = None) -> str:
    """``%(batch_time)s``: as ``%(time)s`` with microseconds, so batches sort apart."""
    return (now or datetime.now(tz=UTC)).isoformat().replace(":", "-")


def spider_params(spider: Any) -> dict[str, Any]:
    """The spider's public plain attributes, which Scrapy offers as URI placeholders."""
    out: dict[str, Any] = {}
    if spider is None:
        return out
    for name in dir(spider):
        if name.startswith("_"):
            continue
        try:
            value = getattr(spider, name)
        except Exception:  # a property that needs a running crawl
            continue
        if isinstance(value, str | int | float):
            out[name] = value
    return out


def _parse_one(
    uri: str, options: Any, params: Mapping[str, Any], defaults: Mapping[str, Any]
) -> FeedOptions:
    if options is None:
        options = {}
    if not isinstance(options, Mapping):
        raise ConfigError(f"FEEDS[{shown(uri)}] must be a dict of options, not {options!r}")
    plugins = _plugins(uri, options.get("postprocessing"))
    unknown = {
        key for key in options if key not in _OPTIONS and not str(key).startswith(_PLUGIN_PREFIXES)
    }
    builtins = BUILTIN_PLUGINS.values()
    custom_plugin = any(p not in builtins for p in plugins)
    if unknown and not custom_plugin:
        raise ConfigError(
            f"FEEDS[{shown(uri)}]: unsupported option(s) {sorted(map(str, unknown))}; "
            f"skitter knows {sorted(_OPTIONS)}"
        )
    scheme = _scheme(uri, storages := storage_table(defaults))
    uri_params = options.get("uri_params", defaults.get("FEED_URI_PARAMS"))
    uri_params = load_object(uri_params) if uri_params else None
    if uri_params is not None and not callable(uri_params):
        raise ConfigError(f"FEEDS[{shown(uri)}]: 'uri_params' must name a function")
    batch = options.get("batch_item_count", defaults.get("FEED_EXPORT_BATCH_ITEM_COUNT") or 0)
    if isinstance(batch, bool) or not isinstance(batch, int) or batch < 0:
        raise ConfigError(f"FEEDS[{shown(uri)}]: 'batch_item_count' must be a whole number >= 0")
    if batch and "%(batch_id)" not in uri and "%(batch_time)" not in uri:
        raise ConfigError(
            f"FEEDS[{shown(uri)}]: with batch_item_count the URI must contain "
            "%(batch_id)d or %(batch_time)s, so that each batch has its own name"
        )
    first = _resolve(uri, {**params, **_PROBE, "batch_id": 1}, uri_params, None)
    if scheme in _REMOTE and builtin_storage(scheme, storages):
        _check_remote(uri, first, scheme)
    path = _local_path(uri, first) if scheme == "file" else None
    fmt = options.get("format")
    if fmt is None:
        suffix = Path(urlsplit(first).path if scheme not in ("file", "stdout") else first).suffix
        fmt = _BY_EXTENSION.get(suffix.lower()) if scheme != "stdout" else None
        if fmt is None:
            raise ConfigError(
                f"FEEDS[{shown(uri)}]: cannot tell the format from the file name; add "
                f"'format': one of {sorted(FEED_FORMATS)}"
            )
    fmt = str(fmt).lower()
    exporter = exporter_class(fmt, exporter_table(defaults), f"FEEDS[{shown(uri)}]")
    custom = not issubclass(exporter, ItemExporter)
    if options.get("item_export_kwargs") and not custom:
        raise ConfigError(
            f"FEEDS[{shown(uri)}]: 'item_export_kwargs' is read by exporters of Scrapy's API "
            f"(FEED_EXPORTERS), not by the built-in {fmt} format"
        )
    encoding = options.get("encoding") or defaults.get("FEED_EXPORT_ENCODING") or "utf-8"
    try:
        encoding = codecs.lookup(encoding).name
    except LookupError:
        raise ConfigError(f"FEEDS[{shown(uri)}]: unknown encoding {encoding!r}") from None
    fields = options.get("fields", defaults.get("FEED_EXPORT_FIELDS"))
    if isinstance(fields, Mapping):
        raise ConfigError(
            f"FEEDS[{shown(uri)}]: 'fields' as a dict (renaming columns) is not supported; "
            "give a list of names"
        )
    if fields is not None and (
        isinstance(fields, str) or not all(isinstance(name, str) for name in fields)
    ):
        raise ConfigError(f"FEEDS[{shown(uri)}]: 'fields' must be a list of names, not {fields!r}")
    indent = options.get("indent", defaults.get("FEED_EXPORT_INDENT", 0))
    if indent is not None and (not isinstance(indent, int) or indent < 0):
        raise ConfigError(f"FEEDS[{shown(uri)}]: 'indent' must be a whole number >= 0 or None")
    classes = tuple(load_object(c) for c in options.get("item_classes") or ())
    if not all(isinstance(c, type) for c in classes):
        raise ConfigError(f"FEEDS[{shown(uri)}]: 'item_classes' must name classes")
    overwrite = options.get("overwrite", _STORAGES.get(scheme, (False, None))[0])
    if scheme in ("s3", "gs") and not overwrite:
        raise ConfigError(
            f"FEEDS[{shown(uri)}]: {scheme}:// cannot append to an object; use -O rather "
            f"than -o, or 'overwrite': True (the default for {scheme}://), and %(time)s or "
            "%(batch_id)d in the key to keep earlier runs' objects"
        )
    if path is not None and plugins and not overwrite and not batch and _nonempty(path):
        raise ConfigError(
            f"FEEDS[{shown(uri)}]: {path} exists and a compressed feed cannot be continued; "
            "set 'overwrite': True or move the file away"
        )
    item_filter = options.get("item_filter")
    if item_filter is not None:
        item_filter = load_object(item_filter)
        if not callable(getattr(item_filter, "accepts", None)):
            raise ConfigError(f"FEEDS[{shown(uri)}]: 'item_filter' needs an accepts(item) method")
        if isinstance(item_filter, type):  # Scrapy's ItemFilter(feed_options)
            item_filter = item_filter(dict(options))
        if not callable(getattr(item_filter, "accepts", None)):
            raise ConfigError(f"FEEDS[{shown(uri)}]: 'item_filter' needs an accepts(item) method")
    return FeedOptions(
        uri=uri,
        path=path,
        format=fmt if custom else str(getattr(exporter, "format", fmt)),
        overwrite=bool(overwrite),
        encoding=encoding,
        fields=tuple(fields) if fields else None,
        indent=indent,
        item_classes=classes,
        scheme=scheme,
        store_empty=bool(options.get("store_empty", defaults.get("FEED_STORE_EMPTY", True))),
        batch_item_count=batch,
        item_filter=item_filter,
        postprocessing=plugins,
        raw=dict(options),
        params=dict(params),
        uri_params=uri_params,
        exporter=exporter,
        storage=None
        if scheme == "stdout" or builtin_storage(scheme, storages)
        else storage_class(scheme, storages, f"FEEDS[{shown(uri)}]"),
    )


def _check_remote(uri: str, target: str, scheme: str) -> None:
    """A remote feed's URI must read the same for skitter's masking and for the storage
    (``split_userinfo``): a secret with an unescaped ``/`` would otherwise name the
    bucket after the access key, and print the rest of the secret as the object key."""
    problem = authority_problem(target)
    if problem is not None:
        raise ConfigError(
            f"FEEDS[{shown(uri)}]: {problem} (as in {scheme}://user:pa%2Fss@host/path)"
        )
    if scheme == "gs" and split_userinfo(target)[1] is not None:
        raise ConfigError(
            f"FEEDS[{shown(uri)}]: gs:// takes no user:password@; Google's credentials "
            "come from GOOGLE_APPLICATION_CREDENTIALS (or the metadata server)"
        )


def _nonempty(path: Path) -> bool:
    try:
        return path.stat().st_size > 0
    except OSError:
        return False


def _scheme(uri: str, storages: Mapping[str, Any]) -> str:
    if uri in _STDOUT:
        return "stdout"
    if "://" not in uri or uri.startswith("file://"):
        return "file"
    scheme = urlsplit(uri).scheme.lower()
    if storages.get(scheme) is None:
        what = "storage switched off by FEED_STORAGES" if scheme in storages else "unknown storage"
        raise ConfigError(
            f"FEEDS[{shown(uri)}]: {what} {scheme + '://'!r}; skitter stores feeds "
            "in local files, stdout:, s3://, gs:// and ftp://, and FEED_STORAGES adds more"
        )
    if not builtin_storage(scheme, storages):
        return scheme
    module = _STORAGES[scheme][1]
    if module is not None and not _installed(module):
        extra = "gcs" if scheme == "gs" else scheme
        raise ConfigError(
            f"FEEDS[{shown(uri)}]: {scheme}:// feeds need the {extra} extra: "
            f"pip install 'skitter[{extra}]'"
        )
    return scheme


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:  # a parent package is missing
        return False


def _plugins(uri: str, names: Any) -> tuple[type, ...]:
    if not names:
        return ()
    if isinstance(names, str) or not isinstance(names, list | tuple):
        raise ConfigError(f"FEEDS[{shown(uri)}]: 'postprocessing' must be a list of plugins")
    out: list[type] = []
    for name in names:
        if isinstance(name, str):
            short = SHORT_NAMES.get(name)
            if short is None and name.startswith(_POSTPROCESSING_PREFIXES):
                short = name.rpartition(".")[2]
                if short not in BUILTIN_PLUGINS:
                    raise ConfigError(f"FEEDS[{shown(uri)}]: no post-processing plugin {name!r}")
            name = BUILTIN_PLUGINS[short] if short else load_object(name)
        if not isinstance(name, type):
            raise ConfigError(f"FEEDS[{shown(uri)}]: 'postprocessing' must name classes")
        out.append(name)
    return tuple(out)


def shown(uri: str) -> str:
    """A feed URI as messages show it: with its password masked (an ``sftp://user:pass@``
    URI is refused, and the refusal must not print the password)."""
    return repr(mask_url(uri))


def _resolve(
    uri: str, params: Mapping[str, Any], uri_params: Callable[..., Any] | None, spider: Any
) -> str:
    if uri in _STDOUT:
        return uri
    if uri_params is not None:
        given = dict(params)
        result = uri_params(given, spider)
        params = result if isinstance(result, Mapping) else given
    if "%(" in uri:
        try:
            uri = _fill(uri, params)
        except KeyError as exc:
            raise ConfigError(
                f"FEEDS[{shown(uri)}]: no placeholder {exc}; use %(name)s, %(time)s, "
                "%(batch_id)d, %(batch_time)s or an attribute of the spider"
            ) from None
        except (ValueError, TypeError):  # its message may quote the URI: a password
            raise ConfigError(
                f"FEEDS[{shown(uri)}]: a placeholder whose value does not fit its "
                "format (%(batch_id)d takes a number)"
            ) from None
    return uri


def _fill(uri: str, params: Mapping[str, Any]) -> str:
    """``uri`` with its ``%(name)s`` placeholders filled. Any other ``%`` is kept as it
    is (a percent-encoded ``%2F`` in a password, ``%20`` in a path), as Scrapy 2.13+
    does; ``%%``, the way to write one before, still stands for one ``%``."""
    parts: list[str] = []
    end = 0
    for match in _PLACEHOLDER.finditer(uri):
        parts += [uri[end : match.start()].replace("%", "%%"), match.group(0)]
        end = match.end()
    parts.append(uri[end:].replace("%", "%%"))
    return "".join(parts) % params


def _local_path(template: str, uri: str) -> Path:
    if uri.startswith("file://"):
        host = urlsplit(uri).netloc
        if host not in ("", "localhost"):
            raise ConfigError(
                f"FEEDS[{shown(template)}]: a file:// URI names a local file (file:///path), "
                f"not one on {mask_url('file://' + host)}"
            )
        uri = unquote(uri.removeprefix(f"file://{host}"))  # a URI's path is percent-encoded
    if not uri:
        raise ConfigError("FEEDS: an empty path")
    return Path(uri).expanduser()
