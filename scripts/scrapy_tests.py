"""Scrapy's own unit tests, run against skitter through the Scrapy alias.

    python scripts/scrapy_tests.py                       # every module, one table
    python scripts/scrapy_tests.py --module test_http_headers --module test_link
    python scripts/scrapy_tests.py --failures            # also: failures by exception type
    python scripts/scrapy_tests.py --baseline            # refresh the Scrapy column (once)

It takes Scrapy's sdist from PyPI (``pip download``, cached in ``--cache``), extracts its
``tests/``, ``conftest.py`` and ``pyproject.toml`` (Scrapy's pytest configuration: markers,
warnings as errors) and runs the modules below under pytest in a subprocess, with
``python -m skitter.scrapy_alias`` so that ``import scrapy`` is skitter. Scrapy's own
package is never extracted: nothing but skitter can answer ``import scrapy``.

Scrapy's ``conftest.py`` imports Scrapy's engine and Twisted's mock servers, so the skitter
run uses a conftest of its own with the same ``--reactor`` option and marker skips
(``requires_reactor`` is skipped, as in Scrapy's no-reactor mode) and Scrapy's HTTP
``mockserver`` fixture (its Twisted server in a child process, with the alias on there
too); a test that needs another of Scrapy's fixtures fails on skitter, and is counted so.

The Scrapy column comes from ``scrapy_tests_baseline.json`` beside this file: the tests
that pass on Scrapy 2.18.0 itself in its no-reactor mode (``-p no:twisted --reactor=none``,
Scrapy's own conftest), made once by ``--baseline`` in a venv of its own. A test counts
for skitter only if it passes there too; the score is the share of those.

Test-only dependencies of Scrapy's tests (Twisted, testfixtures, ...) are installed with
``pip --target`` into the cache and put on the skitter run's PYTHONPATH, so the venv that
runs this script is not changed.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from collections import Counter, defaultdict
from pathlib import Path

SCRAPY_VERSION = "2.18.0"
HERE = Path(__file__).resolve().parent
BASELINE = HERE / "scrapy_tests_baseline.json"
DEFAULT_CACHE = HERE.parent / ".scrapy-tests"

#: Scrapy's test modules for the spider author's API (a package: its __init__.py).
MODULES = [
    "test_http_request",
    "test_http_request_form",
    "test_http_request_json",
    "test_http_response",
    "test_http_response_text",
    "test_http_headers",
    "test_http_cookies",
    "test_request_dict",
    "test_responsetypes",
    "test_utils_curl",
    "test_selector",
    "test_link",
    "test_linkextractors",
    "test_item",
    "test_loader",
    "test_spider",
    "test_spider_crawl",
    "test_spider_sitemap",
    "test_spider_start",
    "test_utils_iterators",
    "test_utils_sitemap",
    "test_toplevel",
    "test_utils_request",
    "test_utils_response",
    "test_utils_url",
    "test_utils_project",
    "test_downloadermiddleware",
    "test_downloadermiddleware_cookies",
    "test_downloadermiddleware_defaultheaders",
    "test_downloadermiddleware_downloadtimeout",
    "test_downloadermiddleware_httpauth",
    "test_downloadermiddleware_httpcache",
    "test_downloadermiddleware_httpcompression",
    "test_downloadermiddleware_httpproxy",
    "test_downloadermiddleware_offsite",
    "test_downloadermiddleware_redirect",
    "test_downloadermiddleware_redirect_metarefresh",
    "test_downloadermiddleware_retry",
    "test_downloadermiddleware_robotstxt",
    "test_downloadermiddleware_stats",
    "test_downloadermiddleware_useragent",
    "test_spidermiddleware",
    "test_spidermiddleware_base",
    "test_spidermiddleware_depth",
    "test_spidermiddleware_httperror",
    "test_spidermiddleware_metacopy",
    "test_spidermiddleware_output_chain",
    "test_spidermiddleware_process_start",
    "test_spidermiddleware_referer",
    "test_spidermiddleware_start",
    "test_spidermiddleware_urllength",
    "test_settings",
    "test_middleware",
    "test_addons",
    "test_contracts",
    "test_dupefilters",
    "test_robotstxt_interface",
    "test_exporters",
    "test_feedexport",
    "test_feedexport_batch",
    "test_feedexport_postprocess",
    "test_feedexport_storages",
    "test_feedexport_uri_params",
    "test_pipelines",
    "test_pipeline_crawl",
    "test_pipeline_media",
    "test_pipeline_files",
    "test_pipeline_images",
    "test_crawler",
    "test_crawl",
    "test_request_cb_kwargs",
    "test_request_attribute_binding",
    "test_signals",
    "test_stats",
    "test_closespider",
    "test_extension_throttle",
]

#: What Scrapy's tests import besides Scrapy (its tox.ini test requirements, trimmed to
#: what these modules use); the Scrapy venv also gets Scrapy itself.
TEST_DEPS = [
    "pytest>=8.4",
    "pytest-asyncio",
    "pytest-timeout",
    "testfixtures",
    "pexpect>=4.8",
    "twisted",
    "attrs",
    "pyftpdlib>=2.0.1",
    "sybil>=1.3",
    "pygments",
    "cryptography",
    "robotexclusionrulesparser",
]

#: The skitter run's conftest: Scrapy's options and marker skips, none of its machinery.
SKITTER_CONFTEST = '''\
"""Written by skitter's scripts/scrapy_tests.py in place of Scrapy's conftest.py."""
from importlib.util import find_spec

import pytest


def pytest_addoption(parser):
    parser.addoption("--reactor", default="none", choices=["asyncio", "default", "none"])


@pytest.fixture(scope="session")
def reactor_pytest(request):
    return request.config.getoption("--reactor")


def pytest_runtest_setup(item):
    reactor = item.config.getoption("--reactor")
    if item.get_closest_marker("requires_reactor") and reactor == "none":
        pytest.skip("needs a Twisted reactor")
    if item.get_closest_marker("only_not_asyncio") and reactor in {"asyncio", "none"}:
        pytest.skip("only without asyncio")
    for module in ("uvloop", "botocore", "boto3"):
        if item.get_closest_marker(f"requires_{module}") and find_spec(module) is None:
            pytest.skip(f"{module} is not installed")
    if item.get_closest_marker("requires_mitmproxy"):
        pytest.skip("mitmdump is not used here")


@pytest.fixture(scope="session")
def mockserver():
    """Scrapy's HTTP mock server (Twisted, in a child process on 127.0.0.1), as Scrapy's
    conftest starts it; the child runs with the alias on too, since the server's module
    imports ``scrapy`` helpers (skitter's, then)."""
    from tests.keys import generate_keys  # the server's localhost.crt, as Scrapy's makes it
    from tests.mockserver.http import MockServer

    generate_keys()

    class AliasedMockServer(MockServer):
        module_name = "skitter.scrapy_alias"

        def get_additional_args(self):
            return ["-m", MockServer.module_name, *super().get_additional_args()]

    with AliasedMockServer() as server:
        yield server


_MISSING = object()


@pytest.fixture(autouse=True)
def _spider_classes_untouched():
    """Put back the ``custom_settings`` of the spider base classes after each test.

    Scrapy's shared spider tests (``test_update_settings``) assign made-up settings
    (``TEST1``...) to ``custom_settings`` of the base class under test and leave them
    there. Scrapy ignores unknown settings, so the leak is harmless there; skitter
    refuses them, so every later test that builds a crawler would fail for a test it
    did not run, and a module's score would depend on the modules run before it."""
    from scrapy import spiders

    classes = [spiders.Spider, spiders.CrawlSpider, spiders.XMLFeedSpider,
               spiders.CSVFeedSpider, spiders.SitemapSpider]
    saved = [(cls, vars(cls).get("custom_settings", _MISSING)) for cls in classes]
    yield
    for cls, value in saved:
        if value is _MISSING:
            if "custom_settings" in vars(cls):
                delattr(cls, "custom_settings")
        else:
            cls.custom_settings = value
'''

#: A pytest plugin that writes each test's outcome (and a failure's exception type).
OUTCOMES_PLUGIN = '''\
"""Written by skitter's scripts/scrapy_tests.py: one JSON line per test or broken module."""
import json
import os

_out = None
_seen = {}


def pytest_configure(config):
    global _out
    _out = open(os.environ["SCRAPY_TESTS_OUTCOMES"], "w", encoding="utf-8")


def pytest_unconfigure(config):
    _out.close()


def _error(report, collecting=False):
    crash = getattr(report.longrepr, "reprcrash", None)
    text = crash.message if crash is not None else str(report.longrepr)
    first = (text.strip().splitlines() or [""])[0]
    if collecting:  # the import error itself is the last "E   " line of the traceback
        errors = [ln[4:] for ln in str(report.longrepr).splitlines() if ln.startswith("E   ")]
        first = errors[-1] if errors else first
    kind = first.split(":", 1)[0] if ":" in first else first
    return kind.strip()[:80] or "?", first[:300]


def pytest_collectreport(report):
    if report.failed:
        kind, message = _error(report, collecting=True)
        _write(report.nodeid, "collect-error", kind, message)


def pytest_runtest_logreport(report):
    state = _seen.setdefault(report.nodeid, {"outcome": "passed", "kind": "", "message": ""})
    if report.failed and state["outcome"] != "failed":
        state["outcome"] = "failed"
        state["kind"], state["message"] = _error(report)
    elif report.skipped and state["outcome"] == "passed":
        state["outcome"] = "skipped"
    if report.when == "teardown":
        _write(report.nodeid, state["outcome"], state["kind"], state["message"])


def _write(nodeid, outcome, kind, message):
    record = {"id": nodeid, "outcome": outcome, "kind": kind, "message": message}
    _out.write(json.dumps(record) + "\\n")
    _out.flush()
'''


def module_of(nodeid: str) -> str:
    """``tests/test_x.py::T::t`` -> ``test_x``; a package's tests -> the package's name."""
    path = nodeid.split("::", 1)[0]
    parts = path.split("/")
    name = parts[1] if len(parts) > 1 else parts[0]
    return name.removesuffix(".py")


def sdist(cache: Path) -> Path:
    """Scrapy's sdist, downloaded once into the cache."""
    target = cache / "sdist"
    found = sorted(target.glob(f"scrapy-{SCRAPY_VERSION}.tar.gz"))
    if found:
        return found[0]
    target.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "download",
            f"scrapy=={SCRAPY_VERSION}",
            "--no-deps",
            "--no-binary",
            ":all:",
            "-d",
            str(target),
            "-q",
        ],
        check=True,
    )
    return next(target.glob(f"scrapy-{SCRAPY_VERSION}.tar.gz"))


def test_tree(cache: Path, which: str) -> Path:
    """Scrapy's tests/, pyproject.toml and conftest.py (its own, or skitter's) in a folder;
    the runner's own files in it are written again on every run."""
    tree = cache / f"tree-{which}"
    if not (tree / "tests").is_dir():
        _extract(cache, tree)
    if which == "skitter":
        (tree / "conftest.py").write_text(SKITTER_CONFTEST, encoding="utf-8")
    (tree / "_scrapy_tests_outcomes.py").write_text(OUTCOMES_PLUGIN, encoding="utf-8")
    return tree


def _extract(cache: Path, tree: Path) -> None:
    root = f"scrapy-{SCRAPY_VERSION}/"
    wanted = ("tests/", "conftest.py", "pyproject.toml")
    staging = Path(tempfile.mkdtemp(dir=cache))
    with tarfile.open(sdist(cache)) as archive:
        members = [
            m
            for m in archive.getmembers()
            if m.name.startswith(root) and m.name[len(root) :].startswith(wanted)
        ]
        archive.extractall(staging, members=members, filter="data")
    shutil.rmtree(tree, ignore_errors=True)
    (staging / root.rstrip("/")).rename(tree)
    shutil.rmtree(staging)


def test_deps(cache: Path) -> Path:
    """The test-only dependencies, installed once with ``pip --target`` into the cache."""
    target = cache / "deps"
    marker = target / ".installed"
    wanted = "\n".join(TEST_DEPS)
    if not marker.exists() or marker.read_text(encoding="utf-8") != wanted:
        subprocess.run(
            [sys.executable, "-m", "pip", "install", "-q", "--target", str(target), *TEST_DEPS],
            check=True,
        )
        marker.write_text(wanted, encoding="utf-8")
    return target


def run_pytest(
    python: str, tree: Path, modules: list[str], env: dict[str, str], alias: bool
) -> list[dict[str, str]]:
    """Run the modules under pytest in a subprocess; its outcomes, one dict per test."""
    paths = [f"tests/{m}" if (tree / "tests" / m).is_dir() else f"tests/{m}.py" for m in modules]
    with tempfile.NamedTemporaryFile(suffix=".jsonl", delete=False) as handle:
        outcomes = Path(handle.name)
    launcher = ["-m", "skitter.scrapy_alias", "-m", "pytest"] if alias else ["-m", "pytest"]
    command = [
        python,
        *launcher,
        "-p",
        "no:twisted",
        "-p",
        "no:cacheprovider",
        "-p",
        "_scrapy_tests_outcomes",
        "--reactor=none",
        "-q",
        "--no-header",
        "--continue-on-collection-errors",
        "-o",
        "addopts=",
        "-o",
        "asyncio_default_fixture_loop_scope=function",
        "--timeout=120",
        "-W",
        "ignore::pytest.PytestConfigWarning",
        *paths,
    ]
    env = {
        **env,
        "SCRAPY_TESTS_OUTCOMES": str(outcomes),
        "PYTHONPATH": os.pathsep.join(filter(None, [str(tree), env.get("PYTHONPATH")])),
    }
    subprocess.run(
        command,
        cwd=tree,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        check=False,
    )
    lines = outcomes.read_text(encoding="utf-8").splitlines()
    outcomes.unlink()
    return [json.loads(line) for line in lines]


def refresh_baseline(cache: Path, scrapy_python: str, modules: list[str]) -> None:
    """Run the modules on the real Scrapy and store the tests that pass there."""
    tree = test_tree(cache, "scrapy")
    results = run_pytest(scrapy_python, tree, modules, dict(os.environ), alias=False)
    stored = json.loads(BASELINE.read_text()) if BASELINE.exists() else {"modules": {}}
    passing: dict[str, list[str]] = {m: [] for m in modules}
    for record in results:
        if record["outcome"] == "passed":
            passing.setdefault(module_of(record["id"]), []).append(record["id"])
    stored["scrapy"] = SCRAPY_VERSION
    stored["mode"] = "pytest -p no:twisted --reactor=none (Scrapy's no-reactor mode)"
    stored["modules"].update({m: sorted(ids) for m, ids in passing.items()})
    BASELINE.write_text(json.dumps(stored, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"{sum(len(v) for v in passing.values())} tests pass on Scrapy; wrote {BASELINE}")


def report(
    modules: list[str],
    baseline: dict[str, list[str]],
    results: list[dict[str, str]],
    failures: bool,
) -> tuple[int, int]:
    """Print the table (and failures by exception type); returns (skitter, scrapy) totals."""
    passed = {r["id"] for r in results if r["outcome"] == "passed"}
    broken = {module_of(r["id"]): r for r in results if r["outcome"] == "collect-error"}
    total_scrapy = total_skitter = 0
    print(f"{'module':48} {'Scrapy':>7} {'skitter':>8}")
    for module in modules:
        expected = set(baseline.get(module, []))
        got = len(expected & passed)
        total_scrapy += len(expected)
        total_skitter += got
        note = f"  import: {broken[module]['message'][:70]}" if module in broken else ""
        print(f"{module:48} {len(expected):7} {got:8}{note}")
    share = 100 * total_skitter / total_scrapy if total_scrapy else 0.0
    print(f"{'total':48} {total_scrapy:7} {total_skitter:8}  ({share:.1f} %)")
    if failures:
        print_failures(baseline, results)
    return total_skitter, total_scrapy


def print_failures(baseline: dict[str, list[str]], results: list[dict[str, str]]) -> None:
    """Tests that pass on Scrapy but not on skitter, grouped by exception type."""
    expected = {test for ids in baseline.values() for test in ids}
    groups: dict[str, list[dict[str, str]]] = defaultdict(list)
    for record in results:
        if record["outcome"] == "collect-error" or (
            record["id"] in expected and record["outcome"] != "passed"
        ):
            groups[record["kind"] or record["outcome"]].append(record)
    print("\nfailures by exception type (tests that pass on Scrapy; import errors per module):")
    for kind, records in sorted(groups.items(), key=lambda kv: -len(kv[1])):
        print(f"\n{len(records):5}  {kind}")
        messages = Counter(r["message"][:150] for r in records)
        for message, count in messages.most_common(8):
            example = next(r["id"] for r in records if r["message"][:150] == message)
            print(f"       {count:4} x {message}\n              e.g. {example}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--module",
        action="append",
        default=[],
        help="run only this module (repeatable; a prefix of the name works)",
    )
    parser.add_argument(
        "--failures", action="store_true", help="list the failures grouped by exception type"
    )
    parser.add_argument(
        "--cache",
        type=Path,
        default=DEFAULT_CACHE,
        help=f"where the sdist, trees and test deps go (default {DEFAULT_CACHE})",
    )
    parser.add_argument(
        "--python",
        default=sys.executable,
        help="the interpreter with skitter installed (default: this one)",
    )
    parser.add_argument(
        "--baseline",
        action="store_true",
        help="run the modules on real Scrapy instead, and store what passes",
    )
    parser.add_argument(
        "--scrapy-python",
        default="/work/scrapy-venv/bin/python",
        help=f"an interpreter with Scrapy {SCRAPY_VERSION} and TEST_DEPS (for --baseline)",
    )
    parser.add_argument(
        "--min-share",
        type=float,
        default=0.0,
        help="exit 1 when skitter passes less than this percentage",
    )
    args = parser.parse_args()
    modules = [m for m in MODULES if not args.module or any(m.startswith(p) for p in args.module)]
    if not modules:
        parser.error(f"no module matches {args.module}")
    args.cache.mkdir(parents=True, exist_ok=True)
    if args.baseline:
        refresh_baseline(args.cache, args.scrapy_python, modules)
        return 0
    baseline = json.loads(BASELINE.read_text(encoding="utf-8"))["modules"]
    env = dict(os.environ, PYTHONPATH=str(test_deps(args.cache)))
    results = run_pytest(args.python, test_tree(args.cache, "skitter"), modules, env, alias=True)
    got, expected = report(modules, baseline, results, args.failures)
    return 1 if expected and 100 * got / expected < args.min_share else 0


if __name__ == "__main__":
    sys.exit(main())
