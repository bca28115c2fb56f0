"""``ProjectStore``: the projects deployed to the service, each in versions.

A version is what ``addversion.json`` received, kept as it came, under
``DATA/projects/<project>/<version>/``:

- an **egg** (what ``scrapyd-deploy`` builds with ``setup.py bdist_egg``) or a **wheel**:
  a zip the run imports from (it goes first on ``PYTHONPATH``, as Scrapyd does with
  eggs); the settings module is the one its ``entry_points.txt`` names under
  ``[scrapy]`` (or ``[skitter]``) ``settings = pkg.settings``, which the run gets as
  ``SKITTER_SETTINGS_MODULE``;
- a **directory** (a project on this machine, copied at deploy time): the run starts in
  the copy, which holds the project file (``skitter.toml`` or ``scrapy.cfg``).

At deploy time the version's spiders are listed by running ``skitter list`` as its runs
will run (``listspiders.json`` answers from that list, and a version whose spiders
cannot be listed is refused then, with the command's own error, rather than at its
first run). The latest version is the one deployed last; runs use it unless told.
"""

from __future__ import annotations

import asyncio
import configparser
import io
import os
import re
import shutil
import sys
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path

import orjson

from skitter.exceptions import ConfigError

__all__ = ["Deployed", "ProjectStore", "check_name"]

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.\-]*")
_META = "meta.json"
_LIST_TIMEOUT = 120.0


def check_name(what: str, value: str) -> str:
    """``value`` if it can name a project, version, spider or job (it becomes a path)."""
    if not _NAME.fullmatch(value) or len(value) > 200:
        raise ConfigError(
            f"{what} {value!r} is not a valid name: letters, digits, '_', '.', '-', "
            "starting with a letter or digit"
        )
    return value


@dataclass(frozen=True, slots=True)
class Deployed:
    """One version of a project, and how to run it."""

    project: str
    version: str
    kind: str  # egg, wheel, directory
    path: Path  # the egg or wheel file, or the directory
    settings_module: str | None
    spiders: tuple[str, ...]
    deployed_at: float

    def environment(self, base: dict[str, str]) -> dict[str, str]:
        """The environment of a process that runs this version."""
        env = {k: v for k, v in base.items() if not k.startswith(("SKITTER_", "SCRAPY_"))}
        if self.kind != "directory":
            paths = [str(self.path), *filter(None, [base.get("PYTHONPATH")])]
            env["PYTHONPATH"] = os.pathsep.join(paths)
        if self.settings_module:
            env["SKITTER_SETTINGS_MODULE"] = self.settings_module
        return env

    def workdir(self, fallback: Path) -> Path:
        return self.path if self.kind == "directory" else fallback


class ProjectStore:
    """The projects under ``root``."""

    def __init__(self, root: Path) -> None:
        self.root = root
        root.mkdir(parents=True, exist_ok=True)

    def projects(self) -> list[str]:
        return sorted(p.name for p in self.root.iterdir() if p.is_dir() and self.versions(p.name))

    def versions(self, project: str) -> list[str]:
        """Oldest first: the last is the one runs use by default."""
        return [d.version for d in self._deployed(project)]

    def get(self, project: str, version: str | None = None) -> Deployed:
        deployed = self._deployed(project)
        if not deployed:
            raise LookupError(f"project {project!r} not found")
        if version is None:
            return deployed[-1]
        for item in deployed:
            if item.version == version:
                return item
        raise LookupError(f"version {version!r} of project {project!r} not found")

    def _deployed(self, project: str) -> list[Deployed]:
        base = self.root / project
        if not _NAME.fullmatch(project) or not base.is_dir():
            return []
        found = [_read_meta(project, d) for d in base.iterdir() if (d / _META).is_file()]
        return sorted(found, key=lambda d: (d.deployed_at, d.version))

    async def add_archive(self, project: str, version: str, data: bytes) -> Deployed:
        """Deploy an egg or a wheel (told apart by what the zip holds)."""
        kind, module = _inspect_archive(data)
        target = self._fresh(project, version)
        path = target / f"project.{'egg' if kind == 'egg' else 'whl'}"
        path.write_bytes(data)
        return await self._finish(project, version, kind, path, module)

    async def add_directory(self, project: str, version: str, source: Path) -> Deployed:
        """Deploy a copy of the project directory ``source`` (on this machine)."""
        _check_project_dir(source)
        target = self._fresh(project, version)
        tree = target / "tree"
        ignore = shutil.ignore_patterns(".venv", ".git", "__pycache__", "*.pyc")
        await asyncio.to_thread(shutil.copytree, source, tree, ignore=ignore)
        return await self._finish(project, version, "directory", tree, None)

    def delete_version(self, project: str, version: str) -> None:
        self.get(project, version)  # LookupError when absent
        shutil.rmtree(self.root / project / version)
        if not self.versions(project):
            shutil.rmtree(self.root / project)

    def delete_project(self, project: str) -> None:
        if not self.versions(project):
            raise LookupError(f"project {project!r} not found")
        shutil.rmtree(self.root / project)

    def _fresh(self, project: str, version: str) -> Path:
        target = self.root / check_name("project", project) / check_name("version", version)
        if target.exists():  # deploying a version again replaces it, as in Scrapyd
            shutil.rmtree(target)
        target.mkdir(parents=True)
        return target

    async def _finish(
        self, project: str, version: str, kind: str, path: Path, module: str | None
    ) -> Deployed:
        deployed = Deployed(project, version, kind, path, module, (), time.time())
        try:
            spiders = await list_spiders(deployed)
        except ConfigError:
            shutil.rmtree(path.parent)
            if not self.versions(project):
                shutil.rmtree(self.root / project, ignore_errors=True)
            raise
        deployed = Deployed(project, version, kind, path, module, spiders, deployed.deployed_at)
        meta = {
            "kind": kind,
            "file": path.name,
            "settings_module": module,
            "spiders": list(spiders),
            "deployed_at": deployed.deployed_at,
        }
        (path.parent / _META).write_bytes(orjson.dumps(meta))
        return deployed


