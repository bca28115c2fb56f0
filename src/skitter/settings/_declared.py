"""Which settings a crawl reads, and the check that refuses a name nothing reads.

A setting set for a crawl is honoured by whatever reads it: skitter (the registry,
``SETTINGS``), a Scrapy setting skitter accepts or refuses (``_scrapy``), or one of the
crawl's components: the spider, and the middlewares, pipelines, extensions and other
classes its settings name. A name that none of them reads does nothing. When it is close
to a name one of them reads, it is a typo: refused at start with the name it was most
likely meant to be (``_suggest``), so ``DEPTH_MAX``, ``-s TIMEOUT=5`` and a misspelt
plug-in setting cannot pass in silence. A name close to nothing known is the project's
own configuration (Scrapy accepts any name, and projects keep their own values there,
read by code skitter cannot see): it is kept, and named in one warning at start. Names
that differ only in their digits (``TEST1``, ``TEST3``) are a family, not a typo.

A component declares what it reads in two ways:

- By reading it with the name in its code, as every Scrapy component does
  (``crawler.settings.getint("MYEXT_LIMIT")``): that needs nothing more (``_scan``).
- With a ``declared_settings`` class attribute, for names its code builds at run time or
  reads elsewhere, and for typed defaults. It is a sequence whose items are a name
  (``"MYEXT_LIMIT"``), a prefix (``"MYEXT_*"``: every name that starts with ``MYEXT_``),
  a ``Setting`` row (name, default, type, doc: a value set as a string is parsed as that
  type, and an unset one reads as the default) or a ``View`` dataclass (its fields,
  upper-cased). Base classes' declarations count too.

A project declares the names its own code reads outside of components (a helper module,
a deploy script) in the ``DECLARED_SETTINGS`` setting, names and prefixes as above.
"""

from __future__ import annotations

import dataclasses
import logging
import re
from collections.abc import Collection, Iterable, Iterator
from typing import TYPE_CHECKING, Any, TypeGuard

from skitter.exceptions import ConfigError
from skitter.settings._media import is_per_class
from skitter.settings._registry import KNOWN_NAMES, SETTINGS
from skitter.settings._scan import names_in_code
from skitter.settings._setting import Setting
from skitter.settings._suggest import suggest
from skitter.settings._views import View

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

    from skitter.settings._settings import Settings

__all__ = ["ATTRIBUTE", "Declared", "check_declared"]

logger = logging.getLogger("skitter.settings")

#: The class attribute a component declares its settings in.
ATTRIBUTE = "declared_settings"

