"""Every genspider template gives a spider that imports, of the right kind and name,
and every startproject file is valid Python (in-process: fast)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from skitter.cli._generate import SPIDER_TEMPLATES, genspider, startproject
from skitter.cli._loader import load_spiders
from skitter.spiders import CrawlSpider, CSVFeedSpider, SitemapSpider, Spider, XMLFeedSpider

KINDS = {
    "basic": Spider,
    "crawl": CrawlSpider,
    "sitemap": SitemapSpider,
    "xmlfeed": XMLFeedSpider,
    "csvfeed": CSVFeedSpider,
}


@pytest.mark.parametrize("template", SPIDER_TEMPLATES)
def test_each_template_gives_a_spider(tmp_path: Path, template: str) -> None:
    path = genspider(
        f"my-{template}",
        "http://127.0.0.1:8000/shop/",
        template,
        force=False,
        cwd=tmp_path,
        environ={},
        cli={},
    )
    assert path == tmp_path / f"my_{template}.py"
    [cls] = load_spiders(str(path))
    assert issubclass(cls, KINDS[template])
    assert cls.name == f"my-{template}"
    assert cls.__name__ == f"My{template.capitalize()}Spider"
    assert cls.allowed_domains == ["127.0.0.1"]


def test_a_bare_domain_starts_at_its_https_root(tmp_path: Path) -> None:
    path = genspider("ex", "example.com", "basic", force=False, cwd=tmp_path, environ={}, cli={})
    [cls] = load_spiders(str(path))
    assert (cls.allowed_domains, cls.start_urls) == (["example.com"], ["https://example.com/"])


def test_the_project_files_are_python(tmp_path: Path) -> None:
    root = startproject("my_shop", tmp_path / "here")
    assert 'default = "my_shop.settings"' in (root / "skitter.toml").read_text()
    for path in (root / "my_shop").rglob("*.py"):
        ast.parse(path.read_text(), str(path))
    assert "class MyShopPipeline" in (root / "my_shop" / "pipelines.py").read_text()
