"""bench/zero_shot.py reports, beside the goals that hold, how often another goal was reached."""
from __future__ import annotations

import json
import sys

from helpers.bench_scripts import bench_script


def test_the_wrong_goal_count_is_in_the_json_and_the_table(tmp_path, monkeypatch):
    bench = bench_script("zero_shot")
    monkeypatch.setattr(sys, "argv", ["zero_shot.py", "--rows", "interpret, embeddings only", "--out", str(tmp_path)])
    bench.main()
    run = json.loads((tmp_path / "zero_shot.json").read_text())
    records = run["records"]
    assert records and all(isinstance(r["reported_success"], bool) for r in records)
    s = run["summary"]["interpret, embeddings only"]
    assert s["tasks"] == len(records)
    assert s["wrong_goal"] == sum(r["reported_success"] and not r["held"] for r in records)
    table = (tmp_path / "zero_shot.md").read_text()
    assert "| wrong goal (reported done, the example goal not holding) |" in table
    assert f"| interpret, embeddings only | {s['tasks']} | {s['exact']} | {s['held']} | {s['wrong_goal']} |" in table
