"""Sphinx configuration of the Calibration Atlas documentation (``make docs``).

Markdown pages through MyST, docstrings through numpydoc, the PyData theme. The API
reference is generated at build time from the packages of ``core`` (``_ext/api_faces.py``),
so a new package face is documented without editing these pages. Nothing is fetched from the
network: there is no intersphinx, and references to third-party types stay plain text
(``nitpick_ignore_regex``).
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "_ext"))
sys.path.insert(0, str(HERE.parent))

import core  # noqa: E402  (the checkout's package, after the path is set)

project = "Calibration Atlas"
author = "the Calibration Atlas authors"
copyright = "2026, the Calibration Atlas authors"  # noqa: A001 — Sphinx's name
version = release = core.__version__

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.mathjax",
    "numpydoc",
    "api_faces",
]
source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
exclude_patterns = ["_build", "Thumbs.db", ".DS_Store"]
root_doc = "index"

# -- MyST ---------------------------------------------------------------------------------------
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence", "deflist"]
myst_heading_anchors = 3
suppress_warnings = ["myst.header"]  # pages moved from the README start at level-2 sections

# -- autodoc and numpydoc ------------------------------------------------------------------------
autodoc_member_order = "bysource"  # a face's __all__ order
autodoc_typehints = "none"  # types are written in the numpydoc sections
autodoc_default_options = {"members": True, "show-inheritance": False}
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False
numpydoc_attributes_as_param_list = True

# -- cross-references: nitpicky, third-party types left as text ----------------------------------
nitpicky = True
nitpick_ignore_regex = [
    # numpy, pandas, SciPy, scikit-learn, Dask, plotly, pyarrow and the standard library are
    # not documented here (no intersphinx: the build needs no network).
    ("py:.*", r"(numpy|np|pandas|pd|scipy|sklearn|dask|distributed|plotly|pyarrow|"
              r"concurrent|collections|pathlib|typing|argparse|datetime|threading|io|"
              r"os|json|enum|dataclasses|contextlib|random)(\..*)?"),
]

# -- HTML -----------------------------------------------------------------------------------------
html_theme = "pydata_sphinx_theme"
html_title = "Calibration Atlas"
html_logo = "../dashboard/assets/logo.png"
html_static_path = []
html_theme_options = {
    "navigation_depth": 3,
    "show_toc_level": 2,
    "secondary_sidebar_items": ["page-toc"],
    "footer_start": ["copyright"],
    "footer_end": ["sphinx-version"],
}
html_sidebars = {"**": ["sidebar-nav-bs"]}
html_show_sourcelink = False