def _check_project_dir(source: Path) -> None:
    if not source.is_dir():
        raise ConfigError(f"no such directory to deploy: {source}")
    if not any((source / name).is_file() for name in ("skitter.toml", "scrapy.cfg")):
        raise ConfigError(f"{source} holds no project file (skitter.toml or scrapy.cfg)")


def _read_meta(project: str, directory: Path) -> Deployed:
    meta = orjson.loads((directory / _META).read_bytes())
    return Deployed(
        project,
        directory.name,
        meta["kind"],
        directory / meta["file"],
        meta["settings_module"],
        tuple(meta["spiders"]),
        meta["deployed_at"],
    )


def _inspect_archive(data: bytes) -> tuple[str, str]:
    """(``egg`` or ``wheel``, the settings module its entry points name)."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except zipfile.BadZipFile:
        raise ConfigError("the uploaded file is not an egg or a wheel (not a zip file)") from None
    names = archive.namelist()
    points = [
        n for n in names if n.endswith(("EGG-INFO/entry_points.txt", ".dist-info/entry_points.txt"))
    ]
    if any(n.startswith("EGG-INFO/") for n in names):
        kind = "egg"
    elif any(".dist-info/" in n for n in names):
        kind = "wheel"
    else:
        raise ConfigError("the uploaded file is not an egg or a wheel (no EGG-INFO or dist-info)")
    module = _settings_module(archive.read(points[0]).decode()) if points else None
    if module is None:
        raise ConfigError(
            f"the {kind} names no settings module: its entry points need "
            "[scrapy] (or [skitter]) settings = PACKAGE.settings, as scrapyd-deploy's "
            "setup.py writes from scrapy.cfg"
        )
    return kind, module


def _settings_module(entry_points: str) -> str | None:
    parser = configparser.ConfigParser()
    try:
        parser.read_string(entry_points)
    except configparser.Error:
        return None
    for section in ("skitter", "scrapy"):
        if parser.has_option(section, "settings"):
            return parser.get(section, "settings").strip() or None
    return None


async def list_spiders(deployed: Deployed) -> tuple[str, ...]:
    """The spiders of a version, by running ``skitter list`` as its runs run."""
    scratch = deployed.path.parent / "scratch"
    scratch.mkdir(exist_ok=True)
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "skitter",
        "list",
        cwd=deployed.workdir(scratch),
        env=deployed.environment(dict(os.environ)),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        out, err = await asyncio.wait_for(proc.communicate(), _LIST_TIMEOUT)
    except TimeoutError:
        proc.kill()
        await proc.wait()
        raise ConfigError(f"listing the spiders took more than {_LIST_TIMEOUT:.0f} s") from None
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    if proc.returncode != 0:
        why = err.decode("utf-8", "replace").strip()[-2000:]
        raise ConfigError(f"the spiders of this version cannot be listed: {why}")
    return tuple(line.strip() for line in out.decode().splitlines() if line.strip())
