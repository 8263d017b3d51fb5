"""Method interpret: the task text alone in. The LLM says what "done" means, the sentences are
translated to the world's goal conditions, and Fast Downward plans them; where the interpreted
goal is empty, already holds or has no plan, the configured LLM method plans instead."""
from __future__ import annotations

import time

from llm_planner_ros.core.request import PlanRequest
from llm_planner_ros.core.types import Method, PlanResult, TerminationReason
from llm_planner_ros.planning.methods.base import Goal, GoalRun, MethodParts


class Interpret:
    def __init__(self, parts: MethodParts) -> None:
        self.settings = parts.goal_directed.settings
        self.default_seed = parts.defaults.seed

    def fallback(self, goal: Goal) -> PlanRequest:
        """The request the fallback method plans (method None: no fallback). Plan-only goals fall
        back to ``translated``, since re-sampling and re-prompting correct executed steps. A world
        without demonstrations (a profile without examples) has no LLM method to fall back to."""
        request, fallback = goal.request, self.settings.interpret_fallback
        if fallback == "none" or not goal.world.has_demonstrations:
            return request.model_copy(update={"method": None})
        return request.model_copy(update={"method": Method(fallback) if request.execute else Method.TRANSLATED})

    def check(self, goal: Goal) -> None:
        fallback = self.fallback(goal)
        if fallback.method is not None:
            goal.world.check_translated(fallback, goal.request.execute)

    def plan(self, run: GoalRun) -> PlanResult:
        request, world, report = run.request, run.goal.world, run.report
        t0 = time.perf_counter()
        seed = getattr(request.options, "seed", None)   # MethodOptions' fields are made from PlannerSettings'
        interpreted = world.interpreted()
        planned = interpreted.plan(request.task, run.world_source(), run.on_step, run.cancel,
                                   execute=request.execute, stats=report.stats,
                                   hold_out=list(request.options.hold_out_tasks),
                                   seed=seed if seed is not None else self.default_seed, policy=run.policy,
                                   on_plan=run.on_plan)
        report.stats["interpreted"] = planned.interpretation.lines()
        report.stats["said"] = planned.interpretation.sentences
        if planned.interpretation.menu:   # the model's scores, best first: why the goal is what it is
            report.stats["menu"] = [s.why() for s in planned.interpretation.menu[:8]]
        if planned.interpretation.written:
            report.stats["written"] = planned.interpretation.written
        report.times.extra["interpret_s"] = time.perf_counter() - t0
        if world.zero_shot:
            planned.fallback = planned.fallback and f"{planned.fallback} ({world.zero_shot})"
            if planned.result is not None:
                planned.result.detail = f"zero-shot ({world.zero_shot}): {planned.result.detail}"
        if planned.result is not None:
            return planned.result
        fallback = self.fallback(run.goal)
        if fallback.method is None:
            return PlanResult(termination_reason=TerminationReason.NO_PLAN, detail=planned.fallback,
                              goal_conditions=planned.interpretation.lines())
        result = world.translated().plan(fallback, run.on_step, run.cancel, run.gate, report)
        result.num_llm_calls += int(interpreted.use_llm)
        result.detail = f"{planned.fallback}; fell back to {fallback.method.value}: {result.detail}"
        result.goal_conditions = planned.interpretation.lines()
        return result
