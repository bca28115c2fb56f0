"""Remote feed storages against real servers the tests start on 127.0.0.1: moto's S3
server and pyftpdlib's FTP server. Crawls write, the tests read the objects back."""

from __future__ import annotations

import asyncio
import gzip
import json
import logging
import subprocess
import sys
import textwrap
import threading
import time
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
from moto.server import ThreadedMotoServer

from skitter import Crawler, Request, Spider
from skitter.exceptions import ConfigError, CrawlFailed
from skitter.pipelines import _feed_uploads, parse_feeds
from skitter.testing import refused_port

with warnings.catch_warnings():  # pyftpdlib runs on asyncore before Python 3.12
    warnings.simplefilter("ignore", DeprecationWarning)
    from pyftpdlib.authorizers import DummyAuthorizer
    from pyftpdlib.handlers import FTPHandler
    from pyftpdlib.servers import FTPServer

SECRET = "hunter2-secret"
ITEMS = 7


class Numbers(Spider):
    """ITEMS pages (data: URLs, no server needed), one item each."""

    name = "numbers"
    allowed_schemes = ["data"]

    def start_requests(self) -> Any:
        for n in range(ITEMS):
            yield Request(f"data:,{n}")

    def parse(self, response: Any) -> Any:
        yield {"n": int(response.text), "tags": ["a", "b"]}


@pytest.fixture
def s3() -> Iterator[tuple[str, Any]]:
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    endpoint = f"http://{host}:{port}"
    client = boto3.client(
        "s3",
        endpoint_url=endpoint,
        region_name="us-east-1",
        aws_access_key_id="testing",
        aws_secret_access_key=SECRET,
    )
    client.create_bucket(Bucket="feeds")
    try:
        yield endpoint, client
    finally:
        server.stop()


def s3_settings(endpoint: str) -> dict[str, Any]:
    return {
        "AWS_ENDPOINT_URL": endpoint,
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": SECRET,
        "AWS_REGION_NAME": "us-east-1",
    }


class StallingHandler(FTPHandler):
    """Holds every STOR while ``stall`` is set (a server that hangs mid-upload), refuses
    it while ``refuse`` is set."""

    stall = threading.Event()
    stalled = threading.Event()
    refuse = threading.Event()

    def ftp_STOR(self, file: str, mode: str = "w") -> Any:
        if self.refuse.is_set():
            self.respond("552 Refused by the test.")
            return None
        if self.stall.is_set():
            self.stalled.set()
            while self.stall.is_set():
                time.sleep(0.05)  # in the FTP server's thread, until the test lifts the stall
            return None
        return super().ftp_STOR(file, mode)


@pytest.fixture
def ftp(tmp_path: Path) -> Iterator[tuple[int, Path, Any]]:
    home = tmp_path / "ftp"
    home.mkdir()
    authorizer = DummyAuthorizer()
    authorizer.add_user("user", SECRET, str(home), perm="elradfmwMT")
    handler = type("Handler", (StallingHandler,), {"authorizer": authorizer})
    handler.stall = threading.Event()
    handler.stalled = threading.Event()
    handler.refuse = threading.Event()
    server = FTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"timeout": 0.1}, daemon=True)
    thread.start()
    try:
        yield server.address[1], home, handler
    finally:
        handler.stall.clear()
        server.close_all()
        thread.join(5)


def lines_of(data: bytes) -> list[int]:
    return [json.loads(line)["n"] for line in data.decode().splitlines()]


def read_tree(home: Path) -> dict[str, bytes]:
    return {str(p.relative_to(home)): p.read_bytes() for p in home.rglob("*") if p.is_file()}


