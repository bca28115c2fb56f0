"""``Settings``: the resolved, immutable settings of one crawl, laid in layers.

Where a concept is Scrapy's, the name and meaning are Scrapy's, so a Scrapy user's
``-s CONCURRENT_REQUESTS=64`` works unchanged. Layers, lowest first::

    defaults < project (Crawler(settings=...)) < spider.custom_settings < env SKITTER_* < CLI -s

The ``env`` layer is whatever mapping the caller passes: the CLI passes ``os.environ``
(so ``SKITTER_CONCURRENT_REQUESTS=4 skitter crawl ...`` works), a library
``Crawler(...)`` passes none, so a program's environment never changes its crawls
behind its back. Nothing in the library reads ``os.environ`` for settings.

Values coming from strings (environment, command line) are converted by the type of the
registered setting, so ``-s RETRY_HTTP_CODES=500,503`` is a list of ints. A lower-case
name is refused (Scrapy reads upper-case names only: ``-s download_delay=2`` would do
nothing), and so is every Scrapy setting skitter does not implement (``_scrapy``), with
what to use instead: a ported project's ``FEED_URI`` must not be a no-op. Other names are
kept here: spiders and plug-ins read their own. Whether something reads them is known
once the crawl's components are (``_declared.check_declared``, run by the Crawler): a
name nothing declares is refused then, because a silently ignored ``DEPTH_MAX`` costs
users hours. The components' typed declarations are laid in with ``declare``.

A subsystem reads its settings through a frozen view (``Settings.view``, ``_views``),
built once per resolved Settings, rather than by name in every constructor. A project's
components read theirs (and the project's own names) with Scrapy's typed getters,
``getbool``, ``getint``, ``getfloat``, ``getlist``, ``getdict``, which parse strings by
Scrapy's rules, not the registry's: a component written for Scrapy gets what it expects.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from skitter._secrets import mask_setting, mask_text
from skitter.exceptions import ConfigError
from skitter.settings._registry import KNOWN_NAMES, REFUSED, SETTINGS
from skitter.settings._setting import Setting
from skitter.settings._suggest import suggest

if TYPE_CHECKING:
    from skitter.settings._views import View

__all__ = ["Settings"]

V = TypeVar("V", bound="View")

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def _parse_str(spec: Setting, raw: str) -> Any:
    """Turn a string from the environment or command line into the setting's type."""
    name, kind, text = spec.name, spec.kind, raw.strip()
    if spec.default is None and text.lower() in ("", "none", "null"):
        return None
    try:
        if kind is bool:
            low = text.lower()
            if low in _TRUE:
                return True
            if low in _FALSE:
                return False
            raise ValueError(f"expected true/false, got {raw!r}")
        if kind is int:
            return int(text)
        if kind is float:
            return float(text)
        if kind is list:
            if text.startswith("["):
                return json.loads(text)
            return [_scalar(part) for part in text.split(",") if part.strip()]
        if kind is dict:
            value = json.loads(text or "{}")
            if not isinstance(value, dict):
                raise ValueError("expected a JSON object")
            return value
    except (ValueError, json.JSONDecodeError) as exc:
        shown = mask_setting(name, raw)
        message = f"setting {name}: cannot read {shown} as {kind.__name__}: {mask_text(str(exc))}"
        raise ConfigError(message) from None
    return raw


def _scalar(part: str) -> Any:
    part = part.strip()
    for conv in (int, float):
        try:
            return conv(part)
        except ValueError:
            pass
    return part


def _coerce(spec: Setting | None, value: Any) -> Any:
    """``value`` as the declared setting's type (a string parsed, an int as a float...)."""
    if spec is None:
        return value
    name = spec.name
    if isinstance(value, str) and spec.kind is not str:
        return _parse_str(spec, value)
    if spec.kind is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if spec.kind is list and isinstance(value, tuple | set | frozenset):
        return list(value)
    if value is not None and not isinstance(value, spec.kind):
        raise ConfigError(
            f"setting {name} must be {spec.kind.__name__}, got {type(value).__name__} "
            f"{mask_setting(name, value)}"
        )
    return value


