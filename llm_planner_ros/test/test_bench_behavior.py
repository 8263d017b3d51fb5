"""bench/behavior.py counts every goal: one whose planning raises is a failure in every column."""
from __future__ import annotations

import dataclasses

from helpers.bench_scripts import bench_script
from llm_planner_ros.profiles.behavior import problem
from llm_planner_ros.wiring import ServiceConfig, compose

BATHTUB = "cleaning_bathtub_0_Pomaria_0_int_0_2021-09-10_16-22-10"


def _bench():
    return bench_script("behavior")


def test_a_goal_that_raises_stays_in_every_denominator_of_its_row(smollm2, embedder, demos):
    bench = _bench()
    holder: dict = {}
    service = compose(ServiceConfig.from_flat({"interpret_confirm": "never"}), llm=smollm2, embedder=embedder,
                      demos=demos, executor_factory=lambda scene, task: holder["executor"],
                      robot_world=lambda executes: holder["executor"])
    row = bench.ROWS["interpret"]
    tub = problem(BATHTUB)
    ran = dict(bench.run_goal(service, holder, row, tub), problem=tub.name)
    # the same activity asked in a sentence the request refuses: planning raises
    broken = dataclasses.replace(tub, sentence="scrub " * 200)
    crashed = dict(bench.run_goal(service, holder, row, broken), problem=tub.name)
    assert crashed["termination"] == "InvalidRequest", crashed
    assert not crashed["success"] and not crashed["whole_goal"]

    s = bench.summarize("interpret", [ran, crashed], {tub.name: len(tub.gold_plan)})
    assert s["goals"] == 2
    assert s["success"] == ran["success"] / 2
    assert s["whole_goal"]["goals"] == 2   # the whole-goal column counts the crash too
    assert s["whole_goal"]["success"] == ran["whole_goal"] / 2
    assert s["precision"] == ran["precision"] / 2 and s["recall"] == ran["recall"] / 2
    assert s["honesty"]["reached_unasked"] <= 0.5   # over both goals
    assert list(s["losses"].values()) and crashed["termination"] in s["losses"]