async def test_a_crawl_writes_s3_objects_in_batches_and_compressed(s3, caplog, tmp_path) -> None:
    endpoint, client = s3
    feeds = {
        "s3://feeds/%(name)s/part-%(batch_id)d.jsonl": {"batch_item_count": 3},
        "s3://feeds/all.jsonl.gz": {"format": "jsonl", "postprocessing": ["gzip"]},
        "s3://feeds/all.csv": {"fields": ["n", "tags"]},
    }
    staging = tmp_path / "staging"
    staging.mkdir()
    settings = {"FEEDS": feeds, "FEED_TEMPDIR": str(staging), **s3_settings(endpoint)}
    settings["FEED_STORAGE_S3_ACL"] = "public-read"
    with caplog.at_level(logging.DEBUG):
        stats = await Crawler(Numbers, settings).run()
    assert not any(staging.iterdir())  # the staging files are gone once stored
    listed = client.list_objects_v2(Bucket="feeds")["Contents"]
    keys = sorted(obj["Key"] for obj in listed)
    assert keys == [
        "all.csv",
        "all.jsonl.gz",
        "numbers/part-1.jsonl",
        "numbers/part-2.jsonl",
        "numbers/part-3.jsonl",
    ]

    def body(key: str) -> bytes:
        return bytes(client.get_object(Bucket="feeds", Key=key)["Body"].read())

    parts = [lines_of(body(f"numbers/part-{i}.jsonl")) for i in (1, 2, 3)]
    assert [len(p) for p in parts] == [3, 3, 1]
    assert sorted(n for part in parts for n in part) == list(range(ITEMS))
    assert sorted(lines_of(gzip.decompress(body("all.jsonl.gz")))) == list(range(ITEMS))
    rows = body("all.csv").decode().splitlines()
    assert rows[0] == "n,tags" and sorted(rows[1:]) == [f'{n},"a,b"' for n in range(ITEMS)]
    assert stats["feedexport/success_count/S3FeedStorage"] == 5
    grants = client.get_object_acl(Bucket="feeds", Key="all.csv")["Grants"]
    assert any(g["Grantee"].get("URI", "").endswith("/AllUsers") for g in grants)
    assert SECRET not in caplog.text and SECRET not in repr(stats)


async def test_a_crawl_writes_to_ftp_creating_folders(ftp, caplog) -> None:
    port, home, _ = ftp
    feeds = {
        f"ftp://user:{SECRET}@127.0.0.1:{port}/deep/er/items-%(batch_id)d.jsonl": {
            "batch_item_count": 4
        },
        f"ftp://user:{SECRET}@127.0.0.1:{port}/all.xml": {},
    }
    with caplog.at_level(logging.DEBUG):
        stats = await Crawler(Numbers, {"FEEDS": feeds}).run()
    tree = read_tree(home)
    assert sorted(tree) == ["all.xml", "deep/er/items-1.jsonl", "deep/er/items-2.jsonl"]
    assert len(lines_of(tree["deep/er/items-1.jsonl"])) == 4
    got = lines_of(tree["deep/er/items-1.jsonl"]) + lines_of(tree["deep/er/items-2.jsonl"])
    assert sorted(got) == list(range(ITEMS))
    assert tree["all.xml"].count(b"<item>") == ITEMS
    assert stats["feedexport/success_count/FTPFeedStorage"] == 3
    assert SECRET not in caplog.text and "user:***@127.0.0.1" in caplog.text


async def test_active_ftp_and_overwrite(ftp) -> None:
    port, home, _ = ftp
    feeds = {f"ftp://user:{SECRET}@127.0.0.1:{port}/a.jsonl": {}}
    settings = {"FEEDS": feeds, "FEED_STORAGE_FTP_ACTIVE": True}
    for _ in range(2):
        await Crawler(Numbers, settings).run()
    assert sorted(lines_of(read_tree(home)["a.jsonl"])) == list(range(ITEMS))  # replaced
    feeds[next(iter(feeds))] = {"overwrite": False}
    await Crawler(Numbers, {"FEEDS": feeds}).run()
    assert sorted(lines_of(read_tree(home)["a.jsonl"])) == sorted([*range(ITEMS)] * 2)


