"""The media stores' contract suite (skitter.testing.media_contract) run against every
store of FilesPipeline.STORE_SCHEMES: a local directory (as a path and as a file://
URI), an FTP server (pyftpdlib on 127.0.0.1) and S3 (moto's server on 127.0.0.1); and
STORE_SCHEMES as a registry: a subclass's own scheme is honoured, None switches one off,
and an entry that is not a store is refused when the pipeline is built."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest

from skitter.exceptions import ConfigError
from skitter.pipelines._media_ftp import FTPFilesStore
from skitter.pipelines._media_store import FSFilesStore, S3FilesStore
from skitter.pipelines.files import FilesPipeline
from skitter.testing.media_contract import FilesStoreContract
from skitter.utils.misc import build_from_crawler
from skitter.utils.test import get_crawler

from ._ftp_server import SECRET, ftp_server


class TestDirectoryStore(FilesStoreContract):
    @pytest.fixture
    def store_class(self) -> type:
        return FSFilesStore

    @pytest.fixture(params=["path", "file-uri"])
    def store_uri(self, request: pytest.FixtureRequest, tmp_path: Path) -> str:
        folder = tmp_path / "media"
        return str(folder) if request.param == "path" else f"file://{folder}"


@pytest.mark.network
class TestFtpStore(FilesStoreContract):
    @pytest.fixture
    def store_class(self) -> type:
        return FTPFilesStore

    @pytest.fixture
    def store_uri(self, tmp_path: Path) -> Iterator[str]:
        with ftp_server(tmp_path / "ftp") as port:
            yield f"ftp://user:{SECRET}@127.0.0.1:{port}/media"


@pytest.fixture(scope="module")
def s3_endpoint() -> Iterator[str]:
    from moto.server import ThreadedMotoServer

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    try:
        yield f"http://{host}:{port}"
    finally:
        server.stop()


@pytest.mark.network
@pytest.mark.slow
class TestS3Store(FilesStoreContract):
    @pytest.fixture
    def store_class(self) -> type:
        return S3FilesStore

    @pytest.fixture
    def store_settings(self, s3_endpoint: str) -> dict[str, Any]:
        return {"AWS_ENDPOINT_URL": s3_endpoint, "AWS_ACCESS_KEY_ID": "testing",
                "AWS_SECRET_ACCESS_KEY": "testing", "AWS_REGION_NAME": "us-east-1"}  # fmt: skip

    @pytest.fixture
    def store_uri(self, store_settings: dict[str, Any]) -> str:
        """A new bucket per test, so that no test sees another's files."""
        bucket = f"media-{next(BUCKETS)}"
        asyncio.run(_create_bucket(store_settings["AWS_ENDPOINT_URL"], bucket))
        return f"s3://{bucket}/crawl"


BUCKETS = itertools.count()


async def _create_bucket(endpoint: str, bucket: str) -> None:
    from aiobotocore.session import get_session

    client_args = {"endpoint_url": endpoint, "region_name": "us-east-1",
                   "aws_access_key_id": "testing", "aws_secret_access_key": "testing"}  # fmt: skip
    async with get_session().create_client("s3", **client_args) as client:
        await client.create_bucket(Bucket=bucket)


class Memory:
    """A store of a project's own, kept in a dict: what an SFTP or WebDAV store is."""

    files: ClassVar[dict[str, bytes]] = {}

    def __init__(self, uri: str) -> None:
        self.uri = uri

    def persist_file(self, path: str, buf: Any, info: Any = None, **kwargs: Any) -> None:
        self.files[path] = buf.getvalue()

    def stat_file(self, path: str, info: Any = None) -> dict[str, Any]:
        return {}


ITEM = {"not": "a store"}


class WithMemory(FilesPipeline):
    STORE_SCHEMES = {**FilesPipeline.STORE_SCHEMES, "mem": Memory, "ftp": None}


def _pipeline(cls: type, store: str) -> Any:
    return build_from_crawler(cls, get_crawler(None, {"FILES_STORE": store}))


def test_a_subclass_scheme_is_honoured() -> None:
    assert isinstance(_pipeline(WithMemory, "mem://bucket").store, Memory)


def test_a_dotted_path_is_imported() -> None:
    dotted = type("Dotted", (FilesPipeline,), {"STORE_SCHEMES": {"mem": f"{__name__}.Memory"}})
    assert isinstance(_pipeline(dotted, "mem://bucket").store, Memory)


def test_a_path_that_does_not_import_is_refused_naming_the_entry() -> None:
    broken = type("Broken", (FilesPipeline,), {"STORE_SCHEMES": {"x": "nowhere.Store"}})
    with pytest.raises(ConfigError, match=r"STORE_SCHEMES\['x'\]: cannot import 'nowhere'"):
        _pipeline(broken, "x://host/dir")


def test_a_scheme_switched_off_with_none_is_refused_naming_it() -> None:
    with pytest.raises(ConfigError, match=r"switched off in STORE_SCHEMES for ftp://"):
        _pipeline(WithMemory, "ftp://host/dir")


def test_an_unknown_scheme_is_refused_naming_the_known_ones() -> None:
    with pytest.raises(ConfigError, match=r"no store for sftp:// .*mem://"):
        _pipeline(WithMemory, "sftp://host/dir")


@pytest.mark.parametrize(
    "entry", [Memory(""), object, f"{__name__}.ITEM"], ids=["instance", "no-api", "not-a-class"]
)
def test_an_entry_that_is_not_a_store_class_is_refused(entry: Any) -> None:
    broken = type("Broken", (FilesPipeline,), {"STORE_SCHEMES": {"x": entry}})
    with pytest.raises(ConfigError, match=r"STORE_SCHEMES\['x'\] = .* is not a media store"):
        _pipeline(broken, "x://host/dir")
