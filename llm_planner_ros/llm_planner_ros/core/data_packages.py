"""Where bootstrap installs the packages read only as data (requirements-data.txt: EAI's BEHAVIOR
annotations, WordNet's database), apart from the environment, since they are never imported."""
from __future__ import annotations

import os
import sys
from pathlib import Path


def data_packages_dir() -> Path:
    """``.venv/eai-eval`` (bootstrap's pip --target); ``LLM_PLANNER_EAI_EVAL`` overrides it."""
    return Path(os.environ.get("LLM_PLANNER_EAI_EVAL", Path(sys.prefix) / "eai-eval"))
