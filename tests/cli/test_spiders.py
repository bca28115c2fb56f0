"""``SpiderLoader``: a project's spiders by name, from the modules of SPIDER_MODULES."""

from __future__ import annotations

import logging
import textwrap
import uuid
from pathlib import Path

import pytest

from skitter.cli._spiders import SpiderLoader
from skitter.cli._targets import named_spider
from skitter.exceptions import ConfigError

SPIDER = """
from skitter import Spider


class {cls}(Spider):
    name = "{name}"
"""


def package(root: Path, files: dict[str, str]) -> str:
    """A fresh package (a new name each time: imports are cached per process)."""
    name = f"proj_{uuid.uuid4().hex[:8]}"
    for rel, text in {"__init__.py": "", "spiders/__init__.py": "", **files}.items():
        path = root / name / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return name


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.syspath_prepend(str(tmp_path))
    return tmp_path


def test_spiders_are_found_by_name_in_packages_walked(root: Path) -> None:
    name = package(
        root,
        {
            "spiders/a.py": SPIDER.format(cls="A", name="alpha"),
            "spiders/sub/__init__.py": "",
            "spiders/sub/b.py": SPIDER.format(cls="B", name="beta")
            + "\nfrom skitter import Spider as Base\n\nclass Nameless(Base):\n    pass\n",
            "more.py": SPIDER.format(cls="C", name="gamma"),
        },
    )
    loader = SpiderLoader.from_settings({"SPIDER_MODULES": f"{name}.spiders, {name}.more"})
    assert loader.list() == ["alpha", "beta", "gamma"]  # a spider without a name is none
    assert loader.load("beta").__module__ == f"{name}.spiders.sub.b"
    with pytest.raises(ConfigError, match=r"no spider named 'delta' .*alpha, beta, gamma"):
        loader.load("delta")
    assert SpiderLoader([]).list() == []


def test_a_name_used_twice_is_an_error_naming_both(root: Path) -> None:
    name = package(
        root,
        {
            "spiders/a.py": SPIDER.format(cls="A", name="same"),
            "spiders/b.py": SPIDER.format(cls="B", name="same"),
        },
    )
    with pytest.raises(ConfigError) as raised:
        SpiderLoader([f"{name}.spiders"])
    assert f"{name}.spiders.a.A and {name}.spiders.b.B" in str(raised.value)


def test_a_broken_module_is_an_error_unless_warn_only(
    root: Path, caplog: pytest.LogCaptureFixture
) -> None:
    name = package(
        root,
        {
            "spiders/ok.py": SPIDER.format(cls="Ok", name="ok"),
            "spiders/broken.py": "import no_such_module_anywhere\n",
        },
    )
    with pytest.raises(ConfigError, match=f"{name}.spiders.broken: ModuleNotFoundError"):
        SpiderLoader([f"{name}.spiders"])
    with caplog.at_level(logging.WARNING):
        loader = SpiderLoader.from_settings(
            {"SPIDER_MODULES": [f"{name}.spiders"], "SPIDER_LOADER_WARN_ONLY": True}
        )
    assert loader.list() == ["ok"]
    assert "broken" in caplog.text


def test_named_spider_finds_the_project_around_a_directory(root: Path) -> None:
    name = package(
        root,
        {
            "settings.py": "SPIDER_MODULES = ['{pkg}.spiders']\n",
            "spiders/a.py": SPIDER.format(cls="A", name="alpha"),
        },
    )
    settings = root / name / "settings.py"
    settings.write_text(settings.read_text().replace("{pkg}", name))
    (root / "skitter.toml").write_text(f'[settings]\ndefault = "{name}.settings"\n')
    project, cls = named_spider("alpha", {}, {}, root / name / "spiders")
    assert (project.root, cls.__name__) == (root, "A")
    with pytest.raises(ConfigError, match="no spider named 'beta'"):
        named_spider("beta", {}, {}, root)
    with pytest.raises(ConfigError, match="no project found"):
        named_spider("alpha", {}, {}, root.parent)
