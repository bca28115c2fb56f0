"""``skitter.utils.engine``: Scrapy's engine status report, with skitter's figures."""

from __future__ import annotations

from types import SimpleNamespace

from skitter.utils.engine import format_engine_status, get_engine_status


def test_the_report_names_each_figure_and_survives_a_broken_one() -> None:
    project = SimpleNamespace(name="books", in_flight=2, start_exhausted=True, closing=None)
    engine = SimpleNamespace(in_flight=3, projects=[project])
    status = dict(get_engine_status(engine))
    assert status["engine.in_flight"] == 3
    assert status["books.in_flight"] == 2
    assert status["books.closed"] == "AttributeError (exception)"  # not set: reported
    assert format_engine_status(engine).startswith("Execution engine status\n\n")
