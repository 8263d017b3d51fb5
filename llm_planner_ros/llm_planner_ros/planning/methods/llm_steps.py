"""Methods vanilla, translated, resample and reprompt: the LLM writes steps, translated to the
world's admissible skills (Huang et al.), corrected when they fail (Raman et al.). One runner;
each method's registry line gives its loop (:class:`~llm_planner_ros.planning.translated.LlmLoop`)."""
from __future__ import annotations

from dataclasses import dataclass

from llm_planner_ros.core.types import PlanResult
from llm_planner_ros.planning.methods.base import Goal, GoalRun, MethodParts
from llm_planner_ros.planning.translated import LlmLoop


class LlmSteps:
    def __init__(self, parts: MethodParts, loop: LlmLoop) -> None:
        """The LLM planner is the world's own (its skills, its demonstrations); ``loop``: how it runs."""
        self.loop = loop

    def check(self, goal: Goal) -> None:
        goal.world.check_translated(goal.request, goal.request.execute)

    def plan(self, run: GoalRun) -> PlanResult:
        return run.goal.world.translated().plan(run.request, run.on_step, run.cancel, run.gate, run.report,
                                                loop=self.loop)


@dataclass(frozen=True)
class llm_steps:   # noqa: N801 (a registry line reads as a call: llm_steps(LlmLoop(on_failure="reprompt")))
    """The factory of an LLM-step method's runner, with its loop."""

    loop: LlmLoop = LlmLoop()

    def __call__(self, parts: MethodParts) -> LlmSteps:
        return LlmSteps(parts, self.loop)
