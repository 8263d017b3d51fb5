"""What a planning method is to the service: a runner that checks a resolved goal before
anything runs and plans it, and its registry entry (what kind of loop it runs, and why it
cannot run on a profile's world, if it cannot). PlanSys2's planner plugins, in one process."""
from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Optional, Protocol, TypeVar

from pydantic import BaseModel

from llm_planner_ros.core.errors import CancelToken
from llm_planner_ros.core.executor import Executor
from llm_planner_ros.core.planner import PlanCallback, StepCallback, no_preview
from llm_planner_ros.core.request import PlanRequest
from llm_planner_ros.core.settings import PlannerSettings
from llm_planner_ros.core.types import GoalReport, PlanResult
from llm_planner_ros.pddl.goals import GoalSpec
from llm_planner_ros.safety.gate import SafetyGate
from llm_planner_ros.safety.policy import SkillPolicy

if TYPE_CHECKING:
    from llm_planner_ros.planning.worlds import WorldMethods

M = TypeVar("M", bound=BaseModel)


@dataclass(frozen=True)
class MethodParts:
    """What the service lends every method besides the goal's world (``Goal.world``)."""

    defaults: PlannerSettings
    runner: Callable[[str], MethodRunner]   # another method's runner, by name (interpret's fallback)
    settings: Mapping[type[BaseModel], BaseModel] = field(default_factory=dict)   # each entry's, by model

    def settings_of(self, model: type[M]) -> M:
        """The configured instance of a method's settings ``model`` (its defaults when none is)."""
        found = self.settings.get(model)
        return found if isinstance(found, model) else model()


@dataclass(frozen=True)
class Goal:
    """A request resolved and checked once, before anything runs."""

    method: str                     # its name in the registry
    request: PlanRequest            # its defaults filled in (scene_id, method)
    world: WorldMethods             # the planners of the world it plans over
    spec: GoalSpec                  # the goal conditions given, checked against the world's words


@dataclass
class GoalRun:
    """A goal while it runs: where its steps go, its stop, its gate (None: plan only)."""

    goal: Goal
    on_step: StepCallback
    cancel: CancelToken
    gate: Optional[SafetyGate]
    report: GoalReport
    policy: SkillPolicy
    on_plan: PlanCallback = no_preview

    @property
    def request(self) -> PlanRequest:
        return self.goal.request

    def world_source(self) -> Executor:
        """What the plan starts from: the gate when it executes, else the world as it is now."""
        return self.gate if self.gate is not None else self.goal.world.plan_only_world(self.request)


class MethodRunner(Protocol):
    def check(self, goal: Goal) -> None:
        """Raise InvalidGoal for what this method cannot do with ``goal`` (nothing has run)."""

    def plan(self, run: GoalRun) -> PlanResult: ...


# The per-goal options (core.request.MethodOptions) each kind of method reads; a goal that sets
# another is refused when it is resolved, not run with the option dropped.
ANY_METHOD = frozenset({"hold_out_tasks", "time_limit_s"})
WHOLE_PROGRAM = ANY_METHOD | {"num_samples", "temperature", "top_p", "frequency_penalty", "presence_penalty",
                              "max_steps", "seed", "fixed_example"}   # vanilla: best of k programs, untranslated
LLM_STEPS = ANY_METHOD | {"num_samples", "temperature", "top_p", "frequency_penalty", "presence_penalty", "max_steps",
                          "ranking", "beta", "epsilon", "seed", "no_translation", "fixed_example",
                          "no_trajectory_correction", "plan_subtasks", "track_subtasks", "eliminate_objects"}
CORRECTING = LLM_STEPS | {"max_corrections_per_step", "max_corrections_per_plan"}
REPROMPTING = CORRECTING | {"correction_level"}


@dataclass(frozen=True)
class MethodEntry:
    """One registry line."""

    runner: Callable[[MethodParts], MethodRunner]
    options: frozenset[str] = ANY_METHOD   # the per-goal options it reads
    settings: tuple[type[BaseModel], ...] = ()   # the node parameters it reads (declared by the node)
    closed_loop: bool = False       # corrects executed steps: needs execute=true
    plans_first: bool = False       # plans the whole program before it executes (approval 'plan' can wait)
    not_on_profiles: str = ""       # why it cannot plan over a profile's world ("": it can)
    # the goal's fields besides its task that it reads (goal_conditions, action_goals, objects), and
    # those it reads on a profile's world only; a goal that sets another is refused, not ignored
    goal_fields: frozenset[str] = frozenset()
    profile_goal_fields: frozenset[str] = frozenset()
