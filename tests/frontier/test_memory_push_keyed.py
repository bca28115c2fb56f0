"""``push_keyed``: a checked batch gets the outcomes ``push`` gives one
request at a time, and leaves the queue as ``push`` leaves it."""

from __future__ import annotations

from skitter.frontier._memory import MemoryTaskQueue, check_request
from skitter.frontier._memory._duplicate import push_keyed
from skitter.http import Request


def _batch() -> list[Request]:
    """New pages, their duplicates (plain, raised, lowered), explicit taskids, a page
    crawled (forced again) and one being crawled."""
    urls = [f"http://a.example/{n}" for n in range(4)]
    requests = [Request(url) for url in urls]
    requests += [Request(urls[0]), Request(urls[1], priority=5), Request(urls[2], priority=-3)]
    requests += [
        Request("http://b.example/", taskid="mine"),
        Request("http://c.example/", taskid="mine"),
    ]
    requests += [Request(urls[3], dont_filter=True), Request("http://a.example/9")]
    return requests


def _queue_state(queue: MemoryTaskQueue) -> list[tuple[str, int]]:
    return [(lease.request.url, lease.request.priority) for lease in queue.lease(100, 0.0, 60.0)]


def test_a_keyed_batch_is_pushed_as_one_request_at_a_time() -> None:
    one_by_one, keyed = MemoryTaskQueue(), MemoryTaskQueue()
    for queue in (one_by_one, keyed):
        queue.push(Request("http://a.example/3"), 0.0)  # already there, then finished
        queue.ack(queue.lease(1, 0.0, 60.0)[0], 0.0)
        queue.push(Request("http://a.example/9"), 0.0)  # being crawled
        queue.lease(1, 0.0, 60.0)
    first, second = _batch(), _batch()
    force = [r.dont_filter for r in first]
    expected = [one_by_one.push(r, 1.0, f) for r, f in zip(first, force, strict=True)]
    keys = [check_request(r) for r in second]
    assert push_keyed(keyed, second, keys, 1.0, force) == expected
    assert _queue_state(keyed) == _queue_state(one_by_one)


def test_a_keyed_batch_without_force_flags() -> None:
    one_by_one, keyed = MemoryTaskQueue(), MemoryTaskQueue()
    first, second = _batch(), _batch()
    expected = [one_by_one.push(r, 1.0) for r in first]
    assert push_keyed(keyed, second, [check_request(r) for r in second], 1.0) == expected
    assert _queue_state(keyed) == _queue_state(one_by_one)
