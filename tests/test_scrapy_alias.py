"""The Scrapy alias: ``import scrapy`` is skitter, only when asked, and says so.

Each case runs in a fresh interpreter: the alias changes a whole process's imports.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from skitter.scrapy_alias import enabled_by_env


def _run(
    tmp_path: Path, code: str, *launcher: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    script = tmp_path / "prog.py"
    script.write_text(textwrap.dedent(code), encoding="utf-8")
    command = [sys.executable, *launcher, str(script)]
    return subprocess.run(
        command, capture_output=True, text=True, cwd=tmp_path, env=env or dict(os.environ)
    )


def _fake_scrapy(tmp_path: Path) -> dict[str, str]:
    """An installed "real Scrapy" on PYTHONPATH: a package that says who it is."""
    site = tmp_path / "site"
    (site / "scrapy").mkdir(parents=True)
    (site / "scrapy" / "__init__.py").write_text("REAL = True\n", encoding="utf-8")
    return dict(os.environ, PYTHONPATH=str(site))


def test_scrapy_names_are_skitter_modules_and_the_alias_says_so(tmp_path: Path) -> None:
    result = _run(
        tmp_path,
        """
        import scrapy, scrapy.http, skitter, skitter.http
        from scrapy.http import Request
        from scrapy.spiders import CrawlSpider
        import skitter.spiders
        assert scrapy is skitter and scrapy.http is skitter.http
        assert Request is skitter.http.Request
        assert CrawlSpider is skitter.spiders.CrawlSpider
        assert skitter.http.__spec__.name == "skitter.http"  # skitter's own module, untouched
        from skitter.scrapy_alias import installed
        print("ok", installed())
        """,
        "-m",
        "skitter.scrapy_alias",
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["ok", "True"]
    assert "Scrapy alias on: 'import scrapy' loads skitter" in result.stderr


def test_skitter_records_carry_scrapy_names_while_the_alias_is_on(tmp_path: Path) -> None:
    result = _run(
        tmp_path,
        """
        import logging
        from skitter.scrapy_alias import install, uninstall
        names = []
        class Keep(logging.Handler):
            def emit(self, record):
                names.append(record.name)
        logging.getLogger().addHandler(Keep())
        install()
        for name in ("skitter", "skitter.downloadermiddlewares.retry", "skitterish", "other"):
            logging.getLogger(name).warning("x")
        uninstall()
        logging.getLogger("skitter.x").warning("x")
        print(" ".join(names))
        """,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == [
        "scrapy",
        "scrapy.downloadermiddlewares.retry",
        "skitterish",
        "other",
        "skitter.x",
    ]


def test_a_module_skitter_lacks_is_missing_not_faked(tmp_path: Path) -> None:
    result = _run(
        tmp_path,
        """
        import sys
        try:
            import scrapy.core.engine
        except ModuleNotFoundError as exc:
            print(exc.name, "|", exc)
        print("scrapy.core.engine" in sys.modules)
        """,
        "-m",
        "skitter.scrapy_alias",
    )
    assert result.returncode == 0, result.stderr
    first, second = result.stdout.splitlines()
    assert first.startswith("scrapy.core.engine | ") and "'skitter.core.engine'" in first
    assert second == "False"


def test_an_installed_scrapy_is_shadowed_and_named(tmp_path: Path) -> None:
    env = _fake_scrapy(tmp_path)
    result = _run(
        tmp_path,
        "import scrapy; print(hasattr(scrapy, 'REAL'), scrapy.__name__)",
        "-m",
        "skitter.scrapy_alias",
        env=env,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["False", "skitter"]
    assert f"the installed Scrapy ({tmp_path / 'site' / 'scrapy' / '__init__.py'})" in (
        result.stderr
    )


def test_without_the_alias_an_installed_scrapy_is_untouched(tmp_path: Path) -> None:
    result = _run(tmp_path, "import scrapy; print(scrapy.REAL)", env=_fake_scrapy(tmp_path))
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["True"]
    assert "alias" not in result.stderr


def test_refused_once_the_real_scrapy_is_imported(tmp_path: Path) -> None:
    result = _run(
        tmp_path,
        """
        import scrapy
        from skitter.scrapy_alias import install
        try:
            install()
        except RuntimeError as exc:
            print(exc)
        """,
        env=_fake_scrapy(tmp_path),
    )
    assert result.returncode == 0, result.stderr
    assert "the real Scrapy is already imported" in result.stdout


def test_the_skitter_command_takes_the_flag_and_the_variable(tmp_path: Path) -> None:
    env = dict(os.environ, SKITTER_SCRAPY_ALIAS="1")
    for extra, environ in ((["--scrapy-alias"], None), ([], env)):
        result = subprocess.run(
            [sys.executable, "-m", "skitter", *extra, "list"],
            capture_output=True,
            text=True,
            cwd=tmp_path,
            env=environ or dict(os.environ),
        )
        assert "Scrapy alias on" in result.stderr, result.stderr


@pytest.mark.parametrize(
    ("value", "on"), [("", False), ("0", False), ("off", False), ("1", True), ("yes", True)]
)
def test_the_variable_reads_on_and_off(value: str, on: bool) -> None:
    assert enabled_by_env({"SKITTER_SCRAPY_ALIAS": value}) is on


def test_the_variable_refuses_what_it_cannot_read() -> None:
    with pytest.raises(ValueError, match="SKITTER_SCRAPY_ALIAS='maybe'"):
        enabled_by_env({"SKITTER_SCRAPY_ALIAS": "maybe"})
