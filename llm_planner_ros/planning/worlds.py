"""The planners of the world a goal plans over: the built-in world's (the service's own), or
a profile's, which the executor declares (its skills, objects and words), built once per
profile and kept by the service."""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional, Protocol

from llm_planner_ros.core.errors import InvalidGoal
from llm_planner_ros.core.executor import Executor
from llm_planner_ros.core.request import PlanRequest
from llm_planner_ros.pddl.goals import GoalVocabulary
from llm_planner_ros.planning.interpreted import InterpretedGoalPlanner
from llm_planner_ros.planning.translated import TranslatedPlanner

if TYPE_CHECKING:
    from llm_planner_ros.planning.service import PlanningService
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

    def interpreted(self) -> InterpretedGoalPlanner: ...

    def plan_only_world(self, request: PlanRequest) -> Executor:
        """The world a plan-only goal starts from."""


class BuiltinWorld:
    profile: Optional[WorldProfile] = None
    vocabulary: Optional[GoalVocabulary] = None
    has_demonstrations = True
    zero_shot = ""

    def __init__(self, service: PlanningService) -> None:
        self.service = service

    def translated(self) -> TranslatedPlanner:
        return self.service.translated

    def interpreted(self) -> InterpretedGoalPlanner:
        return self.service.interpreted()

    def plan_only_world(self, request: PlanRequest) -> Executor:
        from llm_planner_ros.planning.service import in_process_executor

        return in_process_executor(request.scene_id, request.task)


class ProfileWorld:
    def __init__(self, service: PlanningService, profile: WorldProfile, robot: Executor) -> None:
        self.service, self.profile, self.robot = service, profile, robot
        self.vocabulary = profile.goal_vocabulary()
        self.has_demonstrations = bool(profile.spec.examples)
        self.zero_shot = "" if self.has_demonstrations else f"the {profile.name} profile has no example goals"

    def translated(self) -> TranslatedPlanner:
        if not self.has_demonstrations:
            raise InvalidGoal(f"method: the LLM methods show demonstrations, and the {self.profile.name} profile "
                              "has none (example goals with a plan in its world)")
        return self.service.profile_translated(self.profile, self.robot)

    def interpreted(self) -> InterpretedGoalPlanner:
        return self.service.profile_interpreted(self.profile, self.robot)

    def plan_only_world(self, request: PlanRequest) -> Executor:
        return self.robot
