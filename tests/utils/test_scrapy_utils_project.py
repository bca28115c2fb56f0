"""``skitter.utils.project``: Scrapy's ``data_path``, where plug-ins keep their state."""

from __future__ import annotations

from pathlib import Path

import pytest

from skitter.exceptions import NotConfigured
from skitter.utils.project import data_path, inside_project, project_data_dir


def test_a_relative_path_goes_in_the_project_data_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "scrapy.cfg").write_text("[settings]\ndefault = shop.settings\n")
    (tmp_path / "shop" / "spiders").mkdir(parents=True)
    monkeypatch.chdir(tmp_path / "shop" / "spiders")  # below the project file
    assert inside_project()
    assert project_data_dir() == str(tmp_path.resolve() / ".scrapy")
    path = data_path("deltafetch", createdir=True)
    assert path == str(tmp_path.resolve() / ".scrapy" / "deltafetch")
    assert Path(path).is_dir()


def test_outside_a_project_it_is_the_current_folders_scrapy_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    for name in ("SCRAPY_SETTINGS_MODULE", "SKITTER_SETTINGS_MODULE"):
        monkeypatch.delenv(name, raising=False)
    assert not inside_project()
    with pytest.raises(NotConfigured):
        project_data_dir()
    assert data_path("state") == str(Path(".scrapy", "state"))  # relative, as in Scrapy
    assert not (tmp_path / ".scrapy").exists()  # made only when asked


def test_an_absolute_path_is_kept(tmp_path: Path) -> None:
    assert data_path(tmp_path / "db") == str(tmp_path / "db")
