"""The planning methods: one module each, one registry line each.

A new method is a module with a runner (``check(goal)``, ``plan(run)``, see :mod:`.base`) and a
line in :data:`METHODS`; the service dispatches on this table and nothing else.
"""
from __future__ import annotations

from llm_planner_ros.core.errors import InvalidGoal
from llm_planner_ros.pet.session import PetSettings
from llm_planner_ros.planning.goal_directed import GoalDirectedSettings
from llm_planner_ros.planning.heuristic import HeuristicSettings
from llm_planner_ros.planning.interpreted import InterpretSettings
from llm_planner_ros.planning.methods.base import (
    ANY_METHOD,
    CORRECTING,
    LLM_STEPS,
    REPROMPTING,
    WHOLE_PROGRAM,
    Goal,
    GoalRun,
    MethodEntry,
    MethodParts,
    MethodRunner,
)
from llm_planner_ros.planning.methods.heuristic import HeuristicSearch
from llm_planner_ros.planning.methods.interpret import Interpret
from llm_planner_ros.planning.methods.llm_steps import llm_steps
from llm_planner_ros.planning.methods.pddl import GivenGoal
from llm_planner_ros.planning.translated import LlmLoop

LLM_SETTINGS = (PetSettings,)   # the LLM-step methods' own (PlannerSettings are every goal's)

METHODS: dict[str, MethodEntry] = {
    "vanilla": MethodEntry(llm_steps(LlmLoop(whole_program=True)), WHOLE_PROGRAM, LLM_SETTINGS, plans_first=True,
                           not_on_profiles="it writes the built-in world's script lines; use translated, "
                                           "the same LLM with its steps translated to the profile's skills"),
    "translated": MethodEntry(llm_steps(), LLM_STEPS, LLM_SETTINGS, plans_first=True),
    "resample": MethodEntry(llm_steps(LlmLoop(on_failure="resample")), CORRECTING, LLM_SETTINGS, closed_loop=True),
    "reprompt": MethodEntry(llm_steps(LlmLoop(on_failure="reprompt")), REPROMPTING, LLM_SETTINGS, closed_loop=True),
    "heuristic": MethodEntry(HeuristicSearch, ANY_METHOD | {"guide", "guide_info"}, (HeuristicSettings,),
                             profile_goal_fields=frozenset({"goal_conditions", "action_goals"})),
    "pddl": MethodEntry(GivenGoal, settings=(GoalDirectedSettings,), plans_first=True,
                        goal_fields=frozenset({"goal_conditions", "action_goals", "objects"})),
    # and its fallback's options and settings
    "interpret": MethodEntry(Interpret, REPROMPTING, (InterpretSettings, GoalDirectedSettings, *LLM_SETTINGS),
                             plans_first=True),
}

# a goal that leaves 'method' empty: the task text alone in, goals that a plan reaches
DEFAULT_METHOD = "interpret"


def llm_loop(name: str) -> LlmLoop:
    """The loop of LLM-step method ``name`` (for who runs the LLM planner itself, as the
    benchmark does); ValueError for a method that is not one."""
    runner = method_entry(name).runner
    if not isinstance(runner, llm_steps):
        raise ValueError(f"method {name!r} does not plan with LLM steps")
    return runner.loop


def method_entry(name: str) -> MethodEntry:
    """The registry line of method ``name``, or :class:`InvalidGoal` naming the registered ones."""
    entry = METHODS.get(name)
    if entry is None:
        raise InvalidGoal(f"method: unknown method {name!r}; choose one of {', '.join(METHODS)}")
    return entry


__all__ = ["DEFAULT_METHOD", "METHODS", "llm_loop", "method_entry", "Goal", "GoalRun", "MethodEntry", "MethodParts",
           "MethodRunner"]
