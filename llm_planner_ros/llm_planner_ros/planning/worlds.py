"""The world a goal plans over and its planners: a world given in code (:class:`WorldPlugin`,
the default one unless the planner names another), or a profile's, which the executor declares
(its skills, objects and words); the service builds each world's planners once and keeps them."""
from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Optional, Protocol

import yaml

from llm_planner_ros import profiles
from llm_planner_ros.core.errors import InvalidGoal
from llm_planner_ros.core.executor import Executor
from llm_planner_ros.core.request import PlanRequest
from llm_planner_ros.core.types import Skill
from llm_planner_ros.core.world import WorldState
from llm_planner_ros.executors.pddl_world import PddlWorldExecutor
from llm_planner_ros.interpretation.conditions import Condition
from llm_planner_ros.interpretation.interpreter import GoalDemo, ProgramGoal
from llm_planner_ros.pddl.goals import GoalVocabulary
from llm_planner_ros.pddl.problem import world_problem
from llm_planner_ros.planning.goal_directed import GoalDirectedPlanner, PlanningWorld
from llm_planner_ros.planning.heuristic import HeuristicPlanner
from llm_planner_ros.planning.interpreted import InterpretedGoalPlanner
from llm_planner_ros.planning.translated import TranslatedPlanner
from llm_planner_ros.translation.demonstrations import Demonstration

if TYPE_CHECKING:
    from llm_planner_ros.profiles.loader import WorldProfile
    from llm_planner_ros.safety.hazards import Hazards
    from llm_planner_ros.safety.policy import ClassOf
    from llm_planner_ros.skills.bank import SkillBank


class WorldPlugin(PlanningWorld, Protocol):
    """A world given in code, loaded by name (:data:`WORLDS`, from ``profiles/worlds.yaml``):
    what every method reads of it."""

    name: str
    scenes: tuple[str, ...]
    state_names: Mapping[str, str]                # predicate -> the state it says ("on", "open")
    guide_examples: tuple[str, ...]               # tasks the heuristic's guide prompt shows

    def object_properties(self) -> Mapping[str, frozenset[str]]: ...

    def actions(self) -> list[tuple[str, int]]:
        """(verb, number of objects) of each skill."""

    def parse_text(self, text: str) -> Optional[Skill]: ...

    def skill_problem(self, skill: Skill) -> str:
        """Why ``skill`` is not admissible here, or ""."""

    def full_bank(self) -> SkillBank: ...

    def scene_bank(self, scene_id: str) -> SkillBank: ...

    def scene_classes(self, scene_id: str) -> set[str]: ...

    def rooms(self) -> frozenset[str]: ...

    def places(self) -> frozenset[str]: ...

    def executor(self, scene_id: str, task: str) -> Executor:
        """The in-process world, reset for the task."""

    def conditions(self, world: WorldState) -> list[Condition]:
        """The goal conditions ``world`` admits, in words."""

    def demonstrations(self) -> list[Demonstration]: ...

    def annotated_goals(self) -> tuple[Sequence[GoalDemo], Sequence[ProgramGoal]]: ...


_REGISTRY = yaml.safe_load(Path(profiles.__file__).with_name("worlds.yaml").read_text())
WORLDS: dict[str, str] = dict(_REGISTRY["worlds"])   # name -> "module:class" of a world given in code
DEFAULT_WORLD: str = _REGISTRY["default"]
_loaded: dict[str, WorldPlugin] = {}


def skill_names(plugin: WorldPlugin) -> frozenset[str]:
    """Every skill (verb) of a world given in code, for the policy's lists."""
    return frozenset(name for name, _ in plugin.actions())


def load_world(name: str = DEFAULT_WORLD) -> WorldPlugin:
    """The world given in code ``name`` (one instance per process); an unknown name is an error
    naming the known ones."""
    if name not in WORLDS:
        raise ValueError(f"unknown world {name!r}; known: {', '.join(sorted(WORLDS))}")
    if name not in _loaded:
        module, _, cls = WORLDS[name].partition(":")
        _loaded[name] = getattr(importlib.import_module(module), cls)()
    return _loaded[name]


class WorldMethods(Protocol):
    """The one world a goal plans in, decided once when it is resolved: the method, the gate and
    the checks read this value and nothing else."""

    @property
    def profile(self) -> Optional[WorldProfile]:
        """None: the built-in world."""

    @property
    def scenes(self) -> Sequence[str]:
        """The scenes a goal may name (the first is the default); empty: the executor's own."""

    @property
    def goal_directed(self) -> GoalDirectedPlanner:
        """Fast Downward in this world: method pddl, and the goal checks of every method."""

    @property
    def vocabulary(self) -> GoalVocabulary:
        """What goal conditions may name."""

    @property
    def hazards(self) -> Hazards:
        """The states that must never come about (its gate stops a skill that would make one hold)."""

    def skill_problem(self, skill: Skill) -> str:
        """Why ``skill`` is not admissible here, or "" (the safety gate asks)."""

    @property
    def skill_names(self) -> frozenset[str]:
        """Every skill (action) of this world, for the policy's lists."""

    @property
    def object_names(self) -> Optional[frozenset[str]]:
        """Every object class and named instance, where the world declares them all (a profile);
        None: a world given in code, whose classes are its scenes'."""

    @property
    def class_of(self) -> Optional[ClassOf]:
        """The class of an object a skill names (a named instance's), for the policy's lists;
        None: a skill names classes."""

    @property
    def has_demonstrations(self) -> bool:
        """The LLM methods have examples to show."""

    @property
    def llm_steps_refused(self) -> str:
        """Why the LLM-step methods cannot run here ("" where they can)."""

    @property
    def zero_shot(self) -> str:
        """Why interpret shows no examples ("" when it shows some)."""

    def translated(self) -> TranslatedPlanner: ...

    def heuristic(self) -> HeuristicPlanner:
        """Borro et al.'s search here (its guide prompt shows a world given in code only)."""

    def check_translated(self, request: PlanRequest, executing: bool) -> None:
        """Raise for what the LLM methods cannot do here, without building their planner."""

    def interpreted(self) -> InterpretedGoalPlanner: ...

    def plan_only_world(self, request: PlanRequest) -> Executor:
        """The world a plan-only goal starts from."""

    def plan_model(self, request: PlanRequest) -> Executor:
        """A model of that world to replay a plan-only plan on (changed by it; never the robot)."""


