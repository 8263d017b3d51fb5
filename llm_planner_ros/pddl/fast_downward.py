"""Fast Downward, the classical planner, through the driver that PyPI ``up-fast-downward`` bundles.

One call per problem in a scratch folder, bounded by a time limit. No solution is an outcome
with a reason (unsolvable, time-out, error), never an exception.
"""
from __future__ import annotations

import importlib
import importlib.util
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Literal, Optional

Status = Literal["solved", "unsolvable", "timeout", "error"]

# Exit codes of the Fast Downward driver (driver/returncodes.py)
_UNSOLVABLE = {10, 11, 12}   # 12: search space exhausted by an incomplete search
_TIMEOUT = {21, 23, 24}


@dataclass(frozen=True)
class SolveOutcome:
    status: Status
    actions: tuple[tuple[str, ...], ...] = ()
    seconds: float = 0.0
    detail: str = ""
    stats: dict = field(default_factory=dict)


@cache
def _downward_dir() -> Path:
    """The Fast Downward build inside up-fast-downward, found without importing the package (its
    unified-planning plug-in takes over a second to import)."""
    spec = importlib.util.find_spec("up_fast_downward")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("up-fast-downward is not installed; run scripts/bootstrap.sh")
    return Path(list(spec.submodule_search_locations)[0]) / "downward"


@cache
def search_options(alias: str) -> tuple[str, ...]:
    """The search configuration the Fast Downward driver names ``alias`` (its driver/aliases.py);
    a configuration written out (``astar(ff())``) is passed as it is."""
    if "(" in alias:
        return ("--search", alias)
    folder = _downward_dir() / "driver"
    spec = importlib.util.spec_from_file_location("_fd_driver", folder / "__init__.py",
                                                  submodule_search_locations=[str(folder)])
    assert spec is not None and spec.loader is not None, folder
    package = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("_fd_driver", package)
    spec.loader.exec_module(package)
    aliases = importlib.import_module("_fd_driver.aliases").ALIASES
    if alias not in aliases:
        raise ValueError(f"unknown Fast Downward alias {alias!r}; known: {', '.join(sorted(aliases))}")
    return tuple(aliases[alias])


def solve(domain_text: str, problem_text: str, time_limit_s: float = 10.0, alias: str = "lama-first",
          invariants: bool = True) -> SolveOutcome:
    """Plan with Fast Downward; the plan is a tuple of ground actions ``("walk_to", "character_1", ...)``.

    Runs the driver's two components directly (translator, then search), which saves the
    driver's own start-up of about a second per call here. ``invariants``: the translator's
    invariant synthesis (mutex groups; multi-valued variables), most of its time on a small
    problem; without it every fact is a binary variable."""
    t0 = time.perf_counter()
    bin_dir = _downward_dir() / "builds" / "release" / "bin"
    env = dict(os.environ, PYTHONPATH=str(bin_dir) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    with tempfile.TemporaryDirectory(prefix="llm_planner_fd_") as tmp:
        domain_file, problem, sas, plan = (os.path.join(tmp, n) for n in
                                           ("domain.pddl", "problem.pddl", "output.sas", "plan"))
        for path, text in ((domain_file, domain_text), (problem, problem_text)):
            with open(path, "w") as f:
                f.write(text)
        try:
            options = [] if invariants else ["--invariant-generation-max-candidates", "0"]
            done = subprocess.run([sys.executable, "-S", "-m", "fast_downward.translate", domain_file, problem,
                                   "--sas-file", sas, *options], cwd=tmp, capture_output=True, text=True,
                                  timeout=time_limit_s, env=env)
            translated = time.perf_counter() - t0
            if done.returncode != 0:
                return _failed(done, time.perf_counter() - t0, "translator", time_limit_s)
            with open(sas) as f:
                done = subprocess.run([str(bin_dir / "downward"), *search_options(alias),
                                       "--internal-plan-file", plan], stdin=f, cwd=tmp, capture_output=True,
                                      text=True, timeout=max(0.1, time_limit_s - translated))
        except subprocess.TimeoutExpired:
            return SolveOutcome("timeout", seconds=time.perf_counter() - t0, detail=f"no plan within {time_limit_s:g}s")
        seconds = time.perf_counter() - t0
        stats = {"translate_s": round(translated, 4), "expanded": _stat(done.stdout, "Expanded ")}
        if done.returncode == 0 and os.path.exists(plan):
            with open(plan) as f:
                actions = tuple(tuple(line.strip().strip("()").split()) for line in f
                                if line.strip() and not line.startswith(";"))
            return SolveOutcome("solved", actions, seconds, stats=stats)
        return _failed(done, seconds, "search", time_limit_s, stats)


def _failed(done: subprocess.CompletedProcess, seconds: float, component: str, limit: float,
            stats: Optional[dict] = None) -> SolveOutcome:
    if done.returncode in _UNSOLVABLE:
        return SolveOutcome("unsolvable", seconds=seconds, stats=stats or {},
                            detail="the planner proved that no plan reaches the goal from this state")
    if done.returncode in _TIMEOUT:
        return SolveOutcome("timeout", seconds=seconds, stats=stats or {}, detail=f"no plan within {limit:g}s")
    tail = (done.stderr.strip() or done.stdout.strip()).splitlines()[-2:]
    return SolveOutcome("error", seconds=seconds, stats=stats or {},
                        detail=f"Fast Downward's {component} exited {done.returncode}: {' / '.join(tail)}")


def _stat(text: str, key: str) -> int:
    for line in text.splitlines():
        if key in line:
            try:
                return int(line.split(key)[1].split()[0])
            except (IndexError, ValueError):
                return -1
    return -1
