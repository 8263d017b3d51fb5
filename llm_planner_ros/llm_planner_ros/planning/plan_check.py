"""A plan-only goal's plan is trusted when it was run on a model of the world: every step
applies in turn and the goal, where the model knows it, holds after the last. Fast Downward's
plans are found in that model (checked when made); an LLM's steps are replayed here, and a plan
whose step would make one of the world's hazards hold is never handed back: it stops before that
step, and the goal ends ``hazard_stopped`` naming it."""
from __future__ import annotations

from collections.abc import Callable
from typing import Optional

from llm_planner_ros.core.executor import Executor
from llm_planner_ros.core.types import GoalStatus, NoteKind, PlanResult, TerminationReason
from llm_planner_ros.safety.hazards import Hazards


def check_plan(result: PlanResult, make_model: Callable[[], Executor], hazards: Optional[Hazards] = None) -> PlanResult:
    """Mark ``result`` checked, the first step that fails on the model with its error and the
    goal's status after the plan; ``make_model()`` gives the world as the plan starts, made only
    for a plan that is not checked yet, and changed by the replay. ``hazards``: the world's."""
    if result.executing or result.checked or not result.steps:
        return result
    model = make_model()
    result.checked = True
    before = set(hazards.in_world(model.world_state())) if hazards else set()
    for step in result.steps:
        ran = model.execute(step.skill)
        made = [h.text() for h in hazards.in_world(model.world_state()) if h not in before] \
            if hazards and ran.success else []
        if made:
            result.steps = result.steps[:step.index - 1]
            result.termination_reason = TerminationReason.HAZARD_STOPPED
            result.hazards = made
            result.note(NoteKind.WITHHELD, f"step {step.index} {step.skill.script() or step.skill.text!r} is withheld: "
                                           f"on the world model it makes a hazard hold: {'; '.join(made)}; the plan "
                                           f"stops before it")
            return result
        if not ran.success:
            step.error = ran.failure
            result.note(NoteKind.UNTRUSTED, f"not trusted: step {step.index} {step.skill.script()} fails on the "
                                            f"world model: {ran.failure.message}")
            return result
    met = model.goal_met()
    if met is not None:
        result.goal_status = GoalStatus.MET if met else GoalStatus.NOT_MET
    if met is False:
        result.note(NoteKind.UNTRUSTED, "not trusted: the plan runs on the world model, but the goal does not hold "
                                        "after it")
    return result
