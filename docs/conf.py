"""Sphinx configuration of skitter's documentation.

Sphinx, not MkDocs: its ``-W`` build turns every broken link, missing page and unknown
name into an error, autodoc reads the public API from the code, and a small extension
(``_ext/skitter_reference.py``) builds the settings, command-line and signals reference
from the registries the code itself uses, so the reference cannot drift. Pages are
Markdown (MyST), the README's format. Build: ``python -m sphinx -W docs docs/_build/html``.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent / "_ext"))

from skitter import __version__

project = "skitter"
author = "skitter contributors"
copyright = "skitter contributors"
release = version = __version__

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "skitter_reference",
    "skitter_openapi",
]
source_suffix = {".md": "markdown"}
exclude_patterns = ["_build", "_ext", "Thumbs.db", ".DS_Store"]
myst_heading_anchors = 3
myst_enable_extensions = ["colon_fence", "deflist"]
suppress_warnings: list[str] = []

autodoc_member_order = "bysource"
autodoc_typehints = "signature"
autodoc_default_options = {"members": True, "show-inheritance": True}

html_theme = "furo"
html_title = f"skitter {release}"
html_static_path: list[str] = []
