"""The benchmark scripts (bench/*.py: scripts, not a package) loaded as modules, for their tests."""
from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

BENCH = Path(__file__).resolve().parents[3] / "bench"


def bench_script(name: str) -> ModuleType:
    """``bench/<name>.py``, loaded afresh: a test that changes its module-level settings changes
    only its own copy."""
    spec = importlib.util.spec_from_file_location(f"bench_{name}", BENCH / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