async def test_a_failed_upload_fails_the_crawl_without_showing_the_password(
    monkeypatch, caplog
) -> None:
    monkeypatch.setattr(_feed_uploads, "RETRY_DELAYS", (0.01, 0.01))
    port = refused_port()
    feeds = {f"ftp://user:{SECRET}@127.0.0.1:{port}/items.jsonl": {}}
    with pytest.raises(CrawlFailed) as raised:
        await Crawler(Numbers, {"FEEDS": feeds}).run()
    reason = raised.value.reason
    assert f"feed 'ftp://user:***@127.0.0.1:{port}/items.jsonl': cannot upload" in reason
    assert "after 3 tries" in reason
    assert raised.value.stats["feedexport/failed_count/FTPFeedStorage"] == 1
    assert raised.value.stats["feedexport/upload_retries"] == 2
    assert SECRET not in caplog.text and SECRET not in reason
    assert SECRET not in repr(raised.value.stats)


async def test_a_refused_upload_is_stored_when_the_job_resumes(ftp, tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(_feed_uploads, "RETRY_DELAYS", (0.01,))
    port, home, handler = ftp
    feeds = {f"ftp://user:{SECRET}@127.0.0.1:{port}/p-%(batch_id)d.jsonl": {"batch_item_count": 3}}
    job = tmp_path / "job"
    handler.refuse.set()
    with pytest.raises(CrawlFailed, match="cannot upload"):
        await Crawler(Numbers, {"FEEDS": feeds}, job_dir=job).run()
    assert read_tree(home) == {}
    assert len(list((job / "feeds").glob("*.done"))) >= 1  # kept for the resume
    handler.refuse.clear()
    await Crawler(Numbers, {"FEEDS": feeds}, job_dir=job).run()
    tree = read_tree(home)
    assert sorted(n for data in tree.values() for n in lines_of(data)) == list(range(ITEMS))
    assert sorted(tree) == ["p-1.jsonl", "p-2.jsonl", "p-3.jsonl"]


SLASHED = "wJal/rXUtnFEMI/K7MDENG"  # an AWS-style secret: about half of them hold a '/'
ENCODED = SLASHED.replace("/", "%2F")


def assert_not_shown(text: str) -> None:
    for part in (*SLASHED.split("/"), ENCODED):
        assert part not in text, text


@pytest.mark.parametrize(
    "uri",
    [
        f"s3://AKIDEXAMPLE:{SLASHED}@feeds/items.jsonl",
        f"ftp://user:{SLASHED}@127.0.0.1:21/items.jsonl",
        f"gs://user:{SLASHED}@feeds/items.jsonl",
        "ftp://user:pw@127.0.0.1:21/a@b.jsonl",  # the last @ ends the userinfo
    ],
)
def test_a_remote_feed_uri_a_storage_would_misread_is_refused_at_start(uri: str) -> None:
    """urlsplit ends the authority at the secret's '/': the bucket (or FTP host) would be
    named after the access key, and the rest of the secret be the object key."""
    with pytest.raises(ConfigError, match="percent-encode") as raised:
        parse_feeds({uri: {}})
    assert ":***@" in str(raised.value)
    assert_not_shown(str(raised.value))


def test_a_gcs_feed_uri_takes_no_credentials() -> None:
    with pytest.raises(ConfigError, match="GOOGLE_APPLICATION_CREDENTIALS") as raised:
        parse_feeds({f"gs://user:{ENCODED}@feeds/items.jsonl": {}})
    assert_not_shown(str(raised.value))


async def test_an_s3_secret_with_a_slash_percent_encoded_is_used_and_never_shown(
    s3, caplog
) -> None:
    endpoint, client = s3
    # Beside placeholders a percent-encoded character is kept as it is (Scrapy 2.13+);
    # written '%%2F', the older way, it means the same.
    client.create_bucket(Bucket="slashed")  # moto's buckets outlive its servers: a new one
    template = f"s3://testing:{ENCODED}@slashed/by%40name/%(name)s.jsonl"
    escaped = template.replace("%2F", "%%2F").replace("%40", "%%40")
    [plain] = parse_feeds({template: {}}, spider_name="numbers")
    [older] = parse_feeds({escaped: {}}, spider_name="numbers")
    assert plain.target({}) == older.target({})
    feeds = {template: {}}
    settings = {"FEEDS": feeds, "AWS_ENDPOINT_URL": endpoint, "AWS_REGION_NAME": "us-east-1"}
    with caplog.at_level(logging.DEBUG):
        await Crawler(Numbers, settings).run()
    [stored] = client.list_objects_v2(Bucket="slashed")["Contents"]
    assert stored["Key"] == "by@name/numbers.jsonl"  # percent-decoded, as FTP and GCS paths
    assert "in: s3://testing:***@slashed/by%40name/numbers.jsonl" in caplog.text
    assert_not_shown(caplog.text)


async def test_an_ftp_password_with_a_slash_percent_encoded_logs_in(ftp, caplog) -> None:
    port, home, handler = ftp
    handler.authorizer.add_user("slash", SLASHED, str(home), perm="elradfmwMT")
    feeds = {f"ftp://slash:{ENCODED}@127.0.0.1:{port}/s.jsonl": {}}
    with caplog.at_level(logging.DEBUG):
        await Crawler(Numbers, {"FEEDS": feeds}).run()
    assert sorted(lines_of(read_tree(home)["s.jsonl"])) == list(range(ITEMS))
    assert "slash:***@127.0.0.1" in caplog.text
    assert_not_shown(caplog.text)


def test_aws_verify_reads_text_as_a_boolean() -> None:
    from skitter.pipelines._s3 import S3Config

    assert S3Config.from_settings({"AWS_VERIFY": "false"}).verify is False
    assert S3Config.from_settings({"AWS_VERIFY": "/ca.pem"}).verify == "/ca.pem"
    assert SECRET not in repr(S3Config.from_settings({"AWS_SECRET_ACCESS_KEY": SECRET}))


def test_unknown_storages_are_refused_at_start() -> None:
    with pytest.raises(ConfigError, match="unknown storage") as raised:
        parse_feeds({f"sftp://u:{SECRET}@h/x.jsonl": {}})
    assert SECRET not in str(raised.value)


def test_a_missing_extra_is_named(monkeypatch) -> None:
    import importlib.util

    real = importlib.util.find_spec

    def find_spec(name: str, *args: Any) -> Any:
        if name == "aiobotocore":
            return None
        if name.startswith("gcloud"):
            raise ModuleNotFoundError(name)
        return real(name, *args)

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)
    with pytest.raises(ConfigError, match=r"pip install 'skitter\[s3\]'"):
        parse_feeds({"s3://bucket/x.jsonl": {}})
    with pytest.raises(ConfigError, match=r"gs:// feeds need the gcs extra"):
        parse_feeds({"gs://bucket/x.jsonl": {}})


