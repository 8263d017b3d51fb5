"""Sphinx configuration (MyST Markdown). `make docs` builds it with warnings as errors;
`rosdoc2 build --package-path .` builds it too (rosdoc2.yaml points it here)."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent / "_ext"))

project = "llm_planner_ros"
author = "llm_planner_ros contributors"
extensions = ["myst_parser", "parameter_reference", "interface_reference", "sphinx.ext.autodoc"]
autodoc_member_order = "bysource"
source_suffix = {".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "_ext"]
myst_heading_anchors = 3
html_theme = "alabaster"
html_static_path = ["_static"]
html_css_files = ["custom.css"]   # wide tables scroll, long code lines wrap
