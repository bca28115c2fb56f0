"""Secrets a user passes are shown masked: URLs, free text quoting URLs, settings, feed
URIs, requests' URLs. One rule (``skitter._secrets``), used wherever skitter prints."""

from __future__ import annotations

from typing import Any

import pytest

from skitter._secrets import (
    authority_problem,
    is_secret_name,
    mask_header,
    mask_page_url,
    mask_setting,
    mask_text,
    mask_url,
)
from skitter.exceptions import ConfigError
from skitter.http import Request, Response
from skitter.pipelines import parse_feeds
from skitter.settings import Settings


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("redis://user:pw@host:6379/0", "redis://user:***@host:6379/0"),
        ("redis://:pw@host:6379/0", "redis://:***@host:6379/0"),
        ("redis://token@host:6379/0", "redis://***@host:6379/0"),  # a token as the user
        ("rediss://u:p@ss@host/0", "rediss://u:***@host/0"),  # an unescaped @ in it
        ("redis://host:6379/0?password=pw&db=1", "redis://host:6379/0?password=***&db=1"),
        ("http://proxy/?api_key=k&x=1&token=t", "http://proxy/?api_key=***&x=1&token=***"),
        ("redis://host:6379/0", "redis://host:6379/0"),  # nothing to mask: unchanged
        ("unix:///run/redis.sock?db=0", "unix:///run/redis.sock?db=0"),
        # a secret with a '/' (half of AWS's): masked whole, to the last @
        ("s3://AKID:wJal/rXUt/nFEMI@bucket/k.jsonl", "s3://AKID:***@bucket/k.jsonl"),
        ("ftp://user:pa/ss?w#rd@host/x.csv", "ftp://user:***@host/x.csv"),
        ("http://tok/en@proxy:3128", "http://***@proxy:3128"),
    ],
)
def test_mask_url(url: str, shown: str) -> None:
    assert mask_url(url) == shown


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("https://u:p@site/?key=page2", "https://u:***@site/?key=page2"),  # the site's query
        ("https://www.youtube.com/@channel/videos", "https://www.youtube.com/@channel/videos"),
        ("https://u:p@medium.com/@user", "https://u:***@medium.com/@user"),
        ("https://user:pa/ss@example.com/", "https://user:***@example.com/"),  # not a host:port
    ],
)
def test_a_crawled_pages_url_is_masked_as_its_client_reads_it(url: str, shown: str) -> None:
    assert mask_page_url(url) == shown


def test_mask_text_masks_every_url_quoted_in_a_message() -> None:
    text = (
        "404, message='Not Found', url='http://bob:hunter2@127.0.0.1:3128' "
        "then redis://:pw@h/0?token=t; mail bob@example.com at http://example.com/x "
        '{"s3://AKID:wJal/rXUt@bucket/k": {}} http://h:1,http://u:pw@h2:2,http://v:pw@h3:3'
    )
    assert mask_text(text) == (
        "404, message='Not Found', url='http://bob:***@127.0.0.1:3128' "
        "then redis://:***@h/0?token=***; mail bob@example.com at http://example.com/x "
        '{"s3://AKID:***@bucket/k": {}} http://h:1,http://u:***@h2:2,http://v:***@h3:3'
    )


@pytest.mark.parametrize(
    "uri",
    [
        "s3://AKID:wJal/rXUt@bucket/k.jsonl",
        "ftp://user:Zq?9x@host/x.csv",
        "ftp://user:Zq9x@host/a@b.csv",  # an @ in the path: read as the userinfo's end
        "redis://:Zq9x@host:Zq9y/0",  # no port number
    ],
)
def test_a_configured_uri_that_libraries_would_misread_is_explained_not_quoted(uri: str) -> None:
    problem = authority_problem(uri)
    assert problem is not None and "percent-encode" in problem
    for part in ("wJal", "rXUt", "Zq", "AKID"):
        assert part not in problem


@pytest.mark.parametrize(
    "uri",
    ["s3://AKID:wJal%2FrXUt@bucket/k", "ftp://u:p@ss@[::1]:21/x", "unix:///run/r.sock", "/tmp/x"],
)
def test_a_well_written_uri_has_no_problem(uri: str) -> None:
    assert authority_problem(uri) is None


@pytest.mark.parametrize(
    "name",
    ["AWS_SECRET_ACCESS_KEY", "AWS_ACCESS_KEY_ID", "FTP_PASSWORD", "MY_API_TOKEN", "API_KEY"],
)
def test_settings_named_like_secrets_are_secrets(name: str) -> None:
    assert is_secret_name(name)
    assert mask_setting(name, "value") == "'***'"


