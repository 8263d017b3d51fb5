"""A goal's outcome through the planning service, on the real simulator and Fast Downward: a
given goal that its method would ignore is refused when it is resolved, a goal-directed run that
stops with its goal unmet is no success, and a goal that already holds ends ``already_done``."""
from __future__ import annotations

import pytest

from llm_planner_ros.core.errors import CancelToken, InvalidGoal
from llm_planner_ros.core.request import parse_request
from llm_planner_ros.core.types import GoalStatus, TerminationReason
from llm_planner_ros.executors.pddl_world import PddlWorldExecutor
from llm_planner_ros.planning.resolve import resolve
from llm_planner_ros.profiles.loader import load_profile, shipped
from llm_planner_ros.profiles.virtualhome.simulator import VirtualHomeExecutor
from llm_planner_ros.wiring import PlannerNodeParams, ServiceConfig, compose


def service_of(flat: dict, resets: list, embedder, demos):
    return compose(ServiceConfig.from_flat(flat, also_known=PlannerNodeParams.model_fields), llm=None,
                   embedder=embedder, demos=demos,
                   executor_factory=lambda scene, task: resets.append(task) or VirtualHomeExecutor())


@pytest.mark.parametrize("fields, message", [
    ({"method": "interpret", "goal_conditions": ["(on television)"]},
     "goal_conditions: method 'interpret' does not read it, so it would be ignored; method 'pddl' plans"),
    ({"goal_conditions": ["(on television)"]}, "goal_conditions: method 'interpret' does not read it"),   # the default
    ({"method": "translated", "objects": ["tv"], "action_goals": ["WATCH"]},
     "action_goals, objects: method 'translated' does not read them, so they would be ignored"),
    ({"method": "reprompt", "execute": True, "goal_conditions": ["(on television)"]},
     "goal_conditions: method 'reprompt' does not read it"),
    ({"method": "heuristic", "execute": True, "goal_conditions": ["(on television)"]},
     "goal_conditions: method 'heuristic' does not read it on this world (on a profile's world only)"),
])
def test_a_goal_field_the_method_does_not_read_is_refused_before_anything_runs(embedder, demos, fields, message):
    """'Read a book' with the goal '(on television)' planned a bookshelf goal under interpret,
    the literal silently dropped (while the service refused such literals as hazardous)."""
    resets: list = []
    service = service_of({}, resets, embedder, demos)
    with pytest.raises(InvalidGoal, match=message.replace("(", r"\(").replace(")", r"\)")):
        service.plan(parse_request(task="Read a book", **fields), lambda e: None, CancelToken())
    assert resets == []


@pytest.mark.parametrize("options", [{"eliminate_objects": True}, {"plan_subtasks": True},
                                     {"no_trajectory_correction": True}, {"epsilon": 0.9, "beta": 5.0}])
def test_vanilla_refuses_the_options_of_the_step_by_step_methods(embedder, demos, options):
    """Vanilla writes one whole program and ranks k of them by log-prob (Huang et al. Eq. 1): it
    ran with these options silently dropped."""
    resets: list = []
    with pytest.raises(InvalidGoal, match=f"options: {sorted(options)[0]}.* not apply to method 'vanilla'"):
        service_of({}, resets, embedder, demos).plan(
            parse_request(task="Read a book", method="vanilla", options=options), lambda e: None, CancelToken())
    assert resets == []


def test_on_a_profiles_world_the_heuristic_reads_the_given_goal_but_not_objects(embedder, demos):
    executor = PddlWorldExecutor(load_profile(shipped("mobile_manipulator")))
    service = compose(ServiceConfig(), llm=None, embedder=embedder, demos=demos, robot_world=lambda executes: executor)
    world = service.parts.world_for(executor.profile, executor)
    request = parse_request(task="Go to the counter", method="heuristic", execute=True,
                            goal_conditions=["(at robot counter)"])
    assert resolve(request, world, service.runners, "none").spec   # its stop: read
    with pytest.raises(InvalidGoal, match="objects: method 'heuristic' does not read it, so it would be ignored"):
        resolve(request.model_copy(update={"objects": ("counter",)}), world, service.runners, "none")


def test_a_pddl_goal_stopped_at_its_step_limit_with_the_goal_unmet_is_aborted(embedder, demos):
    """pddl_max_steps: 1: the goal ends max_steps after one step, its goal not met; the action's
    status follows success, and it said SUCCEEDED."""
    from llm_planner_ros.ros.conversions import error_code, result_to_msg

    service = service_of({"pddl_max_steps": 1}, [], embedder, demos)
    result = service.plan(parse_request(task="Watch TV", method="pddl", execute=True,
                                        goal_conditions=["(on television_410)"]), lambda e: None, CancelToken())
    assert result.termination_reason is TerminationReason.MAX_STEPS and len(result.steps) == 1, result.detail
    assert result.goal_status is GoalStatus.NOT_MET and result.executed and not result.success
    msg = result_to_msg(result)
    assert not msg.success and error_code(result) == msg.PLAN_INCOMPLETE and "does not hold" in msg.error_msg


def test_a_pddl_goal_that_already_holds_ends_already_done(embedder, demos):
    resets: list = []
    service = service_of({}, resets, embedder, demos)
    for execute in (True, False):
        result = service.plan(parse_request(task="Watch TV", method="pddl", execute=execute,
                                            goal_conditions=["(plugged_in television)"]), lambda e: None, CancelToken())
        assert result.termination_reason is TerminationReason.ALREADY_DONE, result.detail
        assert result.success and not result.steps and "the goal already holds; nothing to do" in result.detail
    assert resets == ["Watch TV"]   # executed once, nothing run
