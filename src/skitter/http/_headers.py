"""Scrapy's ``Headers``: a case-insensitive mapping of header names to lists of bytes.

``Request.headers`` and ``Response.headers`` are this type, so that code written for
Scrapy reads ``headers.get(name)`` as bytes and ``getlist(name)`` as a list of bytes.
Names are kept in Scrapy's normal form (title case, bytes); str values are encoded with
``encoding``, ints written in decimal, and None drops a header's values. Anything else
is a TypeError, not its repr on the wire.

skitter's own code speaks str to its transports, its store and its logs: ``text``,
``text_list`` and ``text_items`` give the values decoded the way ``from_text`` encoded
them (UTF-8, undecodable bytes kept as surrogates), so a header survives the round trip
byte for byte. ``from_text`` is the transports' builder: one pass over their str pairs.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any, Self

__all__ = ["Headers", "header_pairs", "norm_name", "to_text", "undecodable"]

_Value = str | bytes | int | None

#: Normal forms of the names seen so far: a name is normalised on every access, and a
#: crawl uses a few dozen names. Bounded, so odd names from a hostile site cannot grow it.
_NAMES: dict[str | bytes, bytes] = {}
_NAMES_MAX = 2048


def norm_name(key: str | bytes, encoding: str = "utf-8") -> bytes:
    """``key`` in Scrapy's normal form: title case, bytes."""
    name = _NAMES.get(key)
    if name is None:
        if isinstance(key, str):
            name = key.title().encode(encoding)
        elif isinstance(key, bytes):
            name = key.title()
        else:
            raise TypeError(f"Unsupported key type {type(key).__name__!r} for a header name")
        if len(_NAMES) < _NAMES_MAX and key.isascii():
            _NAMES[key] = name
    return name


def to_text(value: bytes) -> str:
    """A header's bytes as the str skitter's transports and store speak."""
    return value.decode("utf-8", "surrogateescape")


def undecodable(text: str) -> bool:
    """Whether ``to_text`` found bytes UTF-8 cannot read in this text (as surrogates)."""
    return any("\udc80" <= c <= "\udcff" for c in text)


def _from_str(value: str) -> bytes:
    return value.encode("utf-8", "surrogateescape")


