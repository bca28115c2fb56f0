"""Scrapy's ``Headers``: a case-insensitive mapping of header names to lists of bytes.

Components written for Scrapy build one, read ``headers.get(name)`` as bytes and
``getlist(name)`` as a list of bytes. Names are kept in Scrapy's normal form (title
case, bytes); str values are encoded with ``encoding``, ints written in decimal, and
None drops a header's values. Anything else is a TypeError, not its repr on the wire.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Self

__all__ = ["Headers", "header_pairs"]

_Value = str | bytes | int | None


class Headers(dict[bytes, list[bytes]]):
    """``{b"Name": [b"value", ...]}``, looked up by any case of the name, str or bytes.

    ``h[name]`` and ``h.get(name)`` give the last value (None when the list is empty);
    ``getlist`` gives all of them; ``items()`` gives ``(name, [values])``.
    """

    __slots__ = ("encoding",)

    def __init__(
        self,
        seq: Mapping[Any, Any] | Iterable[tuple[Any, Any]] | None = None,
        encoding: str = "utf-8",
    ) -> None:
        super().__init__()
        self.encoding = encoding
        if seq:
            self.update(seq)

    def _key(self, key: str | bytes) -> bytes:
        return self._bytes(key.title())

    def _bytes(self, value: str | bytes | int) -> bytes:
        if isinstance(value, bytes):
            return value
        if isinstance(value, str):
            return value.encode(self.encoding)
        if isinstance(value, int) and not isinstance(value, bool):
            return str(value).encode(self.encoding)
        raise TypeError(f"Unsupported value type {type(value).__name__!r} for a header")

    def _values(self, value: Any) -> list[bytes]:
        """A header's values as bytes: None is none, a list or tuple several, anything
        else one (refused by ``_bytes`` unless str, bytes or int)."""
        if value is None:
            return []
        if isinstance(value, list | tuple):
            return [self._bytes(v) for v in value if v is not None]
        return [self._bytes(value)]

    def __getitem__(self, key: str | bytes) -> bytes | None:  # type: ignore[override]
        values = super().__getitem__(self._key(key))
        return values[-1] if values else None

    def __setitem__(self, key: str | bytes, value: Any) -> None:
        super().__setitem__(self._key(key), self._values(value))

    def __delitem__(self, key: str | bytes) -> None:
        super().__delitem__(self._key(key))

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str | bytes) and super().__contains__(self._key(key))

    def get(self, key: str | bytes, default: Any = None) -> bytes | None:  # type: ignore[override]
        if key in self:
            return self[key]
        return None if default is None else self._values(default)[-1]

    def getlist(self, key: str | bytes, default: Any = None) -> list[bytes]:
        try:
            return super().__getitem__(self._key(key))
        except KeyError:
            return [] if default is None else self._values(default)

    def setlist(self, key: str | bytes, values: Iterable[_Value]) -> None:
        self[key] = list(values)

    def appendlist(self, key: str | bytes, value: _Value) -> None:
        super().__setitem__(self._key(key), [*self.getlist(key), *self._values(value)])

    def setdefault(self, key: str | bytes, default: Any = None) -> list[bytes]:
        name = self._key(key)
        if not super().__contains__(name):
            super().__setitem__(name, self._values(default))
        return super().__getitem__(name)

    def setlistdefault(self, key: str | bytes, default_list: Iterable[_Value] = ()) -> list[bytes]:
        return self.setdefault(key, list(default_list))

    def pop(self, key: str | bytes, *default: Any) -> Any:
        return super().pop(self._key(key), *default)

    def update(self, seq: Any = (), **kwargs: Any) -> None:  # type: ignore[override]
        pairs = seq.items() if isinstance(seq, Mapping) else seq
        grouped: dict[bytes, list[bytes]] = {}
        for key, value in pairs:
            grouped.setdefault(self._key(key), []).extend(self._values(value))
        for key, value in kwargs.items():
            grouped.setdefault(self._key(key), []).extend(self._values(value))
        for name, values in grouped.items():
            super().__setitem__(name, values)

    def values(self) -> list[bytes | None]:  # type: ignore[override]
        """The last value of each header, as Scrapy gives them."""
        return [self[key] for key in self.keys()]

    def items(self) -> list[tuple[bytes, list[bytes]]]:  # type: ignore[override]
        return [(key, self.getlist(key)) for key in self.keys()]

    @classmethod
    def fromkeys(cls, keys: Iterable[str | bytes], value: Any = None) -> Self:  # type: ignore[override]
        return cls((key, value) for key in keys)

    def copy(self) -> Self:
        return self.__class__(((k, list(v)) for k, v in super().items()), self.encoding)

    __copy__ = copy

    def to_unicode_dict(self) -> dict[str, str]:
        """``{"Name": "v1,v2"}``: values joined with commas, decoded (Scrapy's)."""
        return {
            key.decode(self.encoding): b",".join(values).decode(self.encoding)
            for key, values in super().items()
        }

    def to_string(self) -> bytes:
        """The headers as they are written on the wire, one ``Name: value`` per line."""
        return b"\r\n".join(
            key + b": " + value for key, values in super().items() for value in values
        )


def _text(value: str | bytes | int) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, bytes):
        return value.decode("latin-1")  # HTTP's own: every byte maps to one character
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    raise TypeError(f"Unsupported value type {type(value).__name__!r} for a header")


def header_pairs(headers: Mapping[Any, Any] | Iterable[tuple[Any, Any]]) -> list[tuple[str, str]]:
    """Headers as Scrapy code gives them (a ``Headers``, bytes names or values, a list
    of values per name, None for none) as the ``(name, value)`` str pairs skitter's
    requests hold."""
    pairs = headers.items() if isinstance(headers, Mapping) else headers
    out: list[tuple[str, str]] = []
    for name, value in pairs:
        if value is None:
            continue
        values = value if isinstance(value, list | tuple) else (value,)
        out.extend((_text(name), _text(v)) for v in values if v is not None)
    return out
