"""skitter.exporters: Scrapy's exporter API (Scrapy's own tests run through
scripts/scrapy_tests.py --module test_exporters); the behaviours a project relies on."""

from __future__ import annotations

import io
import json
import logging
import pickle

import pytest

from skitter.exporters import (
    BaseItemExporter,
    CsvItemExporter,
    JsonItemExporter,
    JsonLinesItemExporter,
    PickleItemExporter,
    PythonItemExporter,
    XmlItemExporter,
)
from skitter.item import Field, Item


class Product(Item):
    name = Field()
    price = Field(serializer=lambda value: f"{value:.2f}")


def run(exporter: BaseItemExporter, *items: object) -> None:
    exporter.start_exporting()
    for item in items:
        exporter.export_item(item)
    exporter.finish_exporting()


def test_unknown_options_are_refused() -> None:
    with pytest.raises(TypeError, match="Unexpected options: fields_to_expor"):
        PythonItemExporter(fields_to_expor=["a"])


def test_fields_to_export_choose_and_rename_with_field_serializers() -> None:
    exporter = PythonItemExporter(fields_to_export={"price": "cost"})
    assert exporter.export_item(Product(name="a", price=2)) == {"cost": "2.00"}


def test_export_empty_fields_fills_missing_declared_fields() -> None:
    exporter = PythonItemExporter(export_empty_fields=True)
    assert exporter.export_item(Product(name="a")) == {"name": "a", "price": None}


def test_json_array_one_line_and_indented() -> None:
    out = io.BytesIO()
    run(JsonItemExporter(out), {"a": 1}, {"a": 2})
    assert out.getvalue() == b'[{"a": 1},{"a": 2}]'
    out = io.BytesIO()
    run(JsonItemExporter(out, indent=0), {"a": 1}, {"a": 2})
    assert out.getvalue() == b'[\n{"a": 1},\n{"a": 2}\n]'


def test_json_lines_passes_encoder_options_and_refuses_unknown_ones() -> None:
    out = io.BytesIO()
    run(JsonLinesItemExporter(out, sort_keys=True), {"b": 1, "a": "é"})
    assert out.getvalue() == b'{"a": "\\u00e9", "b": 1}\n'
    with pytest.raises(TypeError):
        JsonLinesItemExporter(io.BytesIO(), no_such_option=True)


def test_csv_header_joined_lists_and_dropped_fields_warning(caplog) -> None:
    out = io.BytesIO()
    with caplog.at_level(logging.WARNING):
        run(CsvItemExporter(out), {"a": ["x", "y"]}, {"a": "z", "b": 1})
    assert out.getvalue() == b'a\r\n"x,y"\r\nz\r\n'
    assert "dropped fields ['b']" in caplog.text


def test_xml_nested_values() -> None:
    out = io.BytesIO()
    run(XmlItemExporter(out), {"a": [1, 2], "b": {"c": "d"}})
    assert out.getvalue() == (
        b'<?xml version="1.0" encoding="utf-8"?>\n'
        b"<items><item><a><value>1</value><value>2</value></a><b><c>d</c></b></item></items>"
    )


def test_pickle_one_dict_per_item() -> None:
    out = io.BytesIO()
    run(PickleItemExporter(out), {"a": 1}, {"a": 2})
    out.seek(0)
    assert [pickle.load(out), pickle.load(out)] == [{"a": 1}, {"a": 2}]


def test_json_of_values_json_lacks() -> None:
    from datetime import date
    from decimal import Decimal

    out = io.BytesIO()
    run(JsonLinesItemExporter(out), {"d": date(2020, 1, 2), "p": Decimal("1.5"), "s": {1}})
    assert json.loads(out.getvalue()) == {"d": "2020-01-02", "p": "1.5", "s": [1]}
