"""Scrapy's ``scrapy.utils.python``: the str/bytes helpers components and tests call."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, TypeVar, overload

__all__ = ["to_bytes", "to_unicode", "without_none_values"]

_K = TypeVar("_K")
_V = TypeVar("_V")


def to_unicode(text: str | bytes, encoding: str | None = None, errors: str = "strict") -> str:
    """``text`` as str: bytes decoded (UTF-8 unless ``encoding`` says otherwise), str as
    is; anything else is a TypeError, never its repr."""
    if isinstance(text, str):
        return text
    if not isinstance(text, bytes | bytearray):
        raise TypeError(f"to_unicode must receive bytes or str, got {type(text).__name__}")
    return bytes(text).decode(encoding or "utf-8", errors)


def to_bytes(text: str | bytes, encoding: str | None = None, errors: str = "strict") -> bytes:
    """``text`` as bytes: str encoded (UTF-8 unless ``encoding`` says otherwise), bytes
    as is; anything else is a TypeError."""
    if isinstance(text, bytes):
        return text
    if not isinstance(text, str):
        raise TypeError(f"to_bytes must receive str or bytes, got {type(text).__name__}")
    return text.encode(encoding or "utf-8", errors)


@overload
def without_none_values(iterable: Mapping[_K, _V]) -> dict[_K, _V]: ...
@overload
def without_none_values(iterable: Iterable[_K]) -> Iterable[_K]: ...
def without_none_values(iterable: Any) -> Any:
    """A dict without its None values, or a sequence (of its own type) without Nones."""
    if isinstance(iterable, Mapping):
        return {key: value for key, value in iterable.items() if value is not None}
    return type(iterable)(value for value in iterable if value is not None)
