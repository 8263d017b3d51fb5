"""The planners of the world a goal plans over: the built-in world's, or a profile's, which the
executor declares (its skills, objects and words); the service builds each once and keeps it."""
from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Optional, Protocol

from llm_planner_ros.core.errors import InvalidGoal
from llm_planner_ros.core.executor import Executor
from llm_planner_ros.core.request import PlanRequest
from llm_planner_ros.pddl.goals import GoalVocabulary
from llm_planner_ros.planning.interpreted import InterpretedGoalPlanner
from llm_planner_ros.planning.translated import TranslatedPlanner

if TYPE_CHECKING:
    from llm_planner_ros.profiles.loader import WorldProfile


class WorldMethods(Protocol):
    @property
    def profile(self) -> Optional[WorldProfile]:
        """None: the built-in world."""

    @property
    def vocabulary(self) -> Optional[GoalVocabulary]:
        """What goal conditions may name (None: the built-in domain's)."""

    @property
    def has_demonstrations(self) -> bool:
        """The LLM methods have examples to show."""

    @property
    def zero_shot(self) -> str:
        """Why interpret shows no examples ("" when it shows some)."""

    def translated(self) -> TranslatedPlanner: ...

    def check_translated(self, request: PlanRequest, executing: bool) -> None:
        """Raise for what the LLM methods cannot do here, without building their planner."""

    def interpreted(self) -> InterpretedGoalPlanner: ...

    def plan_only_world(self, request: PlanRequest) -> Executor:
        """The world a plan-only goal starts from."""


class BuiltinWorld:
    profile: Optional[WorldProfile] = None
    vocabulary: Optional[GoalVocabulary] = None
    has_demonstrations = True
    zero_shot = ""

    def __init__(self, translated: TranslatedPlanner, interpreted: Callable[[], InterpretedGoalPlanner],
                 plan_only_world: Callable[[str, str], Executor]) -> None:
        """``plan_only_world(scene_id, task)``: the in-process world a plan-only goal starts from."""
        self._translated, self._interpreted, self._plan_only_world = translated, interpreted, plan_only_world

    def translated(self) -> TranslatedPlanner:
        return self._translated

    def check_translated(self, request: PlanRequest, executing: bool) -> None:
        self._translated.check(request, executing)

    def interpreted(self) -> InterpretedGoalPlanner:
        return self._interpreted()

    def plan_only_world(self, request: PlanRequest) -> Executor:
        return self._plan_only_world(request.scene_id, request.task)


class ProfileWorld:
    def __init__(self, profile: WorldProfile, robot: Executor,
                 translated: Callable[[WorldProfile, Executor], TranslatedPlanner],
                 interpreted: Callable[[WorldProfile, Executor], InterpretedGoalPlanner]) -> None:
        """``robot``: the executor whose world the profile declares, as it is now; ``translated``
        and ``interpreted`` build (or give the kept) planners of a profile's world."""
        self.profile, self.robot = profile, robot
        self._translated, self._interpreted = translated, interpreted
        self.vocabulary = profile.goal_vocabulary()
        self.has_demonstrations = bool(profile.spec.examples)
        self.zero_shot = "" if self.has_demonstrations else f"the {profile.name} profile has no example goals"

    def translated(self) -> TranslatedPlanner:
        self.check_translated()
        return self._translated(self.profile, self.robot)

    def check_translated(self, request: Optional[PlanRequest] = None, executing: bool = False) -> None:
        """PET's options are refused on a profile when the goal is resolved; what is left is
        whether there is anything to show."""
        if not self.has_demonstrations:
            raise InvalidGoal(f"method: the LLM methods show demonstrations, and the {self.profile.name} profile "
                              "has none (example goals with a plan in its world)")

    def interpreted(self) -> InterpretedGoalPlanner:
        return self._interpreted(self.profile, self.robot)

    def plan_only_world(self, request: PlanRequest) -> Executor:
        return self.robot
