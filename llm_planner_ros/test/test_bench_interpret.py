"""bench/interpret.py counts every program: one whose run raises is a failed record, not the end of the run."""
from __future__ import annotations

from helpers.bench_scripts import bench_script
from llm_planner_ros.evaluation.honesty import honesty


def _bench():
    return bench_script("interpret")


def test_a_program_whose_run_raises_is_a_failed_record_of_its_row():
    bench = _bench()
    # the service cannot be built (a setting out of its bounds): the program's run raises
    bench.SETTINGS["interpret_confidence"] = "7"
    record = bench._run(("interpret", "interpret", None, 0))
    assert record["row"] == "interpret" and not record["goal_met"] and not record["executed"]
    assert record["stage"].startswith("error: ") and "interpret_confidence" in record["detail"]
    assert record["truth"] and record["interpreted"] == []
    # it counts in the honesty columns too: neither reached nor a wrong goal
    h = honesty([record], 0.5)
    assert h["reached_unasked"] == 0.0 and h["wrong_never_asking"] == 0.0
    assert bench.prf([record])["recall"] == 0.0
