"""Where bootstrap installs the packages read only as data (requirements-data.txt), apart from the
environment, since they are never imported."""
from __future__ import annotations

import os
import sys
from pathlib import Path


def data_packages_dir() -> Path:
    """Bootstrap's pip --target folder, ``.venv/data-packages``; ``LLM_PLANNER_DATA_PACKAGES``
    overrides it."""
    return Path(os.environ.get("LLM_PLANNER_DATA_PACKAGES", Path(sys.prefix) / "data-packages"))
