"""Packed ready tasks (issue 18): a request that waits in the memory queue as bytes
comes back meaning exactly what was pushed, and a request that cannot is kept as it is.
"""

from __future__ import annotations

import functools
from typing import Any

import pytest

from skitter.frontier import MemoryFrontier, MemoryTaskQueue, TaskState
from skitter.frontier._memory import request_key
from skitter.http import FormRequest, Request

T0 = 1_700_000_000.0


class Spider:
    def parse_item(self, response: object) -> None: ...

    def on_error(self, failure: object) -> None: ...


SPIDER = Spider()


def module_callback(response: object) -> None: ...


def everything(request: Request) -> dict[str, Any]:
    """Every field of ``request``, with its type, so 1 and 1.0 or "" and b"" differ."""
    fields = request.to_dict(spider=SPIDER) if request.callback is not module_callback else {}
    fields |= {name: getattr(request, name) for name in Request.attributes}
    fields["headers"] = list(request.headers.items()) if request.has_headers else None
    fields["fingerprint"] = request.fingerprint
    fields["taskid"] = request.taskid
    return {name: (type(value), value) for name, value in fields.items()}


def _with_referer(request: Request, referer: str) -> Request:
    request.setdefault_referer(referer)
    return request


PACKABLE = {
    "plain": lambda: Request("http://example.com/a"),
    "link": lambda: _with_referer(
        Request("http://example.com/p/1.html", meta={"depth": 3}), "http://example.com/"
    ),
    "callbacks": lambda: Request(
        "http://example.com/b", callback=SPIDER.parse_item, errback=SPIDER.on_error
    ),
    "function": lambda: Request("http://example.com/f", callback=module_callback),
    "errback only": lambda: Request("http://example.com/g", errback=SPIDER.on_error),
    "depth and more": lambda: Request("http://example.com/h", meta={"depth": 0, "x": 1}),
    "depth alone, not an int": lambda: Request("http://example.com/i", meta={"depth": True}),
    "scalars": lambda: Request(
        "http://example.com/c",
        meta={"s": "x", "i": -(2**63), "f": 1.5, "t": True, "n": None, "b": b"\x00"},
    ),
    "fields": lambda: Request(
        "http://example.com/d",
        method="POST",
        body=b"q=1",
        priority=-4,
        dont_filter=True,
        exetime=T0 - 5,
        retries=2,
        age=3600.0,
        auto_recrawl=True,
        itag="v2",
        render="auto",
    ),
    "int exetime": lambda: Request("http://example.com/e", exetime=0, age=-1.0, render=True),
    "unicode": lambda: Request("http://example.com/caf\u00e9?q=\u00fc"),
    # The URL is packed as the part it does not share with its Referer.
    "own referer": lambda: _with_referer(
        Request("http://example.com/p/1.html"), "http://example.com/p/1.html"
    ),
    "longer referer": lambda: _with_referer(
        Request("http://example.com/p/1"), "http://example.com/p/1.html?x=caf\u00e9"
    ),
    "other origin": lambda: _with_referer(
        Request("https://example.org/p/1.html"), "http://example.com/"
    ),
}


@pytest.mark.parametrize("make", PACKABLE.values(), ids=PACKABLE.keys())
def test_a_packed_request_comes_back_equal(make: Any) -> None:
    pushed = make()
    queue = MemoryTaskQueue()
    queue.push(pushed, T0)
    view = queue.view(request_key(pushed))
    assert view is not None and view.request is not None
    assert everything(view.request) == everything(pushed)
    (lease,) = queue.lease(1, T0, 60)
    assert lease.request is not pushed, "packed: the queue kept bytes, not the object"
    assert everything(lease.request) == everything(pushed)
    unset = [name for name in Request.__slots__ if not hasattr(lease.request, name)]
    assert unset == [], "a slot Request gained must be set by unpack_request too"
    assert lease.taskid == pushed.taskid
    assert queue.ack(lease, T0)


def _closing_over(held: object) -> Any:
    return lambda response: held  # a closure may hold a response: never kept in a table