class Headers(dict[Any, list[bytes]]):
    """``{b"Name": [b"value", ...]}``, looked up by any case of the name, str or bytes.

    (Typed with ``Any`` names only so that ``"Name" in headers`` type-checks: the keys
    are always bytes.)

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

    @classmethod
    def from_text(cls, pairs: Iterable[tuple[str, str]]) -> Self:
        """Headers from a transport's ``(name, value)`` str pairs, repeated names kept
        as several values (``Set-Cookie``)."""
        headers = cls.__new__(cls)
        headers.encoding = "utf-8"
        grouped: dict[bytes, list[bytes]] = {}
        for key, value in pairs:
            name = norm_name(key)
            values = grouped.get(name)
            if values is None:
                grouped[name] = [_from_str(value)]
            else:
                values.append(_from_str(value))
        dict.update(headers, grouped)
        return headers

    # -- Scrapy's normal forms ------------------------------------------------------------
    def normkey(self, key: str | bytes) -> bytes:
        return norm_name(key, self.encoding)

    def normvalue(self, value: Any) -> list[bytes]:
        """A header's values as bytes: None is none, a list or tuple several, anything
        else one (refused by ``_tobytes`` unless str, bytes or int)."""
        cls = value.__class__
        if cls is str:  # the common case first: a middleware's str value
            return [value.encode(self.encoding)]
        if cls is bytes:
            return [value]
        if value is None:
            return []
        if isinstance(value, str | bytes | int):
            return [self._tobytes(value)]
        if isinstance(value, Iterable):
            return [self._tobytes(v) for v in value]
        return [self._tobytes(value)]

    def _tobytes(self, value: Any) -> bytes:
        if isinstance(value, bytes):
            return value
        if isinstance(value, str):
            return value.encode(self.encoding)
        if isinstance(value, int) and not isinstance(value, bool):
            return str(value).encode(self.encoding)
        raise TypeError(f"Unsupported value type {type(value).__name__!r} for a header")

    # -- the mapping ----------------------------------------------------------------------
    def __getitem__(self, key: str | bytes) -> bytes | None:  # type: ignore[override]
        values = super().__getitem__(norm_name(key, self.encoding))
        return values[-1] if values else None

    def __setitem__(self, key: str | bytes, value: Any) -> None:
        super().__setitem__(norm_name(key, self.encoding), self.normvalue(value))

    def __delitem__(self, key: str | bytes) -> None:
        super().__delitem__(norm_name(key, self.encoding))

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str | bytes) and super().__contains__(norm_name(key, self.encoding))

    has_key = __contains__

    def get(self, key: str | bytes, default: Any = None) -> bytes | None:  # type: ignore[override]
        values = super().get(norm_name(key, self.encoding))
        if values is None:
            values = self.normvalue(default)
        return values[-1] if values else None

    def getlist(self, key: str | bytes, default: Any = None) -> list[bytes]:
        try:
            return super().__getitem__(norm_name(key, self.encoding))
        except KeyError:
            return [] if default is None else self.normvalue(default)

    def setlist(self, key: str | bytes, values: Iterable[_Value]) -> None:
        self[key] = values

    def appendlist(self, key: str | bytes, value: _Value | Iterable[_Value]) -> None:
        super().__setitem__(self.normkey(key), [*self.getlist(key), *self.normvalue(value)])

    def setdefault(self, key: str | bytes, default: Any = None) -> list[bytes]:
        name = norm_name(key, self.encoding)
        values = super().get(name)
        if values is None:
            values = self.normvalue(default)
            super().__setitem__(name, values)
        return values

    def setlistdefault(self, key: str | bytes, default_list: Iterable[_Value] = ()) -> list[bytes]:
        return self.setdefault(key, default_list)

    def pop(self, key: str | bytes, *default: Any) -> Any:
        return super().pop(norm_name(key, self.encoding), *default)

    def update(self, seq: Any = (), **kwargs: Any) -> None:  # type: ignore[override]
        """Set each header given (a mapping or pairs), replacing its values. A name
        repeated within the pairs keeps every value (``[("Cookie", "a"), ("Cookie",
        "b")]``), where a plain dict would drop all but the last without a word."""
        pairs = seq.items() if isinstance(seq, Mapping) else seq
        grouped: dict[bytes, list[bytes]] = {}
        for key, value in (*pairs, *kwargs.items()):
            grouped.setdefault(self.normkey(key), []).extend(self.normvalue(value))
        for name, values in grouped.items():
            super().__setitem__(name, values)

    def values(self) -> list[bytes | None]:  # type: ignore[override]
        """The last value of each header, as Scrapy gives them."""
        return [values[-1] if values else None for values in super().values()]

    def items(self) -> Iterator[tuple[bytes, list[bytes]]]:  # type: ignore[override]
        return iter(super().items())

    @classmethod
    def fromkeys(cls, keys: Iterable[str | bytes], value: Any = None) -> Self:  # type: ignore[override]
        return cls((key, value) for key in keys)

    def copy(self) -> Self:
        headers = self.__class__.__new__(self.__class__)
        headers.encoding = self.encoding
        dict.update(headers, ((k, list(v)) for k, v in super().items()))
        return headers

    __copy__ = copy

    def __reduce__(self) -> Any:
        return (self.__class__, (list(super().items()), self.encoding))

    def to_unicode_dict(self) -> CaseInsensitiveDict:
        """``{"Name": "v1,v2"}``: values joined with commas, decoded (Scrapy's)."""
        return CaseInsensitiveDict(
            (key.decode(self.encoding), b",".join(values).decode(self.encoding))
            for key, values in super().items()
        )

    def to_string(self) -> bytes:
        """The headers as they are written on the wire, one ``Name: value`` per line."""
        return b"\r\n".join(
            key + b": " + value for key, values in super().items() for value in values
        )

    # -- skitter's str view -------------------------------------------------------------
    def text(self, key: str | bytes, default: str | None = None) -> str | None:
        """The last value of ``key`` as str (``default`` when absent or empty)."""
        values = super().get(norm_name(key, self.encoding))
        return to_text(values[-1]) if values else default

    def text_list(self, key: str | bytes) -> list[str]:
        """Every value of ``key`` as str."""
        values = super().get(norm_name(key, self.encoding))
        return [to_text(v) for v in values] if values else []

    def text_items(self) -> list[tuple[str, str]]:
        """Every ``(name, value)`` pair as str, a repeated header once per value: what
        a transport sends and the request store keeps."""
        return [
            (to_text(key), to_text(value)) for key, values in super().items() for value in values
        ]


class CaseInsensitiveDict(dict[str, str]):
    """A str-keyed dict looked up by any case of the key (``to_unicode_dict``'s result)."""

    def __init__(self, pairs: Iterable[tuple[str, str]] = ()) -> None:
        super().__init__()
        self._names: dict[str, str] = {}
        for key, value in pairs:
            self[key] = value

    def __setitem__(self, key: str, value: str) -> None:
        old = self._names.get(key.lower())
        if old is not None and old != key:
            super().__delitem__(old)
        self._names[key.lower()] = key
        super().__setitem__(key, value)

    def __getitem__(self, key: str) -> str:
        return super().__getitem__(self._names.get(key.lower(), key))

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and key.lower() in self._names

    def __delitem__(self, key: str) -> None:
        super().__delitem__(self._names.pop(key.lower(), key))

    def get(self, key: str, default: Any = None) -> Any:
        name = self._names.get(key.lower())
        return default if name is None else super().get(name, default)


def _text(value: str | bytes | int) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, bytes):
        return to_text(value)
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    raise TypeError(f"Unsupported value type {type(value).__name__!r} for a header")


def header_pairs(headers: Mapping[Any, Any] | Iterable[tuple[Any, Any]]) -> list[tuple[str, str]]:
    """Headers as Scrapy code gives them (a ``Headers``, bytes names or values, a list
    of values per name, None for none) as ``(name, value)`` str pairs."""
    if isinstance(headers, Headers):
        return headers.text_items()
    pairs = headers.items() if isinstance(headers, Mapping) else headers
    out: list[tuple[str, str]] = []
    for name, value in pairs:
        if value is None:
            continue
        values = value if isinstance(value, list | tuple) else (value,)
        out.extend((_text(name), _text(v)) for v in values if v is not None)
    return out
