"""Methods vanilla, translated, resample and reprompt: the LLM writes steps, translated to the
world's admissible skills (Huang et al.), corrected when they fail (Raman et al.)."""
from __future__ import annotations

from llm_planner_ros.core.types import PlanResult
from llm_planner_ros.planning.methods.base import Goal, GoalRun, MethodParts


class LlmSteps:
    def __init__(self, parts: MethodParts) -> None:
        """The LLM planner is the world's own (its skills, its demonstrations)."""

    def check(self, goal: Goal) -> None:
        goal.world.check_translated(goal.request, goal.request.execute)

    def plan(self, run: GoalRun) -> PlanResult:
        return run.goal.world.translated().plan(run.request, run.on_step, run.cancel, run.gate, run.report)