KEPT = {
    "shared meta": lambda: Request("http://example.com/a", meta={"item": {"name": "x"}}),
    "list in meta": lambda: Request("http://example.com/a", meta={"seen": []}),
    "object in meta": lambda: Request("http://example.com/a", meta={"when": object()}),
    "huge int in meta": lambda: Request("http://example.com/a", meta={"n": 2**64}),
    "lone surrogate": lambda: Request("http://example.com/a", meta={"s": "\udc80"}),
    "closure": lambda: Request("http://example.com/a", callback=_closing_over(object())),
    "partial": lambda: Request("http://example.com/a", callback=functools.partial(module_callback)),
    "subclass": lambda: FormRequest("http://example.com/a", formdata={"q": "1"}),
    "taskid": lambda: Request("http://example.com/a", taskid="job-1"),
    "headers": lambda: Request("http://example.com/a", headers={"X-Token": "t"}),
    "cookies": lambda: Request("http://example.com/a", cookies={"k": "v"}),
    "cb_kwargs": lambda: Request("http://example.com/a", cb_kwargs={"page": 2}),
    "encoding": lambda: Request("http://example.com/a", encoding="latin-1"),
    "bytearray body": lambda: Request("http://example.com/a", body=bytearray(b"q")),
}


@pytest.mark.parametrize("make", KEPT.values(), ids=KEPT.keys())
def test_a_request_that_would_not_come_back_equal_is_kept(make: Any) -> None:
    pushed = make()
    queue = MemoryTaskQueue()
    queue.push(pushed, T0)
    (lease,) = queue.lease(1, T0, 60)
    assert lease.request is pushed


def test_a_change_to_shared_meta_after_the_push_reaches_the_callback() -> None:
    item: dict[str, Any] = {"name": "x"}
    queue = MemoryTaskQueue()
    queue.push(Request("http://example.com/a", meta={"item": item}), T0)
    item["price"] = 3  # as a spider filling one item over several pages does
    (lease,) = queue.lease(1, T0, 60)
    assert lease.request.meta["item"] is item


def test_packed_and_kept_requests_share_one_order() -> None:
    queue = MemoryTaskQueue()
    pushed = []
    for i in range(60):
        meta: dict[str, Any] = {"i": i} if i % 2 else {"i": [i]}  # every other one kept
        pushed.append(Request(f"http://example.com/{i}", priority=i % 3, meta=meta))
        queue.push(pushed[-1], T0)
    queue.push(Request("http://example.com/7", priority=9), T0)  # a packed one raised
    queue.push(Request("http://example.com/8", priority=9), T0)  # a kept one raised
    order = [lease.request.url for lease in queue.lease(100, T0, 60)]
    expected = sorted(
        pushed, key=lambda r: (-(9 if r.url[-2:] in ("/7", "/8") else r.priority), pushed.index(r))
    )
    assert order == [r.url for r in expected]


def test_raised_packed_entries_do_not_grow_the_heap_without_bound() -> None:
    queue = MemoryTaskQueue()
    for priority in range(5000):
        queue.push(Request("http://example.com/a", priority=priority), T0)
    assert len(queue._ready) < 2100  # swept, not 5000 (white box: entries held)
    assert [lease.request.priority for lease in queue.lease(5, T0, 60)] == [4999]


def test_callables_beyond_the_table_are_kept_and_still_called() -> None:
    queue = MemoryTaskQueue()
    funcs = []
    for i in range(300):  # distinct module-level-like functions: each takes a number
        namespace: dict[str, Any] = {}
        exec(f"def cb{i}(response): return {i}", namespace)
        funcs.append(namespace[f"cb{i}"])
        queue.push(Request(f"http://example.com/{i}", callback=funcs[-1]), T0)
    leases = queue.lease(300, T0, 60)
    assert [lease.request.callback(None) for lease in leases] == list(range(300))
    assert len(queue._ready.callbacks.funcs) <= 257  # bounded (white box)


@pytest.mark.parametrize("priority", [2**53, -(2**53), 10**30])
async def test_a_priority_out_of_range_is_refused_by_name(priority: int) -> None:
    frontier = MemoryFrontier()
    with pytest.raises(ValueError, match=r"priority of <GET http://example.com/x> is out of"):
        await frontier.push([Request("http://example.com/x", priority=priority)], T0)
    with pytest.raises(ValueError, match="out of range"):
        frontier.queue.push(Request("http://example.com/x", priority=priority), T0)
    assert len(frontier.queue) == 0
    await frontier.push([Request("http://example.com/x", priority=2**53 - 1)], T0)
    (lease,) = await frontier.lease(1, T0, 60)
    assert lease.request.priority == 2**53 - 1


def test_a_failed_packed_task_keeps_its_request_for_requeue() -> None:
    queue = MemoryTaskQueue()
    queue.push(Request("http://example.com/a", meta={"depth": 2}), T0)
    (lease,) = queue.lease(1, T0, 60)
    assert queue.mark_bad(lease, T0, "parse error")
    assert queue.requeue_bad(T0) == 1
    (again,) = queue.lease(1, T0, 60)
    assert again.request.meta == {"depth": 2}
    assert queue.task(again.taskid).state is TaskState.ACTIVE  # type: ignore[union-attr]
