"""Scrapy's ``scrapy.utils.asyncgen``: moving between plain and asynchronous iterables,
for middlewares that take either kind of callback output."""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator, Iterable
from typing import TypeVar

__all__ = ["as_async_generator", "collect_asyncgen"]

T = TypeVar("T")


async def collect_asyncgen(result: AsyncIterable[T]) -> list[T]:
    """Everything an asynchronous iterable yields, as a list."""
    return [item async for item in result]


async def as_async_generator(it: Iterable[T] | AsyncIterable[T]) -> AsyncIterator[T]:
    """``it`` as an asynchronous generator, whichever kind of iterable it is, so that
    the caller has one kind to handle."""
    if isinstance(it, AsyncIterable):
        async for item in it:
            yield item
    else:
        for item in it:
            yield item
