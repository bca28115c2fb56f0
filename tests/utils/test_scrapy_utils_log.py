"""``skitter.utils.log``: Scrapy's ``configure_logging`` and its one root handler."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import pytest

from skitter.utils.log import (
    _uninstall_scrapy_root_handler,
    configure_logging,
    get_scrapy_root_handler,
)


@pytest.fixture(autouse=True)
def _no_handler_left() -> Iterator[None]:
    level = logging.root.level
    yield
    _uninstall_scrapy_root_handler()
    logging.captureWarnings(False)
    logging.root.setLevel(level)


def test_one_root_handler_at_a_time_filtering_by_log_level(tmp_path: Path) -> None:
    assert get_scrapy_root_handler() is None
    log_file = tmp_path / "log.txt"
    configure_logging({"LOG_FILE": str(log_file), "LOG_LEVEL": "INFO"})
    first = get_scrapy_root_handler()
    assert first is not None and first.level == logging.INFO
    configure_logging({"LOG_FILE": str(log_file), "LOG_LEVEL": "WARNING"})
    second = get_scrapy_root_handler()
    assert second is not first and first not in logging.root.handlers
    logging.getLogger("skitter.test").info("not this one")
    logging.getLogger("skitter.test").warning("this one")
    text = log_file.read_text(encoding="utf-8")
    assert "this one" in text and "not this one" not in text


def test_without_a_root_handler_only_warnings_are_routed() -> None:
    configure_logging(install_root_handler=False)
    assert get_scrapy_root_handler() is None