_NAME = re.compile(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*")
_PREFIX = re.compile(r"[A-Z][A-Z0-9_]*_\*")


def _owner(component: object) -> str:
    cls = component if isinstance(component, type) else type(component)
    return f"{cls.__module__}.{cls.__qualname__}"


class Declared:
    """The names, prefixes and typed rows that a crawl's components and project declare."""

    def __init__(self) -> None:
        self.names: set[str] = set()
        self.prefixes: set[str] = set()
        self.rows: dict[str, Setting] = {}
        self._row_owner: dict[str, str] = {}

    def covers(self, name: str) -> bool:
        return name in self.names or any(name.startswith(p) for p in self.prefixes)

    def add_component(self, component: object) -> None:
        """What ``component`` (a class, an instance or a function) reads: the names in
        its code and its classes' ``declared_settings``."""
        self.names |= names_in_code(component)
        cls = component if isinstance(component, type) else type(component)
        for klass in cls.__mro__:
            declaration = vars(klass).get(ATTRIBUTE)
            if declaration:
                self.add(f"{_owner(klass)}.{ATTRIBUTE}", declaration, rows=True)

    def add(self, owner: str, declaration: Any, *, rows: bool) -> None:
        """The items of one declaration; ``owner`` names it in an error. ``rows``: whether
        ``Setting`` rows and ``View`` classes may be among them (not in a setting)."""
        for item in _items(owner, declaration):
            if isinstance(item, str) and item.endswith("*"):
                self.prefixes.add(item[:-1])
            elif isinstance(item, str):
                self.names.add(item)
            elif isinstance(item, Setting) and rows:
                self._add_row(owner, item)
            elif _is_view(item) and rows:
                self.names |= {field.name.upper() for field in dataclasses.fields(item)}
            else:
                raise ConfigError(f"{owner}: {item!r} is not a setting name or prefix")

    def _add_row(self, owner: str, row: Setting) -> None:
        if row.name in KNOWN_NAMES:
            raise ConfigError(
                f"{owner}: {row.name} is skitter's own setting, with its own default and "
                "type; declare it by name, not with a Setting row"
            )
        earlier = self.rows.get(row.name)
        if earlier is not None and (earlier.kind, earlier.default) != (row.kind, row.default):
            raise ConfigError(
                f"{owner} and {self._row_owner[row.name]} declare {row.name} with different "
                "types or defaults"
            )
        self.rows[row.name] = row
        self._row_owner[row.name] = owner
        self.names.add(row.name)


def _is_view(item: Any) -> TypeGuard[type[DataclassInstance]]:
    return isinstance(item, type) and issubclass(item, View) and dataclasses.is_dataclass(item)


def _items(owner: str, declaration: Any) -> Iterator[Any]:
    """The items of a declaration, each a well-formed name or prefix or an object."""
    if isinstance(declaration, str | bytes | dict) or not isinstance(declaration, Iterable):
        raise ConfigError(
            f"{owner} must be a list of setting names, 'PREFIX_*' prefixes, Setting rows "
            f"or View classes, got {type(declaration).__name__}"
        )
    for item in declaration:
        name = item.name if isinstance(item, Setting) else item
        if isinstance(name, str) and not (_NAME.fullmatch(name) or _PREFIX.fullmatch(name)):
            raise ConfigError(
                f"{owner}: {name!r} is not an upper-case setting name (or a 'PREFIX_*' prefix)"
            )
        yield item


def _digits_apart(name: str, candidate: str) -> bool:
    """``TEST1`` and ``TEST3``, ``SERVER_2`` and ``SERVER_1``: a numbered family, two
    names on purpose rather than one mistyped."""
    return re.sub(r"\d+", "#", name) == re.sub(r"\d+", "#", candidate)


def _meant(name: str, known: Collection[str]) -> list[str]:
    """The names ``name`` most likely mistypes (none: it looks like nothing known)."""
    return [c for c in suggest(name, known) if c != name and not _digits_apart(name, c)]


def _refusal(settings: Settings, name: str, close: list[str]) -> str:
    if close == [name]:  # in a spider's custom_settings, read by another spider only
        return f"{settings.where(name)}: unknown setting {name!r} (only another spider reads it)"
    quoted = [repr(candidate) for candidate in close]
    more = f", or {', '.join(quoted[1:])}" if len(quoted) > 1 else ""
    return f"{settings.where(name)}: unknown setting {name!r} (did you mean {quoted[0]}{more}?)"


def check_declared(
    settings: Settings, components: Iterable[object], readers: Iterable[object] = ()
) -> None:
    """Refuse every name set in ``settings`` that neither skitter nor ``components`` (the
    spider class and the classes its settings name) nor DECLARED_SETTINGS declares and
    that is close to one they do (a typo: ``DEPTH_MAX``); log the others, which look like
    nothing known (the project's own configuration, as Scrapy allows), once. Lay the
    components' typed rows into ``settings``.

    ``readers`` are the other spiders of the run or project: a name of a shared layer
    (the project's settings, the environment, the command line) that one of them reads
    is set for it, not by mistake. A spider's ``custom_settings`` are its own: only its
    crawl's components count for them."""
    own = Declared()
    for component in components:
        own.add_component(component)
    own.add("setting DECLARED_SETTINGS", settings["DECLARED_SETTINGS"], rows=False)
    settings.declare(own.rows.values())
    shared = Declared()  # its typed rows are not laid in: they are the readers' own
    for reader in readers:
        shared.add_component(reader)
    unknown = [
        name
        for name in settings
        if name not in KNOWN_NAMES
        and settings.source(name) != "default"
        and not own.covers(name)
        and (settings.source(name) == "spider" or not shared.covers(name))
    ]
    if not unknown:
        return
    known = [*SETTINGS, *own.names, *shared.names]
    typos = {
        name: close for name in unknown if not is_per_class(name) and (close := _meant(name, known))
    }
    typos.update({name: [name] for name in unknown if shared.covers(name)})  # custom_settings
    kept = [name for name in unknown if name not in typos]
    if kept:
        logger.warning(
            "settings that nothing in this crawl reads, kept for the project's own code: %s "
            "(declare them in DECLARED_SETTINGS to say so)",
            ", ".join(f"{name} ({settings.where(name)})" for name in kept),
        )
    if not typos:
        return
    lines = "; ".join(_refusal(settings, name, close) for name, close in typos.items())
    one = len(typos) == 1
    them = "it" if one else "them"
    raise ConfigError(
        f"{lines}. No setting of skitter's has {'that name' if one else 'those names'} and "
        f"no component of this crawl (the spider, its middlewares, pipelines, extensions) "
        f"reads {them}. If your own code reads {them}, declare {them}: DECLARED_SETTINGS = "
        f"{list(typos)!r} in the project's settings, or declared_settings on the class that "
        f"reads {them} (see the documentation: settings)"
    )