def _check(name: Any, value: Any) -> None:
    """Refuse a name that is not upper case, and a Scrapy setting skitter does not
    implement. (A name nothing declares is refused once the crawl's components are
    known: ``_declared.check_declared``.)"""
    if not isinstance(name, str) or not name.isupper():
        close = suggest(name.upper(), SETTINGS) if isinstance(name, str) else []
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise ConfigError(
            f"setting {name!r}: setting names are upper case (Scrapy reads only upper-case "
            f"names, so a lower-case one would do nothing){hint}"
        )
    if name in SETTINGS:
        return
    unsupported = REFUSED.get(name)
    if unsupported is not None and not unsupported.allows(value):
        raise ConfigError(
            f"setting {name} ({mask_setting(name, value)}) is {unsupported.owner}'s, and "
            f"skitter does not implement it: {unsupported.hint}"
        )


#: Where a layer's values came from, as a refusal names it (a project's settings module
#: is named by the CLI, which knows the file: ``Settings(values, origin=...)``).
_ORIGINS = {
    "project": "the project's settings",
    "spider": "the spider's custom_settings",
    "cli": "the command line",
}


def _origin(source: str, name: str) -> str:
    return (
        f"environment variable SKITTER_{name}" if source == "env" else _ORIGINS.get(source, source)
    )


