"""``Settings``: the resolved settings of one crawl, laid in layers, frozen at its start.

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

Until the crawl starts they are Scrapy's ``BaseSettings`` (``_base``): a plug-in's
``from_crawler`` or a test may ``crawler.settings.set(name, value, priority)``; each value
is checked and typed as it is set, a layer's priority is Scrapy's (``SETTINGS_PRIORITIES``,
with ``env`` between ``spider`` and ``cmdline``), and the Crawler ``freeze()``s them when
the crawl starts (checking then the names set since it was made).

A subsystem reads its settings through a frozen view (``Settings.view``, ``_views``),
built once per Settings (a change before the freeze drops it), rather than by name in
every constructor. A project's
components read theirs (and the project's own names) with Scrapy's typed getters,
``getbool``, ``getint``, ``getfloat``, ``getlist``, ``getdict``, which parse strings by
Scrapy's rules, not the registry's: a component written for Scrapy gets what it expects.
"""

from __future__ import annotations

import copy
import json
import os
from collections.abc import Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from skitter._secrets import mask_setting, mask_text
from skitter.exceptions import ConfigError
from skitter.settings._base import SETTINGS_PRIORITIES, BaseSettings, SettingsAttribute
from skitter.settings._registry import KNOWN_NAMES, REFUSED, SETTINGS
from skitter.settings._setting import Setting
from skitter.settings._suggest import suggest

if TYPE_CHECKING:
    from skitter.settings._views import View

__all__ = ["Settings", "register_base_table"]

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
    if spec.kind is str and isinstance(value, os.PathLike):
        return str(os.fspath(value))  # a pathlib.Path for a directory, as Scrapy takes
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
    "addon": "an add-on (ADDONS)",
}


def _origin(source: str, name: str) -> str:
    return (
        f"environment variable SKITTER_{name}" if source == "env" else _ORIGINS.get(source, source)
    )


#: skitter's layer names for Scrapy's priority names, where they differ.
_LAYERS = {"cmdline": "cli"}

#: The built-in component tables (``DOWNLOADER_MIDDLEWARES_BASE``...) by setting name, as
#: their packages give them: read as Scrapy's ``*_BASE`` settings, never set.
_BASE_TABLES: dict[str, Mapping[Any, Any]] = {}


def register_base_table(name: str, table: Mapping[Any, Any]) -> None:
    """Make ``settings[name]`` read ``table``: a package's built-in components, which
    Scrapy code reads as a ``*_BASE`` setting (scrapy-poet's add-on looks there for the
    built-in it replaces). Setting the name stays refused; the settings package cannot
    import the packages that own the tables, so they hand them over."""
    if not name.endswith("_BASE"):
        raise ValueError(f"{name!r} is not a *_BASE setting")
    _BASE_TABLES[name] = table


_MISSING: Any = object()


def _layer_name(priority: int | str) -> str:
    """The layer a Scrapy priority stands for (``"cmdline"`` is skitter's ``cli``; a
    number that is no named priority is its own layer, "priority 25")."""
    if isinstance(priority, str):
        if priority not in SETTINGS_PRIORITIES:
            raise KeyError(f"unknown settings priority {priority!r}")
        return _LAYERS.get(priority, priority)
    named = [name for name, number in SETTINGS_PRIORITIES.items() if number == priority]
    return _LAYERS.get(named[0], named[0]) if named else f"priority {priority}"


def _priority_of(source: str) -> int:
    if source.startswith("priority "):
        return int(source.removeprefix("priority "))
    return SETTINGS_PRIORITIES.get(source, SETTINGS_PRIORITIES["project"])


