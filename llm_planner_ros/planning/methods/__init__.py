"""The planning methods: one module each, one registry line each.

A new method is a module with a runner (``check(goal)``, ``plan(run)``, see :mod:`.base`) and a
line in :data:`METHODS`; the service dispatches on this table and nothing else.
"""
from __future__ import annotations

from llm_planner_ros.core.types import Method
from llm_planner_ros.planning.methods.base import (
    ANY_METHOD,
    CORRECTING,
    LLM_STEPS,
    REPROMPTING,
    Goal,
    GoalRun,
    MethodEntry,
    MethodParts,
    MethodRunner,
)
from llm_planner_ros.planning.methods.heuristic import HeuristicSearch
from llm_planner_ros.planning.methods.interpret import Interpret
from llm_planner_ros.planning.methods.llm_steps import LlmSteps
from llm_planner_ros.planning.methods.pddl import GivenGoal

METHODS: dict[Method, MethodEntry] = {
    Method.VANILLA: MethodEntry(LlmSteps, LLM_STEPS, plans_first=True,
                                not_on_profiles="it writes the built-in world's script lines; use translated, "
                                                "the same LLM with its steps translated to the profile's skills"),
    Method.TRANSLATED: MethodEntry(LlmSteps, LLM_STEPS, plans_first=True),
    Method.RESAMPLE: MethodEntry(LlmSteps, CORRECTING, closed_loop=True),
    Method.REPROMPT: MethodEntry(LlmSteps, REPROMPTING, closed_loop=True),
    Method.HEURISTIC: MethodEntry(HeuristicSearch, ANY_METHOD | {"guide", "guide_info"}),
    Method.PDDL: MethodEntry(GivenGoal, plans_first=True),
    Method.INTERPRET: MethodEntry(Interpret, REPROMPTING, plans_first=True),   # and its fallback's
}

# a goal that leaves 'method' empty: the task text alone in, goals that a plan reaches
DEFAULT_METHOD = Method.INTERPRET

__all__ = ["DEFAULT_METHOD", "METHODS", "Goal", "GoalRun", "MethodEntry", "MethodParts", "MethodRunner"]
