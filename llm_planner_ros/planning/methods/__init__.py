"""The planning methods: one module each, one registry line each.

A new method is a module with a runner (``check(goal)``, ``plan(run)``, see :mod:`.base`) and a
line in :data:`METHODS`; the service dispatches on this table and nothing else.
"""
from __future__ import annotations

from llm_planner_ros.core.errors import InvalidGoal
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
from llm_planner_ros.planning.methods.llm_steps import llm_steps
from llm_planner_ros.planning.methods.pddl import GivenGoal
from llm_planner_ros.planning.translated import LlmLoop

METHODS: dict[str, MethodEntry] = {
    "vanilla": MethodEntry(llm_steps(whole_program=True), LLM_STEPS, plans_first=True,
                                not_on_profiles="it writes the built-in world's script lines; use translated, "
                                                "the same LLM with its steps translated to the profile's skills"),
    "translated": MethodEntry(llm_steps(), LLM_STEPS, plans_first=True),
    "resample": MethodEntry(llm_steps(on_failure="resample"), CORRECTING, closed_loop=True),
    "reprompt": MethodEntry(llm_steps(on_failure="reprompt"), REPROMPTING, closed_loop=True),
    "heuristic": MethodEntry(HeuristicSearch, ANY_METHOD | {"guide", "guide_info"}),
    "pddl": MethodEntry(GivenGoal, plans_first=True),
    "interpret": MethodEntry(Interpret, REPROMPTING, plans_first=True),   # and its fallback's
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