class Settings(BaseSettings):
    """A crawl's settings, resolved in layers; unset known names read as their default.

    Scrapy's ``BaseSettings`` too: a value has a priority (its layer's, ``priority=``),
    ``set`` changes it until ``freeze()``, which the Crawler calls when the crawl starts;
    every value is checked and typed as it is set, whichever way. ``origin`` says where
    ``values`` came from in an error about one of them (e.g. "quotes/settings.py of
    project 'quotes'"); by default, the layer's name."""

    __slots__ = ("_declared", "_origins", "_priorities", "_sources", "_values", "_views")

    def __init__(
        self,
        values: Mapping[str, Any] | Iterable[Any] | str | None = None,
        priority: int | str | None = None,
        *,
        source: str = "project",
        origin: str | None = None,
    ):
        self.frozen = False
        self._values: dict[str, Any] = {}
        self._sources: dict[str, str] = {}
        self._priorities: dict[str, int] = {}
        self._views: dict[type, Any] = {}
        self._declared: dict[str, Setting] = {}  # components' typed rows (``declare``)
        self._origins: dict[str, str] = {}  # where a value came from, if said (``origin``)
        if priority is not None:
            source = _layer_name(priority)
        if isinstance(values, BaseSettings):
            self.update(values)
        elif values:
            pairs = json.loads(values) if isinstance(values, str) else values
            self._merge(
                pairs if isinstance(pairs, Mapping) else dict(cast(Any, pairs)), source, origin
            )

    @property
    def attributes(self) -> dict[str, SettingsAttribute]:  # type: ignore[override]
        """Scrapy's view of the values set: name -> value and priority (read-only)."""
        return {n: SettingsAttribute(v, self._priorities[n]) for n, v in self._values.items()}

    def _merge(self, values: Mapping[str, Any], source: str, origin: str | None = None) -> None:
        self._assert_mutability()
        layer = _priority_of(source)
        for name, given in values.items():
            value, priority = given, layer
            if isinstance(given, SettingsAttribute):
                value, priority = given.value, given.priority
            if priority < self._priorities.get(name, 0):
                continue  # set with a higher priority (Scrapy's rule)
            try:
                _check(name, value)
                self._values[name] = _coerce(self._spec(name), value)
            except ConfigError as exc:
                raise ConfigError(f"{origin or _origin(source, name)}: {exc}") from None
            self._sources[name] = source
            self._priorities[name] = priority
            if origin:
                self._origins[name] = origin
            else:
                self._origins.pop(name, None)
        self._views.clear()  # a view is of the values as they are now

    def set(self, name: str, value: Any, priority: int | str = "project") -> None:
        """Scrapy's ``set``: ``name`` takes ``value`` unless it holds a value of a higher
        priority; checked and typed as any layer's value. TypeError once frozen."""
        self._merge({name: value}, _layer_name(priority))

    def getpriority(self, name: str) -> int | None:
        """The priority ``name`` was set with; 0 (the default's) for an unset known
        name, None for an unknown one."""
        if name in self._values:
            return self._priorities[name]
        return 0 if name in self else None

    def __delitem__(self, name: str) -> None:
        self._assert_mutability()
        del self._values[name]
        for table in (self._sources, self._priorities, self._origins):
            table.pop(name, None)
        self._views.clear()

    def pop(self, name: str, default: Any = _MISSING) -> Any:
        if name not in self._values:
            if default is _MISSING:
                raise KeyError(name)
            return default
        value = self._values[name]
        del self[name]
        return value

    def get(self, name: str, default: Any = None) -> Any:
        """The value, or ``default`` for a name neither set nor known (a known name's
        default is its value, as with ``settings[name]``)."""
        try:
            return self[name]
        except KeyError:
            return default

    def copy(self) -> Settings:
        """A deep, unfrozen copy (its values, layers and declarations)."""
        new = self.with_layer(None, "project")
        new._values = copy.deepcopy(self._values)
        return new

    def frozencopy(self) -> Settings:
        new = self.copy()
        new.freeze()
        return new

    def _spec(self, name: str) -> Setting | None:
        return SETTINGS.get(name) or self._declared.get(name)

    def declare(self, rows: Iterable[Setting]) -> None:
        """Add the typed declarations of a crawl's components (``declared_settings``),
        once, at start, before anything reads them: a value set for one is read as its
        type (``-s MYEXT_LIMIT=5`` is the int 5) and an unset one reads as its default."""
        for row in rows:
            self._declared[row.name] = row
            if row.name in self._values:
                try:
                    self._values[row.name] = _coerce(row, self._values[row.name])
                except ConfigError as exc:
                    raise ConfigError(f"{self.where(row.name)}: {exc}") from None
        self._views.clear()

    def where(self, name: str) -> str:
        """Where ``name``'s value came from, as a refusal names it (the project's
        settings module by its file, when the CLI said so)."""
        return self._origins.get(name) or _origin(self.source(name), name)

    def with_layer(self, values: Mapping[str, Any] | None, source: str) -> Settings:
        """An unfrozen copy with ``values`` laid over this one."""
        new = Settings()
        new._values = dict(self._values)
        new._sources = dict(self._sources)
        new._priorities = dict(self._priorities)
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

        ``project`` may be a ``Settings`` (e.g. made with an ``origin``, or by Scrapy's
        ``set`` with priorities): its values keep their layers, priorities and origins,
        and it is not changed. ``env`` is the environment layer: only
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
        elif isinstance(project, BaseSettings):
            out = cls(project)
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
                table = _BASE_TABLES.get(name)
                if table is None:
                    raise
                return dict(table)  # a copy: the built-ins are changed by the setting
            default = spec.default
            if default is None and name in _BASE_TABLES:  # unset: the built-ins' table
                return dict(_BASE_TABLES[name])
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
        first use and then shared until a value changes (never, once frozen)."""
        view = self._views.get(cls)
        if view is None:
            view = self._views[cls] = cls.from_settings(self)
        return cast(V, view)

    def source(self, name: str) -> str:
        """Which layer set ``name``: default, project, spider, env or cli."""
        return self._sources.get(name, "default")

    def __repr__(self) -> str:
        # Secrets (AWS_*, *_PASSWORD, a URL's password...) are shown masked.
        shown = ", ".join(f"{name!r}: {mask_setting(name, v)}" for name, v in self._values.items())
        return f"Settings({{{shown}}})"
