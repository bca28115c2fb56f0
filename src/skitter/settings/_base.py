"""Scrapy's settings API: ``BaseSettings``, priorities, and the typed getters.

A Scrapy project and its plug-ins build and change settings as Scrapy lets them: a value
has a priority (``SETTINGS_PRIORITIES``: default < command < addon < project < spider <
cmdline), ``set(name, value, priority)`` replaces it only from an equal or higher one,
and the object is mutable until ``freeze()``. ``BaseSettings`` is that object with
Scrapy's semantics, for any names (a plug-in's own dicts, a test's scratch settings).

skitter's ``Settings`` (``_settings``) is a ``BaseSettings`` too: it inherits the
getters and the helpers written here on top of five primitives (``__getitem__``,
``__contains__``, ``__iter__``, ``set``, ``getpriority``) and overrides those with its
registry, its validation and its layers. The getters parse strings by Scrapy's rules,
not the registry's: a component written for Scrapy gets what it expects.
"""

from __future__ import annotations

import copy
import importlib
import json
import logging
from collections.abc import Iterable, Iterator, Mapping, MutableMapping
from pprint import pformat
from types import ModuleType
from typing import Any, cast

from skitter._secrets import mask_setting

__all__ = [
    "SETTINGS_PRIORITIES",
    "BaseSettings",
    "SettingsAttribute",
    "get_settings_priority",
]

logger = logging.getLogger("skitter.settings")

#: Scrapy's priorities by name; skitter's environment layer sits between the spider's
#: settings and the command line (``env``), and ``cli`` is skitter's name for ``cmdline``.
SETTINGS_PRIORITIES: dict[str, int] = {
    "default": 0,
    "command": 10,
    "addon": 15,
    "project": 20,
    "spider": 30,
    "env": 35,
    "cmdline": 40,
    "cli": 40,
}

_MISSING: Any = object()
_BOOL_HELP = (
    "Supported values for boolean settings are 0/1, True/False, '0'/'1', "
    "'True'/'False' and 'true'/'false'"
)


def get_settings_priority(priority: int | str) -> int:
    """A priority given by name (``"project"``) or as a number, as a number."""
    if isinstance(priority, str):
        return SETTINGS_PRIORITIES[priority]
    return priority


class SettingsAttribute:
    """One value and the priority it was set with; a lower priority cannot replace it."""

    def __init__(self, value: Any, priority: int) -> None:
        self.value = value
        if isinstance(value, BaseSettings):
            self.priority = max(value.maxpriority(), priority)
        else:
            self.priority = priority

    def set(self, value: Any, priority: int) -> None:
        """Replace the value when ``priority`` is at least the current one."""
        if priority >= self.priority:
            if isinstance(self.value, BaseSettings):
                value = BaseSettings(value, priority=priority)
            self.value = value
            self.priority = priority

    def __repr__(self) -> str:
        return f"<SettingsAttribute value={self.value!r} priority={self.priority}>"


def _load(path: str) -> Any:
    """The object at a dotted path, or None when there is none (a key of a component
    dict may be a class, a path, or something else entirely)."""
    module, _, name = path.rpartition(".")
    try:
        return getattr(importlib.import_module(module), name)
    except Exception:  # any failure means "not a component path"
        return None


def _same_component(key: Any, cls: Any) -> bool:
    return key is cls or (isinstance(key, str) and _load(key) is cls)


