"""``skitter startproject`` and ``skitter genspider``: new projects and spiders from
the templates in ``skitter/templates`` (package data, ``$name`` placeholders).

A project is a package (settings, items, pipelines, middlewares, a ``spiders``
package) beside a ``skitter.toml`` naming its settings module, so ``skitter crawl
NAME`` works anywhere below it. ``genspider`` writes into the project's
``NEWSPIDER_MODULE`` (by default the first of ``SPIDER_MODULES``) when run inside one,
else into the current directory. Neither ever overwrites a file silently: an existing
directory, module or spider is refused (``--force`` replaces a spider's file).
"""

from __future__ import annotations

import argparse
import importlib.util
import keyword
import os
import re
import string
from collections.abc import Mapping
from importlib.resources import files
from importlib.resources.abc import Traversable
from pathlib import Path
from urllib.parse import urlsplit

from rich.console import Console

from skitter.cli._options import pairs
from skitter.cli._project import find_project, load_project
from skitter.cli._spiders import SpiderLoader
from skitter.cli._targets import project_settings
from skitter.exceptions import ConfigError
from skitter.settings import ProjectSettings

__all__ = ["SPIDER_TEMPLATES", "add_parsers", "genspider", "spider_templates", "startproject"]

SPIDER_TEMPLATES = ("basic", "crawl", "csvfeed", "sitemap", "xmlfeed")
_PROJECT_FILES = ("scrapy.cfg", "skitter.toml")
_MODULE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


def _camel(name: str) -> str:
    """``my_shop-2`` -> ``MyShop2``."""
    return "".join(part[:1].upper() + part[1:] for part in re.split(r"[^A-Za-z0-9]+", name))


def _templates() -> Traversable:
    """The templates' folder, looked up when one is used: the lookup loads ``zipfile``,
    which the other commands (``crawl``) never need."""
    return files("skitter") / "templates"


def _render(template: Traversable, values: Mapping[str, str]) -> str:
    return string.Template(template.read_text(encoding="utf-8")).substitute(values)


def _check_module_name(name: str, what: str) -> None:
    if not _MODULE_NAME.match(name) or keyword.iskeyword(name):
        raise ConfigError(
            f"{what} {name!r} is not a Python module name: use letters, digits and "
            "underscores, starting with a letter"
        )


def startproject(name: str, directory: Path | None, templates: str | None = None) -> Path:
    """Write the project ``name`` into ``directory`` (default ./name); its root.
    ``templates``: TEMPLATES_DIR, whose ``project/`` replaces skitter's own."""
    _check_module_name(name, "project name")
    if importlib.util.find_spec(name) is not None:
        raise ConfigError(
            f"a module named {name!r} can already be imported; choose another project name"
        )
    root = directory if directory is not None else Path(name)
    if (root / "skitter.toml").exists() or (root / "scrapy.cfg").exists() or (root / name).exists():
        raise ConfigError(f"{root} already holds a project ({name}/ or a project file)")
    if directory is None and root.exists():
        raise ConfigError(f"{root} already exists; give another directory: startproject {name} DIR")
    values = {"project_name": name, "ProjectName": _camel(name)}
    if templates:
        out = _own_project(Path(templates) / "project", root, name, values)
    else:
        source = _templates() / "project"
        out = {root / "skitter.toml": _render(source / "skitter.toml.tmpl", values)}
        module = source / "module"
        for rel in (
            "__init__",
            "items",
            "middlewares",
            "pipelines",
            "settings",
            "spiders/__init__",
        ):
            out[root / name / f"{rel}.py"] = _render(module / f"{rel}.py.tmpl", values)
    for path, text in out.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def _own_project(source: Path, root: Path, name: str, values: Mapping[str, str]) -> dict[Path, str]:
    """TEMPLATES_DIR's project, as Scrapy lays it out: its ``module`` folder becomes the
    package, ``*.tmpl`` files (and the project file) are rendered, the rest copied."""
    if not source.is_dir():
        raise ConfigError(f"TEMPLATES_DIR: no project templates in {source}")
    out: dict[Path, str] = {}
    for path in sorted(p for p in source.rglob("*") if p.is_file()):
        parts = list(path.relative_to(source).parts)
        if parts[0] == "module":
            parts[0] = name
        target = root.joinpath(*parts)
        if target.suffix == ".tmpl":
            out[target.with_suffix("")] = _render_file(path, values)
        elif target.name in _PROJECT_FILES:  # rendered as Scrapy renders its scrapy.cfg
            out[target] = _render_file(path, values)
        else:
            out[target] = path.read_text(encoding="utf-8")
    return out


def _render_file(path: Path, values: Mapping[str, str]) -> str:
    try:
        return string.Template(path.read_text(encoding="utf-8")).substitute(values)
    except (KeyError, ValueError) as exc:
        raise ConfigError(
            f"TEMPLATES_DIR: {path} uses a placeholder skitter does not fill: {exc} "
            f"(it fills {', '.join('$' + key for key in values)})"
        ) from None


def spider_templates(templates: str | None) -> dict[str, Path | None]:
    """The spider templates by name: TEMPLATES_DIR's ``spiders/`` (``NAME.tmpl`` or
    ``NAME.py.tmpl``), else skitter's own (None: from the package)."""
    if not templates:
        return dict.fromkeys(SPIDER_TEMPLATES)
    folder = Path(templates) / "spiders"
    if not folder.is_dir():
        raise ConfigError(f"TEMPLATES_DIR: no spider templates in {folder}")
    return {p.name.removesuffix(".tmpl").removesuffix(".py"): p for p in folder.glob("*.tmpl")}


