"""Method heuristic (Borro et al.): the LLM guides a search over the applicable skills."""
from __future__ import annotations

from llm_planner_ros.core.errors import InvalidGoal
from llm_planner_ros.core.types import PlanResult
from llm_planner_ros.pddl.goals import ground_goal
from llm_planner_ros.planning.methods.base import Goal, GoalRun, MethodParts


class HeuristicSearch:
    def __init__(self, parts: MethodParts) -> None:
        """The search is the goal's world's (``Goal.world.heuristic``)."""

    def check(self, goal: Goal) -> None:
        goal.world.heuristic().check(goal.request, goal.request.execute)
        o = goal.request.options
        if goal.world.profile is not None and (o.guide or "none") != "none":
            raise InvalidGoal(f"options: guide: the heuristic's guide prompt shows the default world's actions, "
                              f"objects and example programs, not the {goal.world.profile.name} profile's yet; "
                              "leave guide unset on a profile")
        if goal.world.profile is not None and not goal.spec:
            raise InvalidGoal(f"goal_conditions: the heuristic search stops when the goal holds, and the "
                              f"{goal.world.profile.name} profile's world has no goal check of its own: "
                              "give goal_conditions")

    def plan(self, run: GoalRun) -> PlanResult:
        goal_met = None
        gate, goal = run.gate, run.goal
        if goal.world.profile is not None and gate is not None:   # a profile's world: the given goal
            ground = ground_goal(goal.spec, gate.world_state(), vocabulary=goal.world.vocabulary)
            goal_met = lambda: ground.holds(gate.world_state())   # noqa: E731
        return goal.world.heuristic().plan(run.request, run.on_step, run.cancel, gate, run.report, goal_met)