@pytest.fixture
def gcs(monkeypatch) -> Iterator[Any]:
    from gcp_storage_emulator.server import create_server

    server = create_server("127.0.0.1", 0, in_memory=True, default_bucket="feeds")
    server.start()
    port = server._api._httpd.server_address[1]
    monkeypatch.setenv("STORAGE_EMULATOR_HOST", f"http://127.0.0.1:{port}")
    try:
        yield server
    finally:
        server.stop()


async def read_gcs(name: str) -> bytes:
    from gcloud.aio.storage import Storage

    async with Storage() as client:
        return bytes(await client.download("feeds", name))


async def test_a_crawl_writes_gcs_objects(gcs) -> None:
    feeds = {
        "gs://feeds/%(name)s/part-%(batch_id)d.jsonl": {"batch_item_count": 4},
        "gs://feeds/all.json.gz": {"format": "json", "postprocessing": ["gzip"]},
    }
    stats = await Crawler(Numbers, {"FEEDS": feeds, "GCS_PROJECT_ID": "p"}).run()
    parts = [lines_of(await read_gcs(f"numbers/part-{i}.jsonl")) for i in (1, 2)]
    assert [len(p) for p in parts] == [4, 3]
    assert sorted(n for part in parts for n in part) == list(range(ITEMS))
    rows = json.loads(gzip.decompress(await read_gcs("all.json.gz")))
    assert sorted(row["n"] for row in rows) == list(range(ITEMS))
    assert stats["feedexport/success_count/GCSFeedStorage"] == 3