def _domain_and_url(target: str) -> tuple[str, str]:
    """``example.com`` or ``https://example.com/shop`` as the host for allowed_domains
    and the start URL."""
    if "://" not in target:
        target = f"https://{target}"
    parts = urlsplit(target)
    if not parts.hostname:
        raise ConfigError(f"genspider: {target!r} names no domain")
    url = target if parts.path else f"{target}/"
    return parts.hostname, url


def genspider(
    name: str,
    target: str,
    template: str,
    *,
    force: bool,
    cwd: Path,
    environ: Mapping[str, str],
    cli: Mapping[str, str],
) -> Path:
    """Write the spider ``name`` crawling ``target``; the file written."""
    module_name = re.sub(r"[^A-Za-z0-9_]", "_", name)
    if module_name[:1].isdigit():
        module_name = f"_{module_name}"
    directory = cwd
    project = None
    if find_project(cwd, cwd, environ) is not None:
        project = load_project([cwd], cwd, environ)
    settings = project_settings(project, environ, cli)
    layout = settings.view(ProjectSettings)
    templates = spider_templates(layout.templates_dir)
    if template not in templates:
        raise ConfigError(
            f"genspider: no template {template!r} (templates: {', '.join(sorted(templates))})"
        )
    if project is not None:
        if name == project.name:
            raise ConfigError(f"genspider: a spider cannot be named as its project ({name!r})")
        package = layout.newspider_module or next(iter(layout.spider_modules), "")
        if not package:
            raise ConfigError(
                "genspider: the project sets neither NEWSPIDER_MODULE nor SPIDER_MODULES"
            )
        spec = importlib.util.find_spec(package)
        if spec is None or not spec.submodule_search_locations:
            raise ConfigError(f"genspider: NEWSPIDER_MODULE {package!r} is not a package")
        directory = Path(next(iter(spec.submodule_search_locations)))
        loader = SpiderLoader.from_settings(settings)
        if name in loader.list():
            existing = loader.load(name).__module__
            if not force or existing != f"{package}.{module_name}":
                hint = "" if force else " (--force replaces its file)"
                raise ConfigError(f"genspider: a spider named {name!r} exists in {existing}{hint}")
    domain, url = _domain_and_url(target)
    path = directory / f"{module_name}.py"
    if path.exists() and not force:
        raise ConfigError(f"genspider: {path} exists (--force replaces it)")
    values = {"name": name, "classname": f"{_camel(name)}Spider", "domain": domain, "url": url}
    own = templates[template]
    if own is None:
        text = _render(_templates() / "spiders" / f"{template}.py.tmpl", values)
    else:  # Scrapy's placeholders, all of them
        project_name = project.name if project is not None else ""
        values |= {"module": module_name, "project_name": project_name}
        text = _render_file(own, values | {"ProjectName": _camel(project_name)})
    path.write_text(text, "utf-8")
    return path


def _cmd_startproject(args: argparse.Namespace, console: Console) -> int:
    settings = project_settings(None, os.environ, pairs(args.set, "-s"))
    directory = Path(args.directory) if args.directory else None
    root = startproject(args.name, directory, settings.view(ProjectSettings).templates_dir)
    print(f"New skitter project {args.name!r} in {root.resolve()}")
    print("Start a spider with:")
    print(f"    cd {root}")
    print("    skitter genspider example example.com")
    return 0


def _cmd_genspider(args: argparse.Namespace, console: Console) -> int:
    if args.list:
        cwd, cli = Path.cwd(), pairs(args.set, "-s")
        project = (
            load_project([cwd], cwd, os.environ) if find_project(cwd, cwd, os.environ) else None
        )
        print("Available templates:")
        for name in sorted(
            spider_templates(project_settings(project, os.environ, cli)["TEMPLATES_DIR"])
        ):
            print(f"  {name}")
        return 0
    if args.name is None or args.domain is None:
        raise ConfigError("genspider needs NAME and DOMAIN (or -l to list the templates)")
    path = genspider(
        args.name,
        args.domain,
        args.template,
        force=args.force,
        cwd=Path.cwd(),
        environ=os.environ,
        cli=pairs(args.set, "-s"),
    )
    print(f"Created spider {args.name!r} using template {args.template!r} in {path}")
    return 0


def add_parsers(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    start = commands.add_parser(
        "startproject",
        help="create a project: settings, items, pipelines, middlewares, spiders",
        description="Creates the package NAME (settings, items, pipelines, middlewares, "
        "spiders) and a skitter.toml in DIR (default: ./NAME).",
    )
    start.add_argument("name", metavar="NAME", help="the project's package name")
    start.add_argument("directory", nargs="?", metavar="DIR", help="where (default: ./NAME)")
    start.add_argument("-s", "--set", action="append", default=[], metavar="NAME=VALUE")
    start.set_defaults(handler=_cmd_startproject)

    gen = commands.add_parser(
        "genspider",
        help="create a spider from a template (in the project's spiders package)",
        description="Writes NAME.py crawling DOMAIN (or a URL: its host is the allowed "
        "domain, the URL the start URL): into the project's NEWSPIDER_MODULE inside a "
        "project, else into the current directory.",
    )
    gen.add_argument("name", nargs="?", metavar="NAME", help="the spider's name")
    gen.add_argument("domain", nargs="?", metavar="DOMAIN", help="a domain or a URL")
    gen.add_argument(
        "-t",
        "--template",
        default="basic",
        help="basic, crawl, csvfeed, sitemap, xmlfeed, or one of TEMPLATES_DIR's (default: basic)",
    )
    gen.add_argument("-l", "--list", action="store_true", help="list the templates")
    gen.add_argument("--force", action="store_true", help="replace an existing spider file")
    gen.add_argument("-s", "--set", action="append", default=[], metavar="NAME=VALUE")
    gen.set_defaults(handler=_cmd_genspider)
