"""Every typed settings view matches the declarations it reads.

A view's field is a setting's name in lower case, typed as the setting is declared
(``Setting.kind``; a list is frozen to a tuple, a dict to a read-only mapping, a setting
whose default is None may be None). If a declaration changes type, or a view names a
setting nobody declares, these tests say which field drifted.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Mapping
from typing import Any

import pytest

import skitter.downloader._tls
import skitter.settings
from skitter.settings import SETTINGS, Setting, Settings, View


def _views() -> list[type[View]]:
    """The library's views: every subclass of View defined in skitter."""
    assert skitter.settings and skitter.downloader._tls  # imported: their views exist
    found: list[type[View]] = []
    todo = list(View.__subclasses__())
    while todo:
        cls = todo.pop()
        todo.extend(cls.__subclasses__())
        if cls.__module__.startswith("skitter."):
            found.append(cls)
    return sorted(found, key=lambda cls: cls.__name__)


#: What a view holds for a setting of each declared kind (``View`` freezes lists and dicts).
_HELD: dict[type, type] = {list: tuple, dict: Mapping}  # type: ignore[type-abstract]


def _problem(annotation: Any, spec: Setting) -> str | None:
    """Why ``annotation`` cannot hold what the setting ``spec`` resolves to, or None."""
    union = typing.get_origin(annotation) in (typing.Union, types.UnionType)
    options = typing.get_args(annotation) if union else (annotation,)
    if Any in options or object in options:
        return None  # holds whatever the setting resolves to
    if spec.kind is object:
        return f"{spec.name} is declared as any object: the field must be Any or object"
    held = _HELD.get(spec.kind, spec.kind)
    if not any((typing.get_origin(option) or option) is held for option in options):
        return f"{spec.name} is declared {spec.kind.__name__}: the field must take a {held}"
    if spec.default is None and type(None) not in options:
        return f"{spec.name} defaults to None: the field must take None"
    return None


def _drift(view: type[View]) -> list[str]:
    hints = typing.get_type_hints(view)
    out = []
    for field in dataclasses.fields(view):  # type: ignore[arg-type]
        spec = SETTINGS.get(field.name.upper())
        if spec is None:
            out.append(f"{view.__name__}.{field.name}: no setting {field.name.upper()}")
            continue
        problem = _problem(hints[field.name], spec)
        if problem is not None:
            out.append(f"{view.__name__}.{field.name}: {problem}")
    return out


def test_the_library_has_a_view_per_subsystem() -> None:
    names = {view.__name__ for view in _views()}
    assert {"EngineSettings", "SchedulerSettings", "DownloaderSettings"} <= names
    assert len(names) >= 15


@pytest.mark.parametrize("view", _views(), ids=lambda view: view.__name__)
def test_each_field_is_a_declared_setting_of_its_type(view: type[View]) -> None:
    assert _drift(view) == []


@pytest.mark.parametrize("view", _views(), ids=lambda view: view.__name__)
def test_each_view_is_built_from_the_defaults(view: type[View]) -> None:
    settings = Settings()
    built = settings.view(view)
    assert settings.view(view) is built  # once per resolved Settings


@dataclasses.dataclass(frozen=True, slots=True)
class _Drifted(View):
    download_delay: str  # declared float
    rate: float  # declared float, default None
    retry_http_codes: list[int]  # a list is held as a tuple
    monitors: dict[str, str]  # declared as any object
    no_such_setting: int = 0


def test_drift_is_found() -> None:
    assert [line.split(":")[0] for line in _drift(_Drifted)] == [
        "_Drifted.download_delay",
        "_Drifted.rate",
        "_Drifted.retry_http_codes",
        "_Drifted.monitors",
        "_Drifted.no_such_setting",
    ]
