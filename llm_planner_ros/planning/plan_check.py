"""A plan-only goal's plan is trusted when it was run on a model of the world: every step
applies in turn and the goal, where the model knows it, holds after the last. Fast Downward's
plans are found in that model (checked when made); an LLM's steps are replayed here."""
from __future__ import annotations

from collections.abc import Callable

from llm_planner_ros.core.executor import Executor
from llm_planner_ros.core.types import GoalStatus, PlanResult


def check_plan(result: PlanResult, make_model: Callable[[], Executor]) -> PlanResult:
    """Mark ``result`` checked, the first step that fails on the model with its error and the
    goal's status after the plan; ``make_model()`` gives the world as the plan starts, made only
    for a plan that is not checked yet, and changed by the replay."""
    if result.executing or result.checked or not result.steps:
        return result
    model = make_model()
    result.checked = True
    for step in result.steps:
        ran = model.execute(step.skill)
        if not ran.success:
            step.error = ran.failure
            result.detail = (f"not trusted: step {step.index} {step.skill.script()} fails on the world model: "
                             f"{ran.failure.message}; {result.detail}")
            return result
    met = model.goal_met()
    if met is not None:
        result.goal_status = GoalStatus.MET if met else GoalStatus.NOT_MET
    if met is False:
        result.detail = f"not trusted: the plan runs on the world model, but the goal does not hold after it; " \
            f"{result.detail}"
    return result
