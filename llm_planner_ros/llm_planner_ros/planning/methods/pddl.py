"""Method pddl: the goal conditions given, planned by Fast Downward, executed and repaired."""
from __future__ import annotations

from llm_planner_ros.core.types import PlanResult
from llm_planner_ros.planning.goal_directed import GoalDirectedPlanner
from llm_planner_ros.planning.methods.base import Goal, GoalRun, MethodParts


class GivenGoal:
    def __init__(self, parts: MethodParts) -> None:
        pass

    def check(self, goal: Goal) -> None:
        GoalDirectedPlanner.check(goal.request, goal.world.vocabulary)

    def plan(self, run: GoalRun) -> PlanResult:
        spec = run.goal.spec
        planner = run.goal.world.goal_directed
        result = planner.plan(spec, run.world_source(), run.on_step, run.cancel, execute=run.request.execute,
                              stats=run.report.stats, objects=run.request.objects, policy=run.policy,
                              on_plan=run.on_plan)
        result.goal_conditions = spec.lines()
        return result
