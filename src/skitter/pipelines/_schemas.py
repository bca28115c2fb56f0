"""The schemas items are validated against, read from VALIDATION_SCHEMAS at start.

Three kinds, each answering ``errors(data)`` with (field, rule) pairs for one item (a
plain dict, as ``item_to_dict`` makes it):

- ``JsonSchema``: a JSON Schema (a dict, or a ``.json`` file), checked with
  ``jsonschema`` (``skitter[validation]``); the rule is the schema keyword that failed
  (``required``, ``type``, ``minimum``, ``pattern``...).
- ``ModelSchema``: a pydantic model; the rule is pydantic's error type (``missing``,
  ``float_parsing``...).
- ``FieldRules``: an ``Item`` class's own ``Field(required=True, type=float)``
  declarations; the rules are ``required`` and ``type``.

A field is named by its path, nested keys joined with ``.`` and list positions as
``[]`` (``offers[].price``), so that one broken field counts under one name however many
list entries it breaks. Everything is checked when the setting is read: a schema that
is not valid JSON Schema, a file that is not there, a path that names nothing, are
refused before the crawl starts.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from skitter._components import load_object
from skitter.exceptions import ConfigError

if TYPE_CHECKING:
    from skitter.item import Item

__all__ = ["FieldRules", "JsonSchema", "ModelSchema", "Schema", "read_schemas"]

Errors = list[tuple[str, str]]


class Schema(Protocol):
    """One schema: the (field, rule) pairs an item's data breaks; none when valid."""

    def errors(self, data: Mapping[str, Any]) -> Errors: ...


def _path(parts: Iterable[Any]) -> str:
    return ".".join("[]" if isinstance(part, int) else str(part) for part in parts).replace(
        ".[]", "[]"
    )


class JsonSchema:
    """A JSON Schema, checked by ``jsonschema`` with the draft the schema names."""

    def __init__(self, schema: Mapping[str, Any], where: str) -> None:
        try:
            from jsonschema import validators
            from jsonschema.exceptions import SchemaError
        except ImportError:
            raise ConfigError(
                f"{where}: JSON Schema validation needs jsonschema: "
                "pip install 'skitter[validation]'"
            ) from None
        cls = validators.validator_for(schema)
        try:
            cls.check_schema(schema)
        except SchemaError as exc:
            raise ConfigError(f"{where}: not a valid JSON Schema: {exc.message}") from None
        self._validator = cls(schema)

    def errors(self, data: Mapping[str, Any]) -> Errors:
        out: Errors = []
        for error in self._validator.iter_errors(data):
            path = list(error.absolute_path)
            if error.validator == "required" and isinstance(error.instance, Mapping):
                missing = [n for n in error.validator_value if n not in error.instance]
                out.extend((_path([*path, name]), "required") for name in missing)
            else:
                out.append((_path(path) or "(item)", str(error.validator)))
        return list(dict.fromkeys(out))  # jsonschema reports "required" once per name


class ModelSchema:
    """A pydantic model: the item is valid when the model accepts its data."""

    def __init__(self, model: type) -> None:
        self._validate: Callable[[Any], Any] = model.model_validate  # type: ignore[attr-defined]
        self._error: type[Exception] = _pydantic_error()

    def errors(self, data: Mapping[str, Any]) -> Errors:
        try:
            self._validate(data)
        except self._error as exc:
            return [
                (_path(error["loc"]) or "(item)", str(error["type"]))
                for error in exc.errors()  # type: ignore[attr-defined]
            ]
        return []


def _pydantic_error() -> type[Exception]:
    from pydantic import ValidationError

    return ValidationError