class Settings(Mapping[str, Any]):
    """An immutable, resolved set of settings. Unset known names read as their default.

    ``origin`` says where ``values`` came from in an error about one of them
    (e.g. "quotes/settings.py of project 'quotes'"); by default, the layer's name."""

    __slots__ = ("_declared", "_origins", "_sources", "_values", "_views")

    def __init__(
        self,
        values: Mapping[str, Any] | None = None,
        *,
        source: str = "project",
        origin: str | None = None,
    ):
        self._values: dict[str, Any] = {}
        self._sources: dict[str, str] = {}
        self._views: dict[type, Any] = {}
        self._declared: dict[str, Setting] = {}  # components' typed rows (``declare``)
        self._origins: dict[str, str] = {}  # where a value came from, if said (``origin``)
        if values:
            self._merge(values, source, origin)

    def _merge(self, values: Mapping[str, Any], source: str, origin: str | None = None) -> None:
        for name, value in values.items():
            try:
                _check(name, value)
                self._values[name] = _coerce(self._spec(name), value)
            except ConfigError as exc:
                raise ConfigError(f"{origin or _origin(source, name)}: {exc}") from None
            self._sources[name] = source
            if origin:
                self._origins[name] = origin
            else:
                self._origins.pop(name, None)

    def _spec(self, name: str) -> Setting | None:
        return SETTINGS.get(name) or self._declared.get(name)

    def declare(self, rows: Iterable[Setting]) -> None:
        """Add the typed declarations of a crawl's components (``declared_settings``),
        once, at start, before anything reads them: a value set for one is read as its
        type (``-s MYEXT_LIMIT=5`` is the int 5) and an unset one reads as its default.
        No value changes after that, so views and readers see one Settings."""
        for row in rows:
            self._declared[row.name] = row
            if row.name in self._values:
                try:
                    self._values[row.name] = _coerce(row, self._values[row.name])
                except ConfigError as exc:
                    raise ConfigError(f"{self.where(row.name)}: {exc}") from None

    def where(self, name: str) -> str:
        """Where ``name``'s value came from, as a refusal names it (the project's
        settings module by its file, when the CLI said so)."""
        return self._origins.get(name) or _origin(self.source(name), name)

    def with_layer(self, values: Mapping[str, Any] | None, source: str) -> Settings:
        """A copy with ``values`` laid over this one."""
        new = Settings()
        new._values = dict(self._values)
        new._sources = dict(self._sources)
        new._declared = dict(self._declared)
        new._origins = dict(self._origins)
        if values:
            new._merge(values, source)
        return new

    @classmethod
    def resolve(
        cls,
        project: Mapping[str, Any] | None = None,
        spider: Mapping[str, Any] | None = None,
        env: Mapping[str, str] | None = None,
        cli: Mapping[str, Any] | None = None,
    ) -> Settings:
        """Lay the four layers over the defaults, lowest first.

        ``project`` may be a ``Settings`` (e.g. made with an ``origin``): its values keep
        their layers and origins. ``env`` is the environment layer: only
        ``SKITTER_<NAME>`` variables for known settings (and Scrapy's, to refuse those
        skitter lacks) are read from it. None (the default) means no environment layer;
        the CLI passes ``os.environ``.
        """
        environ: Mapping[str, str] = {} if env is None else env
        from_env = {  # Scrapy's names too, so that an unsupported one is refused
            name: environ[f"SKITTER_{name}"] for name in KNOWN_NAMES if f"SKITTER_{name}" in environ
        }
        if isinstance(project, Settings):
            out = project.with_layer(None, "project")
        else:
            out = cls(project, source="project")
        for values, source in ((spider, "spider"), (from_env, "env"), (cli, "cli")):
            out = out.with_layer(values, source)
        return out

    def __getitem__(self, name: str) -> Any:
        try:
            return self._values[name]
        except KeyError:
            spec = self._spec(name)
            if spec is None:
                raise
            default = spec.default
            # Defaults are shared: hand out copies of the mutable ones.
            return default.copy() if isinstance(default, list | dict) else default

    def __contains__(self, name: object) -> bool:
        return name in self._values or name in SETTINGS or name in self._declared

    def __iter__(self) -> Iterator[str]:
        yield from SETTINGS
        yield from (name for name in self._declared if name not in self._values)
        yield from (name for name in self._values if name not in SETTINGS)

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def view(self, cls: type[V]) -> V:
        """The frozen view ``cls`` (e.g. ``DownloaderSettings``) of these settings, built on
        first use and then shared: a Settings never changes, so neither does its view."""
        view = self._views.get(cls)
        if view is None:
            view = self._views[cls] = cls.from_settings(self)
        return cast(V, view)

    # -- Scrapy's typed getters (BaseSettings), with its parsing rules -------------------
    def getbool(self, name: str, default: bool = False) -> bool:
        """1/0, True/False, and the strings "1", "0", "True", "False", "true", "false"."""
        value = self.get(name, default)
        if isinstance(value, str):
            if value in ("True", "true"):
                return True
            if value in ("False", "false"):
                return False
        try:
            return bool(int(value))
        except (TypeError, ValueError):
            raise ValueError(
                f"setting {name}: {mask_setting(name, value)} is not a boolean; use 0/1, "
                "True/False, '0'/'1', 'True'/'False' or 'true'/'false'"
            ) from None

    def getint(self, name: str, default: int = 0) -> int:
        return int(self.get(name, default))

    def getfloat(self, name: str, default: float = 0.0) -> float:
        return float(self.get(name, default))

    def getlist(self, name: str, default: list[Any] | None = None) -> list[Any]:
        """A list; a string is split on commas ("a,b" -> ["a", "b"])."""
        value = self.get(name, default or [])
        if not value:
            return []
        if isinstance(value, str):
            return value.split(",")
        return list(value)

    def getdict(self, name: str, default: dict[Any, Any] | None = None) -> dict[Any, Any]:
        """A dict; a string is read as JSON."""
        value = self.get(name, default or {})
        if isinstance(value, str):
            value = json.loads(value)
        return dict(value)

    def getdictorlist(
        self, name: str, default: dict[Any, Any] | list[Any] | None = None
    ) -> dict[Any, Any] | list[Any]:
        """A dict or a list; a string is JSON, else split on commas."""
        value = self.get(name, default)
        if value is None:
            return {}
        if isinstance(value, str):
            try:
                loaded = json.loads(value)
            except ValueError:
                return value.split(",")
            if isinstance(loaded, dict | list):
                return loaded
            return value.split(",")
        return dict(value) if isinstance(value, Mapping) else list(value)

    def getwithbase(self, name: str) -> dict[Any, Any]:
        """``NAME_BASE`` merged with ``NAME``: skitter refuses the ``*_BASE`` settings, so
        this is ``getdict(name)``, which is all a project can have set."""
        return {**self.getdict(f"{name}_BASE"), **self.getdict(name)}

    def copy_to_dict(self) -> dict[str, Any]:
        """Every setting as a plain dict (Scrapy's name)."""
        return {name: self[name] for name in self}

    def source(self, name: str) -> str:
        """Which layer set ``name``: default, project, spider, env or cli."""
        return self._sources.get(name, "default")

    def __repr__(self) -> str:
        # Secrets (AWS_*, *_PASSWORD, a URL's password...) are shown masked.
        shown = ", ".join(f"{name!r}: {mask_setting(name, v)}" for name, v in self._values.items())
        return f"Settings({{{shown}}})"
