"""Issue 41: a large profile world is cut down to what the goal can need before Fast Downward
reads it (``ReachableCut``), on a building from bench/building.py; a cut without a plan is widened
once, and the result says so."""
from __future__ import annotations

import importlib.util
import json
import re
import sys
from pathlib import Path

import pytest

from llm_planner_ros.core.errors import CancelToken, InvalidGoal
from llm_planner_ros.core.request import parse_request
from llm_planner_ros.core.types import TerminationReason
from llm_planner_ros.executors.pddl_world import PddlWorldExecutor
from llm_planner_ros.pddl.goals import ground_goal, parse_goal
from llm_planner_ros.pddl.problem import ReachableCut
from llm_planner_ros.profiles.loader import load_profile, shipped
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


def test_the_cut_keeps_what_the_goal_reaches_and_a_world_cheap_to_ground_whole(tmp_path):
    profile, _ = building(tmp_path, 1000)
    world = PddlWorldExecutor(profile).world_state()
    cup = next(o for o in world.objects if o.startswith("cup_"))
    where = next(a[2] for a in world.facts if a[1] == cup and a[0] in ("on", "in"))
    desk = next(o for o in world.objects if o.startswith("desk_"))
    words = profile.goal_vocabulary()
    goal = ground_goal(parse_goal([f"(on {cup} {desk})"], [], words), world, words)
    kept = profile.relevant_objects(world, goal, None, frozenset())
    assert {cup, where, desk, "robot_1", "dock_2"} <= kept and len(kept) <= 8, sorted(kept)
    # a 300-object building has 33,924 ground actions, counted: cut (whole, Fast Downward took 5 s)
    small, _ = building(tmp_path, 300)
    small_world = PddlWorldExecutor(small).world_state()
    words = small.goal_vocabulary()
    lamp = next(o for o in small_world.objects if small_world.classes[o] == "lamp")
    lit = ground_goal(parse_goal([f"(switched_on {lamp})"], [], words), small_world, words)
    assert small.relevant_objects.ground_actions(small_world) > small.relevant_objects.whole_up_to
    assert len(small.relevant_objects(small_world, lit, None, frozenset())) < 10
    # the shipped robot's world (20 objects, 347 ground actions) is kept whole
    shipped_profile = load_profile(shipped("mobile_manipulator"))
    shipped_world = PddlWorldExecutor(shipped_profile).world_state()
    words = shipped_profile.goal_vocabulary()
    tv = ground_goal(parse_goal(["(switched_on tv)"], [], words), shipped_world, words)
    assert shipped_profile.relevant_objects(shipped_world, tv, None, frozenset()) == set(shipped_world.objects)
    # without a domain, each object counts as one ground action
    assert ReachableCut("robot_1")(small_world, lit) == set(small_world.objects)
    assert len(ReachableCut("robot_1", whole_up_to=299)(small_world, lit)) < 10


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
    the cut widened by what shares a fact with it; the goal ends no_plan, saying that the cut was
    widened, in a few seconds (the whole world would not ground in time)."""
    profile, tasks = building(tmp_path, 1000)
    world = profile.world_text.replace("(at robot_1 dock_2)", "")
    executor = PddlWorldExecutor(profile, world)
    result, report = service_on(executor).plan_with_report(
        parse_request(task="Put it there", method="pddl", execute=True,
                      goal_conditions=[next(t["goal"][0] for t in tasks if t["kind"] == "place")]),
        lambda e: None, CancelToken())
    assert result.termination_reason is TerminationReason.NO_PLAN, result.detail
    assert report.stats["widened"] == 1 and 3 < report.stats["problem_objects"] < 100, report.stats
    assert re.search(r"the relevance cut \(\d+ of 1000 objects\) had no plan; widened once to \d+",
                     result.detail), result.detail


def test_widening_adds_what_shares_a_fact_with_the_cut(tmp_path):
    profile, _ = building(tmp_path, 1000)
    world = PddlWorldExecutor(profile).world_state()
    desk = next(o for o in world.objects if o.startswith("desk_") and any(a[2:] == (o,) for a in world.facts))
    on_it = {a[1] for a in world.facts if a[0] in ("on", "in") and a[2] == desk}
    wider = ReachableCut("robot_1").widen(world, {"robot_1", desk})
    assert on_it and on_it | {"robot_1", desk, "dock_2"} <= wider and len(wider) < 60, sorted(wider)


@pytest.mark.parametrize("objects", [100, 5000])
def test_the_generated_building_is_seeded_and_of_its_size(tmp_path, objects):
    first, tasks = building(tmp_path / "a", objects, seed=7)
    again, tasks_again = building(tmp_path / "b", objects, seed=7)
    assert first.world_text == again.world_text and tasks == tasks_again
    assert len(PddlWorldExecutor(first).world.objects) == objects and len(tasks) == (8 if objects == 100 else 20)
    assert all(profile.named_in(t["task"]) for t in tasks for profile in [first])
    assert json.loads(json.dumps(tasks))[0]["goal"]


def test_interpret_reads_which_instances_a_task_names_in_a_building(tmp_path):
    """Method interpret in a building with the embedded model: "Turn on Alice Smith's lamp" is
    her lamp (a named instance the task names), not the first lamp of the building. What else the
    135M model adds may make the goal a hazard, refused (here: a book on the lamp); a goal that is
    planned is planned on a cut of a few objects."""
    profile, tasks = building(tmp_path, 500)
    task = next(t for t in tasks if t["kind"] == "switch_on")
    executor = PddlWorldExecutor(profile)
    result, report = service_on(executor).plan_with_report(
        parse_request(task=task["task"], method="interpret", execute=True), lambda e: None, CancelToken())
    assert task["goal"][0] in result.goal_conditions, (task, result.goal_conditions, result.detail)
    assert result.termination_reason in (TerminationReason.GOAL_REACHED, TerminationReason.HAZARDOUS_GOAL), \
        result.detail
    if result.termination_reason is TerminationReason.GOAL_REACHED:
        assert ("switched_on", task["goal"][0][13:-1]) in executor.world.state
        assert report.stats["problem_objects"] <= 10, report.stats


def test_a_buildings_examples_are_planned_on_the_cut(tmp_path):
    """The profile's examples (the LLM methods' demonstrations, and interpret's fallback) are
    planned on the relevance cut: on the whole 1,000-object building each ran into Fast Downward's
    10 s limit, and a goal that fell back waited 140 s for none."""
    from llm_planner_ros.profiles.skills import profile_demonstrations, reference_world

    profile, _ = building(tmp_path, 1000)
    demos = profile_demonstrations(profile, reference_world(profile))
    planned = {d.task for d in demos}
    assert len(planned) == len(profile.spec.examples), planned
    assert {d.task for d in demos if d.steps} >= {"Bring me the apple", "Put the apple in the fridge"}


def test_the_llm_step_methods_refuse_a_world_of_more_skills_than_max_skills(tmp_path):
    """A building's named instances make millions of skills (206,495 at 10,000 objects), each
    embedded before the first step: the LLM-step methods refuse such a world at once, naming the
    count and the limit (and interpret, which reads the same ``llm_steps_refused``, does not fall
    back to them there)."""
    from llm_planner_ros.core.settings import PlannerSettings
    from llm_planner_ros.profiles.skills import bank_size, profile_bank, reference_world

    profile, tasks = building(tmp_path, 1000)
    world = reference_world(profile)
    assert bank_size(profile, world) == len(profile_bank(profile, world).skills) == 3883
    executor = PddlWorldExecutor(profile)
    service = compose(ServiceConfig.of(PlannerSettings(max_skills=1000)), executor_factory=lambda s, t: executor,
                      robot_world=lambda executes: executor)
    with pytest.raises(InvalidGoal, match=r"3,883, over max_skills \(1,000\)"):   # refused before anything runs
        service.plan_with_report(parse_request(task=tasks[0]["task"], method="reprompt", execute=True),
                                 lambda e: None, CancelToken())
    world_methods = service.parts.world_for(profile, executor)
    assert "max_skills" in world_methods.llm_steps_refused
    assert compose(ServiceConfig(), executor_factory=lambda s, t: executor,
                   robot_world=lambda executes: executor).parts.world_for(profile, executor).llm_steps_refused == ""
