"""Issue 41: a large profile world is cut down to what the goal can need before Fast Downward
reads it (``ReachableCut``), on a building from bench/building.py; a cut without a plan is widened
to the whole world once, and the result says so."""
from __future__ import annotations

import importlib.util
import json
import re
import sys
from pathlib import Path

import pytest

from llm_planner_ros.core.errors import CancelToken
from llm_planner_ros.core.request import parse_request
from llm_planner_ros.core.types import TerminationReason
from llm_planner_ros.executors.pddl_world import PddlWorldExecutor
from llm_planner_ros.pddl.goals import ground_goal, parse_goal
from llm_planner_ros.pddl.problem import ReachableCut
from llm_planner_ros.profiles.loader import load_profile
from llm_planner_ros.wiring import ServiceConfig, compose

REPO = Path(__file__).resolve().parents[2]


def building(tmp_path: Path, objects: int, seed: int = 1):
    spec = importlib.util.spec_from_file_location("bench_building", REPO / "bench" / "building.py")
    module = sys.modules.setdefault(spec.name, importlib.util.module_from_spec(spec))
    spec.loader.exec_module(module)
    path, tasks = module.write(tmp_path / f"building_{objects}", objects, seed)
    return load_profile(path), tasks


def service_on(executor: PddlWorldExecutor):
    def reset(scene: str, task: str) -> PddlWorldExecutor:
        executor.reset()
        return executor
    return compose(ServiceConfig(), executor_factory=reset, robot_world=lambda executes: executor)


def test_the_cut_keeps_what_the_goal_reaches_and_a_small_world_whole(tmp_path):
    profile, _ = building(tmp_path, 1000)
    world = PddlWorldExecutor(profile).world_state()
    cup = next(o for o in world.objects if o.startswith("cup_"))
    where = next(a[2] for a in world.facts if a[1] == cup and a[0] in ("on", "in"))
    desk = next(o for o in world.objects if o.startswith("desk_"))
    words = profile.goal_vocabulary()
    goal = ground_goal(parse_goal([f"(on {cup} {desk})"], [], words), world, words)
    kept = ReachableCut("robot_1")(world, goal)
    assert {cup, where, desk, "robot_1", "dock_2"} <= kept and len(kept) <= 8, sorted(kept)
    small, _ = building(tmp_path, 100)
    small_world = PddlWorldExecutor(small).world_state()
    words = small.goal_vocabulary()
    assert ReachableCut("robot_1")(small_world, ground_goal(parse_goal(["(switched_on lamp_14)"], [], words),
                                                            small_world, words)) == set(small_world.objects)


def test_pddl_plans_a_buildings_tasks_on_the_cut(tmp_path):
    """Every task of a 2,000-object building: planned on a cut of a few objects, executed, reached."""
    profile, tasks = building(tmp_path, 2000)
    executor = PddlWorldExecutor(profile)
    service = service_on(executor)
    for task in tasks[:8]:
        result, report = service.plan_with_report(parse_request(task=task["task"], method="pddl", execute=True,
                                                                goal_conditions=task["goal"]),
                                                  lambda e: None, CancelToken())
        assert result.termination_reason is TerminationReason.GOAL_REACHED, (task, result.detail)
        assert report.stats["problem_objects"] <= 10 and "widened" not in report.stats, report.stats


def test_a_cut_without_a_plan_is_widened_once_and_the_result_says_so(tmp_path):
    """A robot that stands nowhere (no ``at`` fact) can drive nowhere: the cut has no plan, nor has
    the whole world; the goal ends no_plan, saying that the cut was widened."""
    profile, tasks = building(tmp_path, 1000)
    world = profile.world_text.replace("(at robot_1 dock_2)", "")
    executor = PddlWorldExecutor(profile, world)
    result, report = service_on(executor).plan_with_report(
        parse_request(task="Turn it on", method="pddl", execute=True,
                      goal_conditions=[next(t["goal"][0] for t in tasks if t["kind"] == "switch_on")]),
        lambda e: None, CancelToken())
    assert result.termination_reason is TerminationReason.NO_PLAN, result.detail
    assert report.stats["widened"] == 1 and report.stats["problem_objects"] == 1000, report.stats
    assert re.search(r"the relevance cut \(\d+ of 1000 objects\) had no plan; widened to the whole world",
                     result.detail), result.detail


@pytest.mark.parametrize("objects", [100, 5000])
def test_the_generated_building_is_seeded_and_of_its_size(tmp_path, objects):
    first, tasks = building(tmp_path / "a", objects, seed=7)
    again, tasks_again = building(tmp_path / "b", objects, seed=7)
    assert first.world_text == again.world_text and tasks == tasks_again
    assert len(PddlWorldExecutor(first).world.objects) == objects and len(tasks) == 20
    assert json.loads(json.dumps(tasks))[0]["goal"]