class BuiltinWorld:
    profile: Optional[WorldProfile] = None
    has_demonstrations = True
    llm_steps_refused = ""
    zero_shot = ""

    def __init__(self, plugin: WorldPlugin, goal_directed: GoalDirectedPlanner,
                 translated: Callable[[], TranslatedPlanner], heuristic: Callable[[], HeuristicPlanner],
                 interpreted: Callable[[], InterpretedGoalPlanner]) -> None:
        self.plugin, self.goal_directed, self.heuristic = plugin, goal_directed, heuristic
        self.scenes = plugin.scenes
        self.vocabulary = plugin.goal_vocabulary()
        self.hazards = plugin.hazards
        self.skill_problem = plugin.skill_problem
        self.skill_names = skill_names(plugin)
        self.object_names: Optional[frozenset[str]] = None
        self.class_of: Optional[ClassOf] = None   # a skill names classes
        self._translated, self._interpreted = translated, interpreted

    def translated(self) -> TranslatedPlanner:
        return self._translated()

    def check_translated(self, request: PlanRequest, executing: bool) -> None:
        self._translated().check(request, executing)

    def interpreted(self) -> InterpretedGoalPlanner:
        return self._interpreted()

    def plan_only_world(self, request: PlanRequest) -> Executor:
        return self.plugin.executor(request.scene_id, request.task)

    def plan_model(self, request: PlanRequest) -> Executor:
        return self.plan_only_world(request)   # a fresh simulator each call


class ProfileWorld:
    scenes: tuple[str, ...] = ()   # a profile names no scenes: a goal's scene_id goes to the robot as it is

    def __init__(self, profile: WorldProfile, robot: Executor, goal_directed: GoalDirectedPlanner,
                 heuristic: Callable[[], HeuristicPlanner],
                 translated: Callable[[WorldProfile, Executor], TranslatedPlanner],
                 interpreted: Callable[[WorldProfile, Executor], InterpretedGoalPlanner],
                 max_skills: int = 20_000) -> None:
        """``robot``: the executor whose world the profile declares, as it is now; ``translated``
        and ``interpreted`` build (or give the kept) planners of a profile's world; ``max_skills``:
        the most skills the LLM-step methods take on."""
        self.profile, self.robot, self.goal_directed, self.heuristic = profile, robot, goal_directed, heuristic
        self.max_skills = max_skills
        self._translated, self._interpreted = translated, interpreted
        self.vocabulary = profile.goal_vocabulary()
        self.hazards = profile.hazards
        self.skill_problem = profile.skill_problem
        self.skill_names = profile.skill_names
        self.object_names: Optional[frozenset[str]] = profile.object_names
        self.class_of: Optional[ClassOf] = profile.class_of
        self.has_demonstrations = bool(profile.spec.examples)
        self.zero_shot = "" if self.has_demonstrations else f"the {profile.name} profile has no example goals"

    def translated(self) -> TranslatedPlanner:
        if self.llm_steps_refused:
            raise InvalidGoal(self.llm_steps_refused)
        return self._translated(self.profile, self.robot)

    @cached_property
    def llm_steps_refused(self) -> str:
        try:
            self.check_translated()
        except InvalidGoal as exc:
            return str(exc)
        from llm_planner_ros.profiles.skills import bank_size

        skills = bank_size(self.profile, self.robot.world_state())
        if skills > self.max_skills:
            return (f"method: the LLM-step methods match each step against every skill of the world, and this "
                    f"one has {skills:,}, over max_skills ({self.max_skills:,}); plan it with interpret or pddl")
        return ""

    def check_translated(self, request: Optional[PlanRequest] = None, executing: bool = False) -> None:
        """PET's options are refused on a profile when the goal is resolved; what is left is
        whether there is anything to show. (The size of the world's skill bank is counted only
        when a planner is asked for: :attr:`llm_steps_refused`, 0.2 s at 50,000 objects.)"""
        if not self.has_demonstrations:
            raise InvalidGoal(f"method: the LLM methods show demonstrations, and the {self.profile.name} profile "
                              "has none (example goals with a plan in its world)")

    def interpreted(self) -> InterpretedGoalPlanner:
        return self._interpreted(self.profile, self.robot)

    def plan_only_world(self, request: PlanRequest) -> Executor:
        return self.robot

    def plan_model(self, request: PlanRequest) -> Executor:
        """The profile's domain run on the robot's world as it is now."""
        state = self.robot.world_state()
        return PddlWorldExecutor(self.profile, world_problem(state, self.profile.planning_domain().name))
