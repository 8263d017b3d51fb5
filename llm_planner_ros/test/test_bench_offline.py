"""The offline readers of a bench/interpret.py run (confidence_bound.py, goal_judgement.py) read a
whole run: its oracle row (no confidence: nothing asks) and goals of unknown confidence."""
from __future__ import annotations

import json
from pathlib import Path

from helpers.bench_scripts import bench_script


def _bench(name: str):
    return bench_script(name)


def _run(tmp_path: Path) -> Path:
    def interpreted(task, goal, met, confidence):
        return {"row": "interpret", "task": task, "interpreted": [goal], "goal_met": met, "confidence": confidence,
                "reported_success": True, "absent": []}

    def oracle(task, goal, met):   # as bench/interpret.py records the oracle row: no confidence, no report
        return {"row": "oracle goal, class level", "task": task, "interpreted": [goal], "goal_met": met}
    records = [interpreted("Watch TV", "(on tv)", True, 0.7), interpreted("Watch TV", "(open fridge)", False, None),
               interpreted("Drink", "(open fridge)", False, 0.2), oracle("Watch TV", "(on tv)", True),
               oracle("Drink", "(on tv)", False)]
    path = tmp_path / "interpret.json"
    path.write_text(json.dumps({"summary": {"interpret": {}, "oracle goal, class level": {}}, "records": records}))
    return path


def test_the_confidence_bound_reads_a_run_with_its_oracle_row(tmp_path, capsys, monkeypatch):
    path = _run(tmp_path)
    monkeypatch.setattr("sys.argv", ["confidence_bound.py", str(path)])
    _bench("confidence_bound").main()
    lines = capsys.readouterr().out.splitlines()[2:]
    assert [line.split("|")[1].strip() for line in lines] == ["interpret"] * 3
    assert all(line.split("|")[2].strip() == "3" for line in lines)   # the goal of unknown confidence counts


def test_the_goal_judgement_reads_a_run_with_its_oracle_row_and_an_unknown_confidence(tmp_path, capsys, monkeypatch):
    path = _run(tmp_path)
    monkeypatch.setattr("sys.argv", ["goal_judgement.py", str(path), "--model", "smollm2-135m"])
    _bench("goal_judgement").main()
    lines = capsys.readouterr().out.splitlines()[2:]
    assert len(lines) == 1
    row = lines[0].split("|")
    # every goal counts; the shipped confidence's AUROC over the goals whose confidence is known, as the run's
    assert row[1].strip() == "interpret" and row[2:4] == [" 3 ", " 1 "] and row[4].strip() == "1.000"
