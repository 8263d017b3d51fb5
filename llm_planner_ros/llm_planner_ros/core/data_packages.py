"""Where bootstrap installs the packages read only as data (requirements-data.txt), apart from the
environment, since they are never imported."""
from __future__ import annotations

import os
import sys
from pathlib import Path


def data_packages_dir() -> Path:
    """Bootstrap's pip --target folder (``.venv/eai-eval``, named for its first package);
    ``LLM_PLANNER_EAI_EVAL`` overrides it."""
    return Path(os.environ.get("LLM_PLANNER_EAI_EVAL", Path(sys.prefix) / "eai-eval"))
