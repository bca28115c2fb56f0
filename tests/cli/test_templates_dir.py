"""TEMPLATES_DIR: a Scrapy project's own startproject and genspider templates, laid out
as Scrapy's (``project/module/...``, ``spiders/NAME.tmpl``, ``$placeholders``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from skitter.cli._generate import genspider, spider_templates, startproject
from skitter.exceptions import ConfigError

from .conftest import Cli


def templates(root: Path) -> Path:
    base = root / "templates"
    (base / "project" / "module" / "spiders").mkdir(parents=True)
    (base / "project" / "scrapy.cfg").write_text("[settings]\ndefault = ${project_name}.settings\n")
    module = base / "project" / "module"
    (module / "__init__.py").write_text("")
    (module / "settings.py.tmpl").write_text(
        'BOT_NAME = "$project_name"\nSPIDER_MODULES = ["$project_name.spiders"]\n'
        'NEWSPIDER_MODULE = "$project_name.spiders"\n'
    )
    (module / "spiders" / "__init__.py").write_text("")
    (base / "spiders").mkdir()
    (base / "spiders" / "company.tmpl").write_text(
        "import scrapy\n\n\nclass $classname(scrapy.Spider):\n"
        '    """$ProjectName: $module"""\n    name = "$name"\n'
        '    allowed_domains = ["$domain"]\n    start_urls = ["$url"]\n'
    )
    return base


def test_genspider_uses_the_folders_templates(tmp_path: Path) -> None:
    base = templates(tmp_path)
    assert set(spider_templates(str(base))) == {"company"}
    path = genspider(
        "shop",
        "example.com",
        "company",
        force=False,
        cwd=tmp_path,
        environ={},
        cli={"TEMPLATES_DIR": str(base)},
    )
    text = path.read_text()
    assert "class ShopSpider(scrapy.Spider):" in text and '"""' + ": shop" in text
    assert 'start_urls = ["https://example.com/"]' in text
    with pytest.raises(ConfigError, match=r"no template 'basic' \(templates: company\)"):
        genspider(
            "x", "a.com", "basic", force=False, cwd=tmp_path, environ={},
            cli={"TEMPLATES_DIR": str(base)},
        )  # fmt: skip


def test_startproject_lays_out_the_folders_project(tmp_path: Path) -> None:
    base = templates(tmp_path)
    root = startproject("acme", tmp_path / "acme", str(base))
    assert (root / "scrapy.cfg").read_text() == "[settings]\ndefault = acme.settings\n"
    assert 'BOT_NAME = "acme"' in (root / "acme" / "settings.py").read_text()
    assert (root / "acme" / "spiders" / "__init__.py").exists()


def test_a_missing_folder_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no spider templates"):
        spider_templates(str(tmp_path / "nowhere"))


async def test_the_commands_read_it_from_the_project_and_the_command_line(
    cli: Cli, tmp_path: Path
) -> None:
    base = templates(tmp_path)
    run = await cli("startproject", "acme", "-s", f"TEMPLATES_DIR={base}")
    assert run.code == 0, run.err
    settings = tmp_path / "acme" / "acme" / "settings.py"
    settings.write_text(settings.read_text() + f"TEMPLATES_DIR = {str(base)!r}\n")
    run = await cli("genspider", "-l", cwd=tmp_path / "acme")
    assert "company" in run.out and "basic" not in run.out, run.err
    run = await cli("genspider", "-t", "company", "shop", "shop.test", cwd=tmp_path / "acme")
    assert run.code == 0, run.err
    assert (tmp_path / "acme" / "acme" / "spiders" / "shop.py").exists()
