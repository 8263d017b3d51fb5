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


def test_a_goal_whose_conditions_were_given_up_counts_as_asked_as_the_product_asks_it():
    """The product asks again before it plans what is left of a goal whose conditions were given
    up, however sure it was of the whole goal; the honesty columns count such a goal as asked."""
    sure = {"confidence": 0.9, "reported_success": True, "goal_met": False, "absent": []}
    assert honesty([sure], 0.5)["wrong_unasked"] == 1.0
    h = honesty([dict(sure, given_up=["The floor is open. (no plan even alone)"])], 0.5)
    assert h["wrong_unasked"] == 0.0 and h["asked"] == 1.0 and h["wrong_never_asking"] == 1.0