@pytest.mark.parametrize("name", ["CONCURRENT_REQUESTS", "HTTPPROXY_AUTH_ENCODING", "FEEDS"])
def test_other_settings_are_not(name: str) -> None:
    assert not is_secret_name(name)


@pytest.mark.parametrize(
    "make",
    [
        lambda: Settings({"FTP_PASSWORD": "hunter2-aws"}),
        lambda: Settings.resolve(env={"SKITTER_FTP_PASSWORD": "hunter2-aws"}),
    ],
)
def test_a_refused_secret_setting_does_not_print_its_value(make: Any) -> None:
    with pytest.raises(ConfigError, match=r"_PASSWORD \('\*\*\*'\)") as raised:
        make()
    assert "hunter2-aws" not in str(raised.value)


def test_aws_credentials_are_masked_when_settings_are_shown() -> None:
    settings = Settings.resolve(
        project={"AWS_SECRET_ACCESS_KEY": "hunter2-aws", "AWS_ACCESS_KEY_ID": "AKIDHUNTER2"},
        env={"SKITTER_AWS_SESSION_TOKEN": "hunter2-token"},
    )
    shown = repr(settings)
    assert "hunter2" not in shown and "HUNTER2" not in shown
    assert settings["AWS_SECRET_ACCESS_KEY"] == "hunter2-aws"


def test_aws_secrets_are_taken_but_never_shown() -> None:
    settings = Settings.resolve(env={"SKITTER_AWS_SECRET_ACCESS_KEY": "hunter2-aws"})
    assert settings["AWS_SECRET_ACCESS_KEY"] == "hunter2-aws"
    assert "hunter2-aws" not in repr(settings)
    with pytest.raises(ConfigError) as raised:
        Settings({"AWS_SESSION_TOKEN": ["hunter2-aws"]})
    assert "hunter2-aws" not in str(raised.value)


def test_settings_repr_masks_secrets_and_urls_in_values() -> None:
    settings = Settings({"FEEDS": {"/tmp/x.jsonl": {}}, "BOT_NAME": "redis://:pw@h/0"})
    shown = repr(settings)
    assert "redis://:***@h/0" in shown and ":pw@" not in shown
    assert "/tmp/x.jsonl" in shown


def test_a_feed_uri_with_a_password_is_refused_without_showing_it() -> None:
    for uri in ("sftp://user:hunter2@host/items.jsonl", "file://user:hunter2@host/x.jsonl"):
        with pytest.raises(ConfigError) as raised:
            parse_feeds({uri: {}})
        assert "hunter2" not in str(raised.value)
        assert "user:***@host" in str(raised.value)


def test_a_file_uri_names_a_local_file() -> None:
    (feed,) = parse_feeds({"file:///tmp/items.jsonl": {}})
    assert str(feed.path) == "/tmp/items.jsonl"
    (feed,) = parse_feeds({"file://localhost/tmp/items.jsonl": {}})
    assert str(feed.path) == "/tmp/items.jsonl"


def test_a_requests_repr_masks_credentials_in_its_url() -> None:
    request = Request("https://user:hunter2@example.com/a?key=page2")
    assert repr(request) == "<GET https://user:***@example.com/a?key=page2>"
    assert request.url == "https://user:hunter2@example.com/a?key=page2"  # still sent
    assert repr(Response(request.url, 407)) == "<407 https://user:***@example.com/a?key=page2>"


@pytest.mark.parametrize(
    ("name", "value", "shown"),
    [
        ("Cookie", "session=abc", "***"),
        ("set-cookie", "session=abc; Path=/", "***"),
        ("Authorization", "Bearer abc", "***"),
        ("Proxy-Authorization", "Basic abc", "***"),
        ("X-Api-Key", "abc", "***"),
        ("X-Auth-Token", "abc", "***"),
        (
            "Referer",
            "https://u:pw@example.com/?token=t&page=2",
            "https://u:***@example.com/?token=***&page=2",
        ),
        ("Content-Type", "text/html", "text/html"),
    ],
)
def test_header_values_that_carry_credentials_are_masked(name: str, value: str, shown: str) -> None:
    assert mask_header(name, value) == shown


def test_a_redis_url_with_a_slash_in_its_password_is_refused_without_showing_it() -> None:
    """redis-py would read 'pa' as the port and print it in its error."""
    from skitter.pipelines import RedisPipeline
    from skitter.redis import RedisTarget

    url = "redis://:pa/Zq9x@127.0.0.1:6380/0"
    for make in (lambda: RedisTarget(url), lambda: RedisPipeline(url)):
        with pytest.raises(ConfigError, match="percent-encode") as raised:
            make()
        assert "redis://:***@127.0.0.1:6380/0" in str(raised.value)
        assert "Zq9x" not in str(raised.value) and "pa/" not in str(raised.value)
