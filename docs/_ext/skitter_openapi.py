"""``skitter-openapi MODULE``: an HTTP API page, rendered from an OpenAPI document.

``MODULE`` is ``dashboard`` (``skitter.dashboard._openapi``, served at
``/api/openapi.json``) or ``server`` (``skitter.server._openapi``, served at
``/openapi.json``). Each document is what its service serves and what the test suite
checks a live service against, so the page drawn from it at build time says what the
service does. Each operation becomes a
section (method, path, summary, parameters, body, responses); each schema a table of
its fields. A ``$ref`` to a schema the document does not define fails the build.
"""

from __future__ import annotations

import importlib
import json
import re
from typing import Any

from docutils import nodes
from docutils.parsers.rst import Directive
from sphinx.application import Sphinx

_REF = "#/components/schemas/"


def _type(schema: dict[str, Any], schemas: dict[str, Any]) -> str:
    """A schema as a reader would say it: ``Summary``, ``array of Outcome``, ``number | null``."""
    if "$ref" in schema:
        name = str(schema["$ref"]).removeprefix(_REF)
        if name not in schemas:
            raise ValueError(f"the OpenAPI document refers to an undefined schema {name}")
        return name
    if "oneOf" in schema:
        return " | ".join(_type(s, schemas) for s in schema["oneOf"])
    kind = schema.get("type", "any")
    if kind == "array":
        return f"array of {_type(schema.get('items', {}), schemas)}"
    text = " | ".join(kind) if isinstance(kind, list) else str(kind)
    if "enum" in schema:
        text += " (" + ", ".join(json.dumps(v) for v in schema["enum"]) + ")"
    if "minimum" in schema:
        text += f", >= {schema['minimum']}"
    return text


def _linked(text: str, prefix: str, schemas: dict[str, Any]) -> list[nodes.Node]:
    """``text`` with each schema name in it a link to that schema's section."""
    pattern = r"\b(" + "|".join(re.escape(name) for name in schemas) + r")\b"
    out: list[nodes.Node] = []
    for index, part in enumerate(re.split(pattern, text)):
        if index % 2:
            out.append(nodes.reference(part, part, refid=f"{prefix}-schema-{_ident(part)}"))
        elif part:
            out.append(nodes.Text(part))
    return out


Cell = str | list[nodes.Node]


def _table(headers: tuple[str, ...], rows: list[tuple[Cell, ...]]) -> nodes.table:
    table = nodes.table()
    group = nodes.tgroup(cols=len(headers))
    table += group
    for _ in headers:
        group += nodes.colspec(colwidth=1)
    head = nodes.thead()
    head += _row(headers)
    group += head
    body = nodes.tbody()
    for cells in rows:
        body += _row(cells)
    group += body
    return table


def _row(cells: tuple[Cell, ...]) -> nodes.row:
    row = nodes.row()
    for index, text in enumerate(cells):
        entry = nodes.entry()
        if isinstance(text, list):
            entry += nodes.paragraph("", "", *text)
        else:
            cell = nodes.literal(text, text) if index == 0 and text else nodes.Text(text)
            entry += nodes.paragraph("", "", cell)
        row += entry
    return row


def _section(title: str, ident: str) -> nodes.section:
    section = nodes.section(ids=[ident])
    section += nodes.title(title, title)
    return section


def _ident(text: str) -> str:
    kept = "".join(c if c.isalnum() else "-" for c in text.lower())
    return "-".join(part for part in kept.split("-") if part)


def _operation(
    prefix: str, method: str, path: str, op: dict[str, Any], schemas: dict[str, Any]
) -> Any:
    title = f"{method.upper()} {path}"
    section = _section(title, f"{prefix}-{_ident(title)}")
    section += nodes.paragraph(op["summary"], op["summary"])
    params: list[tuple[Cell, ...]] = [
        (p["name"], p["in"], _type(p["schema"], schemas), p.get("description", ""))
        for p in op.get("parameters", [])
    ]
    if params:
        section += _table(("parameter", "in", "type", "meaning"), params)
    body = op.get("requestBody", {}).get("content", {})
    for media, content in body.items():
        text = f"Body ({media}): {_type(content['schema'], schemas)}."
        section += nodes.paragraph(text, "", *_linked(text, prefix, schemas))
    responses: list[tuple[Cell, ...]] = []
    for status, response in sorted(op["responses"].items()):
        content = response.get("content", {})
        shape = ", ".join(f"{m}: {_type(c['schema'], schemas)}" for m, c in content.items())
        responses.append((status, response["description"], _linked(shape, prefix, schemas)))
    section += _table(("status", "meaning", "body"), responses)
    return section


def _schema(
    prefix: str, name: str, schema: dict[str, Any], schemas: dict[str, Any]
) -> nodes.section:
    section = _section(name, f"{prefix}-schema-{_ident(name)}")
    if "description" in schema:
        section += nodes.paragraph(schema["description"], schema["description"])
    required = set(schema.get("required", []))
    rows: list[tuple[Cell, ...]] = [
        (
            key,
            _linked(_type(field, schemas), prefix, schemas),
            "yes" if key in required else "no",
            str(field.get("description", "")),
        )
        for key, field in schema.get("properties", {}).items()
    ]
    if rows:
        section += _table(("field", "type", "always there", "meaning"), rows)
    return section


class OpenApiDirective(Directive):
    """A service's operations, then its schemas, from its ``openapi_document()``."""

    required_arguments = 1

    def run(self) -> list[nodes.Node]:
        prefix = self.arguments[0]
        if prefix not in ("dashboard", "server"):
            raise self.error(f"skitter-openapi takes dashboard or server, not {prefix!r}")
        module = importlib.import_module(f"skitter.{prefix}._openapi")
        document = module.openapi_document()
        schemas = document["components"]["schemas"]
        try:
            operations = _section("Operations", f"{prefix}-operations")
            for path, item in document["paths"].items():
                for method, op in item.items():
                    operations += _operation(prefix, method, path, op, schemas)
            shapes = _section("Schemas", f"{prefix}-schemas")
            for name, schema in schemas.items():
                shapes += _schema(prefix, name, schema, schemas)
        except (KeyError, ValueError) as exc:
            raise self.error(f"the dashboard's OpenAPI document: {exc!r}") from exc
        return [operations, shapes]


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_directive("skitter-openapi", OpenApiDirective)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