class BaseSettings(MutableMapping[Any, Any]):
    """Scrapy's mutable, prioritised settings (``scrapy.settings.BaseSettings``).

    A missing name reads as None, as in Scrapy. Mutable until ``freeze()``: then every
    change raises TypeError."""

    def __init__(
        self,
        values: Mapping[Any, Any] | Iterable[Any] | str | None = None,
        priority: int | str = "project",
    ) -> None:
        self.frozen = False
        self.attributes: dict[Any, SettingsAttribute] = {}
        if values:
            self.update(values, priority)

    # -- the primitives (skitter's Settings overrides these) ---------------------------
    def __getitem__(self, name: Any) -> Any:
        attribute = self.attributes.get(name)
        return None if attribute is None else attribute.value

    def __contains__(self, name: object) -> bool:
        return name in self.attributes

    def __iter__(self) -> Iterator[Any]:
        return iter(self.attributes)

    def __len__(self) -> int:
        return len(self.attributes)

    def set(self, name: Any, value: Any, priority: int | str = "project") -> None:
        """Set ``name`` unless it holds a value of a higher priority."""
        self._assert_mutability()
        number = get_settings_priority(priority)
        current = self.attributes.get(name)
        if current is not None:
            current.set(value, number)
        elif isinstance(value, SettingsAttribute):
            self.attributes[name] = value
        else:
            self.attributes[name] = SettingsAttribute(value, number)

    def getpriority(self, name: Any) -> int | None:
        """The priority ``name`` was set with; None when it is not set."""
        attribute = self.attributes.get(name)
        return None if attribute is None else attribute.priority

    def __delitem__(self, name: Any) -> None:
        self._assert_mutability()
        del self.attributes[name]

    # -- changes ----------------------------------------------------------------------
    def _assert_mutability(self) -> None:
        if self.frozen:
            raise TypeError("Trying to modify an immutable Settings object")

    def __setitem__(self, name: Any, value: Any) -> None:
        self.set(name, value)

    def delete(self, name: Any, priority: int | str = "project") -> None:
        """Remove ``name`` unless it was set with a higher priority."""
        if name not in self:
            raise KeyError(name)
        self._assert_mutability()
        if get_settings_priority(priority) >= (self.getpriority(name) or 0):
            del self[name]

    def setdict(self, values: Mapping[Any, Any], priority: int | str = "project") -> None:
        self.update(values, priority)

    def setmodule(self, module: ModuleType | str | Any, priority: int | str = "project") -> None:
        """Every upper-case name of a settings module (or its dotted path)."""
        self._assert_mutability()
        if isinstance(module, str):
            module = importlib.import_module(module)
        for name in dir(module):
            if name.isupper():
                self.set(name, getattr(module, name), priority)

    def update(  # type: ignore[override]
        self,
        values: Mapping[Any, Any] | Iterable[Any] | str | None,
        priority: int | str = "project",
    ) -> None:
        """Set each value (a BaseSettings keeps its own priorities; a string is JSON)."""
        self._assert_mutability()
        if isinstance(values, str):
            values = cast(dict[Any, Any], json.loads(values))
        if values is None:
            return
        if isinstance(values, BaseSettings):
            for name, value in values.items():
                self.set(name, value, cast(int, values.getpriority(name)))
            return
        pairs = values.items() if isinstance(values, Mapping) else dict(cast(Any, values)).items()
        for name, value in pairs:
            self.set(name, value, priority)

    def setdefault(self, name: Any, default: Any = None) -> Any:
        if name not in self:
            self.set(name, default, "default")
            return default
        return self[name]

    def pop(self, name: Any, default: Any = _MISSING) -> Any:
        if name not in self:
            if default is _MISSING:
                raise KeyError(name)
            return default
        value = self[name]
        del self[name]
        return value

    def add_to_list(self, name: Any, item: Any) -> None:
        """Append ``item`` to the list setting ``name`` unless it is already there."""
        value = self.getlist(name)
        if item not in value:
            self.set(name, [*value, item], self.getpriority(name) or 0)

    def remove_from_list(self, name: Any, item: Any) -> None:
        """Remove ``item`` from the list setting ``name``; ValueError if it is not there."""
        value = self.getlist(name)
        if item not in value:
            raise ValueError(f"{item!r} not found in the {name} setting ({value!r}).")
        self.set(name, [v for v in value if v != item], self.getpriority(name) or 0)

    # -- component priority dicts (DOWNLOADER_MIDDLEWARES ...) ------------------------
    def _set_components(self, name: Any, components: dict[Any, Any]) -> None:
        self.set(name, components, self.getpriority(name) or 0)

    def replace_in_component_priority_dict(
        self, name: Any, old_cls: type, new_cls: type, priority: int | None = None
    ) -> None:
        """Put ``new_cls`` where ``old_cls`` was (by class or path), with ``priority`` or
        the old one's; KeyError when ``old_cls`` is absent or switched off (None)."""
        components = self.getdict(name)
        matches = [key for key in components if _same_component(key, old_cls)]
        if not matches:
            raise KeyError(f"{old_cls} not found in the {name} setting ({components!r}).")
        old_priority = components[matches[-1]]
        if any(components[key] is None for key in matches):
            raise KeyError(f"{old_cls} is disabled (None) in the {name} setting.")
        for key in matches:
            del components[key]
        components[new_cls] = old_priority if priority is None else priority
        self._set_components(name, components)

    def set_in_component_priority_dict(self, name: Any, cls: type, priority: int | None) -> None:
        """``cls`` at ``priority``, replacing any entry of the same class (by path too)."""
        components = self.getdict(name)
        for key in [key for key in components if _same_component(key, cls)]:
            del components[key]
        components[cls] = priority
        self._set_components(name, components)

    def setdefault_in_component_priority_dict(
        self, name: Any, cls: type, priority: int | None
    ) -> None:
        """``cls`` at ``priority`` unless the dict already names it (by class or path)."""
        components = self.getdict(name)
        if not any(_same_component(key, cls) for key in components):
            components[cls] = priority
            self._set_components(name, components)

    # -- reading ----------------------------------------------------------------------
    def get(self, name: Any, default: Any = None) -> Any:
        value = self[name]
        return default if value is None else value

    def getbool(self, name: Any, default: bool = False) -> bool:
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
                f"setting {name}: {mask_setting(str(name), value)} is not a boolean. {_BOOL_HELP}"
            ) from None

    def getint(self, name: Any, default: int = 0) -> int:
        return int(self.get(name, default))

    def getfloat(self, name: Any, default: float = 0.0) -> float:
        return float(self.get(name, default))

    def getlist(self, name: Any, default: list[Any] | None = None) -> list[Any]:
        """A list; a string is split on commas ("a,b" -> ["a", "b"])."""
        value = self.get(name, default or [])
        if not value:
            return []
        if isinstance(value, str):
            return value.split(",")
        return list(value)

    def getdict(self, name: Any, default: dict[Any, Any] | None = None) -> dict[Any, Any]:
        """A dict; a string is read as JSON."""
        value = self.get(name, default or {})
        if isinstance(value, str):
            value = json.loads(value)
        return dict(value)

    def getdictorlist(
        self, name: Any, default: dict[Any, Any] | list[Any] | None = None
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
            return loaded if isinstance(loaded, dict | list) else value.split(",")
        if isinstance(value, tuple):
            return list(value)
        if isinstance(value, Mapping) and not isinstance(value, dict):
            return dict(value)
        if not isinstance(value, dict | list):
            raise ValueError(
                f"setting {name} must be a dict, list, tuple, or string, got {type(value)}"
            )
        return copy.deepcopy(value)

    def getwithbase(self, name: Any) -> BaseSettings:
        """``NAME_BASE`` with ``NAME`` over it (skitter refuses the ``*_BASE`` settings
        of its own components, so for those this is ``NAME``)."""
        if not isinstance(name, str):
            raise ValueError(f"Base setting key must be a string, got {name}")
        merged = BaseSettings()
        merged.update(self.get(f"{name}_BASE"))
        merged.update(self.get(name))
        return merged

    def get_component_priority_dict_with_base(self, name: Any) -> BaseSettings:
        """``getwithbase`` for a component dict: entries naming one class (as a class and
        as a path) count once, the later one kept; switched-off (None) ones dropped."""
        if not isinstance(name, str):
            raise ValueError(f"Base setting key must be a string, got {name}")
        out = BaseSettings()
        for part in (f"{name}_BASE", name):
            seen: dict[int, Any] = {}
            for key, value in BaseSettings(self.get(part)).items():
                target = _load(key) if isinstance(key, str) else key
                if target is not None:
                    earlier = seen.get(id(target))
                    if earlier is not None:
                        where = f"{target.__module__}.{target.__qualname__}"
                        logger.warning("%s names %s twice: %r and %r", part, where, earlier, key)
                    for old in [k for k in out if k is target or _same_component(k, target)]:
                        del out[old]
                    seen[id(target)] = key
                out[key] = value
        for key in [key for key, value in out.items() if value is None]:
            del out[key]
        return out

    def maxpriority(self) -> int:
        """The highest priority of any value (the default's when there is none)."""
        priorities = [self.getpriority(name) or 0 for name in self]
        return max(priorities) if priorities else SETTINGS_PRIORITIES["default"]

    def copy(self) -> BaseSettings:
        """A deep, unfrozen copy."""
        duplicate = copy.deepcopy(self)
        duplicate.frozen = False
        return duplicate

    def freeze(self) -> None:
        """No change after this: a crawl's settings are fixed once it starts."""
        self.frozen = True

    def frozencopy(self) -> BaseSettings:
        duplicate = self.copy()
        duplicate.freeze()
        return duplicate

    def copy_to_dict(self) -> dict[Any, Any]:
        """Every setting as a plain dict (nested BaseSettings as dicts too)."""
        return {_plain_key(k): _plain(v) for k, v in self.items()}

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(repr(self) if cycle else pformat(self.copy_to_dict()))

    def __repr__(self) -> str:
        shown = ", ".join(
            f"{name!r}: {mask_setting(str(name), value)}" for name, value in self.items()
        )
        return f"<{type(self).__name__} {{{shown}}}>"


def _plain(value: Any) -> Any:
    return value.copy_to_dict() if isinstance(value, BaseSettings) else value


def _plain_key(key: Any) -> Any:
    return key if isinstance(key, bool | float | int | str | type(None)) else str(key)
