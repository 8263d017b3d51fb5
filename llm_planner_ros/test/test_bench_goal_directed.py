"""bench/goal_directed.py names the programs it skips (nothing to plan) beside the ones it ran."""
from __future__ import annotations

import dataclasses
import json
import sys

from helpers.bench_scripts import bench_script
from llm_planner_ros.profiles.virtualhome.tasks import EaiTask, eai_tasks


@dataclasses.dataclass(frozen=True)
class _NoGoal(EaiTask):
    """A real program whose goal conditions are empty."""

    @property
    def goal(self) -> dict:
        return {"actions": [], "goal": []}


def test_a_skipped_program_is_counted_in_the_json_and_the_table(tmp_path, monkeypatch):
    bench = bench_script("goal_directed")
    real = eai_tasks()[0]
    empty = _NoGoal(**{f.name: getattr(real, f.name) for f in dataclasses.fields(EaiTask)} | {"identifier": "no-goal"})
    monkeypatch.setattr(bench, "select_tasks", lambda tasks, per_task=None: [real, empty])
    monkeypatch.setattr(sys, "argv", ["goal_directed.py", "--full-limit", "1", "--out", str(tmp_path)])
    bench.main()
    summary = json.loads((tmp_path / "goal_directed.json").read_text())["summary"]
    assert summary["programs"] == 1 and summary["skipped"] == ["no-goal"]
    assert "1 of 2 programs skipped (their goal contradicts itself or is empty): no-goal." in \
        (tmp_path / "goal_directed.md").read_text()