CHILD = textwrap.dedent(
    """
    import asyncio, sys
    from skitter import Crawler, Request, Spider

    class Numbers(Spider):
        name = "numbers"
        allowed_schemes = ["data"]

        def start_requests(self):
            for n in range(int(sys.argv[3])):
                yield Request(f"data:,{n}")

        def parse(self, response):
            yield {"n": int(response.text)}

    feeds = {sys.argv[1]: {"batch_item_count": 4}}
    settings = {"FEEDS": feeds, "CONCURRENT_REQUESTS": 1}
    asyncio.run(Crawler(Numbers, settings, job_dir=sys.argv[2]).run())
    """
)


def run_child(uri: str, job: Path, count: int) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", CHILD, uri, str(job), str(count)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )


@pytest.mark.slow
@pytest.mark.timeout(120)
async def test_a_crawl_killed_during_an_upload_resumes_without_losing_items(ftp, tmp_path) -> None:
    port, home, handler = ftp
    uri = f"ftp://user:{SECRET}@127.0.0.1:{port}/out/part-%(batch_id)d.jsonl"
    job = tmp_path / "job"
    handler.stall.set()  # every upload hangs: the first one never finishes
    child = run_child(uri, job, 10)
    try:
        stalled = await asyncio.to_thread(handler.stalled.wait, 60)
        assert stalled, child.stderr.read() if child.poll() is not None else "no upload"
        await asyncio.sleep(1.0)  # the crawl goes on and checkpoints while it hangs
        child.kill()
        await asyncio.to_thread(child.wait, 30)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait(30)
        assert child.stderr is not None
        child.stderr.close()
    handler.stall.clear()
    assert not read_tree(home).get("out/part-1.jsonl")  # nothing stored yet
    resumed = run_child(uri, job, 10)
    _, err = await asyncio.to_thread(resumed.communicate, None, 60)
    assert resumed.returncode == 0, err
    tree = read_tree(home)
    got = sorted(n for key in tree for n in lines_of(tree[key]))
    assert got == list(range(10)), tree  # every item, exactly once
    assert sorted(tree) == ["out/part-1.jsonl", "out/part-2.jsonl", "out/part-3.jsonl"]
    assert SECRET not in err and SECRET not in _job_files_text(job)


def _job_files_text(job: Path) -> str:
    return "".join(p.read_bytes().decode("latin-1") for p in job.rglob("*") if p.is_file())


def test_scrapy_ftp_feed_storage_creates_folders_then_appends_or_replaces(ftp) -> None:
    """Scrapy's ``FTPFeedStorage`` by its own API (open, write, blocking store), with a
    quoted password in the URI."""
    from urllib.parse import quote

    from skitter.extensions.feedexport import FTPFeedStorage
    from skitter.spider import Spider

    port, home, _ = ftp
    uri = f"ftp://user:{quote(SECRET, safe='')}@127.0.0.1:{port}/a/b/out.txt"
    for options, content in (({}, b"one"), ({"overwrite": False}, b"two"), ({}, b"new")):
        storage = FTPFeedStorage(uri, feed_options=options)
        assert storage.password == SECRET
        file = storage.open(Spider(name="s"))
        file.write(content)
        storage.store(file)
        if content == b"two":
            assert (home / "a" / "b" / "out.txt").read_bytes() == b"onetwo"
    assert (home / "a" / "b" / "out.txt").read_bytes() == b"new"
    with pytest.raises(ValueError, match="without a hostname"):
        FTPFeedStorage("ftp:///x")
