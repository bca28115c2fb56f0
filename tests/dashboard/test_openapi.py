"""The dashboard's OpenAPI document: valid, complete, served, and true of a live dashboard.

The document is written by hand beside the routes, so these tests are what keeps it
honest: it must be a valid OpenAPI 3.1 document, name exactly the routes the application
registers, and describe what a live dashboard answers. For that last part schemathesis
generates requests from the document (valid bodies and parameters, and the project's
real name beside made-up ones) against a running crawl's dashboard on 127.0.0.1 and
checks each response's status code, content type and body against the document.
"""

from __future__ import annotations

import asyncio
import copy
from typing import Any

import pytest

from skitter.dashboard import Dashboard
from skitter.dashboard._openapi import openapi_document

from .conftest import running_crawl, tree_spider

TOKEN = "openapi-test-token-0123456789"
_METHODS = {"GET", "POST", "PUT", "PATCH", "DELETE"}


def _routed() -> set[tuple[str, str]]:
    app = Dashboard([], clock=lambda: 0.0).make_app()
    return {
        (route.method.lower(), route.resource.canonical)
        for route in app.router.routes()
        if route.method in _METHODS and route.resource is not None
    }


def _documented() -> set[tuple[str, str]]:
    paths = openapi_document()["paths"]
    return {(method, path) for path, item in paths.items() for method in item}


def test_every_route_is_documented_and_every_documented_path_is_routed() -> None:
    routed, documented = _routed(), _documented()
    assert routed - documented == set(), "routes missing from the OpenAPI document"
    assert documented - routed == set(), "documented operations that are not routed"
    assert len(routed) >= 20


def test_the_document_is_valid_openapi_3_1() -> None:
    from openapi_spec_validator import OpenAPIV31SpecValidator, validate

    document = openapi_document()
    validate(document, cls=OpenAPIV31SpecValidator)
    assert document["openapi"] == "3.1.0"


async def test_it_is_served_under_the_dashboards_token_rules(serve: Any) -> None:
    spider = tree_spider("served")
    async with running_crawl(serve, [spider], token=TOKEN) as run:
        url = run.url + "api/openapi.json"
        async with run.http.get(url) as refused:
            assert refused.status == 401
            assert "openapi" not in await refused.text()
        bearer = {"Authorization": f"Bearer {TOKEN}"}
        async with run.http.get(url, headers=bearer) as served:
            assert served.status == 200
            assert served.content_type == "application/json"
            assert await served.json() == openapi_document()


def _for_a_token(document: dict[str, Any], names: list[str]) -> dict[str, Any]:
    """The document as it applies to a dashboard with a token: the bearer is required
    everywhere but on the public operations (so schemathesis also checks that a request
    without it is refused), and the ``{name}`` of project paths is drawn from ``names``
    (random strings alone would only ever find "no such project")."""
    out = copy.deepcopy(document)
    out["security"] = [{"bearer": []}]
    for path, item in out["paths"].items():
        for operation in item.values():
            if operation.get("security") != []:
                operation["security"] = [{"bearer": []}]
        if not path.startswith(("/api/projects/{name}", "/projects/{name}")):
            continue
        for operation in item.values():
            for parameter in operation.get("parameters", []):
                if parameter["name"] == "name":
                    parameter["schema"] = {"type": "string", "enum": names}
    return out


def _check(operation: Any, mode: Any, base_url: str, skip: list[Any]) -> str | None:
    """Call ``operation`` with requests of ``mode``; its failures as text, or None."""
    import schemathesis
    from hypothesis import HealthCheck, given, settings
    from hypothesis.errors import Unsatisfiable

    headers = {"Authorization": f"Bearer {TOKEN}"}

    @given(case=operation.as_strategy(mode))
    @settings(
        max_examples=15,
        deadline=None,
        database=None,
        derandomize=True,
        suppress_health_check=list(HealthCheck),
    )
    def call(case: Any) -> None:
        case.call_and_validate(base_url=base_url, headers=headers, excluded_checks=skip)

    try:
        call()
    except Unsatisfiable:  # nothing in the operation to make invalid
        assert mode is schemathesis.GenerationMode.NEGATIVE
    except (Exception, BaseExceptionGroup) as exc:  # every operation's, not the first
        return f"{operation.label} ({mode.value}): {exc}"
    return None


def _run_schemathesis(document: dict[str, Any], base_url: str, mode_name: str) -> list[str]:
    """Call every operation with generated requests of a mode: valid ones (answered as
    documented, and accepted) or invalid ones (refused with a 4xx); the failures, as text."""
    import schemathesis
    from schemathesis.checks import negative_data_rejection

    schema = schemathesis.openapi.from_dict(document)
    mode = schemathesis.GenerationMode(mode_name)
    failures = []
    for result in schema.get_all_operations():
        operation = result.ok()
        # A GET has no body to get wrong: what negative mode makes of one is an unknown
        # query parameter (ignored, as by most servers) or no token, to which the page
        # answers with the way to /login; its statuses and bodies are still checked.
        skip = [negative_data_rejection] if operation.method.upper() == "GET" else []
        failure = _check(operation, mode, base_url, skip)
        if failure is not None:
            failures.append(failure)
    return failures


# Slow: hundreds of generated requests, each checked against the document. One test per
# mode, so that two workers share them.
@pytest.mark.slow
@pytest.mark.timeout(180)
@pytest.mark.parametrize("mode", ["positive", "negative"])
async def test_a_live_dashboard_answers_as_the_document_says(serve: Any, mode: str) -> None:
    # No MAX_RATE: under one, a valid body (an unlimited rate, or a rate above it) is
    # refused with 400, which the document says but schemathesis would count against it.
    spider = tree_spider("live", ["/flaky/one", "/broken/two"])
    async with running_crawl(serve, [spider], token=TOKEN) as run:
        document = _for_a_token(openapi_document(), ["live", "no-such-project"])
        failures = await asyncio.to_thread(_run_schemathesis, document, run.url.rstrip("/"), mode)
    assert failures == []