class FieldRules:
    """An Item class's Fields: ``required=True`` (set, and not None or empty) and
    ``type=T`` (or a tuple of types; a value that is set must be one)."""

    def __init__(self, cls: type[Item], where: str) -> None:
        self.rules: dict[str, tuple[bool, tuple[type, ...] | None]] = {}
        for name, meta in cls.fields.items():
            required = bool(meta.get("required", False))
            kind = meta.get("type")
            kinds = None if kind is None else kind if isinstance(kind, tuple) else (kind,)
            if kinds is not None and not all(isinstance(k, type) for k in kinds):
                raise ConfigError(f"{where}: {cls.__name__}.{name}: Field type= must be a type")
            if required or kinds is not None:
                self.rules[name] = (required, kinds)
        if not self.rules:
            raise ConfigError(
                f"{where}: {cls.__name__} declares no Field(required=...) or Field(type=...) "
                "to check"
            )

    def errors(self, data: Mapping[str, Any]) -> Errors:
        out: Errors = []
        for name, (required, kinds) in self.rules.items():
            value = data.get(name)
            if value is None or value == "" or value == [] or value == {}:
                if required:
                    out.append((name, "required"))
            elif kinds is not None and not isinstance(value, kinds):
                out.append((name, "type"))
        return out


def _is_model(obj: Any) -> bool:
    return isinstance(obj, type) and callable(getattr(obj, "model_validate", None))


def _one(spec: Any, owner: type | None, where: str) -> Schema:
    """One schema from what the setting gives."""
    from skitter.item import Item  # itemadapter: only when schemas are configured

    if spec == "fields":
        if owner is None or not issubclass(owner, Item):
            raise ConfigError(f"{where}: 'fields' checks an Item class's Fields; key it by one")
        return FieldRules(owner, where)
    if isinstance(spec, str) and (spec.endswith(".json") or "/" in spec):
        return _schema_file(spec, where)
    obj = load_object(spec) if isinstance(spec, str) else spec
    if isinstance(obj, Mapping):
        return JsonSchema(obj, where)
    if isinstance(obj, type) and issubclass(obj, Item):
        return FieldRules(obj, where)
    if _is_model(obj):
        return ModelSchema(obj)
    raise ConfigError(
        f"{where}: {spec!r} is not a schema: give a JSON Schema (a dict or a .json file), a "
        "pydantic model, or an Item class (or 'fields') whose Fields declare required/type"
    )


def _schema_file(spec: str, where: str) -> JsonSchema:
    if "://" in spec:
        raise ConfigError(
            f"{where}: schemas are read from local files, not {spec.split('://')[0]}:// "
            "(download it and give its path)"
        )
    path = Path(spec)
    try:
        schema = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"{where}: cannot read {spec}: {exc.strerror}") from None
    except ValueError as exc:
        raise ConfigError(f"{where}: {spec} is not JSON: {exc}") from None
    if not isinstance(schema, Mapping):
        raise ConfigError(f"{where}: {spec} does not hold a JSON Schema object")
    return JsonSchema(schema, f"{where} ({spec})")


def read_schemas(value: Any, setting: str) -> dict[type | str, list[Schema]]:
    """The setting as {item class, or '*' for every item: schemas}; {} when unset.
    A list is every item's; keys may be classes or their dotted paths ('dict' for
    plain dict items)."""
    if isinstance(value, str) and value.strip().startswith(("{", "[")):
        value = json.loads(value)  # from the command line or the environment
    if not value:
        return {}
    if isinstance(value, list | tuple | str) or not isinstance(value, Mapping):
        value = {"*": value}
    out: dict[type | str, list[Schema]] = {}
    for key, specs in value.items():
        owner = key if key == "*" else dict if key == "dict" else load_object(key)
        if owner != "*" and not isinstance(owner, type):
            raise ConfigError(f"{setting}: the key {key!r} is not an item class (or '*')")
        cls = owner if isinstance(owner, type) else None
        where = f"{setting}[{getattr(owner, '__name__', owner)!s}]"
        listed = specs if isinstance(specs, list | tuple) else [specs]
        out[owner] = [_one(spec, cls, where) for spec in listed]
    return out
