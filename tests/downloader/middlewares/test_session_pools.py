"""The sans-I/O cores of sessions and proxies: SessionPool, ProxyPool, BlockDetector,
and PROXY_LIST's forms (refused at start when wrong)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from skitter._clock import FakeClock
from skitter.downloader.middlewares._blocks import BlockDetector
from skitter.downloader.middlewares._proxies import ProxyPool, proxy_tiers
from skitter.downloader.middlewares._sessionpool import SessionPool
from skitter.exceptions import ConfigError
from skitter.http import Request, Response


def response(status: int = 200, body: bytes = b"<p>ok</p>") -> Response:
    return Response(
        "http://site.test/", status=status, body=body, request=Request("http://site.test/")
    )


# -- SessionPool ------------------------------------------------------------------------


def test_a_scope_fills_up_to_the_size_then_takes_turns() -> None:
    pool = SessionPool(3)
    taken = [pool.take("a.test") for _ in range(7)]
    assert [new for _, new in taken] == [True, True, True, False, False, False, False]
    assert [s.id for s, _ in taken] == ["s1", "s2", "s3", "s1", "s2", "s3", "s1"]
    other, new = pool.take("b.test")
    assert new and other.id == "s4" and other.scope == "b.test"


def test_a_request_keeps_the_session_it_names_while_it_is_live() -> None:
    pool = SessionPool(2)
    first, _ = pool.take("a.test")
    pool.take("a.test")
    assert pool.take("a.test", "s1")[0] is first
    assert pool.take("b.test", "s1")[0] is not first  # another scope's session: not this one
    pool.retire(first, "blocked")
    again, new = pool.take("a.test", "s1")
    assert new and again.id != "s1"


def test_max_uses_retires_a_session_after_its_last_request() -> None:
    pool = SessionPool(1, max_uses=2)
    session, _ = pool.take("a")
    assert pool.used(session) is False
    assert pool.used(session) is True
    assert session.retired == "max_uses"
    assert pool.take("a")[0].id == "s2"


def test_retiring_twice_counts_once() -> None:
    pool = SessionPool(1)
    session, _ = pool.take("a")
    assert pool.retire(session, "blocked") is True
    assert pool.retire(session, "blocked") is False
    assert pool.live() == []


def test_fingerprints_go_to_sessions_in_turn() -> None:
    pool = SessionPool(3, fingerprints=["chrome", "firefox"])
    assert [pool.take("a")[0].fingerprint for _ in range(3)] == ["chrome", "firefox", "chrome"]


def test_a_snapshot_restores_the_live_sessions_and_the_next_id() -> None:
    pool = SessionPool(2, max_uses=10)
    a, _ = pool.take("x")
    pool.used(a)
    a.proxy = 1
    b, _ = pool.take("x")
    pool.retire(b, "blocked")
    again = SessionPool(2, max_uses=10)
    assert again.restore(pool.snapshot()) == 1
    (restored,) = again.live()
    assert (restored.id, restored.uses, restored.proxy) == ("s1", 1, 1)
    assert again.take("x")[0].id == "s3"  # ids are never given twice


def test_a_snapshot_that_is_not_one_is_refused() -> None:
    with pytest.raises(ConfigError, match="not a session pool"):
        SessionPool(1).restore({"made": 1, "live": [{"nope": 1}]})


def test_bad_pool_settings_are_refused() -> None:
    with pytest.raises(ConfigError, match="SESSION_MAX_USES"):
        SessionPool(1, max_uses=-1)
    with pytest.raises(ConfigError, match="SESSION_FINGERPRINTS"):
        SessionPool(1, fingerprints=[""])


# -- BlockDetector ----------------------------------------------------------------------


async def test_a_block_status_is_a_block_only_with_a_marker() -> None:
    detect = BlockDetector([403, 429], ["access denied"], ["g-recaptcha"])
    assert await detect(response(403, b"<h1>Access Denied</h1>")) == "HTTP 403 (access denied)"
    assert await detect(response(403, b"<h1>Members only</h1>")) is None
    assert await detect(response(404, b"access denied")) is None
    assert await detect(response(200, b'<div class="g-recaptcha">')) == "CAPTCHA (g-recaptcha)"


async def test_without_markers_the_status_alone_is_a_block() -> None:
    detect = BlockDetector([429], [], [])
    assert await detect(response(429, b"")) == "HTTP 429"
    assert await detect(response(200, b"")) is None


async def test_the_spiders_hook_is_asked_plain_or_async() -> None:
    class Plain:
        def is_blocked(self, response: Response) -> bool:
            return b"go away" in response.body

    class Async:
        async def is_blocked(self, response: Response) -> bool:
            return response.status == 202

    plain = BlockDetector([], [], [], Plain().is_blocked)
    assert await plain(response(200, b"go away")) == "is_blocked"
    assert await plain(response(200, b"welcome")) is None
    assert await BlockDetector([], [], [], Async().is_blocked)(response(202)) == "is_blocked"


def test_a_marker_that_is_not_text_is_refused() -> None:
    with pytest.raises(ConfigError, match="BLOCK_MARKERS"):
        BlockDetector([403], [b"bytes"], [])


# -- ProxyPool --------------------------------------------------------------------------

A, B, C = "http://a.test:8001", "http://user:secret@b.test:8002", "http://c.test:8003"


def test_round_robin_takes_turns_and_skips_a_proxy_that_is_down() -> None:
    clock = FakeClock()
    pool = ProxyPool([[A, B, C]], clock, backoff=30.0)
    assert [pool.pick("h").index for _ in range(4)] == [0, 1, 2, 0]
    pool.failed(pool.proxies[1], "h")
    assert [pool.pick("h").index for _ in range(4)] == [2, 0, 2, 0]
    clock.advance(30.0)
    assert {pool.pick("h").index for _ in range(3)} == {0, 1, 2}


def test_when_every_proxy_is_down_the_one_back_first_is_tried() -> None:
    clock = FakeClock()
    pool = ProxyPool([[A, B]], clock, backoff=30.0)
    pool.failed(pool.proxies[1], "h")
    clock.advance(5.0)
    pool.failed(pool.proxies[0], "h")
    assert pool.pick("h").index == 1
    assert pool.pick("h", exclude=frozenset({0, 1})) is None


def test_a_preferred_proxy_is_kept_while_it_is_up() -> None:
    pool = ProxyPool([[A, B, C]], FakeClock())
    assert [pool.pick("h", prefer=2).index for _ in range(3)] == [2, 2, 2]
    pool.failed(pool.proxies[2], "h")
    assert pool.pick("h", prefer=2).index != 2


def test_tiered_escalates_a_host_on_blocks_and_falls_back_after_successes() -> None:
    pool = ProxyPool([[A], [B], [C]], FakeClock(), rotation="tiered", fallback_after=3)
    cheap = pool.pick("h")
    assert cheap.tier == 0
    pool.blocked(cheap, "h")
    assert pool.tier_of("h") == 1 and pool.tier_of("other") == 0
    pool.blocked(pool.pick("h"), "h")
    top = pool.pick("h")
    assert top.tier == 2
    pool.blocked(top, "h")
    assert pool.tier_of("h") == 2  # nowhere higher to go
    for _ in range(3):
        pool.succeeded(top, "h")
    assert pool.tier_of("h") == 1  # probes the tier below
    pool.blocked(cheap, "h")  # an old failure below the host's tier says nothing new
    assert pool.tier_of("h") == 1


def test_a_tier_with_every_proxy_down_borrows_from_the_tier_above() -> None:
    pool = ProxyPool([[A], [B]], FakeClock(), rotation="tiered")
    pool.proxies[0].down_until = 1e12
    assert pool.pick("h").tier == 1


def test_labels_never_carry_credentials_and_stay_unique() -> None:
    pool = ProxyPool([[A, B, "http://user:other@b.test:8002"]], FakeClock())
    labels = [p.label for p in pool.proxies]
    assert labels == ["a.test:8001", "b.test:8002#1", "b.test:8002#2"]
    assert "secret" not in repr(pool.proxies) + repr(pool.rows())


def test_round_robin_flattens_tiers() -> None:
    pool = ProxyPool([[A], [B, C]], FakeClock())
    assert pool.tiers == 1 and len(pool.proxies) == 3


# -- PROXY_LIST -------------------------------------------------------------------------


def proxies_from_a_callable() -> list[str]:
    return [A, C]


def test_proxy_list_forms(tmp_path: Path) -> None:
    assert proxy_tiers([A, B]) == [[A, B]]
    assert proxy_tiers([[A], [B, C]]) == [[A], [B, C]]
    listing = tmp_path / "proxies.txt"
    listing.write_text(f"# ours\n{A}\n\n{B}\n")
    assert proxy_tiers(str(listing)) == [[A, B]]
    assert proxy_tiers(f"{__name__}.proxies_from_a_callable") == [[A, C]]
    assert proxy_tiers(proxies_from_a_callable) == [[A, C]]
    assert proxy_tiers(f"{A}, {B}\n{C}") == [[A, B, C]]  # -s PROXY_LIST=... or the env


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ([], "non-empty list"),
        (["socks5://a.test:1080"], "not an http"),
        (["http://user:hunter2@:80"], "with a host"),
        (["http://a.test:99999"], "not a proxy URL"),
        (["http://user:hunter2/x@a.test:1"], "percent-encode"),  # a '/' in the password
        ([A, [B]], "list of lists"),
        ([1], "list of lists"),
        ("/no/such/proxies.txt", "no such file"),
        ("no_such_module.proxies", "cannot import"),
        ("http://user:hunter2@, http://x.test:1", "with a host"),
    ],
)
def test_a_bad_proxy_list_is_refused_without_showing_a_password(value: Any, message: str) -> None:
    with pytest.raises(ConfigError, match=message) as raised:
        proxy_tiers(value)
    assert "hunter2" not in str(raised.value)


def test_bad_rotation_is_refused() -> None:
    with pytest.raises(ConfigError, match="PROXY_ROTATION"):
        ProxyPool([[A]], FakeClock(), rotation="random")
    with pytest.raises(ConfigError, match="empty tier"):
        ProxyPool([[A], []], FakeClock(), rotation="tiered")
