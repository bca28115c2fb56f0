"""LOG_VERSIONS: the start of a crawl's log says which versions of the listed components
ran it, as Scrapy's does; an empty list leaves the line out."""

from __future__ import annotations

import ast
import logging
import platform
from importlib.metadata import version
from typing import Any

import pytest

from skitter import Crawler, Spider
from skitter._versions import component_version, versions_line


class Empty(Spider):
    name = "empty"
    start_urls: list[str] = []


def shown(line: str) -> dict[str, str]:
    """The components of a versions line, in their order."""
    head, _, body = line.partition("\n")
    assert head == "Versions:"
    found = ast.literal_eval(body)
    assert isinstance(found, dict)
    return found


def versions_records(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.getMessage().startswith("Versions:")]


@pytest.mark.parametrize(
    ("settings", "names"),
    [
        ({}, ["lxml", "libxml2", "cssselect", "parsel", "w3lib", "Python", "Platform"]),
        ({"LOG_VERSIONS": ["parsel", "w3lib"]}, ["parsel", "w3lib"]),
    ],
)
async def test_a_crawl_logs_the_versions_it_is_asked_for(
    caplog: pytest.LogCaptureFixture, settings: dict[str, Any], names: list[str]
) -> None:
    settings = {**settings, "FAIL_WHEN_NO_START_SUCCEEDS": False}
    with caplog.at_level(logging.INFO):
        await Crawler(Empty, settings).run()
    (line,) = versions_records(caplog)
    found = shown(line)
    assert list(found) == names
    assert found["parsel"] == version("parsel")


async def test_an_empty_list_logs_no_versions(caplog: pytest.LogCaptureFixture) -> None:
    settings = {"LOG_VERSIONS": [], "FAIL_WHEN_NO_START_SUCCEEDS": False}
    with caplog.at_level(logging.INFO):
        await Crawler(Empty, settings).run()
    assert versions_records(caplog) == []
    assert any("started (bot:" in r.getMessage() for r in caplog.records)


def test_versions_line_lays_the_components_out_as_scrapy_does() -> None:
    line = versions_line(["w3lib", "Platform", "parsel", "Python"])
    assert line is not None
    assert shown(line) == {
        "w3lib": version("w3lib"),
        "Platform": platform.platform(),
        "parsel": version("parsel"),
        "Python": component_version("Python"),
    }
    assert ",\n 'Platform': " in line  # one component a line once they do not fit one
    assert versions_line([]) is None


def test_the_special_names_and_a_missing_one() -> None:
    from lxml import etree

    assert component_version("libxml2") == ".".join(map(str, etree.LIBXML_VERSION))
    assert "\n" not in component_version("Python")
    assert component_version("no-such-distribution-xyz") == "not installed"
    assert component_version("pyOpenSSL")  # pyOpenSSL's, or Python's own OpenSSL's
